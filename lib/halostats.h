/* halostats.h - per-group properties (mass, centres, velocity, extent, profile, spin) and their column table. */
#ifndef FK_HALOSTATS_H
#define FK_HALOSTATS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "halomembers.h"
#include "potential.h"

/*
 * Definitions, for group g with members i (weights w_i = m_i; when the
 * members' total mass is 0, w_i = 1 instead), all in double precision:
 *   ref      the member with the lowest original index (ID)
 *   d_i      x_i - x_ref, each axis reduced to the minimum image in a
 *            periodic box (d - box * round(d / box)); this unwraps the group
 *            across the boundary and assumes it spans less than half the box
 *   x        x_ref + sum w_i d_i / sum w_i, wrapped into [origin, origin+box)
 *            when periodic: the centre of mass
 *   v        sum w_i v_i / sum w_i: the mass-weighted mean velocity
 *   sigma_v  sqrt(sum w_i |v_i - v|^2 / sum w_i): the 3D mass-weighted rms
 *            of the velocity about v (sqrt(3) times a 1D dispersion for an
 *            isotropic group); in a comoving stream (fk_halo_input's
 *            comoving) v_i - v is v_pec,i - v + H(a) a (d_i - (x - x_ref)),
 *            the Hubble flow about the centre of mass added, as Gadget-4's
 *            SUBFIND (subfind_properties.cc) measures SubhaloVelDisp
 *   rmax     max |d_i - (x - x_ref)|: the largest distance of a member from
 *            the centre of mass, minimum image
 * Units are the snapshot's: positions and rmax in its length unit (the box
 * side is SNAP's box), velocities in its velocity unit, masses in its mass
 * unit. In a comoving stream lengths stay comoving and velocities are
 * peculiar (vel * vscale): v is the mean peculiar velocity.
 */

typedef struct fk_halo {
    uint64_t level;  /* level of the hierarchy (0: the longest linking length) */
    uint64_t host;   /* the group of level - 1 holding this one; 0 at level 0  */
    uint64_t id;     /* group id, 1..ng                             */
    uint64_t n;      /* members                                     */
    uint64_t minid;  /* lowest original index among them (the ref)  */
    uint64_t ref;    /* the ref's stream index                      */
    double mass;     /* sum of member masses                        */
    double x[3];     /* centre of mass                              */
    double v[3];     /* mass-weighted mean velocity                 */
    double sigma_v;  /* 3D mass-weighted velocity dispersion        */
    double rmax;     /* largest member distance from x              */
    /* from fk_halostats_centres: */
    double xc[3];    /* the centre: the most bound member's position, or x */
    uint64_t mbp_id; /* original index of the most bound member (FK_HALO_NONE: COM centres) */
    double phi_mbp;  /* its potential (an exact sum; NaN: COM centres) */
    double rc_max;   /* largest member distance from xc            */
    double r_half;   /* least member radius about xc enclosing half the mass */
    double vmax;     /* max over member radii r of sqrt(G M(<=r) / r) */
    double r_vmax;   /* the radius where it is reached              */
    double lambda;   /* Bullock et al. (2001) spin parameter        */
    uint32_t method; /* how phi_mbp was found: FK_POT_BY_EXACT or FK_POT_BY_TREE */
    uint32_t candidates; /* members summed exactly after the tree    */
    /* from fk_halostats_so (so.h): comoving radii, NaN when not reached */
    double r200c, m200c, r500c, m500c, r200m, m200m, rvir, mvir;
    /* from fk_unbind_halos (unbind.h): the self-bound part, 0 if not bound */
    uint64_t n_bound;
    double mass_bound;
    /* from fk_halostats_compute: members by the stream's type (snap.h's
     * FK_GAS, FK_DARK, FK_STAR) and their masses, summed in ID order;
     * the contaminants (fk_halo_input's m_hires) and their mass */
    uint64_t n_type[3];
    double m_type[3];
    uint64_t n_contam;
    double m_contam;
} fk_halo;

/* The physical dimension of a column, which fixes its unit. */
typedef enum {
    FK_DIM_1,        /* a count, an id, a pure number */
    FK_DIM_LENGTH,
    FK_DIM_MASS,
    FK_DIM_VELOCITY,
    FK_DIM_VELOCITY2 /* a potential: G mass / length */
} fk_dim;

/* Output units: one stream length unit is `length` output length units, and
 * so on; names for headers ("Mpc/h"; no white space). */
typedef struct fk_halo_units {
    double length, mass, velocity;
    const char *length_name, *mass_name, *velocity_name;
} fk_halo_units;

/* Factors 1 and the names "length", "mass", "velocity": the stream's units. */
void fk_halo_units_default(fk_halo_units *u);

/* The factor of dimension d in u. */
double fk_halo_units_factor(const fk_halo_units *u, fk_dim d);

/* The unit name of dimension d in u into buf: "1", the names, and for a
 * potential "velocity^2" or "(km/s)^2". Returns buf. Can't fail. */
const char *fk_halo_units_name(const fk_halo_units *u, fk_dim d, char *buf, size_t size);

/* A unit name raised to a power into buf: "kpc^3", "(kpc/h)^-3" (a name
 * other than a plain word in brackets), the name itself for power 1.
 * Returns buf. Can't fail. */
const char *fk_unit_power(const char *name, int power, char *buf, size_t size);

/* One output column: a field of fk_halo, how to name, print and explain
 * it. Adding a column is adding a row to fk_halo_columns. */
typedef enum { FK_HCOL_U64, FK_HCOL_F64 } fk_hcol_type;

#define FK_HCOL_MBP 1u    /* meaningful only with potential centres (else -1, nan) */
#define FK_HCOL_SO 2u     /* only with spherical-overdensity masses (so.h) */
#define FK_HCOL_UNBIND 4u /* only with unbinding (unbind.h)               */

typedef struct fk_halo_column {
    const char *name;   /* header and CSV name, [a-z_0-9]+           */
    fk_dim dim;         /* its unit                                  */
    const char *desc;   /* one-line definition                        */
    fk_hcol_type type;
    size_t offset;      /* offsetof(fk_halo, field)                   */
    const char *format; /* printf conversion for the value            */
    unsigned flags;     /* FK_HCOL_MBP, FK_HCOL_SO, FK_HCOL_UNBIND       */
} fk_halo_column;

extern const fk_halo_column fk_halo_columns[];
extern const size_t fk_halo_ncolumns;

/* An id field that holds none (mbp_id without potentials): printed -1. */
#define FK_HALO_NONE UINT64_MAX

/* Column c of h in the units u (NULL: the stream's), as a double (ids are
 * exact up to 2^53; FK_HALO_NONE is -1). Can't fail. */
double fk_halo_value(const fk_halo *h, const fk_halo_column *c, const fk_halo_units *u);

/* Formats column c of h in the units u (NULL: the stream's) into buf
 * (snprintf semantics: the length the value needs is returned). Can't
 * fail. */
int fk_halo_format(const fk_halo *h, const fk_halo_column *c, const fk_halo_units *u, char *buf, size_t size);

/* The particles of a stream, in stream order, and their groups. */
typedef struct fk_halo_input {
    uint64_t n;
    const float *pos;     /* n x 3                                          */
    const float *vel;     /* n x 3                                          */
    const float *mass;    /* n                                              */
    const uint64_t *ids;  /* n original indices (picks ref); NULL: i itself */
    const uint32_t *grp;  /* n group ids, 1..ng, 0 for none                 */
    int periodic;
    double box, origin;
    /* A comoving stream (snap.h's comoving key), physical properties as
     * Gadget-4's SUBFIND defines them (fk_halo_frame, snapunits.h): when
     * comoving is 1, the peculiar velocity of particle i is vel_i * vscale
     * (a^e, SNAP's vel_a_scaling e) and the Hubble flow about a centre c is
     * hflow (d_i - c), hflow = H(a) a in velocity per stream (comoving)
     * length; positions stay comoving (the potentials take G / a). When 0
     * (older callers' zeros), velocities are taken as stored and no flow is
     * added. */
    int comoving;
    double vscale, hflow;
    /* Particle types and zoom-in contamination (zeros from older callers:
     * every particle dark, none a contaminant). type: n of snap.h's FK_GAS,
     * FK_DARK, FK_STAR, or NULL: every particle FK_DARK. m_hires: the
     * high-resolution mass (fk_halo_hires_mass: the least dark-matter mass
     * of the whole stream); a dark member heavier than m_hires (1 +
     * FK_CONTAM_TOL) is a contaminant. 0, NaN or infinite: none is. */
    const uint8_t *type;
    double m_hires;
} fk_halo_input;

/* The relative tolerance of the contamination test: float masses written
 * from one double differ by at most an ulp (6e-8), well below it; zoom-in
 * runs' mass levels differ by factors of 8 or more. */
#define FK_CONTAM_TOL 1e-6

/* The least mass among the FK_DARK particles of mass[0..n) (type NULL:
 * every particle dark), as fk_halo_input's m_hires; INFINITY when there is
 * none. Negative and non-finite masses are skipped (fk_halostats_compute
 * refuses them). Every core. Can't fail. */
double fk_halo_hires_mass(uint64_t n, const float *mass, const uint8_t *type);

/* Whether a dark particle of mass m is a contaminant for m_hires. */
static inline int fk_halo_contaminant(double m_hires, float m)
{
    return m_hires > 0 && m_hires < INFINITY && (double)m > m_hires * (1 + FK_CONTAM_TOL);
}

/* Particle i's velocity on axis q as the properties take it: vel * vscale
 * when in->comoving (the peculiar velocity), else vel as stored. */
static inline double fk_halo_vel(const fk_halo_input *in, uint64_t i, int q)
{
    return in->comoving ? in->vscale * (double)in->vel[3 * i + q] : (double)in->vel[3 * i + q];
}

/* Computes halos[g-1] for every group g = 1..ng from its members
 * (halomembers.h), the groups in parallel, largest first, each group's
 * members in three passes in ascending ID order (reference member; mass,
 * centre and mean velocity; dispersion and extent; in->ids NULL: stream
 * order), so that every sum is added in one order and the result depends
 * neither on the stream's order nor on the number of threads; O(ng) scratch. level and host are left 0, the fields of
 * fk_halostats_centres too. Fails with FK_EFORMAT, naming the particle or
 * group (the lowest bad particle, as one pass over the stream would), on a
 * group id above ng, a group with no member, a negative or non-finite
 * mass, a non-finite position or velocity; FK_ENOMEM. name is used in
 * messages. */
int fk_halostats_compute(const fk_halo_input *in, uint64_t ng, fk_halo *halos, const char *name, fk_error *err);

/* fk_halostats_compute with the members of the order->ng groups gathered
 * by the caller (fk_halo_order_build), once for every call of a level:
 * in->grp is not read (it may be NULL). FK_EINVAL when order is of another
 * number of particles. */
int fk_halostats_compute_members(const fk_halo_input *in, const fk_halo_order *order, fk_halo *halos,
                                 const char *name, fk_error *err);

/*
 * Centres and the properties about them, for group g with members i, after
 * fk_halostats_compute (whose d_i, x, v and weights w_i they use):
 *   c        the centre, relative to x_ref: with FK_CENTRE_MBP the d_i of
 *            the most bound member, the member of least potential phi_i
 *            (potential.h: Plummer-softened, G and eps of pot); with
 *            FK_CENTRE_COM, x - x_ref
 *   xc       x_ref + c, wrapped into [origin, origin+box) when periodic
 *   mbp_id   the most bound member's original index; phi_mbp its phi_i
 *            (FK_CENTRE_MBP only; with FK_CENTRE_COM FK_HALO_NONE and NaN)
 *   r_i      |d_i - c|, the members' radii about the centre
 *   rc_max   max r_i
 *   M(<=r)   sum of w_i over the members with r_i <= r
 *   r_half   the least r_i with M(<=r_i) >= sum w_i / 2
 *   vmax     max over the r_i > 0 of sqrt(G M(<=r_i) / r_i) (masses, not
 *            weights: 0 for a group of mass 0); r_vmax the least r_i where
 *            it is reached (0 when no r_i > 0)
 *   J        sum m_i (d_i - c) x (v_i - v): angular momentum about the centre
 *            in the frame of the mean velocity
 *   lambda   |J| / (sqrt(2) M V R) with R = rc_max, V = sqrt(G M / R),
 *            M = mass: the spin parameter lambda' of Bullock et al. (2001)
 *            measured at the group's edge; 0 when M or R is 0
 * Everything is in the stream's units, with pot->G given in them.
 */
typedef enum { FK_CENTRE_MBP = 0, FK_CENTRE_COM = 1 } fk_centre;

/* index[first[g - 1] .. first[g]) = the stream indices of group g's members
 * in ascending order of their IDs (in->ids; NULL: of the indices), for g =
 * 1..ng (first: ng + 1 offsets, first[0] = 0, the group sizes apart), by
 * the parallel counting sort and the sort by ID of halomembers.h,
 * whose result does not depend on the number of threads. FK_ENOMEM (nothing
 * set in err). */
int fk_halo_members(const fk_halo_input *in, uint64_t ng, const uint64_t *first, uint64_t *index);

/* Time spent, in seconds, by fk_halostats_centres. */
typedef struct fk_halo_timing {
    double gather, potential, profile;
} fk_halo_timing;

/* Fills the fields above for halos[0..ng) of the groups of in (grp as for
 * fk_halostats_compute, which must have filled halos). The potentials go
 * through minima (NULL: fk_pot_minima of potential.h; a GPU's has the same
 * contract) a batch of groups at a time, each group's minimum the same
 * whatever the batch: the members' positions and masses as potential.h
 * takes them (doubles about the group's reference member) are made for one
 * batch at a time, of at most the largest group's members, an eighth of
 * them all or 2^20, whichever is most; another minima than the CPU's runs
 * on a thread of its own, a batch at a time, while the other threads make
 * the profiles of the batch before and the doubles of the next. The rest
 * in parallel across groups
 * (OpenMP), largest first, and the largest groups each on every thread,
 * each group's sums in one fixed order (its members' in ID order), so
 * the result does not depend on the number of threads. timing may be
 * NULL. FK_EINVAL (pot's parameters), FK_ENOMEM, or what minima fails
 * with. */
int fk_halostats_centres(const fk_halo_input *in, uint64_t ng, fk_centre centre, const fk_pot_params *pot,
                         fk_pot_minima_fn minima, fk_halo *halos, fk_halo_timing *timing, fk_error *err);

/* fk_halostats_centres, and with FK_CENTRE_MBP and phi not NULL (in->n
 * entries), phi[i] for every particle i of a group: its potential from the
 * group's other members as the minimum search computed it (exact sums, or
 * the tree's: minima's g->phi, potential.h), for the unbinding's first pass
 * (fk_unbind_halos_phi, unbind.h). Entries of particles in no group are
 * left as they are. */
int fk_halostats_centres_phi(const fk_halo_input *in, uint64_t ng, fk_centre centre, const fk_pot_params *pot,
                             fk_pot_minima_fn minima, fk_halo *halos, fk_halo_timing *timing, double *phi,
                             fk_error *err);

/* fk_halostats_centres_phi with the members of the order->ng groups
 * gathered by the caller, as for fk_halostats_compute_members (in->grp is
 * not read). */
int fk_halostats_centres_members(const fk_halo_input *in, const fk_halo_order *order, fk_centre centre,
                                 const fk_pot_params *pot, fk_pot_minima_fn minima, fk_halo *halos,
                                 fk_halo_timing *timing, double *phi, fk_error *err);

/* The potentials' minima alone, for a stage that has the positions and
 * masses before the velocities (halostats -m while its input still comes):
 * min[g - 1] and, when phi is not NULL, phi of every member, exactly as
 * fk_halostats_centres_members finds them, each group's doubles about its
 * first member (the lowest ID: the reference member
 * fk_halostats_compute_members picks), batch after batch (the same batches)
 * until stop(stop_ctx) says so (asked before each; stop NULL: never):
 * *found gets the groups done, [0, *found), a whole number of batches.
 * in->vel, in->type and in->grp are not read. Through minima as there
 * (NULL: the CPU's; another on a thread of its own while the next batch's
 * doubles are made). timing (may be NULL): the doubles in gather, the
 * minima in potential. FK_EFORMAT when a member's position or mass is not
 * finite, a mass below 0 or a particle's group beyond o->ng (then
 * fk_halostats_compute_members names it: the caller goes that way),
 * FK_EINVAL, FK_ENOMEM, or what minima fails with. */
int fk_halostats_minima(const fk_halo_input *in, const fk_halo_order *o, const fk_pot_params *pot,
                        fk_pot_minima_fn minima, int (*stop)(void *), void *stop_ctx, fk_pot_min *min, double *phi,
                        uint64_t *found, fk_halo_timing *timing, fk_error *err);

/* fk_halostats_centres_members with FK_CENTRE_MBP, after
 * fk_halostats_compute_members filled halos from the same members, the
 * minima of groups [0, found) given (found_min, as fk_halostats_minima
 * found them, its phi kept): the other groups' minima found through minima
 * as there, the given groups' profiles beside the first of their batches
 * on a device, and every profile. The same bytes as
 * fk_halostats_centres_members. FK_EINVAL when a given group's reference
 * member or size is not the one its minimum took, FK_ENOMEM, or what
 * minima fails with. */
int fk_halostats_centres_found(const fk_halo_input *in, const fk_halo_order *o, const fk_pot_params *pot,
                               fk_pot_minima_fn minima, const fk_pot_min *found_min, uint64_t found, fk_halo *halos,
                               fk_halo_timing *timing, double *phi, fk_error *err);

/* Waits until more than have groups' minima have been found (the groups
 * [0, found) of a finder running fk_halostats_minima elsewhere), or the
 * finder is over (*over = 1: all found, or it stopped); returns found. */
typedef uint64_t (*fk_halo_found_fn)(void *ctx, uint64_t have, int *over);

/* fk_halostats_centres_found while another thread still finds the minima
 * (fk_halostats_minima into min): the profiles of each run of groups as
 * wait says its minima have come, and when the finder stops short, the
 * other groups' minima through minima, with phi, as there. The same bytes
 * as fk_halostats_centres_members. timing's potential: the time waited.
 * FK_EINVAL when a group's reference member or size is not the one the
 * minima took, FK_ENOMEM, or what minima fails with. */
int fk_halostats_centres_await(const fk_halo_input *in, const fk_halo_order *o, const fk_pot_params *pot,
                               fk_pot_minima_fn minima, const fk_pot_min *min, fk_halo_found_fn wait, void *wait_ctx,
                               fk_halo *halos, fk_halo_timing *timing, double *phi, fk_error *err);

#endif
