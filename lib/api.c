/* api.c - what the public calls of fofkit.h share: options structs taken by size, errors handed out, the particle arrays checked and found on the host or a GPU. */
#include "api.h"

#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "gpuarrays.h"
#include "phase.h"
#include "snap.h"
#include "version.h"

const char *fofkit_version(void)
{
    return FK_VERSION;
}

const char *fofkit_strerror(int code)
{
    return fk_strstatus(code);
}

int fofkit_has_gpu_backend(void)
{
    return fk_gpu_compiled();
}

void fofkit_particles_init(fofkit_particles *p)
{
    memset(p, 0, sizeof *p);
    p->size = sizeof *p;
}

int fk_api_take(void *dst, size_t dstsize, const void *src, size_t minsize, const char *what, fk_error *err)
{
    if (!src) return fk_fail(err, FK_EINVAL, "no %s given (NULL)", what);
    size_t size;
    memcpy(&size, src, sizeof size);
    if (size < minsize || size > (1u << 20))
        return fk_fail(err, FK_EINVAL, "%s has size %zu: not set by its _init call (expected at least %zu)", what,
                       size, minsize);
    memcpy(dst, src, size < dstsize ? size : dstsize);
    memcpy(dst, &dstsize, sizeof dstsize);
    return FK_OK;
}

int fk_api_give(const fk_error *err, const char *fn, fofkit_error *out)
{
    if (out) {
        out->code = err->code;
        out->message[0] = '\0';
        if (err->code) { /* "fn: message", cut to fit */
            size_t k = (size_t)snprintf(out->message, sizeof out->message, "%s: ", fn), m = strlen(err->msg);
            if (k > sizeof out->message - 1) k = sizeof out->message - 1;
            if (m > sizeof out->message - 1 - k) m = sizeof out->message - 1 - k;
            memcpy(out->message + k, err->msg, m);
            out->message[k + m] = '\0';
        }
    }
    return err->code;
}

/* The host copy of GPU array src of n x ncols floats into *dst. */
static int copy_down(const float *src, uint64_t n, int ncols, int dev, float **dst, fk_error *err)
{
    *dst = NULL;
    if (!src) return FK_OK;
    if (!(*dst = malloc(n ? n * (uint64_t)ncols * sizeof **dst : 1)))
        return fk_fail(err, FK_ENOMEM, "out of memory copying %" PRIu64 " particles from the GPU", n);
    return fk_gpu_copy_to_host(*dst, src, n * (uint64_t)ncols * sizeof **dst, dev, err);
}

int fk_api_arrays_to_host(fk_api_arrays *a, fk_error *err)
{
    if (!a->on_device || a->pos) return FK_OK;
    const float *src[3] = {a->dpos, a->dvel, a->mass};
    const int ncols[3] = {3, 3, 1};
    for (int k = 0; k < 3; k++) {
        int st = copy_down(src[k], a->n, ncols[k], a->dev, &a->copy[k], err);
        if (st) return st;
    }
    a->pos = a->copy[0], a->vel = a->copy[1], a->mass = a->copy[2];
    return FK_OK;
}

void fk_api_arrays_free(fk_api_arrays *a)
{
    for (int k = 0; k < 3; k++) free(a->copy[k]);
    memset(a, 0, sizeof *a);
}

/* Checks the GPU array a of n x ncols (its row bad found on the device) with
 * the host's messages: the bad row copied down and checked there. Positions
 * (in_box) must also lie in a periodic box; velocities and masses need only
 * be finite. */
static int check_on_device(const float *a, uint64_t n, int ncols, int in_box, const fk_snap *s, int dev,
                           const char *name, fk_error *err)
{
    uint64_t bad;
    in_box = in_box && s->periodic;
    int st = fk_gpu_first_bad(a, n, ncols, in_box, (float)s->origin, (float)(s->origin + s->box), dev, &bad, err);
    if (st || bad >= n) return st;
    float row[3] = {0, 0, 0};
    if ((st = fk_gpu_copy_to_host(row, a + (uint64_t)ncols * bad, (uint64_t)ncols * sizeof *row, dev, err))) return st;
    if (ncols == 1)
        return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " has mass %g (masses must be finite and >= 0)", name,
                       bad, row[0]);
    if (strcmp(name, "vel") == 0)
        return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " has a non-finite velocity (%g %g %g)", name, bad,
                       row[0], row[1], row[2]);
    if (!isfinite(row[0]) || !isfinite(row[1]) || !isfinite(row[2]))
        return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " has a non-finite coordinate (%g %g %g)", name, bad,
                       row[0], row[1], row[2]);
    return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " at (%g %g %g) lies outside the periodic box [%g, %g)",
                   name, bad, row[0], row[1], row[2], (float)s->origin, (float)(s->origin + s->box));
}

/* Masses on the host: finite and >= 0. */
static int check_masses(const float *m, uint64_t n, fk_error *err)
{
    uint64_t bad = UINT64_MAX;
#pragma omp parallel for schedule(static) reduction(min : bad)
    for (uint64_t i = 0; i < n; i++)
        if (!(m[i] >= 0) || !isfinite(m[i]))
            if (i < bad) bad = i;
    if (bad == UINT64_MAX) return FK_OK;
    return fk_fail(err, FK_EFORMAT, "mass: particle %" PRIu64 " has mass %g (masses must be finite and >= 0)", bad,
                   m[bad]);
}

int fk_api_arrays_get(const fofkit_particles *p, int need_vel, int need_mass, int host, fk_api_arrays *a,
                      fk_error *err)
{
    memset(a, 0, sizeof *a);
    a->n = p->n;
    if (!p->pos && p->n) return fk_fail(err, FK_EINVAL, "no positions (pos is NULL)");
    if (need_vel && !p->vel && p->n) return fk_fail(err, FK_EINVAL, "velocities needed (vel is NULL)");
    if (p->n >= (UINT64_C(1) << 32))
        return fk_fail(err, FK_EUNSUP, "%" PRIu64 " particles: at most 2^32 - 1 are supported", p->n);
    if (p->periodic && (!(p->box > 0) || !isfinite((float)p->box) || !isfinite(p->origin) ||
                        !isfinite((float)(p->origin + p->box))))
        return fk_fail(err, FK_EINVAL, "a periodic box needs a finite side > 0 and origin, not box %g origin %g",
                       p->box, p->origin);
    if (!(p->box >= 0) || !isfinite(p->box)) return fk_fail(err, FK_EINVAL, "box %g is not a size (>= 0)", p->box);
    /* where: every array where pos is */
    int dev[3] = {0, 0, 0}, where[3];
    const void *arr[3] = {p->pos, p->vel, p->mass};
    static const char *names[3] = {"pos", "vel", "mass"};
    for (int k = 0; k < 3; k++) where[k] = arr[k] && p->n ? fk_gpu_is_device_ptr(arr[k], &dev[k]) : -1;
    for (int k = 1; k < 3; k++)
        if (where[k] >= 0 && where[0] >= 0 && (where[k] != where[0] || dev[k] != dev[0]))
            return fk_fail(err, FK_EINVAL, "pos is in %s memory, %s in %s memory: the arrays must all be in one place",
                           where[0] ? "GPU" : "host", names[k], where[k] ? "GPU" : "host");
    fk_snap s;
    memset(&s, 0, sizeof s);
    s.n = p->n, s.periodic = p->periodic, s.box = p->box, s.origin = p->origin;
    int st;
    if (where[0] == 1) {
        a->on_device = 1, a->dev = dev[0];
        a->dpos = p->pos, a->dvel = p->vel, a->mass = NULL;
        if ((st = check_on_device(p->pos, p->n, 3, 1, &s, a->dev, "pos", err))) return st;
        if (p->vel && (st = check_on_device(p->vel, p->n, 3, 0, &s, a->dev, "vel", err))) return st;
        if (need_mass && p->mass && (st = check_on_device(p->mass, p->n, 1, 0, &s, a->dev, "mass", err))) return st;
        if (!host) {
            a->mass = p->mass; /* a GPU pointer: only copied down with the rest */
            return FK_OK;
        }
        /* copies for the host */
        const float *src[3] = {p->pos, p->vel, need_mass ? p->mass : NULL};
        const int ncols[3] = {3, 3, 1};
        for (int k = 0; k < 3; k++)
            if ((st = copy_down(src[k], p->n, ncols[k], a->dev, &a->copy[k], err))) return st;
        a->pos = a->copy[0], a->vel = a->copy[1], a->mass = a->copy[2];
        return FK_OK;
    }
    a->pos = p->pos, a->vel = p->vel, a->mass = p->mass;
    if ((st = fk_snap_check_positions(&s, p->pos, "pos", err))) return st;
    if (p->vel && (st = fk_phase_check(p->vel, p->n, "vel", err))) return st;
    if (need_mass && p->mass && (st = check_masses(p->mass, p->n, err))) return st;
    return FK_OK;
}

int fk_api_device(int choice, const fk_api_arrays *a, int *device, fk_error *err)
{
    *device = FOFKIT_DEVICE_CPU;
    if (choice != FOFKIT_DEVICE_AUTO && choice != FOFKIT_DEVICE_CPU && choice != FOFKIT_DEVICE_GPU)
        return fk_fail(err, FK_EINVAL, "device %d: FOFKIT_DEVICE_AUTO, _CPU or _GPU", choice);
    if (choice == FOFKIT_DEVICE_CPU) return FK_OK;
    if (a->on_device) { /* the arrays' own GPU */
        *device = FOFKIT_DEVICE_GPU;
        return FK_OK;
    }
    fk_gpuinfo gi;
    int st = fk_gpu_probe(&gi, err);
    if (st) return st;
    if (gi.present) {
        *device = FOFKIT_DEVICE_GPU;
        return FK_OK;
    }
    if (choice == FOFKIT_DEVICE_GPU) return fk_fail(err, FK_EDEVICE, "device GPU asked: %s", gi.reason);
    return FK_OK;
}

void fk_api_threads_set(fk_api_threads *t, int n)
{
    t->saved = 0;
    if (n > 0) {
        t->saved = omp_get_max_threads();
        omp_set_num_threads(n);
    }
}

void fk_api_threads_restore(const fk_api_threads *t)
{
    if (t->saved > 0) omp_set_num_threads(t->saved);
}
