/* fofarrays.c - test helper: a stream's particles as arrays in memory, through the public calls of fofkit.h (fofkit_fof, fofkit_halos), their results as the programs print them. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fofkit.h"
#include "levelsarg.h"
#include "grpfile.h"
#include "halostats.h"
#include "snap.h"
#include "snapunits.h"
#include "stream.h"

/*
 * Usage: fofarrays [OPTION]... STREAM
 * Reads STREAM's POS, VEL, MASS, ID (and GID of level 0) in stream order and
 *   fof mode (default): calls fofkit_fof on them and writes level K's group
 *     ids as a .grp on stdout, by ID (as `groups --format=grp` writes them:
 *     the stream must be in original order, tipsy2bin's); --sinks writes
 *     the sink array instead, one index a line.
 *   --halos: calls fofkit_halos on the GID groups (the stream's order and
 *     IDs, as halostats sees them) and prints the rows as halostats does.
 * Options: -b B[,B...] | -l L[,L...], --psi=V | --psi-rel=F, --no-periodic,
 *   -m N, --level=K, --device=auto|cpu|gpu, -j N (fof); --spacing=all, the
 *   only spacing fofkit_fof's b takes (box / n^(1/3)), accepted so that the
 *   same options go to foflink; --centre=com, --so
 *   --omega-m=X, --unbind, --G=X; --physical: G from the stream's units
 *   and, for a comoving stream, its frame (comoving, scale_factor, vel_scale,
 *   hubble_flow: what halostats takes from SNAP) (halos).
 * Prints "fofarrays: MESSAGE" and exits 1 when a call fails.
 */

int main(int argc, char **argv)
{
    fofkit_fof_options fo;
    fofkit_halo_options ho;
    fofkit_fof_options_init(&fo);
    fofkit_halo_options_init(&ho);
    int level = 0, halos = 0, sinks = 0, no_periodic = 0, physical = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-b")) fo.nlevels = levels_arg(argv[++i], fo.b);
        else if (!strcmp(a, "-l")) fo.nlevels = levels_arg(argv[++i], fo.l);
        else if (!strncmp(a, "--psi=", 6)) fo.psi[0] = atof(a + 6);
        else if (!strncmp(a, "--psi-rel=", 10)) fo.psi[0] = atof(a + 10), fo.psi_relative = 1;
        else if (!strcmp(a, "--no-periodic")) no_periodic = 1;
        else if (!strcmp(a, "--spacing=all")) continue; /* fofkit_fof's b: every particle's spacing */
        else if (!strcmp(a, "-m")) fo.minsize = strtoull(argv[++i], NULL, 10);
        else if (!strncmp(a, "--level=", 8)) level = atoi(a + 8);
        else if (!strncmp(a, "--device=", 9))
            fo.device = ho.device = !strcmp(a + 9, "cpu") ? FOFKIT_DEVICE_CPU
                                    : !strcmp(a + 9, "gpu") ? FOFKIT_DEVICE_GPU : FOFKIT_DEVICE_AUTO;
        else if (!strcmp(a, "-j")) fo.nthreads = ho.nthreads = atoi(argv[++i]);
        else if (!strcmp(a, "--sinks")) sinks = 1;
        else if (!strcmp(a, "--halos")) halos = 1;
        else if (!strcmp(a, "--centre=com")) ho.centre = FOFKIT_CENTRE_COM;
        else if (!strcmp(a, "--so")) ho.so = 1;
        else if (!strncmp(a, "--omega-m=", 10)) ho.omega_m = atof(a + 10);
        else if (!strcmp(a, "--unbind")) ho.unbind = 1;
        else if (!strncmp(a, "--G=", 4)) ho.G = atof(a + 4);
        else if (!strcmp(a, "--physical")) physical = 1;
        else path = a;
    }
    if (!path) {
        fprintf(stderr, "usage: fofarrays [OPTION]... STREAM\n");
        return 2;
    }
    /* the stream's arrays */
    fk_error err = {0};
    FILE *f = fopen(path, "rb");
    fk_reader *r;
    fk_chunk c;
    fk_snap snap;
    char *text;
    if (!f || fk_reader_open(&r, f, path, &err) || fk_snap_read(r, &c, &snap, &text, path, &err)) {
        fprintf(stderr, "fofarrays: %s\n", f ? err.msg : "cannot open the stream");
        return 1;
    }
    free(text);
    void *pos = NULL, *vel = NULL, *mass = NULL, *gid = NULL;
    uint64_t *ids = NULL;
    int st;
    while ((st = fk_reader_next(r, &c, &err)) == 1) {
        void **dest = !strcmp(c.tag, "POS") ? &pos : !strcmp(c.tag, "VEL") ? &vel : !strcmp(c.tag, "MASS") ? &mass
                      : !strcmp(c.tag, "GID") && c.level == 0 ? &gid : NULL;
        if (!strcmp(c.tag, "ID")) {
            if (fk_snap_load_ids(r, &c, &ids, &err)) break;
        } else if (dest && fk_reader_load(r, dest, &err)) {
            break;
        }
    }
    if (st < 0 || err.code || !pos || !ids || (halos && !gid)) {
        fprintf(stderr, "fofarrays: %s\n", err.code ? err.msg : "the stream lacks POS, ID or GID");
        return 1;
    }
    fk_reader_close(r);
    fclose(f);
    fofkit_particles p;
    fofkit_particles_init(&p);
    p.n = snap.n, p.pos = pos, p.vel = vel, p.mass = mass;
    p.periodic = snap.periodic && !no_periodic, p.box = snap.box, p.origin = snap.origin;
    fofkit_error e;
    const uint64_t n = snap.n;
    if (!halos) {
        fofkit_fof_result res;
        fofkit_fof_result_init(&res);
        uint32_t *out = malloc(n ? 4 * n : 4);
        if (sinks)
            res.sink[level] = out;
        else
            res.group[level] = out;
        if (fofkit_fof(&p, &fo, &res, &e)) {
            fprintf(stderr, "fofarrays: %s\n", e.message);
            return 1;
        }
        if (sinks) {
            for (uint64_t i = 0; i < n; i++) printf("%" PRIu32 "\n", out[i]);
        } else {
            /* by ID, as groups writes it */
            uint32_t *byid = calloc(snap.nsource ? snap.nsource : 1, 4);
            for (uint64_t i = 0; i < n; i++) byid[ids[i]] = out[i];
            uint64_t total = 0;
            for (uint64_t g = 0; g <= res.ngroups[level]; g++) total += res.sizes[level][g];
            if (total != n || (res.ngroups[level] && res.sizes[level][1] < fo.minsize)) {
                fprintf(stderr, "fofarrays: the sizes do not add up to the particles\n");
                return 1;
            }
            if (fk_grp_write(stdout, byid, snap.nsource, "stdout", &err)) {
                fprintf(stderr, "fofarrays: %s\n", err.msg);
                return 1;
            }
            free(byid);
        }
        fofkit_fof_result_free(&res);
        free(out);
    } else {
        /* the groups of every stream particle, and their count */
        uint32_t *grp = malloc(n ? 4 * n : 4);
        uint64_t ng = 0;
        for (uint64_t i = 0; i < n; i++) {
            grp[i] = ((uint32_t *)gid)[ids[i]];
            if (grp[i] > ng) ng = grp[i];
        }
        p.ids = ids;
        if (physical) { /* as halostats takes them from SNAP (snapunits.h) */
            ho.G = fk_snap_G(&snap);
            double a, vs, hf;
            if (fk_snap_frame(&snap, &a, &vs, &hf) > 0) ho.comoving = 1, ho.scale_factor = a, ho.vel_scale = vs, ho.hubble_flow = hf;
        }
        const int nc = fofkit_halo_ncolumns(&ho);
        double *table = malloc((ng ? ng : 1) * (size_t)nc * sizeof *table);
        if (fofkit_halos(&p, grp, ng, NULL, &ho, table, NULL, &e)) {
            fprintf(stderr, "fofarrays: %s\n", e.message);
            return 1;
        }
        /* halostats' formats: the integer columns as integers, the others %.9g */
        for (uint64_t g = 0; g < ng; g++) {
            for (int k = 0; k < nc; k++) {
                const char *name = fofkit_halo_column_name(&ho, k);
                int integer = 0;
                for (size_t q = 0; q < fk_halo_ncolumns; q++)
                    if (!strcmp(fk_halo_columns[q].name, name)) integer = fk_halo_columns[q].type == FK_HCOL_U64;
                double v = table[g * (uint64_t)nc + (uint64_t)k];
                if (integer && v < 0)
                    printf(k ? " -1" : "-1"); /* none: mbp_id with COM centres */
                else if (integer)
                    printf(k ? " %" PRIu64 : "%" PRIu64, (uint64_t)v);
                else
                    printf(k ? " %.9g" : "%.9g", v);
            }
            putchar('\n');
        }
        free(grp);
        free(table);
    }
    free(pos), free(vel), free(mass), free(gid), free(ids);
    return 0;
}
