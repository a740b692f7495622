/* gsnap.h - Gadget-family snapshots (Gadget-2 binary, HDF5) read into the stream's arrays: types, order, box. */
#ifndef FK_GSNAP_H
#define FK_GSNAP_H

#include <stdint.h>

#include "error.h"
#include "gsnap_slice.h"
#include "snap.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Gadget-2/3/4, AREPO and SWIFT number their particle types 0 to 5 (SWIFT
 * up to 6): 0 gas, 1 dark matter, 2 and 3 more collisionless species (disk,
 * bulge, boundary or low-resolution dark matter), 4 stars, 5 black holes or
 * boundary particles, 6 neutrinos. In the stream, type 0 is gas (FK_GAS),
 * type 4 is star (FK_STAR) and every other type is dark (FK_DARK).
 *
 * Order. A snapshot split over files holds, in each file, the particles of
 * type 0, then type 1, ... The readers put the kept particles in the
 * snapshot's order taken type by type: every type-0 particle (file 0's, then
 * file 1's, ...), then every type-1 particle, and so on. ID (the index in the
 * source snapshot) counts in that order over all particles, kept or not, so a
 * snapshot split over any number of files gives the identical stream.
 *
 * Slices. With nslices > 0 the readers keep only slice "slice" of nslices
 * of the kept particles in that order (gsnap_slice.h): the arrays, n and nkept
 * hold the slice's, ID still counts over the whole snapshot, and only what
 * the slice needs is read (files it does not touch are opened for their
 * header alone). The slices, one after the other, are the whole conversion.
 *
 * Whole files. With file_hi > 0 the readers open only the files [file_lo,
 * file_hi) and keep every kept particle of them, in the order above within
 * them; ID still counts over the whole snapshot (file_first gives where the
 * files' particles of each type start). Ranks that take consecutive runs of
 * files hold, together, the whole conversion, in another order than slices
 * when several types are kept.
 *
 * Box. Gadget boxes are [0, L): the origin defaults to 0. With periodic set,
 * positions are wrapped into [origin, origin + box) as tipsy2bin does
 * (fk_tipsy_wrap: one box length at most; farther is an error).
 */

#define FK_GSNAP_NTYPES 7 /* 0 to 5 in Gadget; SWIFT adds 6 (neutrinos) */
_Static_assert(FK_GSNAP_NTYPES <= FK_GSLICE_NTYPES, "a slice covers every type");

/* The type in the stream (FK_GAS, FK_DARK, FK_STAR) of Gadget type t. */
int fk_gsnap_stream_type(int t);

/* What the header says (the readers fill it; 0 or -1 where it says nothing). */
typedef struct fk_gsnap_header {
    int ntypes;                         /* types the header describes (6 in Gadget-2) */
    uint64_t ntotal[FK_GSNAP_NTYPES];   /* particles of each type in the whole snapshot */
    double masstab[FK_GSNAP_NTYPES];    /* mass of every particle of a type, 0: per particle */
    double time, redshift, box;         /* box 0: the header gives none */
    int nfiles;                         /* files of the snapshot (>= 1) */
    int periodic;                       /* 1, 0, or -1: the header does not say */
    int have_cosmology;
    double hubble, omega0, omega_lambda;
    int have_units, units_per_h;        /* see snap.h */
    double unit_length_cm, unit_mass_g, unit_velocity_cm_s;
    int have_omega_baryon;
    double omega_baryon;
    int comoving;                       /* see snap.h: a cosmological run, time = a */
    double vel_a_scaling;               /* the peculiar velocity is VEL * a^this */
} fk_gsnap_header;

/* How to read. */
typedef struct fk_gsnap_opts {
    unsigned types;  /* Gadget types to keep: bits 1u << t; 0 keeps all */
    double box;      /* > 0: the period, whatever the header says; 0: the header's */
    int periodic;    /* -1: the header's (periodic when it does not say); 0 or 1: forced */
    double origin;   /* lower corner of the box on every axis (default 0) */
    uint32_t slice, nslices; /* nslices > 0: only slice "slice" (0 <= slice < nslices) of the kept */
    /* Whole files (gsnap_dist.h): file_hi > 0 reads only the files [file_lo,
     * file_hi) of the snapshot, which hold file_count[t] particles of type t,
     * numbers [file_first[t], file_first[t] + file_count[t]) of their type
     * (their totals over the snapshot are the caller's to check); with
     * headers_only, only their headers are read: s->hdr is file_lo's, and
     * s->nfile[t] the particles of type t in the files (nothing allocated). */
    int file_lo, file_hi, headers_only;
    uint64_t file_first[FK_GSNAP_NTYPES], file_count[FK_GSNAP_NTYPES];
    /* What SNAP says of units and cosmology, over what the reader found
     * (fk_gsnap_begin puts them in the header s->hdr, so that every path
     * that writes s, under mpirun too, writes the same SNAP): */
    int units;       /* -1: the reader's; 0: none (the stream has no units); 1: the four below */
    double unit_length_cm, unit_mass_g, unit_velocity_cm_s;
    int units_per_h; /* with units 1: they carry a factor 1/h (Gadget's convention) */
    int comoving;    /* -1: the reader's; 0: not comoving; 1: comoving, time = a (the reader's vel_a_scaling) */
    int have_omega_baryon; /* 1: omega_baryon is Omega_b, whatever the header says */
    double omega_baryon;
} fk_gsnap_opts;

/* Sets o to: every type, the header's box and periodicity, origin 0, no
 * slice, the reader's units, comoving flag and Omega_b. */
void fk_gsnap_opts_default(fk_gsnap_opts *o);

/* A snapshot read into arrays, the kept particles in the order above. */
typedef struct fk_gsnap {
    fk_gsnap_header hdr;
    double box, origin; /* the box used (the option's or the header's) */
    int periodic;       /* the periodicity used */
    unsigned types;     /* the Gadget types kept (bits 1u << t) */
    uint64_t n;         /* particles kept (in the slice) */
    uint64_t nsource;   /* particles in the snapshot */
    uint64_t nkept[FK_GSNAP_NTYPES]; /* of each type (in the slice) */
    fk_gslice slice;    /* the particles of each type held: every kept one without a slice */
    uint64_t nfile[FK_GSNAP_NTYPES]; /* with headers_only: the particles of each type in the files */
    uint64_t bytes;     /* bytes read (Gadget-2), or the sizes of the files read (HDF5) */
    uint64_t nwrapped;  /* kept particles moved into the box by wrapping */
    float *pos;         /* n x 3 */
    float *vel;         /* n x 3 */
    float *mass;        /* n */
    uint8_t *type;      /* n: FK_GAS, FK_DARK, FK_STAR */
    uint8_t *gtype;     /* n: the Gadget type */
    uint64_t *id;       /* n: index in the source snapshot */
    uint64_t *pid;      /* n: the snapshot's own particle IDs (ParticleIDs, ID block) */
    uint64_t cap;       /* particles the arrays hold (n once every count is vouched for) */
    int wide_pos;       /* some positions were stored as doubles (rounded to float once) */
} fk_gsnap;

/* Decides the box (opts over header; a periodic box needs one: FK_EINVAL
 * "... gives no box size (BoxSize 0): give --box"), puts o's units,
 * comoving flag and Omega_b in s->hdr (FK_EINVAL when the header cannot
 * take them: comoving without the cosmology or with a time that is no
 * expansion factor, Omega_b above Omega0), checks the totals, and
 * decides which particles s holds: the kept particles of h (those of the
 * slice with o->nslices; a slice not below nslices is FK_EINVAL). name is
 * used in messages. Allocates nothing: the reader checks the header's
 * claims against what the files hold (their sizes, the datasets' shapes)
 * for the files whose particles s holds (fk_gsnap_part), then calls
 * fk_gsnap_reserve. */
int fk_gsnap_begin(fk_gsnap *s, const fk_gsnap_header *h, const fk_gsnap_opts *o, const char *name, fk_error *err);

/* Makes s's arrays hold at least the first n of its particles (at most
 * s->n; growth by doubling): s->n at once when the files vouch for the
 * header's counts, else (a pipe, whose size is unknown) as the particles
 * arrive. FK_OK or FK_ENOMEM. */
int fk_gsnap_reserve(fk_gsnap *s, uint64_t n, const char *name, fk_error *err);

/* Where the kept particle number k of type t goes in s's arrays (k one of
 * those the slice holds, fk_gsnap_part; the caller counts particles of type
 * t over the files). */
uint64_t fk_gsnap_slot(const fk_gsnap *s, int t, uint64_t k);

/* How many of a file's particles of type t, numbers [seen, seen + n) within
 * the type, s holds (0 for a type not kept), *skip how many of the file's
 * come before them: the reader reads particles [seen + *skip, seen + *skip
 * + returned) of type t into slots fk_gsnap_slot(s, t, seen + *skip) on. */
uint64_t fk_gsnap_part(const fk_gsnap *s, int t, uint64_t seen, uint64_t n, uint64_t *skip);

/* Whether type t is kept. */
int fk_gsnap_keeps(const fk_gsnap *s, int t);

/* After the readers filled pos, vel, mass, pid of every held particle: sets
 * type, gtype and id, checks that every value is finite and wraps positions
 * into a periodic box. Returns FK_OK or FK_EFORMAT naming the particle (its
 * Gadget type and its index in the snapshot). */
int fk_gsnap_finish(fk_gsnap *s, const char *name, fk_error *err);

/* Fills the SNAP record of the stream s becomes; source names the input. */
void fk_gsnap_to_snap(const fk_gsnap *s, const char *source, fk_snap *snap);

/* Frees the arrays of s and zeroes it; s may be partly filled. */
void fk_gsnap_free(fk_gsnap *s);

#ifdef __cplusplus
}
#endif

#endif
