/* kdbuild - builds the kd-tree over a stream's particles, puts them in tree order, and writes TREE and TBOX after POS. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "kdtree.h"
#include "prog.h"
#include "snap.h"
#include "stream.h"
#include "treeorder.h"

static void help(void)
{
    printf("Usage: kdbuild [OPTION]... [FILE]\n"
           "Build a balanced kd-tree over the particles of a fofkit stream (FILE or stdin),\n"
           "rearrange every per-particle chunk into tree order, and write the tree after POS.\n"
           "\n"
           "  -s, --leaf-size=N   most particles in a leaf (default 16, at least 2; 32 when\n"
           "                      built on the GPU, the size the GPU linker links fastest)\n"
           "      --device=D      auto (default: the GPU if there is one), cpu or gpu\n"
           "  -o, --output=FILE   write to FILE (default stdout)\n"
           "  -z, --compress[=N]  zlib-compress every chunk (level N, default 6)\n"
           "  -f, --force         read or write binary data on a terminal\n"
           "  -v, --verbose       progress and timings on stderr\n"
           "  -h, --help          this help\n"
           "  -V, --version       version\n"
           "\n"
           "Exit status: 0 success, 1 bad input or I/O error, 2 usage error, 3 out of memory,\n"
           "no GPU or not enough GPU memory.\n"
           "See kdbuild(1) and fofstream(5).\n");
}

/* Default leaf sizes. On the CPU, 16: the CPU linker's rows of 16 lanes
 * (bench/RESULTS.md, CPU linker). On the GPU, 32: a leaf fills a warp, and at
 * 134M particles the GPU link took 0.100 s on a tree of 32-particle leaves
 * against 0.199 s on one of 16 (one H100, fofbench). */
#define LEAF_CPU 16
#define LEAF_GPU 32

/* The builder fk_treeorder calls: on the CPU or the GPU, with the device's
 * default leaf size unless one was given. */
typedef struct builder {
    int dev;
    long long leafsize; /* 0: the device's default */
    double origin, box; /* box: 0 when isolated      */
} builder;

static int build(void *ctx, float *pos, uint64_t n, fk_tree *t, uint32_t **perm, fk_error *err)
{
    builder *b = ctx;
    const int dev = b->dev;
    uint32_t leaf = (uint32_t)(b->leafsize ? b->leafsize : dev == DEV_GPU ? LEAF_GPU : LEAF_CPU);
    double t0 = prog_now();
    if (dev == DEV_GPU) {
        fk_gputimes gt;
        prog_info("GPU memory needed: %.3f GiB", (double)fk_gpu_build_bytes(n, leaf) / (1 << 30));
        int st = fk_gpu_build(pos, n, leaf, b->origin, b->box, t, perm, &gt, err);
        if (st) return st;
        prog_info("GPU times: upload %.4f s, build %.4f s (%.3g particles/s), download %.4f s", gt.upload, gt.build,
                  n / (gt.build + 1e-12), gt.download);
    } else {
        int st = fk_tree_build_cpu(pos, n, leaf, t, perm, err);
        if (st) return st;
    }
    prog_info("built a tree of %" PRIu64 " particles, depth %u, %" PRIu64 " nodes in %.3f s (%.3g particles/s)", n,
              t->depth, t->nnodes, prog_now() - t0, n / (prog_now() - t0 + 1e-12));
    return FK_OK;
}

int main(int argc, char **argv)
{
    prog_init("kdbuild");
    prog_std std = {0};
    long long leafsize = 0; /* 0: the device's default */
    int devchoice = device_default();
    static const struct option longopts[] = {PROG_STD_LONG,
                                             {"leaf-size", required_argument, 0, 's'},
                                             {"device", required_argument, 0, 256},
                                             {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":" PROG_STD_SHORT "s:", longopts, NULL)) != -1) {
        if (prog_std_option(c, optarg, &std, help, argv)) continue;
        if (c == 's') leafsize = prog_parse_int("--leaf-size", optarg, 2, 1 << 20);
        if (c == 256) devchoice = device_parse(optarg);
    }
    const char *input = prog_one_input(argc, argv, optind);
    /* The device taken before the input comes: in a pipe, the GPU is ready
     * (its context made, 0.2 s) while the stage before starts writing. */
    fk_gpuinfo gi;
    const int dev = device_resolve(devchoice, &gi);
    prog_filter pf;
    prog_filter_open(&pf, input, &std);
    const fk_snap snap = pf.f.snap;
    fk_error err = {0};
    builder bd = {dev, leafsize, snap.origin, snap.periodic ? snap.box : 0};
    double reorder_s;
    if (fk_treeorder(pf.f.r, pf.f.w, &snap, pf.name, build, &bd, &reorder_s, &err)) prog_fail(&err);
    prog_info("put the other particle chunks into tree order in %.3f s", reorder_s);
    prog_filter_close(&pf);
    if (pf.waited > 0) prog_info("waited %.3f s for the input (the times above are the work alone)", pf.waited);
    return EXIT_OK;
}
