/* api.h - what the public calls of fofkit.h share: options structs taken by size, errors handed out, the particle arrays checked and found on the host or a GPU. */
#ifndef FK_API_H
#define FK_API_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "fofkit.h"

/* Copies the caller's struct src (its first field a size_t: how many bytes
 * the caller's version of it has) over dst, which holds the defaults of this
 * version (dstsize bytes): a caller built against an older, shorter struct
 * keeps the defaults of the fields it does not know. FK_EINVAL naming what
 * when src is NULL or its size is below minsize (not
 * set by the _init call). */
int fk_api_take(void *dst, size_t dstsize, const void *src, size_t minsize, const char *what, fk_error *err);

/* err as the caller's fofkit_error (may be NULL), its message prefixed with
 * fn; returns err->code. */
int fk_api_give(const fk_error *err, const char *fn, fofkit_error *out);

/* The particle arrays a call works on, on the host. */
typedef struct fk_api_arrays {
    uint64_t n;
    const float *pos, *vel, *mass; /* host memory (the caller's, or copies)          */
    const float *dpos, *dvel;      /* with on_device: the caller's GPU arrays          */
    int on_device, dev;            /* the caller's arrays are on GPU dev              */
    float *copy[3];                /* copies made here (freed by fk_api_arrays_free) */
} fk_api_arrays;

/* Finds where p's arrays are (all on the host, or all on one GPU), checks
 * them (positions finite and, periodic, in the box; velocities finite when
 * need_vel or present; masses finite and >= 0 when need_mass), and with host
 * (or when the arrays are on the host) gives host pointers in a, copying
 * GPU arrays. FK_EINVAL (a missing array, a bad box, arrays in two places),
 * FK_EFORMAT (a value, naming the array and particle), FK_EUNSUP (n >= 2^32),
 * FK_ENOMEM, FK_EDEVICE. */
int fk_api_arrays_get(const fofkit_particles *p, int need_vel, int need_mass, int host, fk_api_arrays *a,
                      fk_error *err);

/* The host copies of a GPU array set made afterwards (when a GPU call
 * could not take them). */
int fk_api_arrays_to_host(fk_api_arrays *a, fk_error *err);

void fk_api_arrays_free(fk_api_arrays *a);

/* The device a call runs on: FOFKIT_DEVICE_CPU or _GPU, for a choice (auto,
 * cpu, gpu) and where the arrays are. FK_EDEVICE (gpu asked, none usable, the
 * message says why), FK_EINVAL (an unknown choice). */
int fk_api_device(int choice, const fk_api_arrays *a, int *device, fk_error *err);

/* The calling thread's OpenMP threads set to n (> 0) for a call, and put back. */
typedef struct fk_api_threads {
    int saved;
} fk_api_threads;
void fk_api_threads_set(fk_api_threads *t, int n);
void fk_api_threads_restore(const fk_api_threads *t);

#endif
