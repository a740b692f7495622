/* snap.h - the SNAP chunk (what a stream's particles are) and the particle chunks' shapes. */
#ifndef FK_SNAP_H
#define FK_SNAP_H

#include <stdint.h>

#include "error.h"
#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Particle chunks, one row per particle in stream order (FK_CF_PARTICLE):
 *   TAG   TYPE  COLUMNS  CONTENT
 *   POS   <f4   3        position x y z, in [origin, origin + box) when periodic
 *   VEL   <f4   3        velocity
 *   MASS  <f4   1        mass
 *   TYPE  |u1   1        0 gas, 1 dark, 2 star (FK_GAS, FK_DARK, FK_STAR)
 *   ID    <u4 or <u8 1   index of the particle in the source snapshot (file
 *                        order: gas, then dark, then star); <u8 when the
 *                        source holds more than 2^31 particles
 *   PID   <u8   1        the snapshot's own particle ID (Gadget's ParticleIDs
 *                        or ID block; hdf52bin and gadget2bin), optional
 *
 * The SNAP chunk (text, see kv.h) comes first and describes them:
 *   n              particles in this stream
 *   ngas ndark nstar   of which gas, dark, star
 *   nsource        particles in the source snapshot (IDs are below this)
 *   nsource_gas nsource_dark nsource_star   the same by type
 *   time           the snapshot's time (expansion factor for cosmological runs)
 *   box            the period (side of the cubic box), > 0
 *   origin         the box's lower corner on every axis
 *   periodic       1 for a periodic box, 0 for isolated boundaries
 *   source         where the particles came from (informational)
 * Optional keys (converters of snapshots that carry them; older streams lack
 * them and stay valid): the unit keys all three or none; the cosmology keys
 * each on its own (have_cosmology when all four are there):
 *   unit_length_cm unit_mass_g unit_velocity_cm_s   the stream's units in cgs
 *   units_per_h    1 when those units carry a factor 1/h (Gadget's convention:
 *                  a length unit of 3.085678e21 cm is 1 kpc/h), else 0
 *   hubble omega0 omega_lambda redshift   cosmology: h, Omega_m, Omega_Lambda, z
 *   omega_baryon   Omega_b (hydro runs: the dark matter's density is
 *                  (omega0 - omega_baryon) rho_crit), on its own
 *   comoving       1 when the positions are comoving, time is the expansion
 *                  factor a and the run is cosmological (0 or absent: the
 *                  positions are physical, time any time)
 *   vel_a_scaling  e, with comoving: the peculiar velocity a dx/dt is
 *                  VEL * a^e (Gadget's snapshots 0.5: VEL = v_pec / sqrt(a);
 *                  SWIFT's 0: VEL = v_pec; 0 when absent)
 */

enum { FK_GAS = 0, FK_DARK = 1, FK_STAR = 2 };

typedef struct fk_snap {
    uint64_t n, nsource;
    uint64_t ntype[3], nsource_type[3];
    double time, box, origin;
    int periodic;
    char source[256];
    /* optional keys: the units written only when have_units; a cosmology key
     * written when have_cosmology or when it is not +0 (one given alone) */
    int have_units, units_per_h;
    double unit_length_cm, unit_mass_g, unit_velocity_cm_s;
    int have_cosmology;
    double hubble, omega0, omega_lambda, redshift;
    int have_omega_baryon; /* omega_baryon written only when set */
    double omega_baryon;
    int comoving;          /* written only when 1 (with vel_a_scaling) */
    double vel_a_scaling;
} fk_snap;

/* Formats s as SNAP text (caller frees *text). */
int fk_snap_format(const fk_snap *s, char **text, fk_error *err);

/* Whether [origin, origin + box) is a box that binary32 positions can fill:
 * box positive, both ends finite, and, for a periodic one, the upper end
 * above the lower once both are rounded to float (a box narrower than a
 * float's step at the origin holds no position). */
int fk_snap_box_ok(double origin, double box, int periodic);

/* Parses and checks SNAP text (counts add up, box > 0). name is used in
 * messages. */
int fk_snap_parse(const char *text, fk_snap *s, const char *name, fk_error *err);

/* Checks that chunk c is a particle chunk of s's n rows with the given type
 * and columns (dtype NULL: "<u4" or "<u8", for ID). */
int fk_snap_check_chunk(const fk_snap *s, const fk_chunk *c, const char *dtype, uint32_t ncols, const char *name,
                        fk_error *err);

/* Checks positions: every coordinate finite and, for a periodic box, inside
 * [origin, origin + box). Names the first bad particle by stream index. */
int fk_snap_check_positions(const fk_snap *s, const float *pos, const char *name, fk_error *err);

/* The element type of the ID chunk for a source of nsource particles. */
const char *fk_id_dtype(uint64_t nsource);

/* Reads ID payload (either width) into a uint64_t array of c->nrows
 * (caller frees). */
int fk_snap_load_ids(fk_reader *r, const fk_chunk *c, uint64_t **ids, fk_error *err);

/* The ID payload raw (of chunk c, either width; malloc'd) as a uint64_t
 * array of c->nrows in *ids (caller frees): raw itself when <u8, else a
 * widened copy and raw freed. Takes raw in every case. */
int fk_snap_widen_ids(void *raw, const fk_chunk *c, uint64_t **ids, fk_error *err);

/* As fk_snap_widen_ids, raw left as it is: *ids is raw itself when <u8,
 * else a widened copy (big memory, bigmem.h) of its own. */
int fk_snap_widen_keep(void *raw, const fk_chunk *c, uint64_t **ids, fk_error *err);

/* Reads the next chunk, which must be SNAP, and parses it; name is used in
 * messages. On success *c holds the chunk and its text is in *text (caller
 * frees) so that it can be written on. */
int fk_snap_read(fk_reader *r, fk_chunk *c, fk_snap *s, char **text, const char *name, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
