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
 *           pot->nexact, else the Barnes-Hut tree with pot->theta; in the
 *           first pass, the group's phi when given: the potentials the
 *           centre's minimum search computed, fk_halostats_centres_phi)
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
 * the tree's error on those terms). For tree groups on the CPU, a pass that
 * removes more than FK_UNBIND_TREE_PAIRS but at most
 * FK_UNBIND_LTREE_FRACTION of S takes the leavers' share off phi as a tree
 * computes it: the tree over S with every stayer's mass set to 0, whose
 * walks skip the massless nodes (so it costs a fraction of a fresh sum when
 * the leavers are few and far from most stayers); the result differs from
 * a fresh tree sum by the two trees' errors on the leavers' terms. With an
 * update hook (a GPU's), up to FK_UNBIND_GPU_PAIRS leavers are taken off
 * one by one. The passes go on until no member of S is unbound or S has fewer
 * than minbound members; then the group is not bound and S is
 * reported empty. Every quantity is in the stream's units with G of pot;
 * positions in one frame (unwrapped, as halostats does). fk_unbind_halos
 * gathers the velocities as fk_halo_input says: in a comoving stream the
 * peculiar velocity plus the Hubble flow hflow (x_i - x_ref), so that
 * |v_i - v_S| is the physical velocity about S's centre of mass,
 * v_pec,i - v_pec,S + H(a) a (x_i - x_cm,S), and with pot's G = G_phys / a
 * (and eps comoving) phi_i is the physical potential: e_i is the physical
 * specific binding energy of Gadget-4's SUBFIND (subfind_unbind.cc:
 * DM_Potential *= G / a, dv = vel_to_phys (Vel - v) + H(a) a dx).
 */

#define FK_UNBIND_MINBOUND 10 /* default least bound members of a bound group */
#define FK_UNBIND_DRAG 0.1     /* largest frame change for removing every unbound member at once */
/* Tree groups on the CPU: most leavers whose terms are taken off phi one by one,
 * O(nu) a stayer. Above that the leavers' tree (below) costs less: measured on the
 * largest groups of the 2^22 mock (2 cores, AVX2), the two break even between 300
 * and 800 leavers whatever the group's size (the tree over S costs about 0.5 us a
 * member even when few have mass, a term 2 ns). */
#define FK_UNBIND_TREE_PAIRS 512
#define FK_UNBIND_HALVINGS 64 /* passes of e >= e_max / 2 before all e >= 0 leave at once */
/* Tree groups on the CPU: the most leavers, as a fraction of S, whose share is
 * taken off phi by the tree of the leavers alone; above that a fresh tree, which
 * measured as cheap when about 8% leave (the same groups). */
#define FK_UNBIND_LTREE_FRACTION 0.1
/* With an update hook: most leavers taken off one by one (above that, the tree
 * hook sums phi afresh). A GPU sums a double term in about 1 ps and walks its
 * tree in about a microsecond a member: the break-even is some thousands. */
#define FK_UNBIND_GPU_PAIRS 8192
/* With a device that runs the passes (halostats --device=gpu): the groups of
 * more members than this go to it, fed by 3/8 of the threads while the others
 * unbind the rest on the CPU. Measured on the 134M mock (an H100 and 16 host
 * cores, bench/RESULTS.md): unbinding 1.96 s with 8192 and 6 threads, 1.98 s
 * with 65536 and 4, 2.11 s with 2000 and 8, 2.06 s with 2000 and 12. */
#define FK_UNBIND_GPU_ABOVE 8192

/* Every member's potential by a tree, with fk_pot_tree's contract (stats
 * aside): a GPU's can stand in for it. */
typedef int (*fk_pot_phi_fn)(const fk_pot_members *g, const fk_pot_params *p, double *phi, fk_error *err);

/* The leavers' terms taken off the stayers' potentials: for k < stay->n,
 * phi[k] += G sum_q leave->m[q] / sqrt(|x_k - x_q|^2 + eps^2) over the
 * leave->n leavers, in double. A GPU's can stand in for the CPU's. */
typedef int (*fk_unbind_update_fn)(const fk_pot_members *stay, double *phi, const fk_pot_members *leave, double G,
                                   double eps, fk_error *err);

typedef struct fk_unbind_params {
    fk_pot_params pot;
    uint64_t minbound; /* >= 1 */
    fk_pot_phi_fn tree; /* NULL: fk_pot_tree; fk_unbind_halos calls it for its
                           groups of more than FK_POT_ALONE members only, and
                           fk_pot_tree for the others; from several threads
                           at once (one group each) */
    fk_unbind_update_fn update; /* NULL: the CPU's; for tree groups only, and
                                   like tree, for fk_unbind_halos' groups of
                                   more than FK_POT_ALONE members only */
} fk_unbind_params;

/* One group's members, structure of arrays, positions in one frame. */
typedef struct fk_unbind_group {
    size_t n;
    const double *x, *y, *z;
    const double *vx, *vy, *vz;
    const double *m;
    const double *phi; /* NULL, or n: phi_i of every member from the others, for
                          the first pass (exact sums or a tree's, as above) */
} fk_unbind_group;

/* A device that holds one group's S from its first pass to its last (a
 * GPU's) and runs the passes there: the host sees per-chunk sums and the
 * number of leavers, and decides as the CPU's loop does. Chunk c of S is its
 * members [c FK_UNBIND_CHUNK, (c + 1) FK_UNBIND_CHUNK), summed in the order of
 * fk_unbind_lane_sums and fk_unbind_lane_energies (the same bits as the
 * CPU's loop given the same potentials). Its sums are those of the tree
 * hook, its updates those of the update hook, on the same members. */
typedef struct fk_unbind_device {
    /* Copies the group (members, velocities and, when g->phi, potentials);
     * S is every member; *ctx is the handle of the others. */
    int (*open)(void **ctx, const fk_unbind_group *g, fk_error *err);
    /* Every member's potential afresh, as the tree hook would. */
    int (*sum)(void *ctx, const fk_pot_params *p, fk_error *err);
    /* S's x y z m and phi, into the arrays given (NULL: not wanted). */
    int (*get)(void *ctx, double *x, double *y, double *z, double *m, double *phi, fk_error *err);
    /* The potentials of S from phi (summed elsewhere). */
    int (*load)(void *ctx, const double *phi, fk_error *err);
    /* part[c] = fk_unbind_lane_sums of chunk c of S. */
    int (*sums)(void *ctx, double (*part)[7], fk_error *err);
    /* part[c] = fk_unbind_lane_energies of chunk c of S in the frame v (weights
     * m when massive, else 1); the energies stay for drop. */
    int (*energies)(void *ctx, const double v[3], int massive, double (*part)[7], fk_error *err);
    /* Removes the members of S with e >= emin, keeping the others' order; *nu
     * of them. When 0 < *nu <= maxupd their terms are taken off the stayers'
     * potentials as the update hook does. */
    int (*drop)(void *ctx, double emin, size_t maxupd, double G, double eps, size_t *nu, fk_error *err);
    /* The members of S (their places in the group, ascending). */
    int (*members)(void *ctx, size_t *idx, fk_error *err);
    void (*close)(void *ctx); /* frees it all; ctx may be NULL */
} fk_unbind_device;


typedef struct fk_unbind_result {
    uint64_t nbound; /* members of the bound part (0: not bound) */
    double mbound;   /* their mass                              */
    uint32_t passes; /* potential evaluations                   */
    uint32_t sums;   /* of them, summed afresh (exact or tree)   */
    uint32_t ltrees; /* leavers' shares taken off by their tree  */
    double t_sums;   /* seconds: potentials summed afresh         */
    double t_updates; /* leavers' terms taken off (one by one, tree) */
    double t_rest;   /* energies, bulk velocity, compaction       */
} fk_unbind_result;

/* Where fk_unbind_halos_run's time went. The big groups are those of more
 * than FK_POT_ALONE members; their seconds are summed over the threads that
 * unbound them, the walls run from the call's start. */
typedef struct fk_unbind_stats {
    uint64_t nbig;            /* big groups                                  */
    uint64_t passes, sums;    /* their passes, and full sums among them      */
    double t_sums, t_updates, t_rest; /* their fk_unbind_result times, summed */
    double t_largest;         /* the largest group's own seconds             */
    fk_unbind_result largest; /* its passes, sums and times                  */
    uint64_t big_above;       /* the big groups' least size, less one        */
    uint64_t nsmall, small_passes, small_sums;      /* the other groups, as above */
    double small_t_sums, small_t_updates, small_t_rest;
    double wall_big;          /* until the last big group was done           */
    double wall_small;        /* until the last of the others was done       */
    double wall;              /* the whole call                              */
} fk_unbind_stats;

/* Fixed chunks of a group's passes: a group of more members than this has its
 * loops (bulk velocity, energies, compaction) split into chunks of this many,
 * run in parallel and combined in chunk order, so that its result does not
 * depend on the number of threads; a group of at most this many is one chunk,
 * summed in member order. */
#define FK_UNBIND_CHUNK 65536

/* A chunk's sums: lane j (j < FK_UNBIND_LANES) adds its members j, j +
 * FK_UNBIND_LANES, ... in order, then the lanes combine pairwise (lane j
 * takes lane j + h for h = FK_UNBIND_LANES / 2, .., 1): an order a GPU block
 * keeps too, so that both give the same bits. No product is fused. */
#define FK_UNBIND_LANES 256

/* Chunk sums of n members of S (place k: member idx[k] of the group, mass
 * m[k]; velocities by member): out = sum m, sum m v (3), sum v (3). */
void fk_unbind_lane_sums(size_t n, const size_t *idx, const double *m, const double *vx, const double *vy,
                         const double *vz, double out[7]);

/* Chunk energies of n members of S in the frame v: e[k] = |v_k - v|^2 / 2 +
 * phi[k]; with w = m[k] when massive, else 1, out = sum w |u|^2, then over the
 * unbound (e >= 0): sum w, sum w u (3), the largest e (0 when none), their
 * number. */
void fk_unbind_lane_energies(size_t n, const size_t *idx, const double *m, const double *phi, const double *vx,
                             const double *vy, const double *vz, const double v[3], int massive, double *e,
                             double out[7]);

/* Unbinds one group: bound[i] (n entries) is 1 for the members of its
 * bound part, 0 for the others; *res. Groups of more than FK_UNBIND_CHUNK
 * members use every thread (outside a parallel region) or the team's idle
 * threads (inside one, as tasks), as do the tree's own threads
 * (fk_pot_tree); the result does not depend on their number. FK_EINVAL
 * (parameters), FK_ENOMEM. */
int fk_unbind(const fk_unbind_group *g, const fk_unbind_params *p, unsigned char *bound, fk_unbind_result *res,
              fk_error *err);

/* fk_unbind with S held by dev (NULL: fk_unbind) from the first pass to the
 * last, its passes run there: its sums take the place of the tree hook's,
 * its drops of the update hook's, with the hooks' thresholds (up to
 * FK_UNBIND_GPU_PAIRS leavers taken off one by one), and the result is the
 * hooks'. Exact sums (at most pot.nexact members) stay on the CPU. Also
 * dev's failures. */
int fk_unbind_dev(const fk_unbind_group *g, const fk_unbind_params *p, const fk_unbind_device *dev,
                  unsigned char *bound, fk_unbind_result *res, fk_error *err);

/* Unbinds every group g = 1..ng of in (after fk_halostats_compute, whose
 * reference members halos[g-1].ref unwrap them): halos[g-1].n_bound and
 * .mass_bound (0 when the group is not bound), and when bound is not NULL, bound[i] = 1 for each stream particle i in the bound part
 * of its group, else 0 (n entries). Groups of more than FK_POT_ALONE
 * members one after another with every thread, the others a thread each;
 * with p's hooks (a GPU's) or fk_unbind_halos_run's device, the large
 * groups go to them from every thread (or fk_unbind_halos_run's feeders),
 * largest first, several at once (as many as fk_unbind_halos_run's budget
 * holds), while the other threads take the rest. The result does not depend
 * on the number of threads. FK_EINVAL, FK_ENOMEM. */
int fk_unbind_halos(const fk_halo_input *in, uint64_t ng, fk_halo *halos, const fk_unbind_params *p,
                    unsigned char *bound, fk_error *err);

/* fk_unbind_halos with the first pass's potentials: phi NULL, or phi[i] for
 * every particle i of a group, its potential from the group's other
 * members (fk_halostats_centres_phi keeps those of the centres' search),
 * so that the first pass sums nothing. */
int fk_unbind_halos_phi(const fk_halo_input *in, uint64_t ng, fk_halo *halos, const fk_unbind_params *p,
                        const double *phi, unsigned char *bound, fk_error *err);

/* The device bytes the hooks hold at once for a group of n members. */
typedef uint64_t (*fk_unbind_bytes_fn)(uint64_t n);

/* What fk_unbind_halos_run takes beyond fk_unbind_halos' arguments; zero
 * (all NULL) is fk_unbind_halos. */
typedef struct fk_unbind_run {
    const double *phi;        /* NULL, or the first pass's potentials (fk_unbind_halos_phi) */
    fk_unbind_bytes_fn bytes; /* NULL, or with a device: the bytes a group holds there,
                                 so that the groups unbound at once fit in budget */
    uint64_t budget;          /* with bytes: what they may hold at once */
    fk_unbind_stats *stats;   /* NULL, or where the time went */
    const fk_unbind_device *device; /* NULL, or the device that holds each big group's S
                                       (fk_unbind_dev), from several threads at once */
    int feeders;              /* with hooks or a device: how many threads take the big
                                 groups while the others start on the rest (0: all) */
    uint64_t big_above;       /* with a device: the groups of more members than this go to
                                 it (0: FK_POT_ALONE) */
} fk_unbind_run;

/* fk_unbind_halos_phi with a device budget for the large groups, a device
 * that holds each of them and runs their passes (else p's hooks), which
 * groups are large and how many threads feed them, saying where its time
 * went. Also the device's failures. */
int fk_unbind_halos_run(const fk_halo_input *in, uint64_t ng, fk_halo *halos, const fk_unbind_params *p,
                        const fk_unbind_run *run, unsigned char *bound, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
