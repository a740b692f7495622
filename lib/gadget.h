/* gadget.h - reading Gadget-2 binary snapshots (format 1 and 2, either byte order, one file or many). */
#ifndef FK_GADGET_H
#define FK_GADGET_H

#include "error.h"
#include "gsnap.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A Gadget-2 binary snapshot file is a sequence of Fortran unformatted
 * records: every record is a 4-byte length L, L bytes, and L again (the
 * "record markers"), all integers and floats in the byte order of the
 * machine that wrote it. The first record is the 256-byte header; then one
 * record per block, each holding the block's values for every particle of
 * the file, type 0 first, then type 1, ... up to type 5.
 *
 * Format 1 (SnapFormat=1) identifies blocks by their order: POS, VEL, ID,
 * then MASS when some type present in the file has mass 0 in the header's
 * mass table, then the gas blocks (U, RHO, ...), which are skipped (their
 * markers are still checked).
 * Format 2 (SnapFormat=2) puts before every block (the header included) an
 * 8-byte record: a 4-character label ("HEAD", "POS ", "VEL ", "ID  ",
 * "MASS", ...) and the byte count of the following record plus 8.
 *
 * Header (256 bytes)
 *   OFFSET SIZE DESCRIPTION
 *        0   24 npart[6]: particles of each type in this file (int)
 *       24   48 mass[6]: mass of every particle of a type (double), 0 when
 *               the MASS block gives them one by one
 *       72    8 time (double): expansion factor for cosmological runs
 *       80    8 redshift (double)
 *       88    4 flag_sfr
 *       92    4 flag_feedback
 *       96   24 npartTotal[6]: particles of each type in the whole snapshot,
 *               low 32 bits (unsigned int)
 *      120    4 flag_cooling
 *      124    4 num_files: files the snapshot is split into (0 read as 1)
 *      128    8 BoxSize (double); 0 in many initial conditions files
 *      136    8 Omega0 (double)
 *      144    8 OmegaLambda (double)
 *      152    8 HubbleParam (double)
 *      160    4 flag_stellarage
 *      164    4 flag_metals
 *      168   24 npartTotalHighWord[6]: high 32 bits of npartTotal (unsigned)
 *      192    4 flag_entropy_instead_u
 *      196   60 unused
 *
 * Blocks read (n = the file's particles; values float, or double when the
 * record holds twice the bytes):
 *   POS   n x 3 positions          VEL   n x 3 velocities
 *   ID    n particle IDs (4-byte or 8-byte unsigned)
 *   MASS  one mass for each particle of the types whose mass[t] is 0
 *
 * Byte order is decided by the first record marker: 256 (format 1) or 8
 * (format 2) read little-endian, or byte-swapped. Every marker must match its
 * twin; the header's counts must agree between files and add up to
 * npartTotal (a single file whose npartTotal is 0 takes npart).
 *
 * Multi-file snapshots: a name ending in ".0" whose header says num_files N
 * > 1 is read with NAME.1 ... NAME.(N-1).
 */

/* What the reader found. */
typedef struct fk_gadget_info {
    int format;     /* 1 or 2 */
    int big_endian; /* 1: byte-swapped on this (little-endian) host */
    int double_pos; /* positions stored as doubles */
    int id_bytes;   /* 4 or 8 */
    uint64_t bytes; /* bytes read over all files */
} fk_gadget_info;

/* Whether a Gadget-2 header describes a cosmological run (comoving
 * positions, Time the expansion factor a): HubbleParam > 0, Omega0 > 0,
 * 0 < Time <= 1 and Redshift = 1/Time - 1 (to 1e-6 (1 + z)), which
 * Gadget-2 writes only with ComovingIntegrationOn (else Redshift 0). The
 * header has no such flag: a run that is not cosmological and stops at
 * Time 1 with Redshift 0 reads as one (gadget2bin --no-comoving). */
int fk_gadget_looks_comoving(double hubble, double omega0, double time, double redshift);

/* Reads the Gadget-2 snapshot path ("-": stdin, single-file snapshots only)
 * and every file it is split into. Fills s (free it with fk_gsnap_free, also
 * after an error) and info (may be NULL). The header gives no units:
 * s->hdr has Gadget's default units (3.085678e21 cm, 1.989e43 g, 1e5 cm/s,
 * per h: kpc/h, 1e10 Msun/h, km/s; o->units replaces them); the cosmology is
 * recorded when HubbleParam > 0; comoving as fk_gadget_looks_comoving says,
 * with vel_a_scaling 0.5 (Gadget's velocities are v_pec / sqrt(a)); Omega_b
 * only from o.
 * Returns FK_OK, or FK_EFORMAT (not Gadget-2, a record marker that does not
 * match, a truncated file, counts that disagree, a block of the wrong size,
 * a missing block, non-finite values, far outside the box), FK_EIO (open or
 * read error), FK_EINVAL (no box for a periodic snapshot) or FK_ENOMEM.
 * Messages name the file, the block and the byte offset. */
int fk_gadget_read(const char *path, const fk_gsnap_opts *o, fk_gsnap *s, fk_gadget_info *info, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
