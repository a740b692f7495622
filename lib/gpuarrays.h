/* gpuarrays.h - the GPU side of the library's calls on arrays (fofkit.h): where an array lives, checks of GPU arrays, FoF of arrays on the GPU. */
#ifndef FK_GPUARRAYS_H
#define FK_GPUARRAYS_H

#include <stdint.h>

#include "error.h"
#include "groups.h"
#include "link.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when p points into a GPU's memory (device or managed), with the device in
 * *dev; 0 for host memory, NULL, a build without CUDA or a machine without a
 * driver. Never fails. */
int fk_gpu_is_device_ptr(const void *p, int *dev);

/* Copies bytes from GPU memory at src (on device dev) to the host. FK_EDEVICE. */
int fk_gpu_copy_to_host(void *dst, const void *src, uint64_t bytes, int dev, fk_error *err);

/* The first row of a GPU array of n rows of ncols floats (on device dev) with
 * a value that is not finite or, when periodic, outside [lo, hi): *bad, or n
 * when none. FK_EDEVICE. */
int fk_gpu_first_bad(const float *a, uint64_t n, int ncols, int periodic, float lo, float hi, int dev, uint64_t *bad,
                     fk_error *err);

/* What fk_gpu_fof_arrays gives of one level; every array the caller's host
 * memory, NULL when not wanted. */
typedef struct fk_gpu_fof_level {
    uint32_t *sink;   /* n: the level's canonical sinks in tree order         */
    uint32_t *group;  /* n: the groups, numbered on the GPU as fk_groups_number
                         numbers them with ids = perm (fk_gpu_groups_number),
                         indexed by the particles' own index                 */
    int want_sizes;   /* set *sizes                                          */
    uint64_t *sizes;  /* set by the call with want_sizes: ngroups + 1 entries
                         (malloc'd; the caller frees them, on failure too)   */
    fk_groups info;   /* set by the call: the numbering's counts             */
    double seconds;   /* set by the call: the numbering's wall time, its
                         downloads included                                  */
} fk_gpu_fof_level;

/* Builds the tree over pos (n x 3; vel n x 3 when a level is 6D, else
 * unused) on the GPU and links every level of lo with the particles resident
 * (as fk_gpu_build and fk_gpu_link_levels do, one upload at most); each
 * level's sinks are numbered there (fk_gpu_groups_number, minsize): out[k]
 * (nlevels entries) gets level k's group ids, sizes and counts, and its
 * sinks only when out[k].sink asks for them; perm (host, n; NULL: not
 * wanted) the tree order (perm[tree index] = index). The arrays are read
 * where they are: on_device says they are on device dev (else host memory,
 * uploaded to device dev). lo and span as for fk_gpu_build. FK_EDEVICE (no
 * GPU, too little memory: the message says how much), FK_EUNSUP (n >=
 * 2^31), FK_EINVAL (the levels, minsize 0), FK_ENOMEM. */
int fk_gpu_fof_arrays(const float *pos, const float *vel, int on_device, int dev, uint64_t n, uint32_t leafsize,
                      double lo, double span, const fk_linkopts *o, int nlevels, uint64_t minsize,
                      fk_gpu_fof_level *out, uint32_t *perm, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
