/* main.c - halostats: one line of properties per group (GID from groups), as commented text or CSV. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "halostats.h"
#include "kv.h"
#include "prog.h"
#include "snap.h"
#include "stream.h"
#include "version.h"

static void help(void)
{
    printf("Usage: halostats [OPTION]... [STREAM]\n"
           "Writes one line per friends-of-friends group of a fofkit stream (from groups), by group\n"
           "id: id, n, mass, centre of mass x y z (unwrapped across the periodic boundary), mass-\n"
           "weighted mean velocity vx vy vz, 3D velocity dispersion sigma_v, and rmax, the largest\n"
           "distance of a member from the centre of mass; '#' header lines give the units and the\n"
           "run's parameters. Reads STREAM, or stdin.\n"
           "\n"
           "      --csv             CSV with one header row of column names instead\n"
           "  -o, --output=FILE     write FILE (atomically) instead of stdout\n"
           "  -f, --force           read binary data from a terminal\n"
           "  -v, --verbose         one summary line on stderr\n"
           "  -h, --help            show this help and exit\n"
           "  -V, --version         show the version and exit\n"
           "\n"
           "Exit status: 0 success, 1 bad input or I/O error, 2 usage error, 3 out of memory.\n"
           "Example: tipsy2bin snap.std | kdbuild | foflink -b 0.2 | groups -m 20 | halostats\n");
}

/* What halostats reads from the stream. */
typedef struct input {
    const char *name;
    fk_snap snap;
    float *pos, *vel, *mass;
    uint64_t *ids;
    uint32_t *gid;          /* nsource rows, original order */
    fk_groups grps;
    int have_grps, have_link;
    double l, b, psi;
    char source[256];
} input;

/* Loads a per-particle float chunk into *dest, refusing a second one. */
static void load_floats(fk_reader *r, const input *in, const fk_chunk *c, uint32_t ncols, float **dest)
{
    fk_error err = {0};
    if (*dest) prog_die(EXIT_DATA, "%s: stream has two %s chunks", in->name, c->tag);
    if (fk_snap_check_chunk(&in->snap, c, "<f4", ncols, in->name, &err) || fk_reader_load(r, (void **)dest, &err))
        prog_fail(&err);
}

static void load_gid(fk_reader *r, input *in, const fk_chunk *c)
{
    fk_error err = {0};
    if (in->gid) prog_die(EXIT_DATA, "%s: stream has two GID chunks of level 0", in->name);
    if (strcmp(c->dtype, "<u4") != 0 || c->ncols != 1)
        prog_die(EXIT_DATA, "%s: chunk GID holds %s x %" PRIu32 ", expected <u4 x 1", in->name, c->dtype, c->ncols);
    if (c->nrows != in->snap.nsource)
        prog_die(EXIT_DATA, "%s: chunk GID has %" PRIu64 " rows for the %" PRIu64 " particles of the source", in->name,
                 c->nrows, in->snap.nsource);
    if (fk_reader_load(r, (void **)&in->gid, &err)) prog_fail(&err);
}

static void load_text(fk_reader *r, input *in, const fk_chunk *c)
{
    fk_error err = {0};
    char *text, what[300];
    if (fk_reader_load_text(r, &text, &err)) prog_fail(&err);
    if (strcmp(c->tag, "GRPS") == 0) {
        if (fk_groups_parse(text, &in->grps, in->name, &err)) prog_fail(&err);
        in->have_grps = 1;
    } else {
        snprintf(what, sizeof what, "%s: LINK chunk", in->name);
        if (fk_kv_get_dbl(text, "l", &in->l, what, &err) ||
            (fk_kv_has(text, "b") && fk_kv_get_dbl(text, "b", &in->b, what, &err)) ||
            (fk_kv_has(text, "psi") && fk_kv_get_dbl(text, "psi", &in->psi, what, &err)))
            prog_fail(&err);
        in->have_link = 1;
    }
    free(text);
}

static void read_stream(const char *path, int force, input *in)
{
    fk_error err = {0};
    FILE *f = prog_open_input(path, 1, force);
    fk_reader *r;
    fk_chunk c;
    char *snaptext;
    if (fk_reader_open(&r, f, in->name, &err) || fk_snap_read(r, &c, &in->snap, &snaptext, in->name, &err))
        prog_fail(&err);
    free(snaptext);
    int st;
    while ((st = fk_reader_next(r, &c, &err)) == 1) {
        if (strcmp(c.tag, "POS") == 0) {
            load_floats(r, in, &c, 3, &in->pos);
        } else if (strcmp(c.tag, "VEL") == 0) {
            load_floats(r, in, &c, 3, &in->vel);
        } else if (strcmp(c.tag, "MASS") == 0) {
            load_floats(r, in, &c, 1, &in->mass);
        } else if (strcmp(c.tag, "ID") == 0) {
            if (in->ids) prog_die(EXIT_DATA, "%s: stream has two ID chunks", in->name);
            if (fk_snap_check_chunk(&in->snap, &c, NULL, 1, in->name, &err) ||
                fk_snap_load_ids(r, &c, &in->ids, &err))
                prog_fail(&err);
        } else if (c.level == 0 && strcmp(c.tag, "GID") == 0) {
            load_gid(r, in, &c);
        } else if (c.level == 0 && (strcmp(c.tag, "GRPS") == 0 || strcmp(c.tag, "LINK") == 0)) {
            load_text(r, in, &c);
        }
    }
    if (st < 0) prog_fail(&err);
    fk_reader_close(r);
    fk_input_close(f);
    if (!in->gid) prog_die(EXIT_DATA, "stream has no GID chunk (run groups first)");
    static const char *tags[] = {"POS", "VEL", "MASS", "ID"};
    const void *have[] = {in->pos, in->vel, in->mass, in->ids};
    for (int k = 0; k < 4; k++)
        if (!have[k]) prog_die(EXIT_DATA, "stream has no %s chunk (run tipsy2bin first)", tags[k]);
}

static void write_header(FILE *f, const input *in, uint64_t ng)
{
    const fk_snap *s = &in->snap;
    fprintf(f, "# halostats (fofkit %s): one line per friends-of-friends group, by group id\n", FK_VERSION);
    fprintf(f, "# input %s: source '%s', %" PRIu64 " particles of %" PRIu64 ", time %.10g\n", in->name, s->source, s->n,
            s->nsource, s->time);
    fprintf(f, "# box %.10g origin %.10g periodic %d\n", s->box, s->origin, s->periodic);
    if (in->have_link)
        fprintf(f, "# linking length l %.10g (b %.10g, psi %.10g; psi 0 is 3D linking)\n", in->l, in->b, in->psi);
    else
        fprintf(f, "# linking length unknown (no LINK chunk)\n");
    if (in->have_grps)
        fprintf(f, "# groups %" PRIu64 ", min size %" PRIu64 "\n", ng, in->grps.minsize);
    else
        fprintf(f, "# groups %" PRIu64 ", min size unknown (no GRPS chunk)\n", ng);
    fprintf(f, "# units: the snapshot's; length: box side = %.10g; mass; velocity\n", s->box);
    fprintf(f, "# centres are unwrapped about the member with the lowest ID, assuming a group spans less than\n"
               "# half the box; a group of total mass 0 gets unweighted means\n");
    fprintf(f, "# column name unit: definition\n");
    for (size_t k = 0; k < fk_halo_ncolumns; k++)
        fprintf(f, "# %2zu %-8s %-8s %s\n", k + 1, fk_halo_columns[k].name, fk_halo_columns[k].unit,
                fk_halo_columns[k].desc);
    fputc('#', f);
    for (size_t k = 0; k < fk_halo_ncolumns; k++) fprintf(f, " %s", fk_halo_columns[k].name);
    fputc('\n', f);
}

static void write_rows(FILE *f, const fk_halo *h, uint64_t ng, char sep)
{
    char buf[64];
    for (uint64_t g = 0; g < ng; g++) {
        for (size_t k = 0; k < fk_halo_ncolumns; k++) {
            fk_halo_format(&h[g], &fk_halo_columns[k], buf, sizeof buf);
            if (k) fputc(sep, f);
            fputs(buf, f);
        }
        fputc('\n', f);
    }
}

int main(int argc, char **argv)
{
    prog_init("halostats");
    prog_std std = {0};
    int csv = 0;
    static const struct option longopts[] = {PROG_STD_LONG, {"csv", no_argument, 0, 'C'}, {0, 0, 0, 0}};
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":" PROG_STD_SHORT, longopts, NULL)) != -1) {
        if (prog_std_option(opt, optarg, &std, help, argv)) continue;
        if (opt == 'C') csv = 1;
    }
    if (std.zlevel) prog_usage("option -z does not apply: halostats writes text");
    const char *path = prog_one_input(argc, argv, optind);
    double t0 = prog_now();

    input in = {.name = strcmp(path, "-") == 0 ? "stdin" : path};
    read_stream(path, std.force, &in);
    fk_error err = {0};
    const uint64_t n = in.snap.n;
    if (fk_groups_check_ids(in.ids, n, in.snap.nsource, in.name, &err)) prog_fail(&err);

    /* Group of each stream particle; without GRPS, the groups are 1..max. */
    uint32_t *grp = malloc(n ? n * sizeof *grp : 1);
    if (!grp) prog_die(EXIT_RESOURCE, "out of memory for %" PRIu64 " particles", n);
    uint64_t ng = in.grps.ngroups;
    for (uint64_t i = 0; i < n; i++) {
        grp[i] = in.gid[in.ids[i]];
        if (!in.have_grps && grp[i] > ng) ng = grp[i];
    }
    free(in.gid);
    fk_halo *halos = malloc(ng ? ng * sizeof *halos : 1);
    if (!halos) prog_die(EXIT_RESOURCE, "out of memory for %" PRIu64 " groups", ng);
    fk_halo_input hin = {n, in.pos, in.vel, in.mass, in.ids, grp, in.snap.periodic, in.snap.box, in.snap.origin};
    if (fk_halostats_compute(&hin, ng, halos, in.name, &err)) prog_fail(&err);

    fk_output *out = prog_open_output(&std, 0);
    FILE *f = fk_output_file(out);
    if (csv) {
        for (size_t k = 0; k < fk_halo_ncolumns; k++) fprintf(f, "%s%s", k ? "," : "", fk_halo_columns[k].name);
        fputc('\n', f);
    } else {
        write_header(f, &in, ng);
    }
    write_rows(f, halos, ng, csv ? ',' : ' ');
    prog_commit(out);

    uint64_t grouped = 0;
    for (uint64_t g = 0; g < ng; g++) grouped += halos[g].n;
    prog_info("%" PRIu64 " groups holding %" PRIu64 " of %" PRIu64 " particles, largest %" PRIu64 " (%.2f s)", ng,
              grouped, n, ng ? halos[0].n : 0, prog_now() - t0);
    free(halos), free(grp), free(in.pos), free(in.vel), free(in.mass), free(in.ids);
    return EXIT_OK;
}
