/* masses.h - halostats' spherical-overdensity and unbinding options: cosmology, per-level passes, header lines, BGID chunks, the .grp of bound members. */
#ifndef HS_MASSES_H
#define HS_MASSES_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "halostats.h"
#include "kv.h"
#include "snap.h"
#include "so.h"
#include "stream.h"
#include "unbind.h"

#define HS_MAX_LEVELS 64

/* What --so and --unbind ask for, and what they keep between levels. */
typedef struct hs_masses {
    int so, unbind;
    double omega_m, omega_l, a, z, rho_crit, hubble; /* as given (output units) */
    int have_om, have_ol, have_a, have_z, have_rho, have_h, have_somin;
    const char *om_from, *ol_from, *a_from, *rho_from; /* for the header */
    const char *so_from;   /* --so-from=STREAM: the SO sums over its particles, not the stream's */
    fk_snap so_snap;       /* what the SO sums count: the stream's SNAP, or STREAM's */
    float *so_pos, *so_mass; /* STREAM's particles (--so-from), owned */
    uint64_t *so_ids;        /* their IDs (NULL: STREAM has no ID chunk), owned */
    uint64_t minbound;
    uint64_t so_min; /* particles in the first sphere of a profile (0: FK_SO_MINPART) */
    double mass_total;   /* the stream's mass, when the caller summed it (mpirun: over the ranks) */
    int have_mass_total;
    int grp, grp_level; /* --format=grp: the .grp of bound members of level grp_level */
    fk_cosmo cosmo;     /* in the stream's units */
    double rho[FK_SO_N], delta_vir;
    fk_so_grid *grid;
    fk_so_particles parts;
    unsigned char *bound;          /* n stream particles */
    double *phi;                   /* n: the centres' potentials, the unbinding's first pass */
    uint32_t *bgid[HS_MAX_LEVELS]; /* nsource rows per level (original order), with --unbind */
    double t_grid, t_so, t_unbind;
    double t_level_so, t_level_unbind; /* the last level's seconds (SO: with the grid when built there) */
} hs_masses;

/* The long options, for halostats' table, and their usage lines. */
enum {
    HS_O_SO = 512, HS_O_OM, HS_O_OL, HS_O_A, HS_O_Z, HS_O_RHO, HS_O_H, HS_O_UNBIND, HS_O_BMIN, HS_O_LEVEL, HS_O_SOMIN,
    HS_O_SOFROM
};
#define HS_MASSES_LONG                                                                                         \
    {"so", no_argument, 0, HS_O_SO}, {"omega-m", required_argument, 0, HS_O_OM},                             \
        {"omega-l", required_argument, 0, HS_O_OL}, {"scale-factor", required_argument, 0, HS_O_A},          \
        {"redshift", required_argument, 0, HS_O_Z}, {"rho-crit", required_argument, 0, HS_O_RHO},            \
        {"hubble", required_argument, 0, HS_O_H}, {"unbind", no_argument, 0, HS_O_UNBIND},                   \
        {"bound-min", required_argument, 0, HS_O_BMIN}, {"level", required_argument, 0, HS_O_LEVEL},         \
        {"so-min", required_argument, 0, HS_O_SOMIN}, {"so-from", required_argument, 0, HS_O_SOFROM}

void hs_masses_help(void);

/* Handles option opt (returns 1) or returns 0. Usage errors exit. */
int hs_masses_option(int opt, const char *arg, hs_masses *m);

/* After the options: checks what goes together (usage errors exit). */
void hs_masses_check(const hs_masses *m);

/* After the stream is read: the particles the SO sums count (the stream's,
 * or with --so-from those of another stream of the same snapshot, read
 * here), the cosmology (options, else the SNAP keys omega_m, omega_l and
 * redshift when present, else the defaults), rho_crit (given; from
 * --hubble; from the stream's units and h; else the periodic box's mean
 * density / Omega_m) and the thresholds; the grid over the counted
 * particles is built by the first level's SO masses. With have_mass_total,
 * mass_total stands for the sum of mass (s->n particles; then mass may be
 * NULL: mpirun, whose ranks summed it); else the sum is exact
 * (spacing.h). ids (NULL: the stream's order; with --so-from that
 * stream's own IDs) order each SO grid cell's particles (so.h). Exits on
 * error. */
void hs_masses_setup(hs_masses *m, const fk_snap *s, const char *snaptext, const float *pos, const float *mass,
                     const uint64_t *ids, const fk_halo_units *u, double G_out);

/* The column flags shown: FK_HCOL_SO with --so, FK_HCOL_UNBIND with --unbind. */
unsigned hs_masses_flags(const hs_masses *m);

/* With --unbind and potential centres (mbp): where fk_halostats_centres_phi
 * keeps each level's potentials for the unbinding (n entries, allocated
 * once); else NULL. Exits when out of memory. */
double *hs_masses_phi(hs_masses *m, uint64_t n, int mbp);

/* Level k: SO masses and unbinding of its ng groups (after the centres),
 * the level's BGID, the first pass from the potentials hs_masses_phi kept
 * when it gave a buffer; with gpu, the large groups unbound on the GPU and
 * the SO masses side by side with the unbinding (each its own team of
 * threads). Exits on error. */
void hs_masses_level(hs_masses *m, const fk_halo_input *hin, int k, fk_halo *h, uint64_t ng, const fk_pot_params *pot,
                     uint64_t nsource, int gpu);

/* '#' lines describing the run's SO thresholds and unbinding. */
void hs_masses_header(FILE *f, const hs_masses *m, const fk_halo_units *u);

/* Their keys in the HCOL record. */
void hs_masses_kv(fk_kvbuf *kv, const hs_masses *m);

/* The BGID chunks (with --unbind) on w, levels 0..nlevels-1. Exits on error. */
void hs_masses_chunks(const hs_masses *m, fk_writer *w, int nlevels, uint64_t nsource);

/* The .grp of bound members of the chosen level to f. */
void hs_masses_write_grp(const hs_masses *m, FILE *f, int nlevels, uint64_t nsource);

void hs_masses_free(hs_masses *m, int nlevels);

#endif
