/* test_unbind_many.c - several big groups unbound at once through hooks or a device holding S (CPU stand-ins for a GPU's) equal one at a time, a device budget, chunked passes on any number of threads, the time statistics. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "check.h"
#include "halostats.h"
#include "unbind.h"

#define TESTRAND_SEED 0x853c49e6748fea9bull
#include "testrand.h"

/* The stream's particles: n, positions, velocities, masses, group ids. */
typedef struct stream {
    size_t n;
    float *pos, *vel, *mass;
    uint32_t *grp;
} stream;

/* Particles [from, from + n) of s: group id, a Plummer sphere (G = 1, scale
 * a, mass M) about c, each member at 0.3 times its escape speed, except a
 * fraction hot at 3 times the central escape speed (they leave). */
static void cluster(stream *s, size_t from, size_t n, uint32_t id, const double c[3], double a, double M, double hot)
{
    for (size_t i = from; i < from + n; i++) {
        double u = urand() * 0.97, r = a / sqrt(pow(u, -2.0 / 3.0) - 1), d[3], e[3];
        direction(d), direction(e);
        double sp = urand() < hot ? 3 * sqrt(2 * M / a) : 0.3 * sqrt(2 * M / sqrt(r * r + a * a));
        for (int k = 0; k < 3; k++) s->pos[3 * i + k] = (float)(c[k] + r * d[k]), s->vel[3 * i + k] = (float)(sp * e[k]);
        s->mass[i] = (float)(M / n);
        s->grp[i] = id;
    }
}

static int tree_calls = 0, update_calls = 0;

/* fk_pot_tree in the hook's shape (a GPU's stand-in). */
static int tree_hook(const fk_pot_members *g, const fk_pot_params *p, double *phi, fk_error *err)
{
#pragma omp atomic
    tree_calls++;
    return fk_pot_tree(g, p, phi, NULL, err);
}

/* The update written out, member by member (a GPU's stand-in). */
static int update_hook(const fk_pot_members *stay, double *phi, const fk_pot_members *leave, double G, double eps,
                       fk_error *err)
{
    (void)err;
#pragma omp atomic
    update_calls++;
    for (size_t k = 0; k < stay->n; k++) {
        double s = 0;
        for (size_t q = 0; q < leave->n; q++) {
            double dx = stay->x[k] - leave->x[q], dy = stay->y[k] - leave->y[q], dz = stay->z[k] - leave->z[q];
            s += leave->m[q] / sqrt(dx * dx + dy * dy + dz * dz + eps * eps);
        }
        phi[k] += G * s;
    }
    return FK_OK;
}

/* A device on the CPU (a GPU's stand-in): S's copy, its sums by the tree
 * hook, its chunk sums by the lanes (as a GPU's blocks), its drops
 * compacting S and updating as the update hook does. */
typedef struct cdev {
    size_t ns;
    double *a[5];       /* x y z m phi */
    size_t *idx;        /* the members' places in the group */
    const double *v[3]; /* the group's velocities */
    double *e;          /* the energies */
} cdev;

static int dev_calls = 0;

static int cdev_open(void **ctx, const fk_unbind_group *g, fk_error *err)
{
    (void)err;
    cdev *d = calloc(1, sizeof *d);
    const double *h[5] = {g->x, g->y, g->z, g->m, g->phi};
    const size_t n = g->n ? g->n : 1;
    d->ns = g->n;
    for (int f = 0; f < 5; f++) {
        d->a[f] = malloc(n * sizeof(double));
        if (h[f]) memcpy(d->a[f], h[f], g->n * sizeof(double));
    }
    d->idx = malloc(n * sizeof *d->idx), d->e = malloc(n * sizeof *d->e);
    for (size_t k = 0; k < g->n; k++) d->idx[k] = k;
    d->v[0] = g->vx, d->v[1] = g->vy, d->v[2] = g->vz;
    *ctx = d;
#pragma omp atomic
    dev_calls++;
    return FK_OK;
}

static int cdev_sum(void *ctx, const fk_pot_params *p, fk_error *err)
{
    cdev *d = ctx;
    fk_pot_members g = {d->ns, d->a[0], d->a[1], d->a[2], d->a[3]};
    return tree_hook(&g, p, d->a[4], err);
}

static int cdev_get(void *ctx, double *x, double *y, double *z, double *m, double *phi, fk_error *err)
{
    (void)err;
    cdev *d = ctx;
    double *h[5] = {x, y, z, m, phi};
    for (int f = 0; f < 5; f++)
        if (h[f]) memcpy(h[f], d->a[f], d->ns * sizeof(double));
    return FK_OK;
}

static int load_calls = 0;

static int cdev_load(void *ctx, const double *phi, fk_error *err)
{
    (void)err;
    cdev *d = ctx;
    load_calls++;
    memcpy(d->a[4], phi, d->ns * sizeof(double));
    return FK_OK;
}

static int cdev_sums(void *ctx, double (*part)[7], fk_error *err)
{
    (void)err;
    cdev *d = ctx;
    for (size_t lo = 0, c = 0; lo < d->ns; lo += FK_UNBIND_CHUNK, c++) {
        size_t hi = d->ns - lo < FK_UNBIND_CHUNK ? d->ns : lo + FK_UNBIND_CHUNK;
        fk_unbind_lane_sums(hi - lo, d->idx + lo, d->a[3] + lo, d->v[0], d->v[1], d->v[2], part[c]);
    }
    return FK_OK;
}

static int cdev_energies(void *ctx, const double v[3], int massive, double (*part)[7], fk_error *err)
{
    (void)err;
    cdev *d = ctx;
    for (size_t lo = 0, c = 0; lo < d->ns; lo += FK_UNBIND_CHUNK, c++) {
        size_t hi = d->ns - lo < FK_UNBIND_CHUNK ? d->ns : lo + FK_UNBIND_CHUNK;
        fk_unbind_lane_energies(hi - lo, d->idx + lo, d->a[3] + lo, d->a[4] + lo, d->v[0], d->v[1], d->v[2], v,
                                massive, d->e + lo, part[c]);
    }
    return FK_OK;
}

static int cdev_drop(void *ctx, double emin, size_t maxupd, double G, double eps, size_t *nu, fk_error *err)
{
    cdev *d = ctx;
    double *l = malloc(4 * (d->ns ? d->ns : 1) * sizeof(double));
    size_t w = 0, q = 0;
    for (size_t i = 0; i < d->ns; i++) {
        if (d->e[i] >= emin) {
            for (int f = 0; f < 4; f++) l[f * d->ns + q] = d->a[f][i];
            q++;
            continue;
        }
        for (int f = 0; f < 5; f++) d->a[f][w] = d->a[f][i];
        d->idx[w++] = d->idx[i];
    }
    const size_t ns = d->ns;
    d->ns = w, *nu = q;
    int st = FK_OK;
    if (q && q <= maxupd && w) {
        fk_pot_members stay = {w, d->a[0], d->a[1], d->a[2], d->a[3]};
        fk_pot_members leave = {q, l, l + ns, l + 2 * ns, l + 3 * ns};
        st = update_hook(&stay, d->a[4], &leave, G, eps, err);
    }
    free(l);
    return st;
}

static int cdev_members(void *ctx, size_t *idx, fk_error *err)
{
    (void)err;
    cdev *d = ctx;
    memcpy(idx, d->idx, d->ns * sizeof *idx);
    return FK_OK;
}

static void cdev_close(void *ctx)
{
    cdev *d = ctx;
    for (int f = 0; f < 5; f++) free(d->a[f]);
    free(d->idx), free(d->e);
    free(d);
}

static const fk_unbind_device cpu_device = {cdev_open,     cdev_sum,  cdev_get,     cdev_load, cdev_sums,
                                            cdev_energies, cdev_drop, cdev_members, cdev_close};

static uint64_t bytes_of(uint64_t n)
{
    return n;
}

/* Group g's members as fk_unbind takes them: positions from its reference
 * member, in stream order. */
static void members(const stream *s, const fk_halo *h, uint32_t g, double *c[7], size_t *n)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->grp[i] != g) continue;
        for (int e = 0; e < 3; e++) {
            c[e][k] = (double)s->pos[3 * i + e] - (double)s->pos[3 * h->ref + e];
            c[3 + e][k] = s->vel[3 * i + e];
        }
        c[6][k] = s->mass[i];
        k++;
    }
    *n = k;
}

/* Three big groups (more than FK_POT_ALONE members, so more than one chunk;
 * the last with more leavers than FK_UNBIND_GPU_PAIRS, so that the tree hook
 * sums again), two small ones and loose particles: unbound with the hooks by
 * two threads (several big groups at once, as a GPU's would be) and by one,
 * with a budget that holds one big group at a time and without, all equal to
 * fk_unbind on each group alone with the same hooks. (theta 1: cheaper trees,
 * the same code.) */
static void test_many(void)
{
    fk_error err = {0};
    const size_t na = 66000, nb = 67000, nc = 68000, nd = 3000, ne = 500, nl = 1000;
    const size_t n = na + nb + nc + nd + ne + nl;
    stream s = {n, malloc(12 * n), malloc(12 * n), malloc(4 * n), malloc(4 * n)};
    const double ca[3] = {0, 0, 0}, cb[3] = {1, 0, 0}, cc[3] = {0, 1, 0}, cd[3] = {0, 0, 1}, ce[3] = {1, 1, 1};
    size_t at = 0;
    cluster(&s, at, na, 1, ca, 0.05, 1, 0.005), at += na;
    cluster(&s, at, nb, 2, cb, 0.05, 1, 0.005), at += nb;
    cluster(&s, at, nc, 3, cc, 0.05, 1, 0.15), at += nc;
    cluster(&s, at, nd, 4, cd, 0.05, 0.1, 0.02), at += nd;
    cluster(&s, at, ne, 5, ce, 0.05, 0.01, 0), at += ne;
    cluster(&s, at, nl, 0, ce, 0.5, 0.01, 0);
    fk_halo_input in = {n, s.pos, s.vel, s.mass, NULL, s.grp, 0, 0, 0, 0, 0, 0, NULL, 0};
    fk_halo h[5];
    CHECK(fk_halostats_compute(&in, 5, h, "test", &err) == FK_OK);
    fk_unbind_params p = {0};
    fk_pot_defaults(&p.pot);
    p.pot.eps = 0.002, p.pot.theta = 1;
    p.minbound = FK_UNBIND_MINBOUND;
    p.tree = tree_hook, p.update = update_hook;

    /* one at a time: fk_unbind on each big group, fk_unbind_halos for the others */
    unsigned char *want = calloc(n, 1), *flags = malloc(nc);
    uint64_t nbound[5];
    double *c[7];
    for (int k = 0; k < 7; k++) c[k] = malloc(nc * sizeof(double));
    for (uint32_t g = 1; g <= 3; g++) {
        size_t m;
        members(&s, &h[g - 1], g, c, &m);
        fk_unbind_group grp = {m, c[0], c[1], c[2], c[3], c[4], c[5], c[6], NULL};
        fk_unbind_result r;
        CHECK(fk_unbind(&grp, &p, flags, &r, &err) == FK_OK);
        for (size_t i = 0, k = 0; i < n; i++)
            if (s.grp[i] == g) want[i] = flags[k++];
        nbound[g - 1] = r.nbound;
        CHECK_MSG(r.nbound > m / 2 && r.nbound < m, "group %u: %llu of %zu bound", g, (unsigned long long)r.nbound, m);
        CHECK(r.passes >= 2 && r.t_sums > 0 && (g == 3 || r.t_updates > 0) && r.t_rest > 0);
        if (g == 3) CHECK_MSG(r.sums >= 2, "group 3: %u sums", r.sums); /* a tree hook's sum after the first pass */
    }
    CHECK(tree_calls >= 4 && update_calls >= 2);
    {
        fk_halo hs[5];
        memcpy(hs, h, sizeof h);
        unsigned char *b = malloc(n);
        CHECK(fk_unbind_halos(&in, 5, hs, &p, b, &err) == FK_OK); /* the small groups' flags */
        for (size_t i = 0; i < n; i++)
            if (s.grp[i] == 0 || s.grp[i] > 3) want[i] = b[i];
        nbound[3] = hs[3].n_bound, nbound[4] = hs[4].n_bound;
        free(b);
    }
    CHECK(nbound[3] > 0 && nbound[4] > 0);

    /* all at once: one thread, two threads with a budget for all, two with one
     * for a group; the last two with S held by the device's stand-in, the
     * last with one thread taking the big groups */
    for (int run_k = 0; run_k < 5; run_k++) {
        const int th = run_k ? 2 : 1, tight = run_k % 2 == 0, on_dev = run_k >= 3;
        omp_set_num_threads(th);
        fk_halo hh[5];
        memcpy(hh, h, sizeof h);
        unsigned char *b = malloc(n);
        fk_unbind_stats st;
        fk_unbind_run run = {NULL, bytes_of, tight ? nc : 10 * n, &st, on_dev ? &cpu_device : NULL, run_k == 4, 0};
        tree_calls = update_calls = dev_calls = 0;
        CHECK(fk_unbind_halos_run(&in, 5, hh, &p, &run, b, &err) == FK_OK);
        CHECK_MSG(memcmp(b, want, n) == 0, "%d threads, budget %s: other bound members", th, tight ? "tight" : "large");
        for (int g = 0; g < 5; g++)
            CHECK_MSG(hh[g].n_bound == nbound[g], "%d threads: group %d: %llu bound, one at a time %llu", th, g + 1,
                      (unsigned long long)hh[g].n_bound, (unsigned long long)nbound[g]);
        CHECK(tree_calls >= 4 && update_calls >= 2 && dev_calls == (on_dev ? 3 : 0));
        CHECK(st.nbig == 3 && st.passes >= 6 && st.sums >= 4 && st.t_largest > 0 && st.t_updates > 0);
        CHECK(st.wall_big > 0 && st.wall_big <= st.wall && st.wall_small <= st.wall);
        CHECK_MSG(st.nsmall == 2 && st.small_passes >= 2 && st.small_t_rest > 0, "%llu small groups, %llu passes",
                  (unsigned long long)st.nsmall, (unsigned long long)st.small_passes);
        free(b);
    }
    /* a lower threshold with the device: group 4 (3000 members) goes to it too */
    {
        omp_set_num_threads(2);
        fk_halo hh[5];
        memcpy(hh, h, sizeof h);
        fk_unbind_stats st;
        fk_unbind_run run = {NULL, bytes_of, 10 * n, &st, &cpu_device, 1, 2500};
        dev_calls = 0;
        CHECK(fk_unbind_halos_run(&in, 5, hh, &p, &run, NULL, &err) == FK_OK);
        CHECK_MSG(st.nbig == 4 && st.big_above == 2500 && st.nsmall == 1 && dev_calls == 4, "%llu big, %d on the device",
                  (unsigned long long)st.nbig, dev_calls);
        for (int g = 0; g < 3; g++) CHECK(hh[g].n_bound == nbound[g]);
        CHECK(hh[3].n_bound > 0 && hh[4].n_bound == nbound[4]);
    }
    omp_set_num_threads(2);
    for (int k = 0; k < 7; k++) free(c[k]);
    free(want), free(flags);
    free(s.pos), free(s.vel), free(s.mass), free(s.grp);
}

/* One cluster of n members (a = 0.05, mass 1, a fraction hot unbound) about
 * the origin as a group's seven arrays c (x y z vx vy vz m; caller frees). */
static fk_unbind_group cluster_group(size_t n, double hot, double *c[7])
{
    stream s = {n, malloc(12 * n), malloc(12 * n), malloc(4 * n), malloc(4 * n)};
    const double o[3] = {0, 0, 0};
    cluster(&s, 0, n, 1, o, 0.05, 1, hot);
    for (int k = 0; k < 7; k++) c[k] = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        for (int e = 0; e < 3; e++) c[e][i] = s.pos[3 * i + e], c[3 + e][i] = s.vel[3 * i + e], c[6][i] = s.mass[i];
    free(s.pos), free(s.vel), free(s.mass), free(s.grp);
    return (fk_unbind_group){n, c[0], c[1], c[2], c[3], c[4], c[5], c[6], NULL};
}

/* A group of more than two chunks without hooks (the CPU's tree and
 * updates): the same result on one thread, on two, and inside a parallel
 * region (its chunks then run as tasks). */
static void test_chunks(void)
{
    fk_error err = {0};
    const size_t n = 2 * FK_UNBIND_CHUNK + 777;
    double *c[7];
    fk_unbind_group g = cluster_group(n, 0.02, c);
    fk_unbind_params p = {0};
    fk_pot_defaults(&p.pot);
    p.pot.eps = 0.002, p.pot.theta = 1;
    p.minbound = FK_UNBIND_MINBOUND;
    unsigned char *b[3] = {malloc(n), malloc(n), malloc(n)};
    fk_unbind_result r[3];
    int st[3] = {-1, -1, -1};
    for (int th = 1; th <= 2; th++) {
        omp_set_num_threads(th);
        st[th - 1] = fk_unbind(&g, &p, b[th - 1], &r[th - 1], &err);
    }
#pragma omp parallel num_threads(2)
#pragma omp single
    st[2] = fk_unbind(&g, &p, b[2], &r[2], &err);
    for (int k = 0; k < 3; k++) {
        CHECK(st[k] == FK_OK);
        CHECK_MSG(memcmp(b[k], b[0], n) == 0 && r[k].nbound == r[0].nbound && r[k].mbound == r[0].mbound &&
                      r[k].passes == r[0].passes,
                  "run %d: %llu bound in %u passes, the first %llu in %u", k, (unsigned long long)r[k].nbound,
                  r[k].passes, (unsigned long long)r[0].nbound, r[0].passes);
    }
    CHECK_MSG(r[0].nbound > n / 2 && r[0].nbound < n && r[0].passes >= 2, "%llu of %zu bound in %u passes",
              (unsigned long long)r[0].nbound, n, r[0].passes);
    for (int k = 0; k < 3; k++) free(b[k]);
    for (int k = 0; k < 7; k++) free(c[k]);
}

/* A group summed exactly (at most nexact members) with a device: the sums
 * stay on the CPU and are loaded into the device, whose updates then give
 * what the update hook gives. */
static void test_dev_exact(void)
{
    fk_error err = {0};
    const size_t n = 3000;
    double *c[7];
    fk_unbind_group g = cluster_group(n, 0.3, c);
    fk_unbind_params p = {0};
    fk_pot_defaults(&p.pot);
    p.pot.eps = 0.002, p.pot.nexact = 4000;
    p.minbound = FK_UNBIND_MINBOUND;
    p.tree = tree_hook, p.update = update_hook;
    unsigned char *b[2] = {malloc(n), malloc(n)};
    fk_unbind_result r[2];
    CHECK(fk_unbind(&g, &p, b[0], &r[0], &err) == FK_OK);
    load_calls = 0;
    CHECK(fk_unbind_dev(&g, &p, &cpu_device, b[1], &r[1], &err) == FK_OK);
    CHECK_MSG(load_calls >= 1 && r[1].sums == (uint32_t)load_calls, "%d loads, %u sums", load_calls, r[1].sums);
    CHECK(memcmp(b[0], b[1], n) == 0 && r[0].nbound == r[1].nbound && r[0].passes == r[1].passes);
    CHECK_MSG(r[0].nbound > n / 2 && r[0].nbound < n && r[0].passes >= 2, "%llu of %zu bound in %u passes",
              (unsigned long long)r[0].nbound, n, r[0].passes);
    free(b[0]), free(b[1]);
    for (int k = 0; k < 7; k++) free(c[k]);
}

int main(void)
{
    test_dev_exact();
    test_chunks();
    test_many();
    CHECK_DONE();
}
