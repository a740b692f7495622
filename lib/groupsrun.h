/* groupsrun.h - one groups run: a linked stream's IDs and SINK levels read (the rest passed on), every level resolved, numbered and written. */
#ifndef FK_GROUPSRUN_H
#define FK_GROUPSRUN_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "groups.h"
#include "levels.h"
#include "snap.h"
#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What groups reads of a linked stream. */
typedef struct fk_groups_in {
    uint64_t *ids;                   /* snap.n original indices (ID, widened)   */
    uint32_t *sinks[FK_LEVELS_MAX];  /* level k's SINK chunk, snap.n entries    */
    int nlevels;                     /* levels 0 .. nlevels - 1, all present    */
    int replaced;                    /* the input had GID, GRPS or GPAR chunks  */
    int link_seen, link_levels;      /* a LINK met; the levels it names, or 0   */
    int more;                        /* fk_groups_read_until stopped early      */
} fk_groups_in;

/* Reads the rest of r (after SNAP, for snap's particles): ID and every SINK
 * level loaded and checked, and, when w is not NULL, every chunk written on
 * but the GID, GRPS and GPAR this run replaces. FK_EMISSING without ID or
 * SINK, FK_EFORMAT for levels that do not run 0, 1, 2, ..., two chunks of a
 * kind, or IDs that are not a source's indices; messages name name. On
 * failure in holds nothing (fk_groups_in_free is still safe). */
int fk_groups_read(fk_reader *r, fk_writer *w, const fk_snap *snap, const char *name, fk_groups_in *in,
                   fk_error *err);

/* As fk_groups_read, but stops as soon as ID and every SINK level the LINK
 * chunk names (its "levels" key: foflink writes it) have come, with
 * in->more = 1: the levels can be resolved, numbered and written while the
 * rest of the stream (the velocities, say) still comes, which
 * fk_groups_read_rest then reads (passed on to w; a SINK beyond the LINK's
 * levels, or a second ID, an error there). Without a LINK naming the levels,
 * it reads to the end, in->more = 0. */
int fk_groups_read_until(fk_reader *r, fk_writer *w, const fk_snap *snap, const char *name, fk_groups_in *in,
                         fk_error *err);
int fk_groups_read_rest(fk_reader *r, fk_writer *w, const fk_snap *snap, const char *name, fk_groups_in *in,
                        fk_error *err);

void fk_groups_in_free(fk_groups_in *in);

/* How fk_groups_grp_write spent its time, in seconds: reading the rest of
 * the input (rest, of which rest_waited waiting for its writer) and the .grp
 * text (grp), the two side by side. */
typedef struct fk_groups_grp_times {
    double rest, rest_waited, grp;
} fk_groups_grp_times;

/* The .grp text of gid (fk_grp_write, named oname in messages) written to f
 * on the calling thread (and its OpenMP team) while the rest of r after
 * fk_groups_read_until (in->more: the velocities, say, and END) is read and
 * checked on a thread of its own (fk_groups_read_rest, nothing written on).
 * A failure of the input stops the writing and is the one returned (then f
 * holds part of the text: the caller discards it), else the writing's. For
 * an output committed only once this returns OK, so that a stream cut or
 * damaged after its IDs leaves no .grp. times (NULL: not wanted) gets the
 * timings. */
int fk_groups_grp_write(fk_reader *r, const fk_snap *snap, const char *name, fk_groups_in *in, FILE *f,
                        const uint32_t *gid, const char *oname, fk_groups_grp_times *times, fk_error *err);

/* Every level of in resolved and numbered (groups of at least minsize
 * members) and written to w: GRPS, GID (snap->nsource entries, the source's
 * order) and, from level 1 on, GPAR. info gets each level's numbers. The
 * sinks are resolved in place. */
int fk_groups_write_levels(fk_writer *w, fk_groups_in *in, const fk_snap *snap, uint64_t minsize, const char *name,
                           fk_groups *info, fk_error *err);

/* Level k of in resolved and numbered (groups of at least minsize members):
 * *gid (malloc'd) gets snap->nsource group numbers in the source's order,
 * the rows of a tipsy .grp (fk_grp_write); *info its numbers. FK_EINVAL
 * when the stream has no level k. */
int fk_groups_grp_ids(fk_groups_in *in, const fk_snap *snap, int k, uint64_t minsize, const char *name, uint32_t **gid,
                      fk_groups *info, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
