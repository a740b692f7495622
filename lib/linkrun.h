/* linkrun.h - one foflink run: every level linked on the CPU or the GPU, by the tree or all pairs, and the LINK record it leaves. */
#ifndef FK_LINKRUN_H
#define FK_LINKRUN_H

#include <stdint.h>

#include "error.h"
#include "gpu.h"
#include "kdtree.h"
#include "levels.h"
#include "link.h"
#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What to link: the particles (tree order), the tree (unused with brute),
 * one fk_linkopts per level (fk_levels_check'ed), and where. */
typedef struct fk_link_job {
    uint64_t n;
    const float *pos, *vel; /* vel: n x 3 for 6D (psi > 0), else NULL */
    const fk_tree *tree;
    const fk_linkopts *lo;
    int nlevels;
    int brute; /* all pairs (O(n^2)) instead of the tree */
    int gpu;   /* on the GPU (probed usable by the caller) */
    /* Hydro runs (attach.h): with type (n entries) and link_types other than
     * FK_TYPES_ALL, only the particles of link_types are linked (on a tree of
     * their own: tree unused) and those of attach_types attached to their
     * nearest one's group; ids (the ID chunk, <u4 when idw is 4, <u8 when 8;
     * NULL: stream indices) break the ties. type NULL: every particle linked. */
    const uint8_t *type;
    unsigned link_types, attach_types;
    const void *ids;
    int idw;
} fk_link_job;

/* What a run did. */
typedef struct fk_link_report {
    fk_linkstats stats[FK_LEVELS_MAX];
    double seconds[FK_LEVELS_MAX]; /* wall time of each level         */
    double total;                  /* wall time of the whole run      */
    fk_gputimes gpu;               /* level 0's GPU times, on the GPU */
    int attach;                    /* a hydro run (job's link_types)   */
    uint64_t primaries, secondaries; /* particles linked, to attach  */
    uint64_t attached[FK_LEVELS_MAX]; /* of the secondaries, attached at each level */
    double attach_seconds;         /* the nearest primaries' search   */
} fk_link_report;

/* GPU memory (bytes) the job needs, for the report before it runs. */
uint64_t fk_link_gpu_bytes(const fk_link_job *job);

/* Links every level: sinks[k] (n entries) gets level k's canonical sinks.
 * A hydro job links its primaries and attaches its secondaries at every
 * level (attach.h), on the CPU or the GPU alike (the same sinks).
 * On the CPU with the tree, the levels after the first are linked inside
 * the groups of the level before (fk_levels_link_cpu); on the GPU, and with
 * brute, each level is linked whole (the same sinks). Fails as the linkers
 * do (FK_EDEVICE on the GPU). */
int fk_link_run(const fk_link_job *job, uint32_t *const *sinks, fk_link_report *rep, fk_error *err);

/* The parameters of a run that the LINK record keeps beyond the job. */
typedef struct fk_link_meta {
    const double *b;       /* -b per level, or NULL when -l gave the lengths */
    const double *psi_rel; /* --psi-rel per level, or NULL                   */
    double vscale;         /* the rms velocity psi_rel multiplies            */
    double spacing, neff;  /* with b: the mean spacing b multiplies, box / neff^(1/3) (spacing.h) */
    const char *spacing_of; /* with b: what it is of: "lightest", "all", "types dark", "mass M" */
} fk_link_meta;

/* The LINK record (kv text, caller frees): level 0's keys l, b (and
 * spacing, spacing_of, neff), psi (and psi_rel, vscale), periodic, box,
 * method, device, levels, groups, in a hydro run link_types, attach_types,
 * attach_reach, primaries, secondaries, then
 * l_k, b_k, psi_k, psi_rel_k, groups_k (attached_k) for every level k. Lengths are the
 * binary32 values the predicate uses. */
int fk_link_record(const fk_link_job *job, const fk_link_meta *p, const fk_link_report *rep, char **text,
                   fk_error *err);

/* foflink's output chunks to w: the LINK record, then sinks[k] (job->n
 * entries, malloc'd) as level k's SINK chunk, for every level, handed to
 * the writer (fk_writer_give: sinks[k] NULL after, freed by the writer). */
int fk_link_write(fk_writer *w, const fk_link_job *job, const fk_link_meta *p, const fk_link_report *rep,
                  uint32_t **sinks, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
