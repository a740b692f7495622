/* ranks.c - halostats --format=stream: each particle's place in its group's members, most bound first (MORDER, MRANK chunks). */
#include "ranks.h"

#include <inttypes.h>
#include <stdlib.h>

#include "halomembers.h"
#include "kv.h"
#include "memberorder.h"
#include "prog.h"

/* Level k's ranks into rank (nsource entries, original order, 0: in no
 * group): each group's members by distance from its centre, ties by ID. */
static void level_ranks(const input *in, const level *L, const fk_halo *h, uint64_t ng, uint32_t *rank)
{
    fk_error err = {0};
    const uint64_t n = in->snap.n;
    uint32_t *grp = malloc((n ? n : 1) * sizeof *grp);
    double *key = malloc((n ? n : 1) * sizeof *key);
    if (!grp || !key) prog_die(EXIT_RESOURCE, "out of memory for the ranks of %" PRIu64 " particles", n);
#pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; i++) grp[i] = L->gid[in->ids[i]];
    fk_halo_order ord;
    if (fk_halo_order_build(n, grp, in->ids, ng, &ord, &err)) prog_fail(&err);
    if (ord.bad < n)
        prog_die(EXIT_DATA, "%s: particle %" PRIu64 " is in group %" PRIu32 " of %" PRIu64, in->name, in->ids[ord.bad],
                 ord.bad_group, ng);
    const fk_halo_input hin = {n, in->pos, in->vel, in->mass, in->ids, grp, in->snap.periodic, in->snap.box,
                               in->snap.origin, 0, 1, 0, NULL, 0};
    fk_morder_keys(&hin, L->gid, NULL, h, NULL, NULL, key);
    int failed = 0;
#pragma omp parallel
    {
        void *scratch = NULL;
        uint64_t cap = 0, *rows = NULL, rcap = 0;
#pragma omp for schedule(dynamic, 16)
        for (uint64_t g = 0; g < ng; g++) {
            const uint64_t a = ord.first[g], m = ord.first[g + 1] - a;
            if (m > rcap) {
                free(rows);
                rcap = (rows = malloc(m * sizeof *rows)) ? m : 0;
            }
            if (!rows) {
#pragma omp atomic write
                failed = 1;
                continue;
            }
            for (uint64_t j = 0; j < m; j++) rows[j] = fk_halo_order_at(&ord, a + j);
            if (fk_morder_sort(rows, m, key, in->ids, &scratch, &cap) != FK_OK) {
#pragma omp atomic write
                failed = 1;
                continue;
            }
            for (uint64_t j = 0; j < m; j++) rank[in->ids[rows[j]]] = (uint32_t)(j + 1);
        }
        free(scratch), free(rows);
    }
    if (failed) prog_die(EXIT_RESOURCE, "out of memory for the ranks of %" PRIu64 " particles", n);
    fk_halo_order_free(&ord);
    free(grp), free(key);
}

void hs_rank_chunks(fk_writer *w, const input *in, const options *o, fk_halo *const *halos, const uint64_t *ng)
{
    if (o->centre != FK_CENTRE_MBP) return; /* no centre to order by: the members stay by ID, as GID lists them */
    fk_error err = {0};
    double t = prog_now();
    fk_kvbuf kv;
    fk_kv_init(&kv);
    fk_kv_str(&kv, "order", fk_morder_name(FK_MORDER_RADIUS));
    fk_kv_u64(&kv, "levels", (uint64_t)in->nlevels);
    fk_kv_str(&kv, "definition", "MRANK of level k: each particle's place in its group's members, 1 nearest the "
                                 "group's centre (its most bound member), ties to the lower original index; 0 none");
    char *text = NULL;
    if (fk_kv_finish(&kv, &text, &err) || fk_writer_text(w, "MORDER", 0, text, &err)) prog_fail(&err);
    free(text);
    const uint64_t ns = in->snap.nsource;
    for (int k = 0; k < in->nlevels; k++) {
        uint32_t *rank = calloc(ns ? ns : 1, sizeof *rank);
        if (!rank) prog_die(EXIT_RESOURCE, "out of memory for the ranks of %" PRIu64 " particles", ns);
        level_ranks(in, &in->lv[k], halos[k], ng[k], rank);
        fk_chunk c;
        fk_chunk_init(&c, "MRANK", "<u4", 0, ns, 1);
        c.level = (uint32_t)k;
        if (fk_writer_put(w, &c, rank, &err)) prog_fail(&err);
        free(rank);
    }
    prog_info("MRANK: each group's members by distance from its centre, %d level%s, in %.3f s", in->nlevels,
              in->nlevels > 1 ? "s" : "", prog_now() - t);
}
