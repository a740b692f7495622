/* gpu.h - the CUDA backend seen from C: device probe, tree build, linking; stubs when built without CUDA. */
#ifndef FK_GPU_H
#define FK_GPU_H

#include <stdint.h>

#include "error.h"
#include "groups.h"
#include "kdtree.h"
#include "link.h"
#include "potential.h"
#include "unbind.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fk_gpuinfo {
    int present;          /* a usable CUDA device was found        */
    int ordinal, count;   /* the device probed, of count visible   */
    char name[256];       /* e.g. "NVIDIA H100 80GB HBM3"          */
    char reason[160];     /* why none is usable, when present == 0 */
    int cc_major, cc_minor;
    int multiprocessors;
    uint64_t mem_free, mem_total;
} fk_gpuinfo;

/* Device-timed phases of one GPU call, in seconds (CUDA events). */
typedef struct fk_gputimes {
    double upload, build, link, download;
    double link_phase[4];  /* within link: cliques and tops, own pairs and walk, leaf pairs, flatten */
    uint64_t leaf_pairs;   /* leaf pairs listed for particle tests */
    uint64_t bytes_needed; /* device memory the call allocated */
} fk_gputimes;

/* 1 when this build has the CUDA backend. */
int fk_gpu_compiled(void);

/* Looks for the selected device (fk_gpu_select; 0 unless another was
 * chosen). Never fails for a missing GPU or driver: info->present is 0 and
 * info->reason says why. */
int fk_gpu_probe(fk_gpuinfo *info, fk_error *err);

/* The CUDA devices this process sees (those CUDA_VISIBLE_DEVICES lists): 0
 * without a driver, a device or CUDA in the build. */
int fk_gpu_count(void);

/* Makes device ordinal (0 .. fk_gpu_count() - 1) the one every later call
 * of this interface uses, on whichever thread calls it (a process-wide
 * choice: CUDA's current device is a thread's own, so each call sets it).
 * FK_EINVAL for a device that does not exist. */
int fk_gpu_select(int ordinal, fk_error *err);

/* The selected device's ordinal. */
int fk_gpu_selected(void);

/* Device memory (bytes) fk_gpu_link / fk_gpu_build will allocate. */
uint64_t fk_gpu_link_bytes(uint64_t n, uint64_t nnodes, int sixd);
uint64_t fk_gpu_build_bytes(uint64_t n, uint32_t leafsize);

/* fk_link_cpu on the GPU: one upload of positions (and velocities for 6D)
 * and boxes, one download of the sink array; the same canonical sinks.
 * Any leaf size (32 fills a warp). FK_EDEVICE when the device lacks
 * memory (the message gives needed and available bytes). */
int fk_gpu_link(const fk_tree *t, const float *pos, const float *vel, const fk_linkopts *o, uint32_t *sink,
                fk_linkstats *stats, fk_gputimes *times, fk_error *err);

/* fk_gpu_link for every level of a hierarchy (lo[0..nlevels), each checked
 * as fk_gpu_link does) with the particles resident: one upload of the
 * positions, boxes (and velocities when a level is 6D), every level linked
 * whole on the device (its groups lie inside the level before's, since the
 * lengths do not grow), and each level's canonical sinks downloaded into
 * sinks[k]. stats and times (when not NULL) get nlevels entries; the
 * upload is counted in times[0]. */
int fk_gpu_link_levels(const fk_tree *t, const float *pos, const float *vel, const fk_linkopts *lo, int nlevels,
                       uint32_t *const *sinks, fk_linkstats *stats, fk_gputimes *times, fk_error *err);

/* Builds the tree on the GPU and links on it with the data resident: one
 * upload of pos (stream order; vel too in 6D), one download of the sinks
 * (tree order) and perm (perm[tree index] = stream index). The partition
 * is the one every other path gives; times has upload, build, link and
 * download. */
uint64_t fk_gpu_build_link_bytes(uint64_t n, uint32_t leafsize, int sixd);
int fk_gpu_build_link(const float *pos, const float *vel, uint64_t n, uint32_t leafsize, double lo, double span,
                      const fk_linkopts *o, uint32_t *sink, uint32_t *perm, fk_linkstats *stats, fk_gputimes *times,
                      fk_error *err);

/* fk_groups_number (groups.h) on the GPU with ids = perm: root (n, a
 * resolved sink array, as fk_groups_number takes it: root[root[i]] ==
 * root[i] < n, e.g. the canonical tree-order sinks) and perm (n: the
 * original index of each entry, a permutation of 0 .. n-1) uploaded, the
 * groups numbered there (kept: at least minsize members; numbered 1 .. by
 * decreasing size, ties by lowest original index; 0 for every other
 * particle), and only the results downloaded: gid (n, indexed by original
 * index; NULL: the counts alone) and, when sizes is not NULL, *sizes
 * (malloc'd, ngroups + 1 entries: sizes[g] the members of group g, sizes[0]
 * the particles in no kept group; the caller frees it). info as
 * fk_groups_number fills it (nsource = n). The same bits as
 * fk_groups_number. The arrays are not checked: values out of range are the
 * caller's fault. FK_EDEVICE, FK_EUNSUP (n >= 2^31), FK_EINVAL (minsize 0),
 * FK_ENOMEM. */
int fk_gpu_groups_number(const uint32_t *root, const uint32_t *perm, uint64_t n, uint64_t minsize, uint32_t *gid,
                         uint64_t **sizes, fk_groups *info, fk_error *err);

/* A rank's whole local link in a distributed run (dist_link.c), on the GPU
 * with the particles resident: one upload of pos (n x 3: the first no are
 * the rank's own particles, the rest copies of other ranks'), vel for 6D
 * and the owned particles' IDs (id: no entries of idw = 4 or 8 bytes); the
 * tree built there (quantised in [lo, lo + span), as fk_gpu_build_link),
 * every level linked whole; then for level k, in the particles' own order,
 * key[k][i] (n entries) = the lowest owned index in i's group (UINT32_MAX
 * for a group of copies only) and low[k][j] (no entries of idw bytes) = the
 * lowest ID of an owned particle in j's group: one download of those. The
 * tree, its order and the sinks never leave the device; the copies are
 * staged through pinned chunks on every core (fk_gpu_put). stats gets
 * nlevels entries; times has upload, build, link (every level's, with its
 * answers) and download. */
uint64_t fk_gpu_link_owned_bytes(uint64_t n, uint64_t no, uint32_t leafsize, int sixd, int idw);
int fk_gpu_link_owned(const float *pos, const float *vel, uint64_t n, uint64_t no, const void *id, int idw,
                      uint32_t leafsize, double lo, double span, const fk_linkopts *o, int nlevels,
                      uint32_t *const *key, void *const *low, fk_linkstats *stats, fk_gputimes *times,
                      fk_error *err);

/* All-pairs linking on the GPU (shared-memory tiles, one thread a
 * particle): an oracle for small inputs, in the given order. */
int fk_gpu_link_brute(uint64_t n, const float *pos, const float *vel, const fk_linkopts *o, uint32_t *sink,
                      fk_linkstats *stats, fk_gputimes *times, fk_error *err);

/* fk_pot_minima (potential.h) on the GPU: the same minima (an exact double
 * sum for every potential reported), groups of up to max(nexact, 32768)
 * members summed exactly, larger ones by a Barnes-Hut walk on the GPU tree
 * and exact candidates; with g->phi, every member's potential (those exact
 * sums, or the tree walk's) comes back too. times->link holds the potential
 * work. fk_gpu_pot_bytes: the device memory for nmembers members of
 * ngroups groups whose trees (the groups above the exact sums' limit
 * walked at once) hold largest members in all. */
uint64_t fk_gpu_pot_bytes(uint64_t nmembers, uint64_t ngroups, uint64_t largest);
int fk_gpu_pot_minima(const fk_pot_groups *g, const fk_pot_params *p, fk_pot_min *min, fk_gputimes *times,
                      fk_error *err);

/* fk_pot_exact on the GPU: every member's potential by the all-pairs sum in
 * double (a reference for checks; O(n^2)). */
int fk_gpu_pot_exact(const fk_pot_members *g, double G, double eps, double *phi, fk_gputimes *times, fk_error *err);

/* Every member's potential on the GPU, as fk_pot_tree gives it on the CPU
 * (within the tree's documented errors): groups of up to 32768 members by
 * exact double sums, larger ones by the GPU tree walk of fk_gpu_pot_minima
 * (binary32 terms). One group; the unbinding of halostats --device=gpu
 * takes it for its largest groups. */
int fk_gpu_pot_tree(const fk_pot_members *g, const fk_pot_params *p, double *phi, fk_gputimes *times, fk_error *err);

/* The unbinding's update on the GPU (fk_unbind_update_fn, unbind.h): for k <
 * stay->n, phi[k] += G sum_q leave->m[q] / sqrt(|x_k - x_q|^2 + eps^2), in
 * double, one thread a stayer (lib/gpu/unbind.cu). FK_EDEVICE. */
int fk_gpu_unbind_update(const fk_pot_members *stay, double *phi, const fk_pot_members *leave, double G, double eps,
                         fk_error *err);

/* A group's S held on the GPU from the unbinding's first pass to its last,
 * the passes run there: the operations of unbind.h's fk_unbind_device. Its
 * sums are fk_gpu_pot_tree's, its updates fk_gpu_unbind_update's, its chunk
 * sums fk_unbind_lane_sums' and fk_unbind_lane_energies' (the same bits), on
 * the same members. FK_EDEVICE, FK_EUNSUP (more than 2^31 members),
 * FK_ENOMEM. */
int fk_gpu_unbind_open(void **ctx, const fk_unbind_group *g, fk_error *err);
int fk_gpu_unbind_sum(void *ctx, const fk_pot_params *p, fk_error *err);
int fk_gpu_unbind_get(void *ctx, double *x, double *y, double *z, double *m, double *phi, fk_error *err);
int fk_gpu_unbind_load(void *ctx, const double *phi, fk_error *err);
int fk_gpu_unbind_sums(void *ctx, double (*part)[7], fk_error *err);
int fk_gpu_unbind_energies(void *ctx, const double v[3], int massive, double (*part)[7], fk_error *err);
int fk_gpu_unbind_drop(void *ctx, double emin, size_t maxupd, double G, double eps, size_t *nu, fk_error *err);
int fk_gpu_unbind_members(void *ctx, size_t *idx, fk_error *err);
void fk_gpu_unbind_close(void *ctx);

/* Device bytes fk_gpu_unbind_open and the calls on its S hold at once for a
 * group of n members. */
uint64_t fk_gpu_unbind_bytes(uint64_t n);

/* Device bytes the unbinding's groups may hold at once: 90% of the free
 * memory (FOFKIT_GPU_MEMORY lowers it, as for every GPU call); 0 on failure. */
uint64_t fk_gpu_unbind_budget(void);

/* Builds the tree on the GPU by sorting Hilbert keys (CUB radix sort):
 * particles are quantised in [lo, lo + span) on each axis (a periodic box:
 * lo = origin, span = box; else pass span 0 to use the particles' bounds).
 * Same layout as fk_tree_build_cpu: pos rearranged, perm[new] = old. */
int fk_gpu_build(float *pos, uint64_t n, uint32_t leafsize, double lo, double span, fk_tree *t, uint32_t **perm,
                 fk_gputimes *times, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
