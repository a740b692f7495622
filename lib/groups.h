/* groups.h - resolving a sink array into numbered groups: validation, numbering, the GRPS and GID chunks. */
#ifndef FK_GROUPS_H
#define FK_GROUPS_H

#include <stdint.h>

#include "error.h"

/*
 * Input: the SINK chunk of level k (<u4, n rows, stream order). Every
 * particle i starts a chain i -> sink[i] -> sink[sink[i]] -> ... that must
 * end at a sink s (sink[s] == s); the particles whose chains end at the
 * same sink form one group. Any valid chains are accepted, not only the
 * canonical array foflink writes (sink[i] = lowest stream index of i's
 * group); a value >= n or a cycle of two or more particles is an error.
 *
 * Output, level k (one per SINK level: hierarchical linking writes SINK
 * levels 0, 1, ..., see levels.h; each gives the GRPS and GID of its level):
 *   GID   <u4, nsource rows, 1 column, flags 0 (NOT per particle): row r is
 *         the group of the particle whose original index (ID) is r, 0 when
 *         it is in no kept group or absent from the stream
 *   GRPS  text (kv.h):
 *     level      the level k
 *     ngroups    groups kept, numbered 1..ngroups
 *     minsize    the least size kept
 *     ngrouped   particles in kept groups
 *     nfound     groups found, groups of one included
 *     largest    members of group 1 (0 when there is none)
 *     n nsource  particles in the stream, in the source snapshot
 *     order      "size-desc,minid": the numbering rule below
 *   GPAR  levels k >= 1 only: <u4, ngroups_k + 1 rows, 1 column, flags 0:
 *         row g is the group of level k-1 that contains group g of level k;
 *         row 0 is 0
 * Numbering: kept groups are numbered 1..ngroups by decreasing size; groups
 * of equal size by increasing lowest original index (ID) among their
 * members, so the numbers do not depend on the stream order.
 *
 * Every level keeps the groups of at least the same minsize. A group of
 * level k lies inside one group of level k-1, which has at least as many
 * members, so a kept group's parent is kept too: GPAR never holds 0 beyond
 * row 0 (fk_groups_parents checks it).
 */

#define FK_GROUPS_ORDER "size-desc,minid"

/* What a numbering found; the content of GRPS. */
typedef struct fk_groups {
    uint32_t level;
    uint64_t n, nsource;
    uint64_t minsize;
    uint64_t nfound;   /* sinks: groups of one included                 */
    uint64_t ngroups;  /* groups of at least minsize members            */
    uint64_t ngrouped; /* particles in them                             */
    uint64_t largest;  /* members of group 1, 0 when ngroups is 0       */
} fk_groups;

/* Resolves every chain of sink (n entries) in place: afterwards sink[i] is
 * the sink that ends i's chain. On all cores (OpenMP): an array already
 * resolved (foflink's) is only read; others are resolved by pointer
 * jumping, O(n log depth) work, on a copy (4n bytes of scratch; without
 * them a serial walk, n bytes). The result and every message are the same
 * for every number of threads. Fails with FK_EFORMAT, naming the particle,
 * on a value >= n (the lowest such particle) or on a cycle (the first
 * particle met twice walking from the lowest particle whose chain enters
 * it), FK_EUNSUP when n does not fit 32 bits, FK_ENOMEM. On failure sink
 * is partly resolved (the same groups, some chains shortened). name is
 * used in messages. */
int fk_groups_resolve(uint32_t *sink, uint64_t n, const char *name, fk_error *err);

/* Checks that every one of the n original indices is below nsource and that
 * none repeats (FK_EFORMAT naming the stream particle); nsource / 8 bytes of
 * scratch. */
int fk_groups_check_ids(const uint64_t *ids, uint64_t n, uint64_t nsource, const char *name, fk_error *err);

/* Numbers the groups of a resolved sink array (root[root[i]] == root[i] for
 * every i, as fk_groups_resolve leaves it) and writes gid[ids[i]], the
 * group of particle i, for the nsource rows of gid (all of them written: 0
 * for absent and ungrouped particles). ids are checked original indices
 * (fk_groups_check_ids), or NULL for the identity (then nsource must be n).
 * Groups of fewer than minsize (>= 1) members are dropped. Fills info (level
 * left 0). O(n) plus a sort of the kept groups, on all cores (OpenMP), the
 * same result for every number of threads; 4n bytes of scratch plus 36
 * bytes a kept group.
 * FK_EINVAL for bad arguments, FK_ENOMEM. */
int fk_groups_number(const uint32_t *root, const uint64_t *ids, uint64_t n, uint64_t nsource, uint64_t minsize,
                     uint32_t *gid, fk_groups *info, fk_error *err);

/* The parents of level k's groups (GPAR): gid_up and gid are the GID rows
 * (nsource each, original order) of levels k-1 and k, ngroups the groups of
 * level k. Writes parent[0..ngroups], parent[0] = 0. FK_EFORMAT, naming the
 * group and two of its particles by original index, when a group of level
 * k has members in two groups of level k-1, or in none (so the levels do
 * not nest), or has no member at all. level (k) and name are used in
 * messages. O(nsource + ngroups), no scratch. */
int fk_groups_parents(const uint32_t *gid_up, const uint32_t *gid, uint64_t nsource, uint64_t ngroups,
                      uint32_t *parent, uint32_t level, const char *name, fk_error *err);

/* GRPS text for info (caller frees *text). */
int fk_groups_format(const fk_groups *info, char **text, fk_error *err);

/* Parses GRPS text: ngroups and minsize are required, the other keys read
 * when present (else 0); level is left to the caller (it is the chunk's). */
int fk_groups_parse(const char *text, fk_groups *info, const char *name, fk_error *err);

#endif
