/* halostats_input.h - halostats' input: the grouped stream (or with -m foflink's) read on a feed and checked, its levels numbered, each level's groups and hosts; -m's work before the input ends. */
#ifndef FK_HALOSTATS_INPUT_H
#define FK_HALOSTATS_INPUT_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "groups.h"
#include "haloearly.h"
#include "halostats.h"
#include "potential.h"
#include "snap.h"
#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FK_HSIN_MAX_LEVELS 64

/* What halostats reads of one level. */
typedef struct fk_hsin_level {
    uint32_t *gid;   /* nsource rows, original order */
    uint32_t *gpar;  /* ngroups + 1 rows, or NULL   */
    uint64_t ngpar;  /* its rows                    */
    fk_groups grps;
    int have_grps;
    double l, b, psi; /* from LINK, when known      */
    int have_l, have_b;
} fk_hsin_level;

/* What halostats reads from the stream. */
typedef struct fk_hsin {
    const char *name;
    fk_snap snap;
    float *pos, *vel, *mass;
    uint64_t *ids;
    uint64_t *pids;  /* the snapshot's own IDs (PID chunk), or NULL */
    uint8_t *type;   /* the TYPE chunk, or after reading each particle's type (the program's) */
    double m_hires;  /* the least dark mass: zoom-in contamination (fk_halo_input's) */
    fk_hsin_level lv[FK_HSIN_MAX_LEVELS];
    int nlevels;     /* 1 + the highest level of a GID, GRPS or GPAR */
    int have_link, replaced;
    int link_isolated; /* LINK says periodic 0 in a periodic box: foflink --no-periodic */
    uint32_t *sinks[FK_HSIN_MAX_LEVELS]; /* with -m: foflink's SINK levels, resolved here as groups would */
    int nsinks;      /* 1 + the highest SINK level read */
    char *snaptext;  /* the SNAP record, for the cosmology of --so */
    double waited;   /* seconds spent waiting for the input's writer (-v) */
} fk_hsin;

/* The LINK record's linking lengths of every level into in->lv (foflink
 * writes l, b, psi for level 0 and l_K, b_K, psi_K for the levels after),
 * and whether it linked with isolated boundaries (periodic 0); name for
 * messages. FK_EFORMAT of a value that is not a number. */
int fk_hsin_parse_link(fk_hsin *in, const char *text, const char *name, fk_error *err);

/* What -m's early work takes from the program: the potentials' parameters
 * and the box it will use once its input has ended, made from a copy of the
 * input as it was when the work could start (the program's setup on it). */
typedef struct fk_hsin_how {
    fk_pot_params pot;       /* G, softening, theta, ... in the stream's units */
    int mbp;                 /* the centres are potential minima: they are found early */
    fk_pot_minima_fn minima; /* a device's (or its hook's): on the finder's thread to the
                              * last batch; NULL: the CPU's, until the input ends */
    double *phi;             /* where level 0's potentials are kept (--unbind), or NULL: then
                              * every level's minima early, else level 0's alone */
} fk_hsin_how;

/* The program's part of the early work (on the stage's thread): seen is a
 * copy of the input (its snap the program may change: the box as linked),
 * how to be filled. */
typedef void (*fk_hsin_setup)(void *ctx, fk_hsin *seen, fk_hsin_how *how);

/* What -m did before its input ended (haloearly.h), and what it assumed. */
typedef struct fk_hsin_early {
    fk_halo_early e;
    int ran;            /* the groups were numbered: st their status */
    int st;
    fk_error err;
    int levels;         /* the SINK levels numbered */
    const uint64_t *ids;
    const float *pos, *mass;
    fk_pot_params pot;  /* the potentials' parameters and box taken */
    int periodic;
    double box, origin;
    double t_ready, t_done, t_end; /* seconds from the start: the work began, ended; the input ended */
    int finder;         /* the minima went on on the finder's thread */
} fk_hsin_early;

/* Reads the stream of f into in (in->name set by the caller; the reader's
 * progress through progress(r, offset) when not NULL); with w, writes it on
 * as it goes (every chunk but the HALO, HCOL, MORDER and MRANK this run
 * replaces). With minsize (-m), takes foflink's SINK levels (refusing a
 * stream with groups already) and, as soon as the IDs, every SINK level LINK
 * names, the positions and the masses have come, does the early work into
 * *ea while the rest is read: the groups numbered (a failure kept in ea,
 * handed out by fk_hsin_groups), each level's members gathered and, with
 * how->mbp, their minima found (fk_halo_early_level_work,
 * fk_halo_early_finder_start); setup(setup_ctx, ...) gives how. t0: the
 * start, on fk_now's clock (ea's times from it). The reader is closed, f is
 * not. Fails as the reader, the chunks' checks and the feed do (FK_EFORMAT
 * naming the chunk; FK_ENOMEM). */
int fk_hsin_read(fk_hsin *in, FILE *f, fk_writer *w, uint64_t minsize, fk_hsin_setup setup, void *setup_ctx,
                 fk_hsin_early *ea, double t0, void (*progress)(void *ctx, uint64_t offset), fk_error *err);

/* After fk_hsin_read: what the stream must hold (with minsize the SINK
 * levels, else the GID levels; POS, VEL, MASS, ID). FK_EFORMAT saying what
 * is missing. */
int fk_hsin_check(const fk_hsin *in, uint64_t minsize, fk_error *err);

/* Whether the early work's groups are those of the whole input: every SINK
 * level numbered, from the IDs that stayed (a second chunk is an error). */
int fk_hsin_early_holds(const fk_hsin_early *ea, const fk_hsin *in);

/* Whether the minima found early hold: -m with potential centres (mbp), the
 * early groups holding, found with this G, softening, box and these
 * particles (pot: the run's parameters after its setup). */
int fk_hsin_early_minima_hold(const fk_hsin_early *ea, const fk_hsin *in, uint64_t minsize, int mbp,
                              const fk_pot_params *pot);

/* The groups of the input: the early work's failure (the IDs' checks or a
 * level's numbering) handed out, the IDs checked (fk_groups_check_ids)
 * unless the early work did, and with minsize (-m) every SINK level
 * resolved and numbered into the GID, GRPS and GPAR that groups -m minsize
 * would have written (the early work's, when it numbered them all; the
 * sinks freed). The failures of those calls; FK_ENOMEM. */
int fk_hsin_groups(fk_hsin *in, uint64_t minsize, fk_hsin_early *ea, fk_error *err);

/* The groups of every stream particle at level L into grp (snap.n
 * entries); the number of groups (GRPS's, or without it the largest id).
 * Can't fail. */
uint64_t fk_hsin_level_groups(const fk_hsin *in, const fk_hsin_level *L, uint32_t *grp);

/* The level and host of level k's ng groups h: GPAR's rows, checked
 * against the level above's ng_up groups, or without GPAR the level
 * above's group of each group's reference member (minid). FK_EFORMAT of a
 * GPAR of the wrong rows or a host beyond the level above. */
int fk_hsin_set_hosts(const fk_hsin *in, int k, fk_halo *h, uint64_t ng, uint64_t ng_up, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
