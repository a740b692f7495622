/* gsnapcheck.h - what the Gadget-family harnesses (fuzz_gadget, fuzz_hdf5) check of a snapshot read: counts, order, values, slices, types. */
#ifndef FK_GSNAPCHECK_H
#define FK_GSNAPCHECK_H

#include <math.h>

#include "fuzz.h"
#include "gsnap.h"

/* Reads a snapshot with options o into s (fk_gadget_read or fk_hdf5_read_images bound to the
 * input); the harness's own context travels in ctx. */
typedef int (*gsnap_read_fn)(void *ctx, const fk_gsnap_opts *o, fk_gsnap *s, fk_error *err);

/* The promises of a successful read with options o: counts add up, kept types only, the
 * snapshot's order (types in order, IDs rising within the snapshot), finite values, positions
 * inside a periodic box. */
static void gsnap_check(const fk_gsnap *s, const fk_gsnap_opts *o)
{
    const fk_gsnap_header *h = &s->hdr;
    FUZZ_ASSERT(h->ntypes >= 1 && h->ntypes <= FK_GSNAP_NTYPES && h->nfiles >= 1);
    FUZZ_ASSERT(s->box > 0 && isfinite(s->box) && s->cap >= s->n);
    uint64_t n = 0, ns = 0;
    for (int t = 0; t < h->ntypes; t++) {
        const int kept = !o->types || (o->types >> t & 1u);
        FUZZ_ASSERT(s->nkept[t] <= h->ntotal[t] && (kept || s->nkept[t] == 0));
        if (!o->nslices) FUZZ_ASSERT(s->nkept[t] == (kept ? h->ntotal[t] : 0));
        n += s->nkept[t];
        ns += h->ntotal[t];
    }
    FUZZ_ASSERT(n == s->n && ns == s->nsource && s->nwrapped <= n);
    const float lo = (float)s->origin, hi = (float)(s->origin + s->box);
    for (uint64_t i = 0; i < n; i++) {
        FUZZ_ASSERT(s->gtype[i] < h->ntypes && s->type[i] == fk_gsnap_stream_type(s->gtype[i]));
        FUZZ_ASSERT(i == 0 || (s->gtype[i] >= s->gtype[i - 1] && s->id[i] > s->id[i - 1]));
        FUZZ_ASSERT(s->id[i] < s->nsource && isfinite(s->mass[i]));
        for (int d = 0; d < 3; d++) {
            const float x = s->pos[3 * i + d];
            FUZZ_ASSERT(isfinite(x) && isfinite(s->vel[3 * i + d]));
            if (s->periodic) FUZZ_ASSERT(x >= lo && x < hi);
        }
    }
}

/* Particle ia of a and ib of b are the same, bit for bit. */
static int gsnap_same(const fk_gsnap *a, uint64_t ia, const fk_gsnap *b, uint64_t ib)
{
    return !memcmp(a->pos + 3 * ia, b->pos + 3 * ib, 12) && !memcmp(a->vel + 3 * ia, b->vel + 3 * ib, 12) &&
           !memcmp(a->mass + ia, b->mass + ib, 4) && a->pid[ia] == b->pid[ib] && a->id[ia] == b->id[ib] &&
           a->gtype[ia] == b->gtype[ib];
}

/* After a read w with options o that succeeded: the slices of r (r from r0 to r1), one after
 * the other, are w, and a selection of types is w's particles of those types; each read
 * checked. */
static void gsnap_check_parts(gsnap_read_fn read, void *ctx, const fk_gsnap *w, const fk_gsnap_opts *o, uint32_t r0,
                              uint32_t r1)
{
    fk_error err = {0};
    for (uint32_t r = r0; r <= r1; r++) {
        uint64_t at = 0;
        for (uint32_t k = 0; k < r; k++) {
            fk_gsnap_opts so = *o;
            so.slice = k, so.nslices = r;
            fk_gsnap s;
            fk_error_clear(&err);
            int st = read(ctx, &so, &s, &err);
            if (st != FK_OK) fprintf(stderr, "slice %u/%u: %s\n", k, r, err.msg);
            FUZZ_ASSERT(st == FK_OK);
            gsnap_check(&s, &so);
            FUZZ_ASSERT(s.n == fk_slice_bound(w->n, k + 1, r) - fk_slice_bound(w->n, k, r));
            for (uint64_t i = 0; i < s.n; i++) FUZZ_ASSERT(gsnap_same(&s, i, w, at + i));
            at += s.n;
            fk_gsnap_free(&s);
        }
        FUZZ_ASSERT(at == w->n);
    }
    /* the types of every other particle of w, or type 1 when there is none */
    unsigned mask = 0;
    for (uint64_t i = 0; i < w->n; i += 2) mask |= 1u << w->gtype[i];
    mask = (mask & 0x55u) ? mask & 0x55u : 2u;
    fk_gsnap_opts to = *o;
    to.types = mask;
    fk_gsnap s;
    fk_error_clear(&err);
    FUZZ_ASSERT(read(ctx, &to, &s, &err) == FK_OK);
    gsnap_check(&s, &to);
    uint64_t j = 0;
    for (uint64_t i = 0; i < w->n; i++)
        if (mask >> w->gtype[i] & 1u) {
            FUZZ_ASSERT(j < s.n && gsnap_same(&s, j, w, i));
            j++;
        }
    FUZZ_ASSERT(j == s.n);
    fk_gsnap_free(&s);
}

#endif
