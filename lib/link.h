/* link.h - friends-of-friends linking into a sink array: options, the CPU linker, and the shared checks. */
#ifndef FK_LINK_H
#define FK_LINK_H

#include <stdint.h>

#include "error.h"
#include "kdtree.h"
#include "predicate.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The sink array. sink[i] starts as i; linking i and j finds the sinks
 * (s = sink[s]) of both and links the higher-index sink under the lower one
 * with a compare-and-swap, retrying from the new sink if another thread got
 * there first. Links only ever point to lower indices, so there are no
 * cycles, and when linking is done every group's sink is its lowest stream
 * index. The linkers finish by pointing every particle straight at its sink,
 * so the array they return is canonical: sink[i] is the lowest stream index
 * in i's group, the same on every path and for every thread schedule.
 */

typedef struct fk_linkopts {
    double l;     /* linking length, absolute (> 0)              */
    double psi;   /* velocity linking length; 0 for 3D linking    */
    int periodic; /* minimum-image separations with period box    */
    double box;
    int nthreads; /* CPU threads; 0 for the OpenMP default        */
} fk_linkopts;

typedef struct fk_linkstats {
    uint64_t pair_tests;  /* predicate evaluations                      */
    uint64_t node_tests;  /* box-bound evaluations                      */
    uint64_t dense_nodes; /* topmost nodes found to be cliques          */
    uint64_t groups;      /* sinks (groups of one included)             */
} fk_linkstats;

/* Checks o for n particles: a finite positive l (and psi >= 0), and in a
 * periodic box l <= box/2. */
int fk_link_check(const fk_linkopts *o, fk_error *err);

/* The binary32 constants of the predicate for o. */
fk_linkparams fk_link_params(const fk_linkopts *o);

/* Links the particles at pos (n x 3, in t's tree order; vel n x 3 when
 * o->psi > 0, else unused) on the CPU with OpenMP; writes the canonical
 * sink array (n entries). stats may be NULL. */
int fk_link_cpu(const fk_tree *t, const float *pos, const float *vel, const fk_linkopts *o, uint32_t *sink,
                fk_linkstats *stats, fk_error *err);

/* Links all pairs by brute force, O(n^2), in the given order; no tree.
 * The same canonical sink array as fk_link_cpu for the same order. */
int fk_link_brute_cpu(uint64_t n, const float *pos, const float *vel, const fk_linkopts *o, uint32_t *sink,
                      fk_linkstats *stats, fk_error *err);

/* Points every particle at its sink (the array must satisfy sink[i] <= i)
 * and returns the number of groups (sinks). */
uint64_t fk_sink_flatten(uint32_t *sink, uint64_t n);

/*
 * Linking with a promise about the partition (hierarchical FoF: see
 * levels.h). lab[i] labels particle i (tree order); FK_NOLABEL marks a
 * particle that has no friend at all under o.
 */
#define FK_NOLABEL UINT32_MAX

/* fk_link_cpu, told that every pair of friends under o has one label, not
 * FK_NOLABEL (true when lab comes from fk_link_labels of a linking whose
 * links include all of o's, e.g. at a longer linking length). The labels
 * only let it skip work: a leaf whose particles are all FK_NOLABEL, a node
 * pair whose label ranges do not meet, a particle whose label the other
 * node lacks. When the promise holds, the sinks are fk_link_cpu's, byte for
 * byte; when it does not, links between differently labelled particles may
 * be missed. Uses 8 bytes per tree node more than fk_link_cpu. */
int fk_link_cpu_within(const fk_tree *t, const float *pos, const float *vel, const fk_linkopts *o,
                       const uint32_t *lab, uint32_t *sink, fk_linkstats *stats, fk_error *err);

/* Labels from a canonical sink array (sink[sink[i]] == sink[i], as every
 * linker returns it): lab[i] = sink[i] when i's group has two or more
 * members, FK_NOLABEL for a group of one. O(n), never fails. */
void fk_link_labels(const uint32_t *sink, uint64_t n, uint32_t *lab);

#ifdef __cplusplus
}
#endif

#endif
