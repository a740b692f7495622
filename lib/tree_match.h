/* tree_match.h - the halos of two snapshots linked by their members' particle IDs: a sort and a join. */
#ifndef FK_TREE_MATCH_H
#define FK_TREE_MATCH_H

#include <stdint.h>

#include "error.h"
#include "tree_cat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SplitMix64's finalizer (Steele, Lea & Flood 2014): the hash of a particle ID that spreads
 * consecutive IDs over the join's partitions and tables, and over the ranks under mpirun. */
static inline uint64_t fk_mtree_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/*
 * The matching is three data-parallel steps, each of which a GPU path
 * replaces one for one (a scatter and gather or a hash join, a segmented
 * sort and reduce):
 *   1. the join on ID: when the IDs span at most 4 times the members
 *      (Gadget's 1..N; the span guessed from 2^16 IDs of each catalogue,
 *      read in full only when an ID lies beyond the guess), B's halos
 *      scattered into a table indexed by ID and gathered by A's members: a
 *      counting sort of one-ID buckets, no radix passes; else every member
 *      of the earlier catalogue A as its ID and of the later B as (ID,
 *      halo), scattered by a hash of the ID into partitions of about 16384
 *      members and joined in a hash table a partition, in the caches, each
 *      A member's answer in partition order, read back in rank order by
 *      hashing its ID again (the GPU, and
 *      the CPU to name a duplicate ID: both lists radix-sorted by ID and
 *      merged). Each gives each member of A the B halo holding its ID (none:
 *      it left every halo);
 *   2. each A halo's shared members sorted by (B halo, rank), a short sort a
 *      halo (its members come in rank order, mostly to one halo; on the CPU
 *      a halo with at most two descendants is summed in one pass with no
 *      sort, a register a descendant);
 *   3. reduced: per (A halo, B halo) the shared count and the score, the sum
 *      of 1/rank (SubLink's, Rodriguez-Gomez et al. 2015, MNRAS 449, 49:
 *      rank 1 the most bound member) or, with FK_TREE_WEIGHT_COUNT, of 1,
 *      summed in rank order (the same sum whichever path joined).
 * The rank is the member's place in its halo's list of IDs (1 first).
 * Memory: the hash join 8 bytes a member of A and 16 of B (the
 * partitions) and 4 a member of A (the answers), the sorts 52 bytes a member
 * of one catalogue (two 16-byte lists, their scratch, the 4-byte join);
 * then each thread's shares of its longest halo (4 bytes a member of it, 16 more for a halo with
 * more than two descendants). The table 4 bytes an ID of the span (up to a 16th more: the guess): A's
 * halos gather from it as steps 2 and 3 take each halo (no list of the
 * members' B halos is made), with plain loads and stores; an ID twice in
 * one catalogue is found by counting the table's entries, then named by a
 * second pass that checks each ID as it goes (atomic exchanges; 4 bytes and
 * a bit an ID, and 4 a member of A).
 * Step 2's sort: nothing when the shares come in order, an insertion sort
 * of a few, a stable distribution among up to 16 descendants, else qsort.
 * On the GPU (fk_mtree_match_gpu) all three run on the device
 * (gpu/tree_match.cu: a table indexed by ID, or for scattered IDs a hash
 * join in passes by buckets of the IDs' hash, then
 * CUB's segmented sort and a reduce a link, summed term by term in rank
 * order), and only the links come back: the same links, byte for byte.
 */

enum { FK_TREE_WEIGHT_RANK = 0, FK_TREE_WEIGHT_COUNT = 1 };

typedef struct fk_treelink {
    uint32_t prog, desc; /* halo rows in A (earlier) and B (later) */
    uint64_t count;      /* members they share                      */
    double score;        /* sum over the shared members of 1/rank (or 1) */
} fk_treelink;

/* Records of the sort: a key and two 32-bit values. */
typedef struct fk_treerec {
    uint64_t key;
    uint32_t a, b;
} fk_treerec;

/* Sorts r[0..n-1] by key, stably (a least-significant-digit radix sort on
 * every core, 8 bits a pass; passes over digits every key shares are
 * skipped), tmp holding n records of scratch. Can't fail. */
void fk_mtree_sort(fk_treerec *r, fk_treerec *tmp, uint64_t n);

/* Every pair of a halo of a and a halo of b that share members into
 * *links (malloc'd, caller frees; sorted by prog then desc), *nlinks of
 * them; *shared: the particles that lie in a halo of each. only (NULL:
 * all) restricts A to its halos h with only[h] set. FK_EFORMAT when a
 * particle ID lies in two halos of one catalogue (naming the catalogue, the
 * ID and the two halos), FK_EINVAL beyond 2^32 - 2 halos, FK_ENOMEM. */
int fk_mtree_match(const fk_treecat *a, const uint8_t *only, const fk_treecat *b, int weight, const char *aname,
                  const char *bname, fk_treelink **links, uint64_t *nlinks, uint64_t *shared, fk_error *err);

/* fk_mtree_match on the GPU selected by fk_gpu_select (lib/gpu/tree_match.cu:
 * the join, sort and reduce there): the same links, counts and scores,
 * bit for bit, and the same errors; FK_EDEVICE when the GPU cannot be used
 * (or in a build without CUDA). */
int fk_mtree_match_gpu(const fk_treecat *a, const uint8_t *only, const fk_treecat *b, int weight, const char *aname,
                      const char *bname, fk_treelink **links, uint64_t *nlinks, uint64_t *shared, fk_error *err);

/* A matcher: fk_mtree_match, fk_mtree_match_gpu, or fk_dist_mtree_match
 * (dist_tree.h: every MPI rank the same links). */
typedef int (*fk_mtree_matcher)(const fk_treecat *a, const uint8_t *only, const fk_treecat *b, int weight,
                                const char *aname, const char *bname, fk_treelink **links, uint64_t *nlinks,
                                uint64_t *shared, fk_error *err);

/* The GPU's match (tree_match.cu; tree_match_none.c without CUDA): the
 * members of A and B at their places (at_a, at_b: places(), A's halos
 * outside only holding none) joined, sorted and reduced on the device; the
 * links come back (*links malloc'd, sorted by prog then desc: the CPU's,
 * bit for bit). *cpu set (and no links) when an ID lies twice in one
 * catalogue, or when A or B has no members: the CPU's path then matches
 * (and names the ID). */
int fk_gpu_mtree_match(const fk_treecat *a, const uint64_t *at_a, const fk_treecat *b, const uint64_t *at_b,
                       int weight, fk_treelink **links, uint64_t *nlinks, int *cpu, fk_error *err);

/* What the last fk_gpu_mtree_match of the calling thread did (bench/treebench). */
typedef struct fk_mtree_gpu_stats {
    int path;                    /* 1 the table indexed by ID, 2 the hash join; 0 none (the CPU's) */
    int passes;                  /* the hash join's passes over B (buckets of the IDs' hash)   */
    int segsort;                 /* 1 when the segmented sort ran (some halo's shares out of
                                    order), 0 when every halo's came sorted                 */
    uint64_t members;            /* na + nb                                                 */
    uint64_t up, down;           /* bytes host to device (IDs, halos' places), back (links) */
    uint64_t moved;              /* device memory bytes its kernels read and wrote, by
                                    construction (the hash join's probes a slot and an ID a
                                    member; the segmented sort a read and a write)          */
    uint64_t peak;               /* device bytes held at once, by construction (its buffers) */
    double t_join, t_sort, t_links; /* seconds: the uploads and the join, the segmented sort,
                                    the heads, links and their download                     */
} fk_mtree_gpu_stats;
void fk_gpu_mtree_stats(fk_mtree_gpu_stats *s);

/* The GPU's floors for the matching of a and b (bench/treebench): their ID
 * arrays uploaded to the device (*put_s, as fk_gpu_put moves them), and
 * device-to-device copies that read and write moved bytes in all (*copy_s:
 * the device memory's rate over the bytes the match moves). */
int fk_gpu_mtree_floors(const fk_treecat *a, const fk_treecat *b, uint64_t moved, double *put_s, double *copy_s,
                        fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
