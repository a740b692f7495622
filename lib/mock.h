/* mock.h - a clustered mock universe: NFW halos with a power-law mass function in a uniform background. */
#ifndef FK_MOCK_H
#define FK_MOCK_H

#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The model (units: box side 1, total mass 1, so the mean density is 1;
 * G = 1; every particle has mass 1/n; the box is periodic, [-0.5, 0.5)^3).
 *
 * Particles. Of the n particles, big_halo (if any) form one extra dense
 * halo; of the others, a fraction halo_fraction (default 0.55) is in halos
 * and the rest (about 45%) is a uniform background.
 *
 * Masses. Halo sizes follow dN/dM ~ M^-1.9 between min_halo (default 32
 * particles) and max_halo (default n/4). They are not drawn at random but
 * placed at the quantiles of that distribution: with H halos, the i-th
 * largest (i = 0, 1, ...) has the size whose expected count above it is
 * i + 1/2. H is the largest count whose sizes fit in the halo budget; what
 * is left over goes to the background. So the halo sizes depend only on n
 * and the parameters, never on the seed: at n = 2^20 the largest halo has
 * 110354 particles, at 2^24 1.6M, with 10 halos of 1e5 or more.
 *
 * Halos. A halo of mass M (npart / n) has
 *   r200 = (3 M / (4 pi 200))^(1/3)   (mean density 200 inside r200),
 *   concentration c = 7 (M / 10^-3)^-0.1, kept within [3, 20] (a mild
 *     c(M), decreasing with mass as in simulations; the big halo has c = 15
 *     unless big_c says otherwise, and big_r200 and big_centre, when set,
 *     its radius and place),
 *   NFW density truncated at r200: a particle's radius solves
 *     m(r / rs) = u m(c),  m(x) = ln(1 + x) - x / (1 + x),  rs = r200 / c,
 *     u uniform in [0, 1) (Newton's method, safeguarded by bisection),
 *   an isotropic direction, a centre uniform in the box,
 *   velocity: the halo's bulk velocity (Gaussian, 0.1 per component) plus
 *     an isotropic Gaussian of sigma = V200 / sqrt(2) per component,
 *     V200 = sqrt(M / r200).
 * Background particles are uniform in the box with Gaussian velocities of
 * 0.05 per component. Positions are wrapped into the box (fk_tipsy_wrap).
 *
 * Order. The big halo's particles come first, then the halos from the
 * largest down, then the background.
 *
 * Gas (fk_mock_generate_gas, for hydro runs). Gas particle i is dark
 * matter particle i moved by a Gaussian offset of FK_MOCK_GAS_OFFSET times
 * the mean spacing n^(-1/3) per component (wrapped into the box), with the
 * same velocity: a gas component that traces the dark matter, each gas
 * particle nearest its own dark matter particle outside the dense cores.
 * The masses (the share of each) are the caller's.
 *
 * Randomness. xoshiro256** streams seeded through splitmix64 from (seed,
 * halo, piece): every halo and every piece of up to FK_MOCK_PIECE particles
 * has its own stream (its gas offsets another), so the output depends on
 * the seed only, never on the number of threads or on how the particles
 * are generated in ranges.
 */

#define FK_MOCK_SEED 20240611u
#define FK_MOCK_PIECE 2048u
#define FK_MOCK_GAS_OFFSET 0.05 /* gas offset per component, in mean spacings n^(-1/3) */

typedef struct fk_mock_params {
    uint64_t n;           /* particles in all: 1 to 2^31 - 1 */
    uint64_t seed;        /* default FK_MOCK_SEED */
    double halo_fraction; /* share of the particles outside the big halo in halos, [0, 1] (default 0.55) */
    uint64_t min_halo;    /* smallest halo, >= 1 (default 32) */
    uint64_t max_halo;    /* upper end of the mass function (0: n / 4) */
    uint64_t big_halo;    /* particles of one extra halo with c = 15 (0: none), <= n */
    double big_c;         /* its concentration (0: 15) */
    double big_r200;      /* its truncation radius, box units (0: from its mass, as every halo's) */
    int big_placed;       /* 1: at big_centre, not at a random place */
    double big_centre[3]; /* within [-0.5, 0.5) */
} fk_mock_params;

typedef struct fk_mock_halo {
    uint64_t first, npart; /* its particles are [first, first + npart) of the output */
    double centre[3];
    double vbulk[3];
    double mass;  /* npart / n */
    double r200;  /* truncation radius */
    double c;     /* concentration: r200 / rs */
    double sigma; /* velocity dispersion per component */
} fk_mock_halo;

struct fk_mock_piece;

typedef struct fk_mock {
    fk_mock_params p;
    uint64_t nhalo;           /* halos, the big one first, then by decreasing size */
    fk_mock_halo *halo;
    uint64_t nhalo_particles; /* particles in halos: [0, nhalo_particles) */
    uint64_t nbackground;     /* the rest: [nhalo_particles, n) */
    uint64_t npiece;          /* internal: units of work, in output order */
    struct fk_mock_piece *piece;
} fk_mock;

/* Sets p's defaults for n particles. */
void fk_mock_defaults(fk_mock_params *p, uint64_t n);

/* Plans the universe: the halo catalogue and the units of work. Returns
 * FK_OK, FK_EINVAL (a parameter out of range; the message says which) or
 * FK_ENOMEM. Free m with fk_mock_free (also after an error). */
int fk_mock_plan(fk_mock *m, const fk_mock_params *p, fk_error *err);

/* Generates particles [start, start + count) of the universe (count <=
 * n - start) into pos and vel (count x 3 floats each), in parallel with
 * OpenMP. The same particle always comes out the same. Cannot fail. */
void fk_mock_generate(const fk_mock *m, uint64_t start, uint64_t count, float *pos, float *vel);

/* As fk_mock_generate, the gas particles [start, start + count): particle
 * i's dark matter position moved by its offset (see Gas above), its
 * velocity. Cannot fail. */
void fk_mock_generate_gas(const fk_mock *m, uint64_t start, uint64_t count, float *pos, float *vel);

void fk_mock_free(fk_mock *m);

/* The concentration c(M) of a halo of mass M (a fraction of the total). */
double fk_mock_concentration(double mass);

/* The radius x = r / rs (0 <= x <= c) inside which an NFW halo truncated at
 * c holds the fraction u (in [0, 1]) of its mass. */
double fk_mock_nfw_radius(double u, double c);

#ifdef __cplusplus
}
#endif

#endif
