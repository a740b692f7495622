/* unbind.h - the gravitationally self-bound part of each group: iterative removal of unbound members. */
#ifndef FK_UNBIND_H
#define FK_UNBIND_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "halostats.h"
#include "potential.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Unbinding one group. The set S starts as all its members. Each pass:
 *   phi_i   the softened potential of member i of S from the others of S
 *           (potential.h, with pot's G and eps: exact sums when |S| <=
 *           pot->nexact, else the Barnes-Hut tree with pot->theta)
 *   v_S     sum_S m_i v_i / sum_S m_i, the bulk velocity of S (unweighted
 *           when S has mass 0)
 *   e_i     |v_i - v_S|^2 / 2 + phi_i, the specific energy in S's frame
 * and the members with e_i >= 0 are unbound. When there are none, S is the
 * bound part. Otherwise they leave S, all at once when that moves v_S
 * little: when |sum_U m_i (v_i - v_S)| / (M_S - M_U), the frame change
 * their leaving makes (U the unbound), is at most FK_UNBIND_DRAG times the
 * rms velocity of S about v_S. Else only the most unbound leave: those
 * with e_i >= e_max / 2, e_max the largest e_i (after FK_UNBIND_HALVINGS
 * passes, every unbound member at once). Why: a fast unbound population
 * (a stream flying through, a passing halo) drags v_S, so that in its
 * frame members that are bound once it has gone look unbound; it has the
 * highest energies, so it goes first, and v_S is measured again without
 * it. After a pass that removes few members (at most a quarter of S when
 * phi is summed exactly, at most FK_UNBIND_TREE_PAIRS when by the tree),
 * phi is not summed again: the leavers' terms are taken off it, exactly
 * (for tree potentials the result then differs from a fresh tree sum by
 * the tree's error on those terms). The passes go on until no member of S is unbound or S has fewer
 * than minbound members; then the group is not bound and S is
 * reported empty. Every quantity is in the stream's units with G of pot;
 * positions in one frame (unwrapped, as halostats does), velocities as
 * stored (no Hubble flow is added: in comoving coordinates give G, the
 * units and the velocities so that the energies are physical).
 */

#define FK_UNBIND_MINBOUND 10 /* default least bound members of a bound group */
#define FK_UNBIND_DRAG 0.1     /* largest frame change for removing every unbound member at once */
/* Tree groups: most leavers whose terms are taken off phi one by one. The tree
 * costs about 2 us a member on one core at theta 0.7 (halostats(1), PERFORMANCE),
 * an exact term about 1.6 ns: 1024 terms a member cost less. */
#define FK_UNBIND_TREE_PAIRS 1024
#define FK_UNBIND_HALVINGS 64 /* passes of e >= e_max / 2 before all e >= 0 leave at once */

/* Every member's potential by a tree, with fk_pot_tree's contract (stats
 * aside): a GPU's can stand in for it. */
typedef int (*fk_pot_phi_fn)(const fk_pot_members *g, const fk_pot_params *p, double *phi, fk_error *err);

typedef struct fk_unbind_params {
    fk_pot_params pot;
    uint64_t minbound; /* >= 1 */
    fk_pot_phi_fn tree; /* NULL: fk_pot_tree; fk_unbind_halos calls it for its
                           groups of more than FK_POT_ALONE members only, one
                           at a time, and fk_pot_tree for the others */
} fk_unbind_params;

/* One group's members, structure of arrays, positions in one frame. */
typedef struct fk_unbind_group {
    size_t n;
    const double *x, *y, *z;
    const double *vx, *vy, *vz;
    const double *m;
} fk_unbind_group;

typedef struct fk_unbind_result {
    uint64_t nbound; /* members of the bound part (0: not bound) */
    double mbound;   /* their mass                              */
    uint32_t passes; /* potential evaluations                   */
} fk_unbind_result;

/* Unbinds one group: bound[i] (n entries) is 1 for the members of its
 * bound part, 0 for the others; *res. Sequential except for the tree's own
 * threads (fk_pot_tree). FK_EINVAL (parameters), FK_ENOMEM. */
int fk_unbind(const fk_unbind_group *g, const fk_unbind_params *p, unsigned char *bound, fk_unbind_result *res,
              fk_error *err);

/* Unbinds every group g = 1..ng of in (after fk_halostats_compute, whose
 * reference members halos[g-1].ref unwrap them): halos[g-1].n_bound and
 * .mass_bound (0 when the group is not bound), and when bound is not NULL, bound[i] = 1 for each stream particle i in the bound part
 * of its group, else 0 (n entries). Groups of more than FK_POT_ALONE
 * members one after another with every thread, the others a thread each;
 * the result does not depend on the number of threads. FK_EINVAL,
 * FK_ENOMEM. */
int fk_unbind_halos(const fk_halo_input *in, uint64_t ng, fk_halo *halos, const fk_unbind_params *p,
                    unsigned char *bound, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
