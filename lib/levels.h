/* levels.h - hierarchical friends-of-friends: levels of decreasing linking length, each linked inside the last one's groups. */
#ifndef FK_LEVELS_H
#define FK_LEVELS_H

#include <stdint.h>

#include "error.h"
#include "kdtree.h"
#include "link.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Level 0 links at the longest linking length l_0, level k at l_k < l_(k-1);
 * in 6D every level has a velocity linking length, psi_k <= psi_(k-1). A pair
 * of friends at level k is then a pair of friends at level k-1, also after
 * rounding: l2 and p2 do not shrink from level k to k-1, and r2/l2, w2/p2 and
 * their sum are rounded monotonically (predicate.h). So every group of level k
 * lies inside one group of level k-1, exactly, and a particle alone at level
 * k-1 is alone at level k.
 *
 * fk_levels_link_cpu uses that: level 0 is linked with fk_link_cpu, every
 * further level with fk_link_cpu_within on the labels of the level before
 * (fk_link_labels), on the same tree. Its sinks are, level by level, those of
 * separate fk_link_cpu calls.
 *
 * In a stream: one SINK chunk per level (chunk level k), and LINK records
 * "levels N" and l_k, psi_k for every k (foflink(1)); groups(1) resolves every
 * level and records how they nest (GPAR, groups.h).
 */

#define FK_LEVELS_MAX 8

/* Checks nlevels (1..FK_LEVELS_MAX) linking passes for a hierarchy: each
 * passes fk_link_check; all have the same periodic and box; the linking
 * lengths decrease strictly; psi is 0 on every level (3D) or on none, and
 * never grows from one level to the next. FK_EINVAL naming the level. */
int fk_levels_check(const fk_linkopts *o, int nlevels, fk_error *err);

/* Links nlevels levels of the particles at pos (n x 3, tree order; vel
 * n x 3 when o[0].psi > 0, else unused) on the CPU, reusing t: sink[k]
 * (n entries each) gets level k's canonical sinks, the same as
 * fk_link_cpu(t, pos, vel, &o[k], ...). stats (nlevels entries) and seconds
 * (wall time of each level) may be NULL. Fails as fk_levels_check and
 * fk_link_cpu do; 4 bytes per particle of scratch. */
int fk_levels_link_cpu(const fk_tree *t, const float *pos, const float *vel, const fk_linkopts *o, int nlevels,
                       uint32_t *const *sink, fk_linkstats *stats, double *seconds, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
