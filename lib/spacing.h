/* spacing.h - the mean interparticle spacing that foflink's -b multiplies: of the lightest particles (zoom-in runs), of named types, of a mass, or of every particle. */
#ifndef FK_SPACING_H
#define FK_SPACING_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "snap.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The linking length of -b B is l = B s, s the mean interparticle spacing
 * box / n_eff^(1/3), where n_eff is how many particles the box would hold
 * at the resolution asked for:
 *   lightest  (the default) the sum over the particle types (gas, dark,
 *             star) of M_t / m_t: M_t the mass of the stream's particles of
 *             type t, m_t the least positive mass among them; so the mean
 *             spacing of the lightest particles of each type, as if they
 *             filled the box. With equal masses in each type that is the
 *             number of particles, n (every uniform box, with or without
 *             gas); in a zoom-in snapshot it is the total mass over the
 *             high-resolution particle mass, the spacing zoom users link at
 *             (Gadget's: the mean mass of its link type over the mean
 *             density of all the dark matter)
 *   types     the same sum over the named types only (the dark matter of a
 *             run with gas: its spacing, as Gadget-4 links it)
 *   mass M    (sum of every M_t) / M: the spacing of particles of mass M
 *   all       n, every particle counted once, whatever its mass (fofkit's
 *             definition before zoom-in runs were read)
 * A type whose particles all have mass 0 counts its particles (n_t). A type
 * whose masses are all equal gives exactly n_t, not a rounded M_t / m_t.
 *
 * The sums are exact and independent of order, so that every number of MPI
 * ranks finds the same n_eff as one process: per type, the count, the least
 * and the largest positive binary32 mass (as bit patterns, which order as
 * the values do), and the mass as sums of the masses' 24-bit significands
 * by binary exponent (exact up to 2^40 particles of one exponent). Ranks
 * add n and sig, and take the least min_bits and the largest max_bits.
 */

#define FK_SPACING_NEXP 256 /* binary32 exponents */

typedef enum { FK_SPACING_LIGHTEST = 0, FK_SPACING_ALL, FK_SPACING_TYPES, FK_SPACING_MASS } fk_spacing_kind;

/* What -b is a fraction of. */
typedef struct fk_spacing_spec {
    fk_spacing_kind kind;
    unsigned types; /* FK_SPACING_TYPES: bits 1u << FK_GAS, FK_DARK, FK_STAR */
    double mass;    /* FK_SPACING_MASS: > 0 */
} fk_spacing_spec;

/* Parses --spacing's operand: "lightest", "all", a list of types
 * ("dark", "gas,dark"; "star"), or a positive mass. FK_EINVAL naming it. */
int fk_spacing_parse(const char *arg, fk_spacing_spec *spec, fk_error *err);

/* The sums of one stream (or of every rank's, added). */
typedef struct fk_spacing_sums {
    uint64_t n[3];                       /* particles of each type                          */
    uint64_t min_bits[3], max_bits[3];   /* least and largest positive mass (UINT64_MAX, 0: none) */
    uint64_t sig[3][FK_SPACING_NEXP];    /* significands' sums by biased exponent           */
} fk_spacing_sums;

/* Sums the n particles of mass[] (NULL: no masses; every particle counts
 * once) and type[] (NULL: all dark) into s (zeroed first). Masses must be
 * finite and >= 0: FK_EFORMAT naming the particle otherwise. */
int fk_spacing_sum(const float *mass, const uint8_t *type, uint64_t n, fk_spacing_sums *s, const char *name,
                   fk_error *err);

/* Adds b into a (as the ranks' sums are added). Can't fail. */
void fk_spacing_add(fk_spacing_sums *a, const fk_spacing_sums *b);

/* The mass of type t in s, in double, from the exact sums by the same
 * operations in the same order: the same bits for the same sums. */
double fk_spacing_mass(const fk_spacing_sums *s, int t);

/* n_eff of spec over s (above); 1 for a stream without particles.
 * FK_EINVAL when it is not positive (no particle of the named types). */
int fk_spacing_neff(const fk_spacing_spec *spec, const fk_spacing_sums *s, double *neff, fk_error *err);

/* The largest ratio of the largest to the least positive mass within one
 * type (1 when the masses of each type are equal), and that type into
 * *type. Can't fail. */
double fk_spacing_spread(const fk_spacing_sums *s, int *type);

/*
 * Gadget-4's comoving linking length (src/fof/fof.cc,
 * fof_get_comoving_linking_length) as a mean spacing: (m / rho)^(1/3), m
 * the mean mass of the linked types (the primaries), rho the mean density
 * of the dark matter, (Omega0 - OmegaBaryon) rho_crit when the run has
 * baryons (Gadget: gas particles), else Omega0 rho_crit, with
 * rho_crit = 3 H0^2 / (8 pi G) in the stream's units and Gadget-4's
 * constants (src/data/constants.h: GRAVITY 6.6738e-8 cm^3 g^-1 s^-2,
 * HUBBLE 3.2407789e-18 h s^-1).
 */
#define FK_GADGET4_GRAVITY 6.6738e-8
#define FK_GADGET4_HUBBLE 3.2407789e-18

/* Whether snap knows what the rule needs: unit keys, omega0 above 0 (and
 * above omega_baryon, given, when baryons), hubble when the units are not
 * per h. */
int fk_spacing_density_known(const fk_snap *snap, int baryons);

/* The rule's spacing (*spacing) and n_eff = (box / spacing)^3 over the
 * types (bits 1u << FK_GAS ...) of s. FK_EINVAL saying what is missing
 * (the cosmology, or masses: no MASS chunk or only massless particles). */
int fk_spacing_density(const fk_snap *snap, const fk_spacing_sums *s, unsigned types, int baryons, double *neff,
                       double *spacing, fk_error *err);

/* spec in words, as the LINK record's spacing_of and -v say it:
 * "lightest", "all", "types gas,dark", "mass 3.349e-07". Returns buf. */
const char *fk_spacing_name(const fk_spacing_spec *spec, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
