/* api_fof.c - fofkit_fof (fofkit.h): friends-of-friends groups of particle arrays, every level, on the CPU or a GPU, numbered as groups(1) numbers them. */
#include "api.h"
#include "api_fof.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "clock.h"
#include "gpu.h"
#include "gpuarrays.h"
#include "groups.h"
#include "kdtree.h"
#include "levels.h"
#include "linkspec.h"
#include "snap.h"

/* Leaf sizes: kdbuild's defaults (the CPU linker's rows of 16; a GPU leaf fills a warp). */
#define LEAF_CPU 16
#define LEAF_GPU 32
#define MINSIZE_DEFAULT 8

void fofkit_fof_options_init(fofkit_fof_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->nlevels = 1;
    o->b[0] = 0.2;
    o->device = FOFKIT_DEVICE_AUTO;
    o->minsize = MINSIZE_DEFAULT;
}

void fofkit_fof_result_init(fofkit_fof_result *r)
{
    memset(r, 0, sizeof *r);
    r->size = sizeof *r;
}

void fofkit_fof_result_free(fofkit_fof_result *r)
{
    if (!r) return;
    for (int k = 0; k < FOFKIT_LEVELS_MAX; k++) {
        free(r->sizes[k]);
        r->sizes[k] = NULL;
    }
}

int fk_api_fof_levels(const fofkit_fof_options *o, const fofkit_particles *p, uint64_t ntotal, const float *vel,
                      fk_linkopts *lo, fk_error *err)
{
    const int nl = o->nlevels ? o->nlevels : 1;
    if (nl < 1 || nl > FOFKIT_LEVELS_MAX)
        return fk_fail(err, FK_EINVAL, "nlevels %d: 1 to %d levels", o->nlevels, FOFKIT_LEVELS_MAX);
    const int have_l = o->l[0] > 0, sixd = o->psi[0] > 0;
    if (!have_l && !(p->box > 0))
        return fk_fail(err, FK_EINVAL,
                       "b needs the box (the mean spacing is box / n^(1/3)): give the particles' box, or l");
    for (int k = 0; k < nl; k++) {
        const double v = have_l ? o->l[k] : o->b[k];
        if (!(v > 0) || !isfinite(v))
            return fk_fail(err, FK_EINVAL, "level %d: %s = %g is not a positive number", k, have_l ? "l" : "b", v);
    }
    /* one psi for every level, or one per level */
    double psi[FOFKIT_LEVELS_MAX];
    int npsi = 0;
    if (sixd) {
        npsi = nl;
        for (int k = 0; k < nl; k++) {
            if (!(o->psi[k] >= 0) || !isfinite(o->psi[k]))
                return fk_fail(err, FK_EINVAL, "level %d: psi = %g is not a positive number", k, o->psi[k]);
            psi[k] = o->psi[k] > 0 || k == 0 ? o->psi[k] : psi[k - 1]; /* 0: the level before's */
        }
        if (!vel) return fk_fail(err, FK_EINVAL, "6D linking (psi > 0) needs the velocities (vel is NULL)");
    } else {
        for (int k = 0; k < nl; k++)
            if (o->psi[k] != 0)
                return fk_fail(err, FK_EINVAL, "level %d has psi %g but level 0 none: all levels 3D or all 6D", k,
                               o->psi[k]);
    }
    fk_snap s;
    memset(&s, 0, sizeof s);
    s.n = p->n, s.box = p->box, s.periodic = p->periodic, s.origin = p->origin;
    fk_linkspec spec = {o->b, o->l, psi, nl, have_l, npsi, o->psi_relative && sixd, 0, o->nthreads};
    int st = fk_linkspec_levels(&spec, &s, ntotal, vel, "vel", lo, NULL, NULL, err);
    if (st == FK_EFORMAT) { /* psi_relative of velocities that do not vary */
        fk_error_clear(err);
        return fk_fail(err, FK_EINVAL, "psi_relative: the velocities do not vary (rms about their mean 0), so they "
                                       "give no velocity linking length: give psi itself");
    }
    return st;
}

/* The caller's sink array (the lowest index in each particle's group) of the
 * tree-order sinks ts and the order perm; scratch: n entries, or NULL. */
static int sinks_by_index(const uint32_t *ts, const uint32_t *perm, uint64_t n, uint32_t *sink, uint32_t *scratch,
                          fk_error *err)
{
    /* the lowest index of each group, at its tree-order sink, then every particle's */
    uint32_t *low = scratch ? scratch : malloc(n ? n * sizeof *low : 1);
    if (!low) return fk_fail(err, FK_ENOMEM, "out of memory for the sinks of %" PRIu64 " particles", n);
    for (uint64_t t = 0; t < n; t++) low[t] = UINT32_MAX;
    for (uint64_t t = 0; t < n; t++)
        if (perm[t] < low[ts[t]]) low[ts[t]] = perm[t];
    for (uint64_t t = 0; t < n; t++) sink[perm[t]] = low[ts[t]];
    if (low != scratch) free(low);
    return FK_OK;
}

/* Level k of the tree-order sinks ts (canonical) and the order perm: the
 * caller's group (numbers, and the sizes) and sink (lowest index) arrays,
 * and the counts. scratch: n entries when group is NULL, else unused; ids:
 * perm widened. */
static int finish_level(const uint32_t *ts, const uint32_t *perm, const uint64_t *ids, uint64_t n, uint64_t minsize,
                        uint32_t *group, uint32_t *sink, uint32_t *scratch, fofkit_fof_result *r, int k, fk_error *err)
{
    fk_groups info;
    uint32_t *gid = group ? group : scratch;
    int st = fk_groups_number(ts, ids, n, n, minsize, gid, &info, err);
    if (st) return st;
    r->ngroups[k] = info.ngroups;
    r->nfound[k] = info.nfound;
    if (group) {
        uint64_t *sz = calloc(info.ngroups + 1, sizeof *sz);
        if (!sz) return fk_fail(err, FK_ENOMEM, "out of memory for the sizes of %" PRIu64 " groups", info.ngroups);
        const uint64_t m = info.ngroups + 1;
#pragma omp parallel
        { /* each thread counts its rows, then adds its counts */
            uint64_t *mine = calloc(m, sizeof *mine);
#pragma omp for schedule(static)
            for (uint64_t i = 0; i < n; i++) {
                if (mine)
                    mine[gid[i]]++;
                else
                    __atomic_fetch_add(&sz[gid[i]], 1, __ATOMIC_RELAXED);
            }
            for (uint64_t g = 0; mine && g < m; g++)
                if (mine[g]) __atomic_fetch_add(&sz[g], mine[g], __ATOMIC_RELAXED);
            free(mine);
        }
        r->sizes[k] = sz;
    }
    return sink ? sinks_by_index(ts, perm, n, sink, scratch, err) : FK_OK;
}

/* The tree-order sinks of every level and the order, on the CPU. */
static int link_cpu(const fk_api_arrays *a, const fk_linkopts *lo, int nl, uint32_t *const *ts, uint32_t **perm,
                    fk_error *err)
{
    const uint64_t n = a->n;
    const int sixd = lo[0].psi > 0;
    float *pos = fk_big_alloc(n ? 12 * n : 1), *vel = sixd ? fk_big_alloc(n ? 12 * n : 1) : NULL;
    if (!pos || (sixd && !vel)) {
        free(pos);
        free(vel);
        return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " particles in tree order", n);
    }
    memcpy(pos, a->pos, 12 * n);
    fk_tree t;
    int st = fk_tree_build_cpu(pos, n, LEAF_CPU, &t, perm, err);
    if (!st && sixd) {
        const uint32_t *pm = *perm;
#pragma omp parallel for schedule(static)
        for (uint64_t i = 0; i < n; i++)
            for (int k = 0; k < 3; k++) vel[3 * i + k] = a->vel[3 * (uint64_t)pm[i] + k];
    }
    if (!st) {
        st = fk_levels_link_cpu(&t, pos, vel, lo, nl, ts, NULL, NULL, err);
        fk_tree_free(&t);
    }
    free(pos);
    free(vel);
    return st;
}

/* The same on the GPU, the arrays read where they are, and each level's
 * groups numbered there: only out[k]'s group ids, sizes and counts come
 * back, and the tree-order sinks (out[k].sink) and the order (perm, when
 * not NULL) only for the caller's sinks. */
static int link_gpu(const fk_api_arrays *a, const fofkit_particles *p, const fk_linkopts *lo, int nl,
                    uint64_t minsize, fk_gpu_fof_level *out, uint32_t *perm, fk_error *err)
{
    const int per = p->periodic;
    /* device arrays on their GPU, host arrays on the selected one (fk_gpu_select) */
    return fk_gpu_fof_arrays(a->on_device ? a->dpos : a->pos, a->on_device ? a->dvel : a->vel, a->on_device,
                             a->on_device ? a->dev : fk_gpu_selected(), a->n, LEAF_GPU,
                             per ? p->origin : 0, per ? p->box : 0, lo, nl, minsize, out, perm, err);
}

/* Every level's tree-order sinks where want[k] (or every level's when want
 * is NULL), n entries each. */
static int alloc_sinks(uint32_t **ts, int nl, const int *want, uint64_t n, fk_error *err)
{
    for (int k = 0; k < nl; k++)
        if (!ts[k] && (!want || want[k]) && !(ts[k] = fk_big_alloc(n ? 4 * n : 1)))
            return fk_fail(err, FK_ENOMEM, "out of memory for the sinks of %" PRIu64 " particles", n);
    return FK_OK;
}

/* Whether some level's group array is device memory. */
static int groups_on_gpu(const fofkit_fof_result *r, int nl)
{
    for (int k = 0; k < nl; k++)
        if (r->group[k] && fk_gpu_is_device_ptr(r->group[k], NULL)) return 1;
    return 0;
}

/* Device memory is taken for the group arrays alone, on the GPU that links
 * (dev), and only when the call runs there. */
static int outputs_where(const fofkit_fof_result *r, int nl, int device, int dev, int choice, fk_error *err)
{
    for (int k = 0; k < nl; k++) {
        int d = -1;
        if (r->sink[k] && fk_gpu_is_device_ptr(r->sink[k], NULL))
            return fk_fail(err, FK_EINVAL, "level %d: the sink array is GPU memory; sinks are written to host memory", k);
        if (!r->group[k] || !fk_gpu_is_device_ptr(r->group[k], &d)) continue;
        if (device != FOFKIT_DEVICE_GPU)
            return fk_fail(err, FK_EINVAL, "level %d: the group array is GPU memory, but the call runs on the CPU%s", k,
                           choice == FOFKIT_DEVICE_CPU ? " (device CPU asked)" : "");
        if (d != dev)
            return fk_fail(err, FK_EINVAL, "level %d: the group array is on GPU %d, the particles are linked on GPU %d",
                           k, d, dev);
    }
    return FK_OK;
}

static int fof(const fofkit_particles *pin, const fofkit_fof_options *oin, fofkit_fof_result *r, fk_error *err)
{
    const double t0 = fk_now();
    fofkit_particles p;
    fofkit_fof_options o;
    fofkit_particles_init(&p);
    fofkit_fof_options_init(&o);
    int st;
    if ((st = fk_api_take(&p, sizeof p, pin, sizeof p, "fofkit_particles", err)) ||
        (st = fk_api_take(&o, sizeof o, oin, sizeof o, "fofkit_fof_options", err)))
        return st;
    if (!r || r->size < sizeof *r)
        return fk_fail(err, FK_EINVAL, "fofkit_fof_result %s: not set by fofkit_fof_result_init",
                       r ? "has a wrong size" : "is NULL");
    fofkit_fof_result_free(r);
    const int nl = o.nlevels ? o.nlevels : 1;
    if (nl < 1 || nl > FOFKIT_LEVELS_MAX)
        return fk_fail(err, FK_EINVAL, "nlevels %d: 1 to %d levels", o.nlevels, FOFKIT_LEVELS_MAX);
    if (o.minsize < 1) return fk_fail(err, FK_EINVAL, "minsize 0: groups have at least 1 member");
    fk_api_arrays a;
    if ((st = fk_api_arrays_get(&p, o.psi[0] > 0, 0, o.device == FOFKIT_DEVICE_CPU, &a, err))) return st;
    fk_api_threads th;
    fk_api_threads_set(&th, o.nthreads);
    fk_linkopts lo[FK_LEVELS_MAX];
    uint32_t *ts[FK_LEVELS_MAX] = {0}, *perm = NULL, *scratch = NULL;
    uint64_t *ids = NULL;
    fk_gpu_fof_level out[FK_LEVELS_MAX];
    memset(out, 0, sizeof out);
    int want_sink[FK_LEVELS_MAX] = {0}, any_sink = 0;
    for (int k = 0; k < nl; k++) {
        want_sink[k] = r->sink[k] != NULL;
        any_sink |= want_sink[k];
    }
    const uint64_t n = p.n;
    int device = FOFKIT_DEVICE_CPU;
    if (!st && o.psi_relative && o.psi[0] > 0 && a.on_device) st = fk_api_arrays_to_host(&a, err); /* the rms velocity */
    /* GPU velocities (dvel) are only looked at here when on the host: psi_relative copied them down */
    if (!st) st = fk_api_fof_levels(&o, &p, n, a.vel ? a.vel : a.dvel, lo, err);
    if (!st) st = fk_api_device(o.device, &a, &device, err);
    /* on the GPU the sinks and the order come to the host only for the caller's sinks */
    const int gpu = device == FOFKIT_DEVICE_GPU;
    if (!st) st = alloc_sinks(ts, nl, gpu ? want_sink : NULL, n, err);
    if (!st && gpu && any_sink && !(perm = fk_big_alloc(n ? 4 * n : 1)))
        st = fk_fail(err, FK_ENOMEM, "out of memory for the order of %" PRIu64 " particles", n);
    if (!st) st = outputs_where(r, nl, device, a.on_device ? a.dev : fk_gpu_selected(), o.device, err);
    const double t1 = fk_now();
    double t_number = 0;
    if (!st && gpu) {
        for (int k = 0; k < nl; k++) {
            out[k].sink = ts[k];
            out[k].group = r->group[k];
            out[k].want_sizes = r->group[k] != NULL;
        }
        st = link_gpu(&a, &p, lo, nl, o.minsize, out, perm, err);
        for (int k = 0; k < nl; k++) t_number += out[k].seconds;
        if (st == FK_EDEVICE && o.device == FOFKIT_DEVICE_AUTO && !groups_on_gpu(r, nl)) { /* auto: the CPU when the GPU cannot */
            fk_error_clear(err);
            for (int k = 0; k < nl; k++) free(out[k].sizes), out[k].sizes = NULL;
            free(perm);
            perm = NULL;
            device = FOFKIT_DEVICE_CPU;
            t_number = 0;
            st = alloc_sinks(ts, nl, NULL, n, err);
        }
    }
    if (!st && device == FOFKIT_DEVICE_CPU) {
        st = fk_api_arrays_to_host(&a, err);
        if (!st) st = link_cpu(&a, lo, nl, ts, &perm, err);
    }
    r->seconds_link = fk_now() - t1 - t_number; /* on the GPU the numbering ran in the same call */
    if (device == FOFKIT_DEVICE_GPU) {
        /* numbered on the GPU: the counts and sizes as they came; the caller's sinks from the tree-order ones */
        for (int k = 0; k < nl && !st; k++) {
            r->ngroups[k] = out[k].info.ngroups;
            r->nfound[k] = out[k].info.nfound;
            r->sizes[k] = out[k].sizes;
            out[k].sizes = NULL;
            if (r->sink[k]) st = sinks_by_index(ts[k], perm, n, r->sink[k], NULL, err);
        }
    } else {
        if (!st && !(ids = malloc(n ? n * sizeof *ids : 1)))
            st = fk_fail(err, FK_ENOMEM, "out of memory numbering the groups of %" PRIu64 " particles", n);
        if (!st) {
#pragma omp parallel for schedule(static)
            for (uint64_t i = 0; i < n; i++) ids[i] = perm[i];
        }
        int need_scratch = 0;
        for (int k = 0; k < nl; k++) need_scratch |= !r->group[k] || r->sink[k];
        if (!st && need_scratch && !(scratch = malloc(n ? 4 * n : 1)))
            st = fk_fail(err, FK_ENOMEM, "out of memory numbering the groups of %" PRIu64 " particles", n);
        for (int k = 0; k < nl && !st; k++)
            st = finish_level(ts[k], perm, ids, n, o.minsize, r->group[k], r->sink[k], scratch, r, k, err);
    }
    for (int k = 0; k < nl; k++) {
        r->l[k] = (double)(float)lo[k].l;
        r->psi[k] = (double)(float)lo[k].psi;
        free(out[k].sizes);
    }
    for (int k = 0; k < nl; k++) free(ts[k]);
    free(perm), free(ids), free(scratch);
    fk_api_arrays_free(&a);
    fk_api_threads_restore(&th);
    if (st) {
        fofkit_fof_result_free(r);
        return st;
    }
    r->nlevels = nl;
    r->device = device;
    r->seconds = fk_now() - t0;
    return FK_OK;
}

int fofkit_fof(const fofkit_particles *p, const fofkit_fof_options *o, fofkit_fof_result *r, fofkit_error *e)
{
    fk_error err = {0};
    fof(p, o, r, &err);
    return fk_api_give(&err, "fofkit_fof", e);
}
