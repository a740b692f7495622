/* memberorder.c - each halo's members most bound first: the keys (binding energy, distance from the most bound member) and a stable sort by them, ties by ID. */
#include "memberorder.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"id", "radius", "binding_energy"};

const char *fk_morder_name(int order)
{
    return order >= FK_MORDER_ID && order <= FK_MORDER_ENERGY ? names[order] : "id";
}

int fk_morder_parse(const char *name)
{
    for (int k = FK_MORDER_ID; k <= FK_MORDER_ENERGY; k++)
        if (!strcmp(name, names[k])) return k;
    return -1;
}

/* d on one axis as the minimum image in a periodic box (halostats.c's rule). */
static inline double image(const fk_halo_input *in, double d)
{
    return in->periodic && in->box > 0 && fabs(d) > in->box / 2 ? d - in->box * nearbyint(d / in->box) : d;
}

double fk_morder_r2(const fk_halo_input *in, uint64_t i, const double xc[3])
{
    double r2 = 0;
    for (int a = 0; a < 3; a++) {
        const double d = image(in, (double)in->pos[3 * i + a] - xc[a]);
        r2 += d * d;
    }
    return r2;
}

double fk_morder_energy(const fk_halo_input *in, const fk_halo *h, uint64_t i, double phi)
{
    double u2 = 0;
    for (int a = 0; a < 3; a++) {
        double u = fk_halo_vel(in, i, a) - h->v[a];
        if (in->comoving) {
            /* the Hubble flow about the centre of mass: d_i - d_cm, both from the reference member */
            const double ref = (double)in->pos[3 * h->ref + a];
            u += in->hflow * (image(in, (double)in->pos[3 * i + a] - ref) - image(in, h->x[a] - ref));
        }
        u2 += u * u;
    }
    return phi + 0.5 * u2;
}

void fk_morder_keys(const fk_halo_input *in, const uint32_t *gid, const uint32_t *sub, const fk_halo *groups,
                    const fk_halo *subs, const double *phi, double *key)
{
#pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < in->n; i++) {
        const uint64_t r = in->ids ? in->ids[i] : i;
        const uint32_t s = sub ? sub[r] : 0, g = gid[r];
        double k = 0;
        if (s)
            k = phi ? fk_morder_energy(in, &subs[s - 1], i, phi[i]) : fk_morder_r2(in, i, subs[s - 1].xc);
        else if (g)
            k = fk_morder_r2(in, i, groups[g - 1].xc);
        key[i] = k + 0.0; /* -0 as +0: the sort compares bits */
    }
}

/* A member to sort: its key's bits in ascending order, its ID, its row. */
typedef struct rec {
    uint64_t k, id, row;
} rec;

/* A double's bits as an unsigned integer of the same order (-0 below +0:
 * the keys come as +0). */
static inline uint64_t ordered_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b >> 63 ? ~b : b | (UINT64_C(1) << 63);
}

static int by_key_id(const void *x, const void *y)
{
    const rec *a = x, *b = y;
    if (a->k != b->k) return a->k < b->k ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

int fk_morder_sort(uint64_t *rows, uint64_t n, const double *key, const uint64_t *ids, void **scratch, uint64_t *cap)
{
    if (n < 2) return FK_OK;
    if (*cap < n) {
        void *p = realloc(*scratch, 2 * n * sizeof(rec));
        if (!p) return FK_ENOMEM;
        *scratch = p, *cap = n;
    }
    rec *a = *scratch, *b = a + n;
    int ascending = 1; /* rows by ID already (as the catalogues gather them): a stable sort by key is enough */
    for (uint64_t j = 0; j < n; j++) {
        a[j] = (rec){ordered_bits(key[rows[j]]), ids ? ids[rows[j]] : rows[j], rows[j]};
        if (j && a[j].id < a[j - 1].id) ascending = 0;
    }
    if (n <= 64 || !ascending) {
        qsort(a, n, sizeof *a, by_key_id);
    } else {
        /* least significant digit first, 8 bits a pass, stable; a pass whose digit is the same for
         * every member (the keys' high bits, often) is skipped */
        uint64_t diff = 0;
        for (uint64_t j = 1; j < n; j++) diff |= a[j].k ^ a[0].k;
        for (int s = 0; s < 64; s += 8) {
            if (!((diff >> s) & 0xff)) continue;
            uint64_t cnt[257] = {0};
            for (uint64_t j = 0; j < n; j++) cnt[((a[j].k >> s) & 0xff) + 1]++;
            for (int d = 0; d < 256; d++) cnt[d + 1] += cnt[d];
            for (uint64_t j = 0; j < n; j++) b[cnt[(a[j].k >> s) & 0xff]++] = a[j];
            rec *t = a;
            a = b, b = t;
        }
    }
    for (uint64_t j = 0; j < n; j++) rows[j] = a[j].row;
    return FK_OK;
}
