/* fofref.c - test helper: an independent friends-of-friends reference (exact predicate, cell grid or all pairs) writing a .grp file. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "prog.h"
#include "snap.h"
#include "spacing.h"
#include "stream.h"
#include "tipsy.h"

/*
 * The reference the toolchain is proved against (tests/correctness.bats).
 * It shares none of the linking code: not lib/link*.c, not lib/predicate.h,
 * not lib/kdtree.c. Only reading inputs (tipsy, streams), the mean spacing
 * that -b is a fraction of (lib/spacing.c, its definition; tested on its
 * own by test_spacing) and writing the output go through the library.
 *
 * The predicate is re-implemented from its definition in foflink(1): in
 * binary32, per axis d = x_j - x_i, then in a periodic box of period L
 * (h = L/2) d - L if d > h, else d + L if d < -h; r2 = (dx*dx + dy*dy) +
 * dz*dz, every operation rounded to binary32 (this file is compiled with
 * -ffp-contract=off, so nothing is fused); friends iff r2 < l*l, with l and
 * l*l rounded to binary32.
 *
 * Two ways to find the pairs, both evaluating that predicate on every
 * candidate:
 *   all    every pair i < j: O(n^2), obviously complete;
 *   grid   cubic cells of side >= l (1 + 1e-6) plus an absolute margin for
 *          the rounding of a wrapped separation; only pairs in the same or
 *          adjacent cells (cyclically when periodic) are tested. Complete
 *          because r2 < l2 implies |d_k| < l on every axis (r2 is a rounded
 *          sum of non-negative terms, and rounding is monotone), and the
 *          computed |d_k| is within a relative 2^-24 (plus 2^-23 L when it
 *          wraps) of the true separation, which is at least one cell side
 *          for particles two or more cells apart.
 * --check runs both and fails unless they give the same partition.
 *
 * Groups: union-find (one private forest per thread, merged at the end).
 * Output: the classic .grp text, numbered exactly as groups(1) numbers
 * them: nsource, then one group id per particle of the source in its
 * original order; groups of at least -m members numbered 1.. by decreasing
 * size, ties by lowest original index; 0 for the rest and for particles
 * absent from the input.
 */

static void help(void)
{
    printf("Usage: fofref [OPTION]... FILE\n"
           "Independent brute-force friends-of-friends reference: reads a tipsy snapshot or a fofkit\n"
           "stream (its SNAP, POS and ID chunks), links every pair closer than the linking length by\n"
           "the exact binary32 predicate of foflink(1), and writes the .grp file that\n"
           "'groups --format=grp' would write.\n"
           "\n"
           "  -l, --link-length=L   absolute linking length\n"
           "  -b, --b=B             B times the mean spacing box/n_eff^(1/3) (default 0.2)\n"
           "      --spacing=S       of the lightest particles (default), all, types or a mass\n"
           "                        (foflink(1), THE MEAN SPACING)\n"
           "  -m, --min-size=N      keep groups of at least N members (default 8)\n"
           "      --method=M        grid (default), all (every pair) or check (both, compared)\n"
           "      --no-periodic     isolated boundaries (tipsy: do not wrap; stream: ignore its box)\n"
           "      --box=L           tipsy: the period (default 1)\n"
           "      --origin=X        tipsy: the lower corner (default -L/2)\n"
           "  -t, --types=LIST      tipsy: types to keep, gas,dark,star or all (default all)\n"
           "  -j, --threads=N       OpenMP threads (default: all)\n"
           "  -o, --output=FILE     write to FILE (default stdout)\n"
           "  -v, --verbose         what was done, on stderr\n"
           "  -h, --help            this help\n");
}

/* ---- input ---- */

typedef struct input {
    uint64_t n, nsource;
    float *pos;    /* n x 3 */
    uint64_t *ids; /* n */
    float *mass;   /* n, or NULL */
    uint8_t *type; /* n, or NULL */
    int periodic;
    double box, origin;
} input;

static unsigned parse_types(const char *arg)
{
    static const char *names[3] = {"gas", "dark", "star"};
    char buf[256];
    unsigned mask = 0;
    if (strlen(arg) >= sizeof buf || !arg[0]) prog_usage("option --types: bad list '%s'", arg);
    snprintf(buf, sizeof buf, "%s", arg);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int k = 0; k < 3; k++)
            if (!strcmp(t, names[k])) found = k;
        if (!strcmp(t, "all"))
            mask |= 7u;
        else if (found >= 0)
            mask |= 1u << found;
        else
            prog_usage("option --types: unknown particle type '%s'", t);
    }
    return mask;
}

static void read_tipsy(const char *path, const fk_tipsy_opts *o, input *in)
{
    fk_error err = {0};
    FILE *f = prog_open_input(path, 1, 1);
    fk_tipsy_snap ts;
    if (fk_tipsy_read(f, path, o, &ts, &err)) prog_fail(&err);
    fk_input_close(f);
    in->n = ts.n;
    in->nsource = ts.hdr.nbodies;
    in->pos = ts.pos, in->mass = ts.mass, in->type = ts.type;
    ts.pos = NULL, ts.mass = NULL, ts.type = NULL;
    in->ids = malloc((ts.n ? ts.n : 1) * sizeof *in->ids);
    if (!in->ids) prog_die(EXIT_RESOURCE, "out of memory");
    for (uint64_t i = 0; i < ts.n; i++)
        in->ids[i] = ts.id_size == 8 ? ((uint64_t *)ts.id)[i] : ((uint32_t *)ts.id)[i];
    in->periodic = o->periodic;
    in->box = o->box;
    in->origin = o->origin;
    fk_tipsy_snap_free(&ts);
}

static void read_stream(const char *path, int no_periodic, input *in)
{
    fk_error err = {0};
    FILE *f = prog_open_input(path, 1, 1);
    fk_reader *r;
    fk_chunk c;
    fk_snap s;
    char *text;
    if (fk_reader_open(&r, f, path, &err) || fk_snap_read(r, &c, &s, &text, path, &err)) prog_fail(&err);
    free(text);
    int st;
    in->pos = NULL;
    in->ids = NULL;
    in->mass = NULL;
    in->type = NULL;
    while ((st = fk_reader_next(r, &c, &err)) == 1) {
        if (!strcmp(c.tag, "POS")) {
            if (fk_snap_check_chunk(&s, &c, "<f4", 3, path, &err) || fk_reader_load(r, (void **)&in->pos, &err))
                prog_fail(&err);
        } else if (!strcmp(c.tag, "MASS")) {
            if (fk_snap_check_chunk(&s, &c, "<f4", 1, path, &err) || fk_reader_load(r, (void **)&in->mass, &err))
                prog_fail(&err);
        } else if (!strcmp(c.tag, "TYPE")) {
            if (fk_snap_check_chunk(&s, &c, "|u1", 1, path, &err) || fk_reader_load(r, (void **)&in->type, &err))
                prog_fail(&err);
        } else if (!strcmp(c.tag, "ID")) {
            if (fk_snap_check_chunk(&s, &c, NULL, 1, path, &err) || fk_snap_load_ids(r, &c, &in->ids, &err))
                prog_fail(&err);
        }
    }
    if (st < 0) prog_fail(&err);
    if (!in->pos) prog_die(EXIT_DATA, "%s: no POS chunk", path);
    if (!in->ids) prog_die(EXIT_DATA, "%s: no ID chunk", path);
    fk_reader_close(r);
    fk_input_close(f);
    in->n = s.n;
    in->nsource = s.nsource;
    in->periodic = s.periodic && !no_periodic;
    in->box = s.box;
    in->origin = s.origin;
}

/* 1 when the file starts with the stream magic. */
static int is_stream(const char *path)
{
    static const unsigned char magic[8] = {0x89, 'F', 'O', 'F', '\r', '\n', 0x1a, '\n'};
    unsigned char b[8];
    FILE *f = fopen(path, "rb");
    if (!f) return 0; /* the reader reports it */
    size_t got = fread(b, 1, 8, f);
    fclose(f);
    return got == 8 && !memcmp(b, magic, 8);
}

/* ---- the predicate ---- */

typedef struct pred {
    float L, h; /* period and half; h = +inf when not periodic, so nothing wraps */
    float l2;
} pred;

/* flag[k] = 1 when particle (xi, yi, zi) and particle k of the run are
 * friends, else 0. One select per wrap direction, both evaluated on the
 * unwrapped d (at most one applies): subtracting or adding 0 is exact, so
 * this is the predicate's "if d > h: d - L, else if d < -h: d + L". */
/* no-trapping-math lets the selects be evaluated unconditionally, so the loop
 * vectorises (the Makefile does the same for link_cpu.c); it changes no value. */
__attribute__((optimize("no-trapping-math", "fp-contract=off"))) static void row(float xi, float yi, float zi, const float *restrict x, const float *restrict y,
                const float *restrict z, uint64_t len, pred p, unsigned char *restrict flag)
{
    const float L = p.L, h = p.h, nh = -p.h, l2 = p.l2;
    for (uint64_t k = 0; k < len; k++) {
        float dx = x[k] - xi, dy = y[k] - yi, dz = z[k] - zi;
        dx = (dx - (dx > h ? L : 0.0f)) + (dx < nh ? L : 0.0f);
        dy = (dy - (dy > h ? L : 0.0f)) + (dy < nh ? L : 0.0f);
        dz = (dz - (dz > h ? L : 0.0f)) + (dz < nh ? L : 0.0f);
        float r2 = (dx * dx + dy * dy) + dz * dz;
        flag[k] = r2 < l2;
    }
}

/* ---- union-find ---- */

static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static void uf_union(uint32_t *parent, uint32_t a, uint32_t b)
{
    a = uf_find(parent, a);
    b = uf_find(parent, b);
    if (a < b)
        parent[b] = a;
    else if (b < a)
        parent[a] = b;
}

/* Per-thread forests, merged into forest 0. */
typedef struct forests {
    uint32_t **p;
    int nt;
    uint64_t n;
} forests;

static void forests_init(forests *f, uint64_t n, int nt)
{
    f->n = n;
    f->nt = nt;
    f->p = calloc((size_t)nt, sizeof *f->p);
    if (!f->p) prog_die(EXIT_RESOURCE, "out of memory");
    for (int t = 0; t < nt; t++) {
        f->p[t] = malloc((n ? n : 1) * sizeof(uint32_t));
        if (!f->p[t]) prog_die(EXIT_RESOURCE, "out of memory for the union-find forests");
        for (uint64_t i = 0; i < n; i++) f->p[t][i] = (uint32_t)i;
    }
}

/* Merges every forest into forest 0, resolves it fully and returns it. */
static uint32_t *forests_merge(forests *f)
{
    uint32_t *g = f->p[0];
    for (int t = 1; t < f->nt; t++) {
        for (uint64_t i = 0; i < f->n; i++)
            if (f->p[t][i] != i) uf_union(g, (uint32_t)i, f->p[t][i]);
        free(f->p[t]);
    }
    for (uint64_t i = 0; i < f->n; i++) g[i] = uf_find(g, (uint32_t)i);
    free(f->p);
    return g;
}

static int nthreads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

static int thread_id(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* ---- all pairs ---- */

static uint32_t *link_all(const input *in, pred p, uint64_t *tests)
{
    const uint64_t n = in->n;
    float *x = malloc((n ? n : 1) * 4), *y = malloc((n ? n : 1) * 4), *z = malloc((n ? n : 1) * 4);
    if (!x || !y || !z) prog_die(EXIT_RESOURCE, "out of memory");
    for (uint64_t i = 0; i < n; i++) x[i] = in->pos[3 * i], y[i] = in->pos[3 * i + 1], z[i] = in->pos[3 * i + 2];
    forests f;
    forests_init(&f, n, nthreads());
    #pragma omp parallel
    {
        uint32_t *par = f.p[thread_id()];
        unsigned char *flag = malloc(n ? n : 1);
        if (!flag) prog_die(EXIT_RESOURCE, "out of memory");
        #pragma omp for schedule(dynamic, 64)
        for (uint64_t i = 0; i < n; i++) {
            uint64_t len = n - i - 1;
            row(x[i], y[i], z[i], x + i + 1, y + i + 1, z + i + 1, len, p, flag);
            for (uint64_t k = 0; k < len; k++)
                if (flag[k]) uf_union(par, (uint32_t)i, (uint32_t)(i + 1 + k));
        }
        free(flag);
    }
    free(x), free(y), free(z);
    *tests = n > 1 ? n * (n - 1) / 2 : 0;
    return forests_merge(&f);
}

/* ---- cell grid ---- */

typedef struct grid {
    int nc[3];      /* cells per axis                       */
    double lo[3];   /* lower corner                         */
    double side;    /* cell side                            */
    int periodic;
} grid;

/* Plans the grid; returns 0 when a grid cannot be used (a periodic box of
 * fewer than 3 cells a side: the neighbours would not be distinct). */
static int grid_plan(const input *in, float l, grid *g)
{
    const uint64_t n = in->n;
    double minside = (double)l * (1.0 + 1e-6);
    double maxcells = 16.0 * (double)n + 64.0;
    if (maxcells > (double)(1 << 26)) maxcells = (double)(1 << 26);
    g->periodic = in->periodic;
    if (in->periodic) {
        minside += in->box * 1e-6; /* the wrapped separation's absolute rounding, 2^-23 L, many times over */
        double nc = floor(in->box / minside);
        while (nc * nc * nc > maxcells) nc--;
        if (nc < 3) return 0;
        for (int k = 0; k < 3; k++) g->nc[k] = (int)nc, g->lo[k] = in->origin;
        g->side = in->box / nc;
        return 1;
    }
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint64_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            double v = in->pos[3 * i + k];
            lo[k] = v < lo[k] ? v : lo[k];
            hi[k] = v > hi[k] ? v : hi[k];
        }
    double side = minside;
    for (;;) {
        double cells = 1;
        for (int k = 0; k < 3; k++) cells *= floor((hi[k] - lo[k]) / side) + 1;
        if (cells <= maxcells) break;
        side *= 1.25;
    }
    for (int k = 0; k < 3; k++) {
        g->lo[k] = lo[k];
        g->nc[k] = (int)floor((hi[k] - lo[k]) / side) + 1;
    }
    g->side = side;
    return 1;
}

static int cell_coord(const grid *g, int k, float v)
{
    double c = floor(((double)v - g->lo[k]) / g->side);
    if (c < 0) c = 0;
    if (c > g->nc[k] - 1) c = g->nc[k] - 1;
    return (int)c;
}

static uint32_t *link_grid(const input *in, pred p, const grid *g, uint64_t *tests)
{
    const uint64_t n = in->n;
    const uint64_t ncell = (uint64_t)g->nc[0] * g->nc[1] * g->nc[2];
    uint64_t *start = calloc(ncell + 1, sizeof *start);
    uint64_t *cellof = malloc((n ? n : 1) * sizeof *cellof);
    uint32_t *orig = malloc((n ? n : 1) * sizeof *orig);
    float *x = malloc((n ? n : 1) * 4), *y = malloc((n ? n : 1) * 4), *z = malloc((n ? n : 1) * 4);
    if (!start || !cellof || !orig || !x || !y || !z) prog_die(EXIT_RESOURCE, "out of memory for the grid");
    for (uint64_t i = 0; i < n; i++) {
        const float *q = in->pos + 3 * i;
        cellof[i] = ((uint64_t)cell_coord(g, 2, q[2]) * g->nc[1] + cell_coord(g, 1, q[1])) * g->nc[0] +
                    cell_coord(g, 0, q[0]);
        start[cellof[i] + 1]++;
    }
    for (uint64_t c = 0; c < ncell; c++) start[c + 1] += start[c];
    uint64_t *fill = malloc((ncell ? ncell : 1) * sizeof *fill);
    if (!fill) prog_die(EXIT_RESOURCE, "out of memory for the grid");
    memcpy(fill, start, ncell * sizeof *fill);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t s = fill[cellof[i]]++;
        orig[s] = (uint32_t)i;
        x[s] = in->pos[3 * i], y[s] = in->pos[3 * i + 1], z[s] = in->pos[3 * i + 2];
    }
    free(fill);
    free(cellof);

    forests f;
    forests_init(&f, n, nthreads());
    uint64_t ntests = 0;
    #pragma omp parallel reduction(+ : ntests)
    {
        uint32_t *par = f.p[thread_id()];
        uint64_t maxrun = 0;
        for (uint64_t c = 0; c < ncell; c++) maxrun = start[c + 1] - start[c] > maxrun ? start[c + 1] - start[c] : maxrun;
        unsigned char *flag = malloc(maxrun ? maxrun : 1);
        if (!flag) prog_die(EXIT_RESOURCE, "out of memory");
        #pragma omp for schedule(dynamic, 16)
        for (uint64_t c = 0; c < ncell; c++) {
            if (start[c] == start[c + 1]) continue;
            int cc[3] = {(int)(c % g->nc[0]), (int)(c / g->nc[0] % g->nc[1]), (int)(c / g->nc[0] / g->nc[1])};
            for (int oz = -1; oz <= 1; oz++)
                for (int oy = -1; oy <= 1; oy++)
                    for (int ox = -1; ox <= 1; ox++) {
                        int o[3] = {ox, oy, oz}, nb[3], skip = 0;
                        for (int k = 0; k < 3; k++) {
                            nb[k] = cc[k] + o[k];
                            if (nb[k] < 0 || nb[k] >= g->nc[k]) {
                                if (!g->periodic) skip = 1;
                                nb[k] = (nb[k] + g->nc[k]) % g->nc[k];
                            }
                        }
                        if (skip) continue;
                        uint64_t d = ((uint64_t)nb[2] * g->nc[1] + nb[1]) * g->nc[0] + nb[0];
                        /* each unordered pair once: j > i in cell-sorted order */
                        for (uint64_t i = start[c]; i < start[c + 1]; i++) {
                            uint64_t j0 = start[d] > i + 1 ? start[d] : i + 1, j1 = start[d + 1];
                            if (j0 >= j1) continue;
                            row(x[i], y[i], z[i], x + j0, y + j0, z + j0, j1 - j0, p, flag);
                            ntests += j1 - j0;
                            for (uint64_t k = 0; k < j1 - j0; k++)
                                if (flag[k]) uf_union(par, orig[i], orig[j0 + k]);
                        }
                    }
        }
        free(flag);
    }
    free(start), free(orig), free(x), free(y), free(z);
    *tests = ntests;
    return forests_merge(&f);
}

/* ---- numbering and output ---- */

typedef struct grp {
    uint32_t root;
    uint64_t size, minid;
} grp;

static int by_size_then_id(const void *a, const void *b)
{
    const grp *p = a, *q = b;
    if (p->size != q->size) return p->size > q->size ? -1 : 1;
    return p->minid < q->minid ? -1 : p->minid > q->minid;
}

/* gid (nsource entries) from the resolved roots; returns groups found (groups of one included). */
static uint64_t number(const input *in, const uint32_t *root, uint64_t minsize, uint32_t *gid, uint64_t *nkept)
{
    const uint64_t n = in->n;
    uint64_t *size = calloc(n ? n : 1, sizeof *size), *minid = malloc((n ? n : 1) * sizeof *minid);
    uint32_t *num = calloc(n ? n : 1, sizeof *num);
    if (!size || !minid || !num) prog_die(EXIT_RESOURCE, "out of memory");
    for (uint64_t i = 0; i < n; i++) minid[i] = UINT64_MAX;
    for (uint64_t i = 0; i < n; i++) {
        size[root[i]]++;
        if (in->ids[i] < minid[root[i]]) minid[root[i]] = in->ids[i];
    }
    uint64_t found = 0, kept = 0;
    for (uint64_t i = 0; i < n; i++)
        if (root[i] == i) {
            found++;
            kept += size[i] >= minsize;
        }
    grp *g = malloc((kept ? kept : 1) * sizeof *g);
    if (!g) prog_die(EXIT_RESOURCE, "out of memory");
    uint64_t k = 0;
    for (uint64_t i = 0; i < n; i++)
        if (root[i] == i && size[i] >= minsize) g[k++] = (grp){(uint32_t)i, size[i], minid[i]};
    qsort(g, kept, sizeof *g, by_size_then_id);
    for (uint64_t j = 0; j < kept; j++) num[g[j].root] = (uint32_t)(j + 1);
    memset(gid, 0, in->nsource * sizeof *gid);
    for (uint64_t i = 0; i < n; i++) {
        if (in->ids[i] >= in->nsource) prog_die(EXIT_DATA, "particle %" PRIu64 ": ID out of range", i);
        gid[in->ids[i]] = num[root[i]];
    }
    free(size), free(minid), free(num), free(g);
    *nkept = kept;
    return found;
}

static int same_partition(const uint32_t *a, const uint32_t *b, uint64_t n)
{
    /* both are resolved to the lowest index of each group, so equal partitions are equal arrays */
    return n == 0 || !memcmp(a, b, n * sizeof *a);
}

int main(int argc, char **argv)
{
    prog_init("fofref");
    prog_std std = {0};
    double l = 0, b = 0.2;
    int have_l = 0, have_b = 0, no_periodic = 0, method = 0, have_origin = 0;
    long long minsize = 8, threads = 0;
    fk_tipsy_opts topts;
    fk_tipsy_opts_default(&topts);
    fk_spacing_spec spacing = {FK_SPACING_LIGHTEST, 0, 0};
    fk_error err = {0};
    enum { OPT_METHOD = 256, OPT_NOPER, OPT_BOX, OPT_ORIGIN, OPT_SPACING };
    static const struct option longopts[] = {PROG_STD_LONG,
                                             {"link-length", required_argument, 0, 'l'},
                                             {"b", required_argument, 0, 'b'},
                                             {"min-size", required_argument, 0, 'm'},
                                             {"method", required_argument, 0, OPT_METHOD},
                                             {"no-periodic", no_argument, 0, OPT_NOPER},
                                             {"box", required_argument, 0, OPT_BOX},
                                             {"origin", required_argument, 0, OPT_ORIGIN},
                                             {"types", required_argument, 0, 't'},
                                             {"threads", required_argument, 0, 'j'},
                                             {"spacing", required_argument, 0, OPT_SPACING},
                                             {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":" PROG_STD_SHORT "l:b:m:t:j:", longopts, NULL)) != -1) {
        if (prog_std_option(c, optarg, &std, help, argv)) continue;
        switch (c) {
        case 'l': l = prog_parse_double("-l", optarg, 0, HUGE_VAL), have_l = 1; break;
        case 'b': b = prog_parse_double("-b", optarg, 0, HUGE_VAL), have_b = 1; break;
        case 'm': minsize = prog_parse_int("-m", optarg, 1, UINT32_MAX); break;
        case 'j': threads = prog_parse_int("-j", optarg, 1, 4096); break;
        case 't': topts.types = parse_types(optarg); break;
        case OPT_NOPER: no_periodic = 1; break;
        case OPT_SPACING:
            if (fk_spacing_parse(optarg, &spacing, &err)) prog_usage("%s", err.msg);
            break;
        case OPT_BOX: topts.box = prog_parse_double("--box", optarg, 1e-30, 1e30); break;
        case OPT_ORIGIN: topts.origin = prog_parse_double("--origin", optarg, -1e30, 1e30), have_origin = 1; break;
        case OPT_METHOD:
            if (!strcmp(optarg, "grid"))
                method = 0;
            else if (!strcmp(optarg, "all"))
                method = 1;
            else if (!strcmp(optarg, "check"))
                method = 2;
            else
                prog_usage("option --method takes grid, all or check, not '%s'", optarg);
            break;
        }
    }
    if (have_l && have_b) prog_usage("options -l and -b are exclusive");
    if (optind != argc - 1) prog_usage("one input file needed (tipsy or fofkit stream)");
    const char *path = argv[optind];
#ifdef _OPENMP
    if (threads) omp_set_num_threads((int)threads);
#endif
    if (!have_origin) topts.origin = -topts.box / 2;
    topts.periodic = !no_periodic;

    double t0 = prog_now();
    input in;
    if (is_stream(path))
        read_stream(path, no_periodic, &in);
    else
        read_tipsy(path, &topts, &in);
    if (in.n >= UINT32_MAX) prog_die(EXIT_DATA, "%" PRIu64 " particles: too many for this reference", in.n);

    if (!have_l) {
        fk_spacing_sums sums;
        double neff;
        if (fk_spacing_sum(in.mass, in.type, in.n, &sums, path, &err) || fk_spacing_neff(&spacing, &sums, &neff, &err))
            prog_fail(&err);
        l = b * in.box / cbrt(neff);
    }
    float lf = (float)l;
    pred p;
    p.l2 = lf * lf;
    if (!(lf > 0) || !isfinite(lf) || !(p.l2 > 0) || !isfinite(p.l2))
        prog_die(EXIT_USAGE, "linking length %g is not a usable binary32 length", l);
    if (in.periodic && l > 0.5 * in.box) prog_die(EXIT_USAGE, "linking length %g is larger than half the box", l);
    p.L = in.periodic ? (float)in.box : 0.0f;
    p.h = in.periodic ? 0.5f * p.L : INFINITY;

    uint64_t tests = 0, tests2 = 0;
    grid g;
    int use_grid = method != 1 && grid_plan(&in, lf, &g);
    uint32_t *root = use_grid ? link_grid(&in, p, &g, &tests) : link_all(&in, p, &tests);
    if (method == 2) {
        uint32_t *other = link_all(&in, p, &tests2);
        if (!same_partition(root, other, in.n))
            prog_die(EXIT_DATA, "the grid and all-pairs partitions differ (a bug in fofref)");
        free(other);
    }
    uint32_t *gid = malloc((in.nsource ? in.nsource : 1) * sizeof *gid);
    if (!gid) prog_die(EXIT_RESOURCE, "out of memory");
    uint64_t kept, found = number(&in, root, (uint64_t)minsize, gid, &kept);

    fk_output *out = prog_open_output(&std, 0);
    FILE *fo = fk_output_file(out);
    fprintf(fo, "%" PRIu64 "\n", in.nsource);
    for (uint64_t r = 0; r < in.nsource; r++) fprintf(fo, "%" PRIu32 "\n", gid[r]);
    prog_commit(out);
    if (use_grid)
        prog_info("grid %dx%dx%d cells of side %.9g", g.nc[0], g.nc[1], g.nc[2], g.side);
    prog_info("%" PRIu64 " particles, l = %.9g (%s), %s: %" PRIu64 " pair tests%s; %" PRIu64
              " groups found, %" PRIu64 " of at least %lld; %.3f s",
              in.n, (double)lf, in.periodic ? "periodic" : "isolated", use_grid ? "grid" : "all pairs", tests,
              method == 2 ? " (checked against all pairs)" : "", found, kept, minsize, prog_now() - t0);
    free(in.pos), free(in.ids), free(in.mass), free(in.type), free(root), free(gid);
    return EXIT_OK;
}
