/* treebench - times halotree's ID matching of two snapshots' catalogues beside its floors: reading the catalogues, the two ID arrays read (in memory and from a file), a copy of the ID bytes, one sort of as many records. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "benchclock.h"
#include "clock.h"
#include "prog.h"
#include "tree_cat.h"
#include "tree_match.h"

static void help(void)
{
    printf("Usage: treebench [OPTION]... [EARLIER LATER]\n"
           "Times the matching of two halo catalogues by their members' IDs (lib/tree_match: a\n"
           "table indexed by ID or a partitioned hash join, a sort and reduce of the pairs; on the\n"
           "GPU the same steps with CUB, only the links brought back), best of REPEAT runs, beside\n"
           "its floors, timed in the same run: reading the two catalogues (HDF5, with their ID\n"
           "arrays), a copy on every core of the records the matching sorts (16 bytes a member),\n"
           "and one radix sort of that many records; and the matching's floor, the two ID arrays read, in\n"
           "memory and back from a file in $TMPDIR (the page cache), on every core. Prints a markdown table.\n"
           "With two catalogues (halostats --format=hdf5) it times those; without, two made in\n"
           "memory (--synthetic).\n"
           "\n"
           "      --synthetic=N  two snapshots of N particles each, half of them in halos of 100\n"
           "                     members, IDs shuffled, 10%% of the later halos' members moved to\n"
           "                     another halo (default 16777216)\n"
           "      --sequential   synthetic IDs 1..N (Gadget's) instead of scrambled: the table join\n"
           "      --repeat=N     runs of each (default 3)\n"
           "      --subhalos     match the subhalos of the catalogues\n"
           "      --gpu          time the matching on the GPU instead (fk_mtree_match_gpu; its links\n"
           "                     checked against the CPU's every run) beside the GPU's floors: the two\n"
           "                     ID arrays uploaded, and device-to-device copies that read and write\n"
           "                     as many bytes as the match's kernels (counted by construction); with\n"
           "                     the match's phases, bytes through the bus and device memory held\n");
}

/* A snapshot of n particles in memory: halos of 100 members over half of them, IDs a
 * scramble of the indices; moved: the fraction of members given to the next halo. */
static int sequential; /* --sequential: IDs 1..N */

static void synthetic(fk_treecat *c, uint64_t n, double moved, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    const uint64_t size = 100, nh = n / 2 / size;
    c->nhalo = nh, c->nids = nh * size;
    c->len = malloc(nh * sizeof *c->len), c->first = malloc(nh * sizeof *c->first);
    c->ids = malloc(c->nids * sizeof *c->ids);
    if (!c->len || !c->first || !c->ids) prog_die(EXIT_RESOURCE, "out of memory for %" PRIu64 " particles", n);
    for (uint64_t h = 0; h < nh; h++) c->len[h] = size, c->first[h] = h * size;
    /* particle i's ID: a bijective scramble of i (odd multiplier mod 2^64); moved: member k of an
     * even halo and member k + size of the odd one after it trade places (a swap: still one
     * halo a particle) */
#pragma omp parallel for schedule(static)
    for (uint64_t k = 0; k < c->nids; k++) {
        const uint64_t h = k / size, even = h % 2 == 0 ? k : k - size;
        const int swap = (h % 2 == 1 || h + 1 < nh) && (double)(((even * 0x9E3779B97F4A7C15ull + seed) >> 33) % 1000) < moved * 1000;
        const uint64_t i = !swap ? k : h % 2 == 0 ? k + size : k - size;
        c->ids[k] = sequential ? (int64_t)(i + 1) : (int64_t)(i * 0xD6E8FEB86659FD93ull);
    }
}

/* The matching's floor as a file: both ID arrays written once to an unlinked temporary file in
 * $TMPDIR (else /tmp), which ids_read_file then reads back whole from the page cache, each
 * thread preading its slice into buf. Returns the descriptor, -1 when it cannot be made. */
static int ids_file(const fk_treecat *a, const fk_treecat *b)
{
    const char *dir = getenv("TMPDIR");
    char name[4096];
    snprintf(name, sizeof name, "%s/treebench.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(name);
    if (fd < 0) return -1;
    unlink(name);
    for (int side = 0; side < 2; side++) {
        const fk_treecat *c = side ? b : a;
        const char *p = (const char *)c->ids;
        uint64_t left = c->nids * sizeof *c->ids;
        while (left) {
            ssize_t w = write(fd, p, left > (1u << 30) ? (1u << 30) : left);
            if (w <= 0) {
                close(fd);
                return -1;
            }
            p += w, left -= (uint64_t)w;
        }
    }
    return fd;
}

/* Reads n IDs from fd into buf on every core; 0 on success. */
static int ids_read_file(int fd, int64_t *buf, uint64_t n)
{
    int bad = 0;
#pragma omp parallel reduction(| : bad)
    {
        int t = 0, nt = 1;
#ifdef _OPENMP
        t = omp_get_thread_num(), nt = omp_get_num_threads();
#endif
        uint64_t lo = n * (uint64_t)t / (uint64_t)nt * 8, hi = n * (uint64_t)(t + 1) / (uint64_t)nt * 8;
        while (lo < hi) {
            ssize_t r = pread(fd, (char *)buf + lo, hi - lo > (1u << 30) ? (1u << 30) : hi - lo, (off_t)lo);
            if (r <= 0) {
                bad = 1;
                break;
            }
            lo += (uint64_t)r;
        }
    }
    return bad;
}

typedef struct timing {
    double best, cpu;
} timing;

static void keep(timing *t, double wall, double cpu)
{
    if (t->best == 0 || wall < t->best) t->best = wall, t->cpu = cpu;
}

/* --gpu: the match on the GPU (after one untimed run that makes the context and the memory
 * pool), its links equal to the CPU's, beside its floors in the same run: the inputs through
 * the bus (both ID arrays uploaded as the match uploads them) and the device memory moving
 * the bytes the match's kernels read and write (device-to-device copies of the same bytes). */
static void gpu_bench(const fk_treecat *a, const fk_treecat *b, long long repeat, const timing *tread)
{
    fk_error err = {0};
    fk_treelink *lc, *lg;
    uint64_t nc, ng, sc, sg;
    double w = fk_now();
    if (fk_mtree_match(a, NULL, b, FK_TREE_WEIGHT_RANK, "earlier", "later", &lc, &nc, &sc, &err)) prog_fail(&err);
    const double tcpu = fk_now() - w;
    if (fk_mtree_match_gpu(a, NULL, b, FK_TREE_WEIGHT_RANK, "earlier", "later", &lg, &ng, &sg, &err)) prog_fail(&err);
    if (nc != ng || sc != sg || memcmp(lc, lg, nc * sizeof *lc))
        prog_die(EXIT_DATA, "the GPU's links differ from the CPU's (%" PRIu64 " and %" PRIu64 ")", ng, nc);
    free(lg);
    timing tmatch = {0}, tput = {0}, tcopy = {0};
    fk_mtree_gpu_stats st = {0}, best = {0};
    for (long long r = 0; r < repeat; r++) {
        double cp = cpu_now();
        w = fk_now();
        if (fk_mtree_match_gpu(a, NULL, b, FK_TREE_WEIGHT_RANK, "earlier", "later", &lg, &ng, &sg, &err))
            prog_fail(&err);
        const double t = fk_now() - w;
        fk_gpu_mtree_stats(&st);
        if (tmatch.best == 0 || t < tmatch.best) best = st;
        keep(&tmatch, t, cpu_now() - cp);
        if (nc != ng || memcmp(lc, lg, nc * sizeof *lc))
            prog_die(EXIT_DATA, "the GPU's links differ from the CPU's in run %lld", r + 1);
        free(lg);
        double put, copy;
        if (fk_gpu_mtree_floors(a, b, st.moved, &put, &copy, &err)) prog_fail(&err);
        keep(&tput, put, 0), keep(&tcopy, copy, 0);
    }
    const uint64_t n = a->nids + b->nids;
    const double floor = tput.best + tcopy.best;
    printf("| what | members | wall s | ratio to the floor |\n|---|---|---|---|\n");
    if (tread)
        printf("| read both catalogues (HDF5, with IDs) | %" PRIu64 " | %.4f | %.2f |\n", n, tread->best,
               tread->best / floor);
    char how[48];
    if (best.path == 2)
        snprintf(how, sizeof how, "the hash join, %d passes", best.passes);
    else
        snprintf(how, sizeof how, "%s", best.path == 1 ? "the table" : "on the CPU");
    printf("| match on the GPU (%s; %" PRIu64 " links, %" PRIu64 " shared; the CPU's links) | %" PRIu64
           " | %.4f | %.2f |\n", how, ng, sg, n, tmatch.best, tmatch.best / floor);
    printf("| - its uploads and join / segmented sort / heads, links and their download | | %.4f / %.4f / %.4f | |\n",
           best.t_join, best.t_sort, best.t_links);
    printf("| match on the CPU (one run) | %" PRIu64 " | %.4f | %.2f |\n", n, tcpu, tcpu / floor);
    printf("| floor: the two ID arrays uploaded (host to device, %.2f GB) | %" PRIu64 " | %.4f | %.2f |\n",
           (double)n * 8 / 1e9, n, tput.best, tput.best / floor);
    printf("| floor: device copies moving the match's device bytes (%.2f GB read and written) | %" PRIu64
           " | %.4f | %.2f |\n", (double)best.moved / 1e9, n, tcopy.best, tcopy.best / floor);
    printf("| floor: the two together | %" PRIu64 " | %.4f | 1.00 |\n", n, floor);
    printf("\n%s; best of %lld; bytes through the bus %.2f GB up (%.2f a member), %.3f GB down (the links); device "
           "memory at most %.2f GB (%.1f bytes a member, %.1f a member of the larger catalogue)\n",
           tread ? "two catalogues" : "synthetic", repeat, (double)best.up / 1e9,
           best.members ? (double)best.up / (double)best.members : 0.0, (double)best.down / 1e9,
           (double)best.peak / 1e9, best.members ? (double)best.peak / (double)best.members : 0.0,
           best.members ? (double)best.peak / (double)(a->nids > b->nids ? a->nids : b->nids) : 0.0);
    free(lc);
}

int main(int argc, char **argv)
{
    prog_init("treebench");
    long long n = 16777216, repeat = 3;
    int kind = FK_TREE_GROUPS, gpu = 0;
    static const struct option longopts[] = {{"help", no_argument, 0, 'h'},
                                             {"synthetic", required_argument, 0, 's'},
                                             {"repeat", required_argument, 0, 'r'},
                                             {"subhalos", no_argument, 0, 'S'},
                                             {"gpu", no_argument, 0, 'g'},
                                             {"sequential", no_argument, 0, 'q'},
                                             {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h': help(); return 0;
        case 's': n = prog_parse_int("--synthetic", optarg, 1000, 1LL << 34); break;
        case 'r': repeat = prog_parse_int("--repeat", optarg, 1, 100); break;
        case 'S': kind = FK_TREE_SUBHALOS; break;
        case 'g': gpu = 1; break;
        case 'q': sequential = 1; break;
        default: prog_usage("unknown option or missing value: %s", argv[optind - 1]);
        }
    }
    const int files = argc - optind == 2;
    if (argc - optind != 0 && !files) prog_usage("two catalogues, or none");
    fk_treecat a, b;
    fk_error err = {0};
    timing tread = {0}, tmatch = {0}, tcopy = {0}, tsort = {0}, tids = {0}, tfile = {0};
    for (long long r = 0; r < (files ? repeat : 1); r++) {
        if (r) fk_treecat_free(&a), fk_treecat_free(&b);
        double w = fk_now(), cp = cpu_now();
        if (files) {
            if (fk_treecat_read(&a, argv[optind], kind, &err) || fk_treecat_read(&b, argv[optind + 1], kind, &err))
                prog_fail(&err);
            keep(&tread, fk_now() - w, cpu_now() - cp);
        } else {
            synthetic(&a, (uint64_t)n, 0, 1);
            synthetic(&b, (uint64_t)n, 0.1, 2);
        }
    }
    const uint64_t nrec = a.nids + b.nids;
    if (gpu) {
        gpu_bench(&a, &b, repeat, files ? &tread : NULL);
        fk_treecat_free(&a), fk_treecat_free(&b);
        return 0;
    }
    fk_treerec *rec = malloc((nrec + 1) * sizeof *rec), *tmp = malloc((nrec + 1) * sizeof *tmp);
    if (!rec || !tmp) prog_die(EXIT_RESOURCE, "out of memory for %" PRIu64 " records", nrec);
    uint64_t nl = 0, shared = 0, idsum = 0;
    const int fd = ids_file(&a, &b);
    int64_t *idbuf = fd >= 0 ? malloc((nrec + 1) * sizeof *idbuf) : NULL;
    if (idbuf) (void)ids_read_file(fd, idbuf, nrec); /* once untimed: the pages in place */
    for (long long r = 0; r < repeat; r++) {
        fk_treelink *l;
        double w = fk_now(), cp = cpu_now();
        if (fk_mtree_match(&a, NULL, &b, FK_TREE_WEIGHT_RANK, "earlier", "later", &l, &nl, &shared, &err))
            prog_fail(&err);
        keep(&tmatch, fk_now() - w, cpu_now() - cp);
        free(l);
        /* the matching's floor: the two snapshots' ID arrays read once, on every core (summed) */
        w = fk_now(), cp = cpu_now();
        uint64_t sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
        for (uint64_t k = 0; k < nrec; k++) sum += (uint64_t)(k < a.nids ? a.ids[k] : b.ids[k - a.nids]);
        keep(&tids, fk_now() - w, cpu_now() - cp);
        idsum += sum;
        if (fd >= 0 && idbuf) {
            w = fk_now(), cp = cpu_now();
            if (ids_read_file(fd, idbuf, nrec) == 0) keep(&tfile, fk_now() - w, cpu_now() - cp);
        }
        /* the floors: the records built (a copy of the IDs into 16-byte records), and one sort of them */
        w = fk_now(), cp = cpu_now();
#pragma omp parallel for schedule(static)
        for (uint64_t k = 0; k < nrec; k++)
            rec[k] = (fk_treerec){(uint64_t)(k < a.nids ? a.ids[k] : b.ids[k - a.nids]), (uint32_t)k, 1};
        keep(&tcopy, fk_now() - w, cpu_now() - cp);
        w = fk_now(), cp = cpu_now();
        fk_mtree_sort(rec, tmp, nrec);
        keep(&tsort, fk_now() - w, cpu_now() - cp);
    }
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    printf("| what | members | wall s | CPU s | ratio to the sort | ratio to reading the IDs |\n"
           "|---|---|---|---|---|---|\n");
    if (files)
        printf("| read both catalogues (HDF5, with IDs) | %" PRIu64 " | %.4f | %.4f | %.2f | %.2f |\n", nrec, tread.best,
               tread.cpu, tread.best / tsort.best, tread.best / tids.best);
    printf("| match (%" PRIu64 " links, %" PRIu64 " shared) | %" PRIu64 " | %.4f | %.4f | %.2f | %.2f |\n", nl, shared,
           nrec, tmatch.best, tmatch.cpu, tmatch.best / tsort.best, tmatch.best / tids.best);
    printf("| floor: the two ID arrays read (in memory, every core) | %" PRIu64 " | %.4f | %.4f | %.2f | 1.00 |\n", nrec,
           tids.best, tids.cpu, tids.best / tsort.best);
    if (tfile.best > 0)
        printf("| floor: the two ID arrays read from a file (page cache, every core) | %" PRIu64
               " | %.4f | %.4f | %.2f | %.2f |\n", nrec, tfile.best, tfile.cpu, tfile.best / tsort.best,
               tfile.best / tids.best);
    printf("| floor: IDs copied into 16-byte records | %" PRIu64 " | %.4f | %.4f | %.2f | %.2f |\n", nrec, tcopy.best,
           tcopy.cpu, tcopy.best / tsort.best, tcopy.best / tids.best);
    printf("| floor: one radix sort of those records | %" PRIu64 " | %.4f | %.4f | 1.00 | %.2f |\n", nrec, tsort.best,
           tsort.cpu, tsort.best / tids.best);
    printf("\n%s; %d threads, load %.2f; best of %lld (ID sum %" PRIx64 ")\n", files ? "two catalogues" : "synthetic",
           threads, loadavg(), repeat, idsum);
    fk_treecat_free(&a), fk_treecat_free(&b);
    free(rec), free(tmp), free(idbuf);
    if (fd >= 0) close(fd);
    return 0;
}
