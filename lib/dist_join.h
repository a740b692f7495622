/* dist_join.h - the components of a graph spread over MPI ranks, joined across them in rounds: no rank gathers them. */
#ifndef FK_DIST_JOIN_H
#define FK_DIST_JOIN_H

#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The merge of a distributed link (dist_link.h): each rank holds the
 * boundary groups it found (nodes, each named by a 64-bit name whose high
 * 32 bits are the rank that holds it, and carrying the lowest ID of its
 * particles) and edges between its nodes and other ranks' (a link across
 * ranks). Every rank learns, for each of its nodes, the lowest name of its
 * connected component (its root) and the lowest ID over the component.
 *
 * A distributed union-find, rounds of hooking and pointer jumping (the
 * scheme of Shiloach and Vishkin, J. Algorithms 3, 57 (1982), with the
 * lower root the parent): each node keeps a parent (a name, at most its
 * own), held by the node's rank; parents always point to lower names, so
 * they form a forest.
 *  1. Hooking: for each edge (a, b) still joining two trees, the rank of a
 *     asks b's rank for b's root (a's it holds) and sends the pair
 *     (higher root, lower root) to the higher root's rank, which hangs that
 *     root under the lowest root offered (one request per distinct root a
 *     rank sends). Edges whose ends share a root are dropped for good.
 *  2. Pointer jumping: each node's parent becomes its parent's parent,
 *     asked of the parent's rank (once per distinct parent a rank asks),
 *     until no parent changes anywhere: every node points at its root
 *     (as many passes as the log of the trees' depth).
 * until no edge joins two trees. Then each node sends its lowest ID to its
 * root's rank, which answers every one with the least.
 *
 * What a rank holds is its own nodes and edges and the requests about them:
 * the distinct names its edges reach, and its roots' requests (at most one
 * from each rank a round for each root). Nothing is gathered on one rank.
 * Every exchange is an all-to-all of 8- or 16-byte records
 * (dist_alltoall.h); every rank runs the same number of rounds.
 */

typedef struct fk_dist_join_report {
    uint64_t rounds;          /* hooking rounds (the last one found nothing to hook) */
    uint64_t jumps;           /* pointer-jumping passes, over all rounds        */
    uint64_t bytes_sent, bytes_recv; /* this rank's, to and from other ranks     */
    uint64_t held;            /* the most records this rank held at once: its
                                 nodes and edges, and what it received         */
} fk_dist_join_report;

/* Collective. names: this rank's nn nodes, sorted, distinct, each with this
 * rank in its high 32 bits; mid[i] node i's lowest ID. edges: ne pairs
 * (a, b), a one of names, b any rank's node (named on that rank). root[i]
 * and low[i] (nn each) get node i's component's lowest name and lowest ID.
 * rep may be NULL. Failures (memory, an edge to a name no rank holds) are
 * agreed on: every rank returns the same status. FK_EUNSUP without MPI. */
int fk_dist_join(uint64_t nn, const uint64_t *names, const uint64_t *mid, uint64_t ne, const uint64_t *edges,
                 uint64_t *root, uint64_t *low, fk_dist_join_report *rep, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
