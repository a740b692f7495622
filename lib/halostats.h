/* halostats.h - per-group properties (mass, centre of mass, mean velocity, dispersion, extent) and their column table. */
#ifndef FK_HALOSTATS_H
#define FK_HALOSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

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
 *            isotropic group)
 *   rmax     max |d_i - (x - x_ref)|: the largest distance of a member from
 *            the centre of mass, minimum image
 * Units are the snapshot's: positions and rmax in its length unit (the box
 * side is SNAP's box), velocities in its velocity unit, masses in its mass
 * unit.
 */

typedef struct fk_halo {
    uint64_t id;     /* group id, 1..ng                             */
    uint64_t n;      /* members                                     */
    uint64_t minid;  /* lowest original index among them (the ref)  */
    double mass;     /* sum of member masses                        */
    double x[3];     /* centre of mass                              */
    double v[3];     /* mass-weighted mean velocity                 */
    double sigma_v;  /* 3D mass-weighted velocity dispersion        */
    double rmax;     /* largest member distance from x              */
} fk_halo;

/* One output column: a field of fk_halo, how to name, print and explain
 * it. Adding a column is adding a row to fk_halo_columns. */
typedef enum { FK_HCOL_U64, FK_HCOL_F64 } fk_hcol_type;

typedef struct fk_halo_column {
    const char *name;   /* header and CSV name, [a-z_0-9]+           */
    const char *unit;   /* "1", "length", "mass", "velocity"           */
    const char *desc;   /* one-line definition                        */
    fk_hcol_type type;
    size_t offset;      /* offsetof(fk_halo, field)                   */
    const char *format; /* printf conversion for the value            */
} fk_halo_column;

extern const fk_halo_column fk_halo_columns[];
extern const size_t fk_halo_ncolumns;

/* Formats column c of h into buf (snprintf semantics: the length the value
 * needs is returned). Can't fail. */
int fk_halo_format(const fk_halo *h, const fk_halo_column *c, char *buf, size_t size);

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
} fk_halo_input;

/* Computes halos[g-1] for every group g = 1..ng: three O(n) passes over the
 * particles (reference member; mass, centre and mean velocity; dispersion
 * and extent), sequential so that sums are added in one fixed order and the
 * result is reproducible; O(ng) scratch. Fails with FK_EFORMAT, naming the
 * particle or group, on a group id above ng, a group with no member, a
 * negative or non-finite mass, a non-finite position or velocity;
 * FK_ENOMEM. name is used in messages. */
int fk_halostats_compute(const fk_halo_input *in, uint64_t ng, fk_halo *halos, const char *name, fk_error *err);

#endif
