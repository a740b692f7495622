/* tipsy.h - reading and writing tipsy snapshots (standard XDR and native), gzip-compressed or not. */
#ifndef FK_TIPSY_H
#define FK_TIPSY_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A tipsy file is a header followed by the particles, all gas first, then
 * all dark matter, then all stars. Every field is 4 bytes (int or float)
 * except the header's time (8-byte double).
 *
 * Header (32 bytes)
 *   OFFSET SIZE DESCRIPTION
 *        0    8 time (double): expansion factor for cosmological runs
 *        8    4 nbodies: particles in the file, = nsph + ndark + nstar
 *       12    4 ndim: 3
 *       16    4 nsph: gas particles
 *       20    4 ndark: dark matter particles
 *       24    4 nstar: star particles
 *       28    4 pad: ignored (some writers store 0, some 1, some garbage)
 *
 * Gas particle (48 bytes, 12 floats)
 *   OFFSET SIZE DESCRIPTION
 *        0    4 mass
 *        4   12 pos[3]
 *       16   12 vel[3]
 *       28    4 rho
 *       32    4 temp
 *       36    4 hsmooth
 *       40    4 metals
 *       44    4 phi
 *
 * Dark matter particle (36 bytes, 9 floats)
 *   OFFSET SIZE DESCRIPTION
 *        0    4 mass
 *        4   12 pos[3]
 *       16   12 vel[3]
 *       28    4 eps (softening)
 *       32    4 phi
 *
 * Star particle (44 bytes, 11 floats)
 *   OFFSET SIZE DESCRIPTION
 *        0    4 mass
 *        4   12 pos[3]
 *       16   12 vel[3]
 *       28    4 metals
 *       32    4 tform
 *       36    4 eps
 *       40    4 phi
 *
 * A file of g gas, d dark and s star particles is exactly
 * 32 + 48 g + 36 d + 44 s bytes.
 *
 * Byte order. "Standard" tipsy is XDR: every field big-endian. "Native"
 * tipsy is the byte order of the machine that wrote it; this library reads
 * and writes native as little-endian (x86, ARM), whatever the host.
 *
 * Detection. ndim (offset 12) must read as 3 in exactly one byte order:
 * big-endian means standard, little-endian native; then nbodies must equal
 * nsph + ndark + nstar, and the input must hold exactly the bytes the counts
 * promise. A forced format (FK_TIPSY_STANDARD or FK_TIPSY_NATIVE) skips the
 * ndim test but keeps the count and size checks.
 *
 * Native files written on 32-bit machines may carry a 28-byte header (no
 * pad). It is recognised, for native files only, when the input is an
 * uncompressed regular file whose size is exactly 28 + the particles; it
 * cannot be told apart in a pipe or in a gzip-compressed file, which are
 * always read with the 32-byte header.
 *
 * gzip. A gzip-compressed snapshot (file or pipe) is decompressed on the
 * fly; its size cannot be checked up front, so exactly the promised bytes
 * are read and the input must end there.
 */

enum { FK_TIPSY_AUTO = 0, FK_TIPSY_STANDARD = 1, FK_TIPSY_NATIVE = 2 };

/* Bytes of one particle record of each type (FK_GAS, FK_DARK, FK_STAR). */
extern const unsigned fk_tipsy_recsize[3];

/* The header, decoded. */
typedef struct fk_tipsy_header {
    double time;
    uint32_t nbodies;
    int32_t ndim;
    uint32_t ntype[3]; /* nsph, ndark, nstar */
    int32_t pad;
    int format;      /* FK_TIPSY_STANDARD or FK_TIPSY_NATIVE */
    int header_size; /* 32, or 28 for a native file without pad */
} fk_tipsy_header;

/* How to read. */
typedef struct fk_tipsy_opts {
    int format;      /* FK_TIPSY_AUTO (detect), FK_TIPSY_STANDARD, FK_TIPSY_NATIVE */
    unsigned types;  /* types to keep: bits (1u << FK_GAS) | ...; 0 keeps all */
    int periodic;    /* wrap positions into [origin, origin + box) */
    double box;      /* > 0 */
    double origin;
    uint32_t slice, nslices; /* nslices > 0: read only particles [slice N / nslices,
                              * (slice + 1) N / nslices) of the N in the file */
} fk_tipsy_opts;

/* Sets o to: detect the format, keep every type, periodic box 1, origin
 * -0.5, the whole file. */
void fk_tipsy_opts_default(fk_tipsy_opts *o);

/* A snapshot read into arrays (structure of arrays), the kept particles in
 * file order. */
typedef struct fk_tipsy_snap {
    fk_tipsy_header hdr;
    int compressed;     /* the input was gzip-compressed */
    uint64_t n;         /* particles kept */
    uint64_t ntype[3];  /* kept, by type */
    uint64_t nwrapped;  /* kept particles moved into the box by wrapping */
    float *pos;         /* n x 3 */
    float *vel;         /* n x 3 */
    float *mass;        /* n */
    uint8_t *type;      /* n: FK_GAS, FK_DARK, FK_STAR */
    void *id;           /* n: index in the file; uint32_t, or uint64_t when id_size is 8 */
    unsigned id_size;   /* 4 or 8, as fk_id_dtype(hdr.nbodies) says */
} fk_tipsy_snap;

/* Reads a whole tipsy snapshot from f, which must not have been read from
 * yet (its file descriptor is read directly; plain and gzip-compressed data
 * alike); name is used in messages. Fills s (free it with
 * fk_tipsy_snap_free, also after an error). Positions, velocities and masses
 * of kept particles must be finite; with o->periodic, a position coordinate
 * below origin or at or above origin + box is moved by one box length, and
 * one more than a box length outside is an error. With o->nslices, only
 * the slice's particles (file order, every type) are read, the others
 * skipped (seeked over in a plain file, decompressed and dropped in a gzip
 * one, read and dropped from a pipe); IDs stay file indices, hdr the
 * file's, and the input's end is checked only in a plain file (its size).
 * A plain regular file is read on every core (each thread reads blocks of
 * its own with pread and converts them into the arrays); gzip data and
 * pipes are read block by block, each block converted on every core. The
 * arrays, and the first failure reported, are the same either way and for
 * any number of threads. Returns FK_OK, or
 * FK_EFORMAT (not tipsy, inconsistent header, truncated, trailing data,
 * corrupt gzip data, non-finite values, far outside the box), FK_EIO (read
 * error), FK_EINVAL (bad options, f without a file descriptor) or
 * FK_ENOMEM. */
int fk_tipsy_read(FILE *f, const char *name, const fk_tipsy_opts *o, fk_tipsy_snap *s, fk_error *err);

/* Frees the arrays of s and zeroes it; s may be partly filled. */
void fk_tipsy_snap_free(fk_tipsy_snap *s);

/* "standard" or "native" (or "auto" for FK_TIPSY_AUTO). */
const char *fk_tipsy_format_name(int format);

/* Writes the 32-byte header h (its format field chooses the byte order;
 * header_size is ignored) to f. name is used in messages. Returns FK_OK or
 * FK_EIO, FK_EINVAL (format not standard or native). */
int fk_tipsy_write_header(FILE *f, const char *name, const fk_tipsy_header *h, fk_error *err);

/* Appends n particle records of one type to f, in the given format: pos and
 * vel hold n x 3 floats (vel NULL: zero velocities), mass n floats (NULL:
 * every particle has mass mass_all). Every other field (rho, temp, eps,
 * phi, ...) is written as zero. The caller writes the header first and the
 * types in the order gas, dark, star. Returns FK_OK, FK_EIO or FK_ENOMEM. */
int fk_tipsy_write_particles(FILE *f, const char *name, int format, int type, uint64_t n, const float *pos,
                             const float *vel, const float *mass, float mass_all, fk_error *err);

/* Writes a whole snapshot: the header (time, pad, counts from type) and n
 * particles whose types are in file order (all gas, then dark, then star;
 * otherwise FK_EINVAL). vel and mass as for fk_tipsy_write_particles. */
int fk_tipsy_write(FILE *f, const char *name, int format, double time, int32_t pad, uint64_t n, const float *pos,
                   const float *vel, const float *mass, const uint8_t *type, fk_error *err);

/*
 * Units and cosmology. A tipsy file carries neither. ChaNGa, PKDGRAV and
 * Gasoline work in units where G = 1: their .param file's dKpcUnit is the
 * length unit in kpc (no h), dMsolUnit the mass unit in Msun, and the
 * velocity unit follows, sqrt(G M / L) (pynbody, snapshot/tipsy.py
 * param2units). In a cosmological run (bComove) the positions are comoving
 * in [-0.5, 0.5) box units (the box is dKpcUnit comoving kpc), the header's
 * time is the expansion factor a, and the velocities are the comoving
 * dx/dt: the codes integrate the canonical momentum a^2 dx/dt and write it
 * times dvFac = 1/a^2 (ChaNGa InOutput.C, "vel = velocity*dvFac";
 * PKDGRAV and Gasoline master.c, msrWriteTipsy), so the peculiar velocity
 * a dx/dt is VEL * a^1: pynbody's unit "km s^-1 a", and tipsy_tools'
 * tipsy2snap.c multiplies by sqrt(a) into Gadget's v_pec / sqrt(a).
 */
#define FK_TIPSY_VEL_A_SCALING 1.0

/* Sets the unit keys of snap for ChaNGa/PKDGRAV/Gasoline units of kpc_unit
 * kpc and msol_unit Msun (both > 0): unit_length_cm, unit_mass_g, and
 * unit_velocity_cm_s = sqrt(G M / L) with snapunits.h's G (so that G is 1
 * in the stream's units, as halostats computes it); units_per_h 0. Can't
 * fail. */
struct fk_snap;
void fk_tipsy_units(double kpc_unit, double msol_unit, struct fk_snap *snap);

/* Wraps one coordinate x into the periodic interval [lo, hi), where
 * lo = (float)origin and hi = (float)(origin + box), as a stream's POS chunk
 * must hold it (fk_snap_check_positions). Returns 0 (x inside, unchanged),
 * 1 (moved by one box length) or -1 (more than one box length outside;
 * unchanged). The shift is done in double and rounded once; a result that
 * rounds onto hi (x a hair below lo) is the same point as lo and becomes lo. */
static inline int fk_tipsy_wrap(float *x, double origin, double box, float lo, float hi)
{
    float v = *x;
    if (v >= lo && v < hi) return 0;
    double d = v;
    if (d < origin - box || d >= origin + 2.0 * box) return -1;
    float w = (float)(v < lo ? d + box : d - box);
    if (w >= hi || w < lo) w = lo; /* rounding at either edge: both are the point lo */
    *x = w;
    return 1;
}

#ifdef __cplusplus
}
#endif

#endif
