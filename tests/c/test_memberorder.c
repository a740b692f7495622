/* test_memberorder.c - members most bound first: the sort by key and ID (radix and comparison paths) against a reference, the keys (radius about the centre, binding energy in the halo's frame with the Hubble flow) against direct sums. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "memberorder.h"

#define TESTRAND_SEED 0x3c6ef372fe94f82bull
#include "testrand.h"

typedef struct ref {
    double k;
    uint64_t id, row;
} ref;

static int by_key_id(const void *a, const void *b)
{
    const ref *p = a, *q = b;
    if (p->k != q->k) return p->k < q->k ? -1 : 1;
    return (p->id > q->id) - (p->id < q->id);
}

/* n members of rows 0..n-1 with keys of a kind, IDs ascending (as the
 * catalogues gather them) or shuffled; the sort against qsort's total order. */
static void sort_case(uint64_t n, int kind, int shuffled, void **scratch, uint64_t *cap)
{
    double *key = malloc(n * sizeof *key);
    uint64_t *ids = malloc(n * sizeof *ids), *rows = malloc(n * sizeof *rows);
    ref *r = malloc(n * sizeof *r);
    for (uint64_t j = 0; j < n; j++) {
        /* kinds: spread energies of both signs, few distinct values (ties), radii^2 >= 0 with zeros */
        key[j] = kind == 0 ? (urand() - 0.7) * pow(10, 6 * urand() - 3)
                 : kind == 1 ? floor(4 * urand()) - 2
                             : (urand() < 0.1 ? 0.0 : urand() * urand());
        ids[j] = 1000 + 3 * j;
        rows[j] = j;
    }
    if (shuffled)
        for (uint64_t j = n - 1; j > 0; j--) {
            uint64_t q = (uint64_t)(urand() * (double)(j + 1)) % (j + 1), t = rows[j];
            rows[j] = rows[q], rows[q] = t;
        }
    for (uint64_t j = 0; j < n; j++) r[j] = (ref){key[rows[j]] + 0.0, ids[rows[j]], rows[j]};
    qsort(r, n, sizeof *r, by_key_id);
    CHECK(fk_morder_sort(rows, n, key, ids, scratch, cap) == FK_OK);
    uint64_t bad = n;
    for (uint64_t j = 0; j < n && bad == n; j++)
        if (rows[j] != r[j].row) bad = j;
    CHECK_MSG(bad == n, "n %llu kind %d shuffled %d: place %llu differs", (unsigned long long)n, kind, shuffled,
              (unsigned long long)bad);
    free(key), free(ids), free(rows), free(r);
}

int main(void)
{
    void *scratch = NULL;
    uint64_t cap = 0;
    static const uint64_t sizes[] = {1, 2, 7, 64, 65, 1000, 100000};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int kind = 0; kind < 3; kind++)
            for (int sh = 0; sh < 2; sh++) sort_case(sizes[s], kind, sh, &scratch, &cap);
    free(scratch);

    /* -0 and +0 are one key: ties to the lower ID */
    {
        double key[2] = {0.0, -0.0};
        uint64_t ids[2] = {5, 4}, rows[2] = {0, 1};
        void *sc = NULL;
        uint64_t c = 0;
        key[1] = key[1] + 0.0;
        CHECK(fk_morder_sort(rows, 2, key, ids, &sc, &c) == FK_OK && rows[0] == 1 && rows[1] == 0);
        free(sc);
    }

    /* the names round trip */
    for (int k = FK_MORDER_ID; k <= FK_MORDER_ENERGY; k++) CHECK(fk_morder_parse(fk_morder_name(k)) == k);
    CHECK(fk_morder_parse("mass") == -1);

    /* the keys: a periodic box of side 10, a halo about x = 9.9 wrapped across it */
    {
        float pos[4 * 3] = {9.9f, 5, 5, 0.1f, 5, 5, 9.5f, 5.5f, 5, 2, 2, 2};
        float vel[4 * 3] = {1, 0, 0, -1, 0, 0, 0, 2, 0, 0, 0, 0};
        float mass[4] = {1, 1, 2, 1};
        uint64_t ids[4] = {3, 1, 0, 2};
        uint32_t gid[4] = {1, 0, 1, 1}; /* by original index: particles of IDs 0, 2, 3 in group 1 */
        fk_halo h = {0};
        h.ref = 2; /* the lowest ID's stream row */
        h.xc[0] = 9.9, h.xc[1] = 5, h.xc[2] = 5;
        h.x[0] = 9.7, h.x[1] = 5.25, h.x[2] = 5;
        h.v[0] = 0.5, h.v[1] = 1, h.v[2] = 0;
        fk_halo_input in = {4, pos, vel, mass, ids, NULL, 1, 10, 0, 0, 1, 0, NULL, 0};
        /* particle of row 1 (x 0.1) is 0.2 from the centre across the boundary */
        CHECK(fabs(fk_morder_r2(&in, 1, h.xc) - 0.04) < 1e-7);
        CHECK(fabs(fk_morder_r2(&in, 2, h.xc) - (0.16 + 0.25)) < 1e-9);
        /* physical: phi + |v - <v>|^2 / 2 */
        CHECK(fabs(fk_morder_energy(&in, &h, 0, -3) - (-3 + 0.5 * (0.25 + 1))) < 1e-12);
        /* comoving: the Hubble flow hflow (d_i - d_cm) added, d from the reference member (row 2, x 9.5) */
        in.comoving = 1, in.vscale = 2, in.hflow = 0.5;
        const double ux = 2 * 1 - 0.5 + 0.5 * ((9.9 - 9.5) - (9.7 - 9.5)), uy = 0 - 1 + 0.5 * ((5 - 5.5) - (5.25 - 5.5));
        CHECK(fabs(fk_morder_energy(&in, &h, 0, -3) - (-3 + 0.5 * (ux * ux + uy * uy))) < 1e-6);
        /* fk_morder_keys: group members by radius, the rest 0; a subhalo's by energy with phi */
        double key[4], phi[4] = {-1, -2, -3, -4};
        in.comoving = 0, in.vscale = 1, in.hflow = 0;
        fk_morder_keys(&in, gid, NULL, &h, NULL, NULL, key);
        CHECK(key[0] == fk_morder_r2(&in, 0, h.xc) && key[3] == fk_morder_r2(&in, 3, h.xc) && key[1] == 0);
        uint32_t sub[4] = {1, 0, 0, 0}; /* the particle of ID 0 (row 2) in subhalo 1 */
        fk_morder_keys(&in, gid, sub, &h, &h, phi, key);
        CHECK(key[2] == fk_morder_energy(&in, &h, 2, -3) && key[0] == fk_morder_r2(&in, 0, h.xc));
    }
    CHECK_DONE();
}
