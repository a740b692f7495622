/* internal.cuh - the GPU phases on device-resident data, composed by the public calls in gpu.h. */
#ifndef FK_GPU_INTERNAL_CUH
#define FK_GPU_INTERNAL_CUH

#include "common.cuh"
#include "groups.h"
#include "kdtree.h"
#include "link.h"
#include "potential.h"

/* Builds the tree over d_pos (n x 3, stream order) on the device: t's
 * layout must be set (fk_tree_alloc); writes the particles in tree order
 * to d_sorted, d_perm[new] = old, and the node boxes to d_box. Quantises in
 * [lo, lo + span) per axis, or the particles' bounding cube if span <= 0. */
int fk_gpu_build_dev(const float *d_pos, const fk_tree *t, double lo, double span, float *d_sorted,
                     uint32_t *d_perm, float *d_box, fk_error *err);

/* The same, allocating d_sorted (when empty) only after the sort's buffers
 * are freed: the peak is the larger of the two phases, not their sum. */
int fk_gpu_build_dev(const float *d_pos, const fk_tree *t, double lo, double span, dbuf<float> &d_sorted,
                     uint32_t *d_perm, float *d_box, fk_error *err);

/* Device bytes fk_gpu_build_dev allocates for itself (beyond its outputs),
 * and the peak of the dbuf version (its sort's buffers, then d_sorted). */
uint64_t fk_gpu_build_scratch(uint64_t n);
uint64_t fk_gpu_build_peak(uint64_t n);

/* Links on the device: d_pos (and d_vel in 6D) in t's tree order, d_box
 * the node boxes; writes the canonical sinks to d_sink. counts gets the
 * pair and box tests; groups the number of sinks; phase the seconds of its
 * phases (as fk_gputimes.link_phase); listed the leaf pairs listed. */
int fk_gpu_link_dev(const fk_tree *t, const float *d_pos, const float *d_vel, const float *d_box,
                    const fk_linkopts *o, uint32_t *d_sink, unsigned long long counts[2], uint64_t *groups,
                    double phase[4], uint64_t *listed, fk_error *err);

/* Device bytes fk_gpu_link_dev allocates for itself (beyond its inputs and
 * the sink array). */
uint64_t fk_gpu_link_scratch(uint64_t n, uint64_t nnodes, int sixd);

/* fk_gpu_groups_number (gpu.h) on device-resident arrays: d_root the
 * resolved sinks, d_perm the original indices (a permutation of 0 .. n-1),
 * both n entries on the current device; gid (n, or NULL for the counts
 * alone: host memory, or device memory of the current device, written where
 * it is) and *sizes (when sizes is not NULL) come back, nothing else but the
 * counts. On the calling thread's default stream. */
int fk_gpu_number_dev(const uint32_t *d_root, const uint32_t *d_perm, uint64_t n, uint64_t minsize, uint32_t *gid,
                      uint64_t **sizes, fk_groups *info, fk_error *err);

/* Device bytes fk_gpu_number_dev allocates for n particles at most. */
uint64_t fk_gpu_number_scratch(uint64_t n, uint64_t minsize);

/* Every member's potential from the others, the n members on the device
 * (d_x d_y d_z d_m), into d_phi, as fk_gpu_pot_tree computes it: exact
 * double sums up to 32768 members, the tree walk above; on the calling
 * thread's default stream. */
int fk_gpu_pot_phi_dev(uint64_t n, const double *d_x, const double *d_y, const double *d_z, const double *d_m,
                       const fk_pot_params *p, double *d_phi, fk_error *err);

#endif
