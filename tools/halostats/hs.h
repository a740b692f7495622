/* hs.h - halostats: what the program reads and the options that shape its output, shared by one process and mpirun. */
#ifndef HALOSTATS_HS_H
#define HALOSTATS_HS_H

#include <stdint.h>
#include <stdio.h>

#include "catalog_write.h"
#include "groups.h"
#include "halostats.h"
#include "halostats_input.h"
#include "masses.h"
#include "potential.h"
#include "snap.h"
#include "stream.h"

#define SOFTENING_FRACTION 0.05 /* default softening: this times the mean interparticle spacing */
#define MAX_LEVELS FK_HSIN_MAX_LEVELS

/* What halostats reads (halostats_input.h). */
typedef fk_hsin_level level;
typedef fk_hsin input;

/* The options that shape the output. */
typedef struct options {
    int format; /* 0 text, 1 csv, 2 stream, 3 hdf5, 4 grp (bound members) */
    fk_centre centre;
    fk_pot_params pot; /* G in the stream's units */
    double G_out;      /* G in the output units   */
    int have_G, have_eps; /* have_G: 1 given, 2 from the stream's units (SNAP) */
    int device; /* DEV_AUTO, DEV_CPU, DEV_GPU; resolved to DEV_CPU or DEV_GPU */
    fk_halo_units units;
    hs_masses m; /* --so, --unbind */
    const char *snapshot; /* --snapshot=FILE: the group-ordered snapshot beside --format=hdf5 */
    int subhalos;         /* --subhalos: 0 as the options say (bound with --unbind), 1 levels, 2 bound */
    /* a comoving stream's physical frame (fk_snap_frame): potentials with
     * G / a, peculiar velocities vel * vscale, the Hubble flow hflow d */
    int comoving;
    double a, vscale, hflow;
    double eps_max_phys; /* --softening-max-phys: the softening's cap, physical (0: none) */
    int eps_capped;      /* the cap took: pot.eps = eps_max_phys / a */
    int no_G;            /* a stream without units and no --G: no column that needs G */
    uint64_t minsize;    /* -m N: groups' work done here, on foflink's stream (0: GID from groups) */
} options;

/* Without G (o->no_G: a stream without units, no --G): phi_mbp, vmax and
 * lambda of h[0..ng) set to NaN. */
void hs_blank_G(const options *o, fk_halo *h, uint64_t ng);

/* Whether the HDF5 catalogue's subhalos are the bound ones of --unbind
 * (subhalos.h) rather than the level 1 groups. */
int bound_subhalos_asked(const options *o);

/* What the catalogue says of the run of o (catalog_write.h): the output
 * units, the columns shown, G, the centres' potentials, the frame. */
void hs_catw(const options *o, fk_catw *w);

/* After the stream is read (in->snap.n the particles of the whole run): the
 * box as linked (isolated after foflink --no-periodic), the output units and
 * G, the default softening. Exits on a bad
 * combination (usage) or a missing GPU. */
void hs_setup(input *in, options *o);

/* The device of the potentials resolved (CPU unless the centres are
 * potential minima): in a single process before the input is read, so that
 * the GPU's context is made while the stage before works; under mpirun
 * after hs_setup, once each rank has its GPU. */
void hs_device(options *o);

/* The particle types of n stream particles (types.c) into *type (malloc'd):
 * chunk, the stream's TYPE chunk, checked (each 0 gas, 1 dark or 2 star:
 * else FK_EFORMAT naming the particle), or when NULL made from the
 * original indices ids and SNAP's nsource_gas/dark/star (the source's
 * order: gas, dark, star; a stream without TYPE, mkuniverse's; counts that
 * do not add up to nsource: every particle dark). FK_ENOMEM. */
int hs_types(const fk_snap *s, uint64_t n, const uint64_t *ids, const uint8_t *chunk, uint8_t **type, const char *name,
             fk_error *err);

#endif
