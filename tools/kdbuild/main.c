/* kdbuild - builds the kd-tree over a stream's particles, puts them in tree order, and appends TREE and TBOX. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "device.h"
#include "kdtree.h"
#include "prog.h"
#include "snap.h"
#include "stream.h"

static void help(void)
{
    printf("Usage: kdbuild [OPTION]... [FILE]\n"
           "Build a balanced kd-tree over the particles of a fofkit stream (FILE or stdin),\n"
           "rearrange every per-particle chunk into tree order, and append the tree.\n"
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

/* A per-particle chunk that arrived before POS, held until the order is known. */
typedef struct held {
    fk_chunk c;
    void *data;
} held;

/* out[i] = in[perm[i]], rows of rowsize bytes. */
static void *permute(const void *in, const uint32_t *perm, uint64_t n, size_t rowsize)
{
    uint64_t bytes = n * rowsize;
    char *out = fk_big_alloc(bytes);
    if (!out) return NULL;
    const char *src = in;
    /* The row sizes of the chunks tipsy2bin writes (TYPE, MASS and ID, ID
     * of 8, POS and VEL) copy as constants: a memcpy of a size unknown at
     * compile time is a call per row, several times slower for 4 bytes. */
#define PERMUTE_ROWS(SIZE)                                                                                    \
    _Pragma("omp parallel for schedule(static)") for (uint64_t i = 0; i < n; i++)                             \
        memcpy(out + i * (SIZE), src + (uint64_t)perm[i] * (SIZE), (SIZE))
    switch (rowsize) {
    case 1: PERMUTE_ROWS(1); break;
    case 4: PERMUTE_ROWS(4); break;
    case 8: PERMUTE_ROWS(8); break;
    case 12: PERMUTE_ROWS(12); break;
    default: PERMUTE_ROWS(rowsize); break;
    }
#undef PERMUTE_ROWS
    return out;
}

static double reorder_s; /* time spent in permute, for -v */

static void put_permuted(fk_writer *w, const fk_chunk *c, const void *data, const uint32_t *perm, fk_error *err)
{
    size_t rowsize = c->ncols * fk_dtype_size(c->dtype);
    double t0 = prog_now();
    void *out = permute(data, perm, c->nrows, rowsize);
    reorder_s += prog_now() - t0;
    if (!out) prog_die(EXIT_RESOURCE, "out of memory reordering chunk %s", c->tag);
    /* written by the writer's thread while the next chunk is read */
    if (fk_writer_give(w, c, out, err)) prog_fail(err);
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
    prog_filter pf;
    prog_filter_open(&pf, prog_one_input(argc, argv, optind), &std);
    const char *name = pf.name;
    fk_reader *r = pf.f.r;
    fk_writer *w = pf.f.w;
    const fk_snap snap = pf.f.snap;
    fk_error err = {0};
    fk_chunk ch;

    held *hold = NULL;
    int nheld = 0;
    uint32_t *perm = NULL;
    fk_tree tree;
    memset(&tree, 0, sizeof tree);
    int st;
    while ((st = fk_reader_next(r, &ch, &err)) == 1) {
        if (!strcmp(ch.tag, "TREE") || !strcmp(ch.tag, "SINK"))
            prog_die(EXIT_DATA, "%s: stream already has a %s chunk (it is in tree order already)", name, ch.tag);
        if (!(ch.flags & FK_CF_PARTICLE)) {
            if (fk_writer_copy(w, r, &ch, &err)) prog_fail(&err);
            continue;
        }
        if (ch.nrows != snap.n)
            prog_die(EXIT_DATA, "%s: chunk %s has %" PRIu64 " rows for %" PRIu64 " particles", name, ch.tag, ch.nrows,
                     snap.n);
        void *data;
        if (fk_reader_load(r, &data, &err)) prog_fail(&err);
        if (!strcmp(ch.tag, "POS")) {
            if (perm) prog_die(EXIT_DATA, "%s: stream has two POS chunks", name);
            if (fk_snap_check_chunk(&snap, &ch, "<f4", 3, name, &err) ||
                fk_snap_check_positions(&snap, data, name, &err))
                prog_fail(&err);
            fk_gpuinfo gi;
            int dev = device_resolve(devchoice, &gi);
            if (!leafsize) leafsize = dev == DEV_GPU ? LEAF_GPU : LEAF_CPU;
            double t0 = prog_now();
            if (dev == DEV_GPU) {
                fk_gputimes gt;
                prog_info("GPU memory needed: %.3f GiB",
                          (double)fk_gpu_build_bytes(snap.n, (uint32_t)leafsize) / (1 << 30));
                if (fk_gpu_build(data, snap.n, (uint32_t)leafsize, snap.origin, snap.periodic ? snap.box : 0, &tree,
                                 &perm, &gt, &err))
                    prog_fail(&err);
                prog_info("GPU times: upload %.4f s, build %.4f s (%.3g particles/s), download %.4f s", gt.upload,
                          gt.build, snap.n / (gt.build + 1e-12), gt.download);
            } else if (fk_tree_build_cpu(data, snap.n, (uint32_t)leafsize, &tree, &perm, &err)) {
                prog_fail(&err);
            }
            prog_info("built a tree of %" PRIu64 " particles, depth %u, %" PRIu64 " nodes in %.3f s (%.3g particles/s)",
                      snap.n, tree.depth, tree.nnodes, prog_now() - t0, snap.n / (prog_now() - t0 + 1e-12));
            if (fk_writer_give(w, &ch, data, &err)) prog_fail(&err);
            for (int i = 0; i < nheld; i++) {
                put_permuted(w, &hold[i].c, hold[i].data, perm, &err);
                free(hold[i].data);
            }
            nheld = 0;
        } else if (perm) {
            put_permuted(w, &ch, data, perm, &err);
            free(data);
        } else {
            held *h = realloc(hold, (nheld + 1) * sizeof *hold);
            if (!h) prog_die(EXIT_RESOURCE, "out of memory");
            hold = h;
            hold[nheld].c = ch;
            hold[nheld++].data = data;
        }
    }
    if (st < 0) prog_fail(&err);
    if (!perm) prog_die(EXIT_DATA, "%s: stream has no POS chunk", name);
    prog_info("put the other particle chunks into tree order in %.3f s", reorder_s);
    if (fk_tree_write(w, &tree, &err)) prog_fail(&err);
    prog_filter_close(&pf);
    fk_tree_free(&tree);
    free(perm);
    free(hold);
    return EXIT_OK;
}
