/* potgpu - the potential minimum of a grouped stream's largest halo: GPU and CPU timings, and the exact all-pairs check on the GPU (for bench/RESULTS.md). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "potential.h"
#include "prog.h"
#include "snap.h"
#include "stream.h"

static void help(void)
{
    printf("Usage: potgpu [--exact] [--no-cpu] [--group=G] FILE\n"
           "The potential minimum of group G (default 1, the largest) of a stream written by\n"
           "groups: by fk_gpu_pot_minima and fk_pot_minima (halostats' defaults: softening\n"
           "0.05 box / n^(1/3), theta 0.7), and with --exact every member's exact potential on\n"
           "the GPU (all pairs) to check that the minimum is the exact one.\n");
}

int main(int argc, char **argv)
{
    prog_init("potgpu");
    prog_std std = {0};
    int exact = 0, nocpu = 0;
    long long want = 1;
    static const struct option lo[] = {PROG_STD_LONG,
                                       {"exact", no_argument, 0, 256},
                                       {"no-cpu", no_argument, 0, 257},
                                       {"group", required_argument, 0, 258},
                                       {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":" PROG_STD_SHORT, lo, NULL)) != -1) {
        if (prog_std_option(c, optarg, &std, help, argv)) continue;
        if (c == 256) exact = 1;
        if (c == 257) nocpu = 1;
        if (c == 258) want = prog_parse_int("--group", optarg, 1, UINT32_MAX);
    }
    const char *in = prog_one_input(argc, argv, optind);
    fk_error err = {0};
    FILE *f = prog_open_input(in, 1, 1);
    fk_reader *r;
    fk_chunk ch;
    fk_snap snap;
    char *text;
    if (fk_reader_open(&r, f, in, &err) || fk_snap_read(r, &ch, &snap, &text, in, &err)) prog_fail(&err);
    float *pos = NULL, *mass = NULL;
    uint64_t *ids = NULL;
    uint32_t *gid = NULL;
    int st;
    while ((st = fk_reader_next(r, &ch, &err)) == 1) {
        if (!strcmp(ch.tag, "POS") && fk_reader_load(r, (void **)&pos, &err)) prog_fail(&err);
        if (!strcmp(ch.tag, "MASS") && fk_reader_load(r, (void **)&mass, &err)) prog_fail(&err);
        if (!strcmp(ch.tag, "ID") && fk_snap_load_ids(r, &ch, &ids, &err)) prog_fail(&err);
        if (!strcmp(ch.tag, "GID") && ch.level == 0 && fk_reader_load(r, (void **)&gid, &err)) prog_fail(&err);
    }
    if (st < 0) prog_fail(&err);
    if (!pos || !mass || !ids || !gid) prog_die(EXIT_DATA, "%s: needs POS, MASS, ID and GID chunks", in);
    uint64_t n = 0;
    for (uint64_t i = 0; i < snap.n; i++) n += gid[ids[i]] == (uint32_t)want;
    if (n == 0) prog_die(EXIT_DATA, "%s: group %lld is empty", in, want);
    double *x = malloc(n * 8), *y = malloc(n * 8), *z = malloc(n * 8), *m = malloc(n * 8), *phi = malloc(n * 8);
    uint64_t k = 0, ref = UINT64_MAX;
    for (uint64_t i = 0; i < snap.n; i++) {
        if (gid[ids[i]] != (uint32_t)want) continue;
        if (ref == UINT64_MAX) ref = i;
        double d[3];
        for (int a = 0; a < 3; a++) {
            d[a] = (double)pos[3 * i + a] - (double)pos[3 * ref + a];
            if (snap.periodic) d[a] -= snap.box * nearbyint(d[a] / snap.box);
        }
        x[k] = d[0], y[k] = d[1], z[k] = d[2], m[k] = mass[i];
        k++;
    }
    fk_pot_params p;
    fk_pot_defaults(&p);
    p.eps = 0.05 * snap.box / cbrt((double)snap.n);
    uint64_t first[2] = {0, n};
    fk_pot_groups g = {1, first, x, y, z, m, NULL};
    fk_pot_min gm, cm;
    fk_gputimes gt;
    printf("group %lld: %" PRIu64 " members, softening %.6g, theta %g\n", want, n, p.eps, p.theta);
    if (fk_gpu_pot_minima(&g, &p, &gm, &gt, &err)) prog_fail(&err); /* warm-up: context, allocation */
    double t0 = prog_now();
    if (fk_gpu_pot_minima(&g, &p, &gm, &gt, &err)) prog_fail(&err);
    double tg = prog_now() - t0;
    printf("gpu  minimum: member %" PRIu64 " phi %.17g (%s, %u candidates) in %.4f s (upload %.4f, work %.4f)\n",
           gm.index, gm.phi, gm.method == FK_POT_BY_TREE ? "tree" : "exact", gm.candidates, tg, gt.upload, gt.link);
    if (!nocpu) {
        t0 = prog_now();
        if (fk_pot_minima(&g, &p, &cm, &err)) prog_fail(&err);
        printf("cpu  minimum: member %" PRIu64 " phi %.17g (%s, %u candidates) in %.4f s: %s\n", cm.index, cm.phi,
               cm.method == FK_POT_BY_TREE ? "tree" : "exact", cm.candidates, prog_now() - t0,
               cm.index == gm.index ? "the same member" : "ANOTHER MEMBER");
    }
    if (exact) {
        fk_pot_members v = {n, x, y, z, m};
        if (fk_gpu_pot_exact(&v, p.G, p.eps, phi, &gt, &err)) prog_fail(&err);
        uint64_t best = 0;
        for (uint64_t i = 1; i < n; i++)
            if (phi[i] < phi[best]) best = i;
        printf("exact all pairs on the GPU (%.3g pairs) in %.2f s: member %" PRIu64 " phi %.17g: %s\n",
               (double)n * (double)n, gt.link, best, phi[best],
               best == gm.index ? "the GPU minimum is the exact one" : "THE GPU MINIMUM IS NOT THE EXACT ONE");
    }
    return 0;
}
