/* fofbench - times the tree build and the linking, CPU and GPU, on one tipsy snapshot (for bench/run). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "kdtree.h"
#include "link.h"
#include "prog.h"
#include "testdata.h" /* td_same_partition, as the linker tests compare partitions */
#include "tipsy.h"

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_dbl);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Group label of each particle in stream order: the stream index of its
 * tree-order sink. */
static void to_stream_order(const uint32_t *sink, const uint32_t *perm, uint64_t n, uint32_t *out)
{
    for (uint64_t i = 0; i < n; i++) out[perm[i]] = perm[sink[i]];
}

/* The largest particle count below 2^31 whose GPU bytes fit in free:
 * what 0 = the build, 1 = the link on a tree, 2 = build+link need. */
static uint64_t largest_fit(uint64_t free, int what, uint32_t leaf)
{
    uint64_t lo = 0, hi = UINT64_C(1) << 31;
    while (hi - lo > 1) {
        uint64_t m = lo + (hi - lo) / 2, nn = (UINT64_C(2) << fk_tree_depth(m, leaf)) - 1;
        uint64_t b = what == 0 ? fk_gpu_build_bytes(m, leaf) : what == 1 ? fk_gpu_link_bytes(m, nn, 0)
                                                                         : fk_gpu_build_link_bytes(m, leaf, 0);
        if (b <= free)
            lo = m;
        else
            hi = m;
    }
    return lo;
}

static void help(void)
{
    printf("Usage: fofbench [-b B] [-s LEAF] [-S GPULEAF] [-r REPS] [--cpu-reps N] [--no-cpu] [--no-gpu] FILE\n"
           "       fofbench --uniform N [-b B] [-S GPULEAF] [-r REPS]\n"
           "Times tree build and linking of a periodic tipsy snapshot in [-0.5,0.5) on the CPU\n"
           "and the GPU (separate calls, and build+link with the data resident), checks that\n"
           "every path gives the same partition, and prints one line per measurement, with the\n"
           "largest particle count each GPU path fits in the device's free memory.\n"
           "--uniform N links N uniform random particles instead (GPU build+link only): a\n"
           "capacity check that needs no snapshot.\n"
           "Leaf sizes: -s for the CPU (default 8), -S for the GPU (default kdbuild's, 32).\n");
}

int main(int argc, char **argv)
{
    prog_init("fofbench");
    prog_std std = {0};
    double b = 0.2;
    int reps = 5, cpureps = 1, nocpu = 0, nogpu = 0;
    uint64_t uniform = 0;
    long long leaf = 8, gleaf = 32; /* gleaf: kdbuild's GPU default */
    static const struct option lo[] = {PROG_STD_LONG,
                                       {"cpu-reps", required_argument, 0, 257},
                                       {"no-cpu", no_argument, 0, 258},
                                       {"no-gpu", no_argument, 0, 259},
                                       {"uniform", required_argument, 0, 260},
                                       {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":" PROG_STD_SHORT "b:s:S:r:", lo, NULL)) != -1) {
        if (prog_std_option(c, optarg, &std, help, argv)) continue;
        if (c == 'b') b = prog_parse_double("-b", optarg, 1e-6, 10);
        if (c == 's') leaf = prog_parse_int("-s", optarg, 2, 1024);
        if (c == 'S') gleaf = prog_parse_int("-S", optarg, 2, 1024);
        if (c == 'r') reps = (int)prog_parse_int("-r", optarg, 1, 1000);
        if (c == 257) cpureps = (int)prog_parse_int("--cpu-reps", optarg, 0, 1000);
        if (c == 258) nocpu = 1;
        if (c == 259) nogpu = 1;
        if (c == 260) uniform = (uint64_t)prog_parse_int("--uniform", optarg, 1, INT32_MAX);
    }
    fk_error err = {0};
    fk_tipsy_snap s;
    double t0 = prog_now();
    if (uniform) {
        s.n = uniform;
        s.pos = malloc(uniform * 12);
        if (!s.pos) prog_die(3, "out of memory for %llu particles", (unsigned long long)uniform);
#pragma omp parallel for schedule(static)
        for (uint64_t i = 0; i < 3 * uniform; i++) { /* a hash of i: the same set on any thread count */
            uint64_t z = (i + 1) * UINT64_C(0x9E3779B97F4A7C15);
            z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
            z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
            z ^= z >> 31;
            s.pos[i] = (float)((double)(z >> 40) / (double)(UINT64_C(1) << 24) - 0.5);
        }
        nocpu = 1;
        printf("made %llu uniform particles in %.3f s\n", (unsigned long long)uniform, prog_now() - t0);
    } else {
        const char *in = prog_one_input(argc, argv, optind);
        FILE *f = prog_open_input(in, 1, 1);
        fk_tipsy_opts to;
        fk_tipsy_opts_default(&to);
        if (fk_tipsy_read(f, in, &to, &s, &err)) prog_fail(&err);
        printf("read %llu particles in %.3f s\n", (unsigned long long)s.n, prog_now() - t0);
    }
    const uint64_t n = s.n;
    fk_linkopts o = {0};
    o.l = b / cbrt((double)n);
    o.periodic = 1;
    o.box = 1;
    printf("b %g: l = %.9g\n", b, o.l);

    uint32_t *ref = malloc(n * 4), *lab = malloc(n * 4), *sink = malloc(n * 4), *perm2 = malloc(n * 4);
    float *pos = malloc(n * 12);
    fk_tree t;
    uint32_t *perm = NULL;
    fk_linkstats ls;
    int have_ref = 0;
    if (!nocpu && cpureps > 0) {
        double tb[64], tl[64];
        if (cpureps > 64) cpureps = 64;
        for (int r = 0; r < cpureps; r++) {
            memcpy(pos, s.pos, n * 12);
            if (r) {
                fk_tree_free(&t);
                free(perm);
            }
            double a = prog_now();
            if (fk_tree_build_cpu(pos, n, (uint32_t)leaf, &t, &perm, &err)) prog_fail(&err);
            tb[r] = prog_now() - a;
            a = prog_now();
            if (fk_link_cpu(&t, pos, NULL, &o, sink, &ls, &err)) prog_fail(&err);
            tl[r] = prog_now() - a;
        }
        double mb = median(tb, cpureps), ml = median(tl, cpureps);
        printf("cpu  build  %.4f s  %.3g particles/s  (leaf %lld)\n", mb, n / mb, leaf);
        printf("cpu  link   %.4f s  %.3g particles/s  groups %llu  pair tests %llu  box tests %llu\n", ml, n / ml,
               (unsigned long long)ls.groups, (unsigned long long)ls.pair_tests, (unsigned long long)ls.node_tests);
        to_stream_order(sink, perm, n, ref);
        have_ref = 1;
    }
    fk_gpuinfo gi;
    if (fk_gpu_probe(&gi, &err)) prog_fail(&err);
    if (nogpu || !gi.present) {
        if (!nogpu) printf("gpu  none: %s\n", gi.reason);
        return 0;
    }
    printf("gpu  %s, %d multiprocessors, %.1f GiB\n", gi.name, gi.multiprocessors, gi.mem_total / 1073741824.0);
    {
        uint64_t nn = (UINT64_C(2) << fk_tree_depth(n, (uint32_t)gleaf)) - 1;
        printf("gpu  memory at %llu particles (leaf %lld): build %.1f, link %.1f, build+link %.1f bytes a particle; "
               "fit in %.1f GiB free: build %llu, link %llu, build+link %llu particles\n",
               (unsigned long long)n, gleaf, (double)fk_gpu_build_bytes(n, (uint32_t)gleaf) / n,
               (double)fk_gpu_link_bytes(n, nn, 0) / n, (double)fk_gpu_build_link_bytes(n, (uint32_t)gleaf, 0) / n,
               gi.mem_free / 1073741824.0, (unsigned long long)largest_fit(gi.mem_free, 0, (uint32_t)gleaf),
               (unsigned long long)largest_fit(gi.mem_free, 1, (uint32_t)gleaf),
               (unsigned long long)largest_fit(gi.mem_free, 2, (uint32_t)gleaf));
    }
    fk_gputimes gt;
    double u[64], bl[64], l[64], d[64];
    if (reps > 64) reps = 64;

    /* GPU link on the CPU-built tree (what foflink --device=gpu does after kdbuild --device=cpu) */
    if (have_ref) {
        for (int r = 0; r < reps; r++) {
            if (fk_gpu_link(&t, pos, NULL, &o, lab, &ls, &gt, &err)) prog_fail(&err);
            u[r] = gt.upload, l[r] = gt.link, d[r] = gt.download;
        }
        printf("gpu  link on cpu tree (leaf %lld): upload %.4f  link %.4f  download %.4f s  link %.3g particles/s  "
               "identical sinks: %s\n",
               leaf, median(u, reps), median(l, reps), median(d, reps), n / median(l, reps),
               memcmp(lab, sink, n * 4) ? "NO" : "yes");
    }
    if (uniform) goto resident;
    /* GPU build alone (kdbuild --device=gpu) */
    fk_tree gtree;
    uint32_t *gperm = NULL;
    for (int r = 0; r < reps; r++) {
        memcpy(pos, s.pos, n * 12);
        if (r) {
            fk_tree_free(&gtree);
            free(gperm);
        }
        if (fk_gpu_build(pos, n, (uint32_t)gleaf, -0.5, 1.0, &gtree, &gperm, &gt, &err)) prog_fail(&err);
        u[r] = gt.upload, bl[r] = gt.build, d[r] = gt.download;
    }
    printf("gpu  build (leaf %lld): upload %.4f  build %.4f  download %.4f s  build %.3g particles/s\n", gleaf,
           median(u, reps), median(bl, reps), median(d, reps), n / median(bl, reps));
resident:
    /* GPU build + link, data resident */
    for (int r = 0; r < reps; r++) {
        if (fk_gpu_build_link(s.pos, NULL, n, (uint32_t)gleaf, -0.5, 1.0, &o, sink, perm2, &ls, &gt, &err))
            prog_fail(&err);
        u[r] = gt.upload, bl[r] = gt.build, l[r] = gt.link, d[r] = gt.download;
    }
    double mb = median(bl, reps), ml = median(l, reps);
    to_stream_order(sink, perm2, n, lab);
    printf("gpu  link phases: cliques+tops %.4f  self+walk %.4f  leaf pairs %.4f  flatten %.4f s  "
           "(%llu leaf pairs)\n",
           gt.link_phase[0], gt.link_phase[1], gt.link_phase[2], gt.link_phase[3], (unsigned long long)gt.leaf_pairs);
    printf("gpu  build+link resident (leaf %lld): upload %.4f  build %.4f  link %.4f  download %.4f s  "
           "build+link %.4f s = %.3g particles/s  groups %llu  pair tests %llu  box tests %llu  partition: %s\n",
           gleaf, median(u, reps), mb, ml, median(d, reps), mb + ml, n / (mb + ml), (unsigned long long)ls.groups,
           (unsigned long long)ls.pair_tests, (unsigned long long)ls.node_tests,
           have_ref ? (td_same_partition(ref, lab, n) ? "same as CPU" : "DIFFERENT FROM CPU") : "not compared");
    return 0;
}
