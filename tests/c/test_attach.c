/* test_attach.c - the attaching rule: the tree walk against all pairs (ties on a lattice, duplicates, the reach, periodic wraps), the sinks of a hydro job, the GPU's answers when there is one. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TESTRAND_SEED 0x6a09e667f3bcc908ull
#include "attach.h"
#include "check.h"
#include "gpu.h"
#include "linkrun.h"
#include "snap.h"
#include "spacing.h"
#include "testrand.h"

/* Every query's nearest by the tree, by all pairs and (with a GPU) on the device: the same answers. */
static void same_nearest(const fk_attach_set *s, fk_geom g, float r2max, const char *what)
{
    uint64_t m = s->nsec;
    uint32_t *a = malloc((m + 1) * 4), *b = malloc((m + 1) * 4), *c = malloc((m + 1) * 4);
    float *ar = malloc((m + 1) * 4), *br = malloc((m + 1) * 4), *cr = malloc((m + 1) * 4);
    fk_error err = {0};
    CHECK(fk_attach_nearest_cpu(&s->tree, s->pos, s->key, m, s->secpos, g, r2max, 0, a, ar, &err) == FK_OK);
    CHECK(fk_attach_nearest_cpu(&s->tree, s->pos, s->key, m, s->secpos, g, r2max, 1, b, br, &err) == FK_OK);
    uint64_t bad = 0, found = 0;
    for (uint64_t q = 0; q < m; q++) {
        bad += a[q] != b[q] || memcmp(&ar[q], &br[q], 4) != 0;
        found += a[q] != FK_ATTACH_NONE;
    }
    CHECK_MSG(bad == 0, "%s: %llu of %llu queries differ from all pairs", what, (unsigned long long)bad,
              (unsigned long long)m);
    CHECK_MSG(found > 0, "%s: nothing found", what);
    fk_gpuinfo gi;
    if (fk_gpu_probe(&gi, &err) == FK_OK && gi.present) {
        CHECK(fk_gpu_attach_nearest(&s->tree, s->pos, s->key, m, s->secpos, g, r2max, c, cr, NULL, &err) == FK_OK);
        uint64_t gbad = 0;
        for (uint64_t q = 0; q < m; q++) gbad += a[q] != c[q] || memcmp(&ar[q], &cr[q], 4) != 0;
        CHECK_MSG(gbad == 0, "%s: %llu GPU answers differ", what, (unsigned long long)gbad);
    }
    free(a), free(b), free(c), free(ar), free(br), free(cr);
}

int main(void)
{
    fk_error err = {0};
    /* a lattice (every query equidistant from several primaries: the least key wins) with
     * duplicated primaries, clustered and uniform particles, periodic and not */
    for (int periodic = 0; periodic <= 1; periodic++) {
        const uint64_t n = 6000;
        float *pos = malloc(n * 12);
        uint8_t *type = malloc(n);
        uint64_t *ids = malloc(n * 8);
        for (uint64_t i = 0; i < n; i++) {
            type[i] = i % 3 == 1 ? FK_DARK : (i % 3 == 0 ? FK_GAS : FK_STAR);
            ids[i] = (i * 7919) % n; /* keys unlike the stream order */
            for (int k = 0; k < 3; k++) {
                float x;
                if (i < 1500) /* a lattice of spacing 1/8: primaries and queries on its points */
                    x = (float)((i / (k == 0 ? 1 : k == 1 ? 8 : 64)) % 8) / 8.0f;
                else if (i < 3000)
                    x = (float)(0.5 + 0.02 * (urand() - 0.5));
                else
                    x = (float)urand();
                pos[3 * i + k] = x;
            }
            if (i >= 1500 && i < 1600 && type[i] == FK_DARK && i > 1501) /* duplicates */
                memcpy(pos + 3 * i, pos + 3 * (i - 3), 12);
        }
        fk_attach_set s;
        CHECK(fk_attach_split(n, type, pos, NULL, ids, 8, 1u << FK_DARK, (1u << FK_GAS) | (1u << FK_STAR), 8, &s,
                              "test", &err) == FK_OK);
        CHECK(s.n == n / 3 && s.nsec == n - n / 3);
        fk_linkopts o = {0.05, 0, periodic, 1.0, 0};
        const fk_geom g = fk_link_params(&o).g;
        same_nearest(&s, g, fk_attach_r2(0.05), periodic ? "periodic" : "isolated");
        same_nearest(&s, g, fk_attach_r2(0.002), "a short reach"); /* many left alone */
        same_nearest(&s, g, INFINITY, "no reach");

        /* a hydro job's sinks: canonical (the lowest stream index of each group), every attached
         * particle in its nearest primary's group, the primaries' groups a plain link's */
        fk_tree full;
        CHECK(fk_tree_alloc(&full, n, 8, "test", &err) == FK_OK);
        fk_tree_bounds(&full, pos);
        uint32_t *sink = malloc(n * 4), *psink = malloc(s.n * 4), *near = malloc(s.nsec * 4);
        float *nr2 = malloc(s.nsec * 4);
        fk_link_job job = {n, pos, NULL, &full, &o, 1, 0, 0, type, 1u << FK_DARK, (1u << FK_GAS) | (1u << FK_STAR), ids, 8};
        fk_link_report rep;
        CHECK(fk_link_run(&job, &sink, &rep, &err) == FK_OK);
        CHECK(rep.attach && rep.primaries == s.n && rep.secondaries == s.nsec && rep.attached[0] > 0);
        CHECK(fk_link_brute_cpu(s.n, s.pos, NULL, &o, psink, NULL, &err) == FK_OK);
        CHECK(fk_attach_nearest_cpu(&s.tree, s.pos, s.key, s.nsec, s.secpos, g, fk_attach_r2(o.l), 1, near, nr2, &err) ==
              FK_OK);
        uint64_t bad = 0, nattached = 0;
        /* canonical: sink[i] <= i and the sink its own, so each sink is its group's lowest member */
        for (uint64_t i = 0; i < n; i++) bad += sink[i] > i || sink[sink[i]] != sink[i];
        for (uint64_t a = 0; a < s.n; a++)
            for (uint64_t b = a + 1; b < s.n && b < a + 50; b++)
                bad += (psink[a] == psink[b]) != (sink[s.idx[a]] == sink[s.idx[b]]);
        for (uint64_t q = 0; q < s.nsec; q++) {
            const uint32_t i = s.sec[q];
            if (near[q] == FK_ATTACH_NONE) {
                bad += sink[i] != i;
                continue;
            }
            nattached++;
            bad += sink[i] != sink[s.idx[near[q]]];
        }
        CHECK_MSG(bad == 0, "%llu sinks wrong", (unsigned long long)bad);
        CHECK(nattached == rep.attached[0]);
        free(sink), free(psink), free(near), free(nr2);
        fk_tree_free(&full);
        fk_attach_free(&s);
        free(pos), free(type), free(ids);
    }
    /* the type lists */
    unsigned t;
    char buf[32];
    CHECK(fk_types_parse("--x", "dark", 0, &t, &err) == FK_OK && t == 1u << FK_DARK);
    CHECK(fk_types_parse("--x", "gas,star", 0, &t, &err) == FK_OK && t == 5u);
    CHECK(fk_types_parse("--x", "all", 0, &t, &err) == FK_OK && t == FK_TYPES_ALL);
    CHECK(fk_types_parse("--x", "none", 1, &t, &err) == FK_OK && t == 0);
    CHECK(fk_types_parse("--x", "none", 0, &t, &err) == FK_EINVAL);
    CHECK(fk_types_parse("--x", "dark,", 0, &t, &err) == FK_EINVAL);
    CHECK(fk_types_parse("--x", "dust", 0, &t, &err) == FK_EINVAL);
    CHECK(!strcmp(fk_types_name(5u, buf, sizeof buf), "gas,star"));
    CHECK(!strcmp(fk_types_name(FK_TYPES_ALL, buf, sizeof buf), "all"));
    /* Gadget-4's density rule: a box of 32^3 dark matter particles of the g4 snapshot's mass */
    fk_snap snap;
    memset(&snap, 0, sizeof snap);
    snap.box = 50000, snap.have_units = 1, snap.units_per_h = 1, snap.unit_length_cm = 3.085678e21;
    snap.unit_mass_g = 1.989e43, snap.unit_velocity_cm_s = 1e5, snap.omega0 = 0.3, snap.hubble = 0.7;
    snap.have_omega_baryon = 1, snap.omega_baryon = 0.04;
    fk_spacing_sums sums;
    const uint64_t nd = 32768;
    float *m = malloc(nd * 4);
    uint8_t *ty = malloc(nd);
    for (uint64_t i = 0; i < nd; i++) m[i] = 27.5279965f, ty[i] = FK_DARK;
    CHECK(fk_spacing_sum(m, ty, nd, &sums, "test", &err) == FK_OK);
    double neff, sp;
    CHECK(fk_spacing_density(&snap, &sums, 1u << FK_DARK, 1, &neff, &sp, &err) == FK_OK);
    CHECK_MSG(fabs(0.2 * sp - 312.528097) < 1e-3, "l = %.9g", 0.2 * sp);
    CHECK(fk_spacing_density_known(&snap, 1));
    snap.have_omega_baryon = 0;
    CHECK(!fk_spacing_density_known(&snap, 1) && fk_spacing_density_known(&snap, 0));
    free(m), free(ty);
    CHECK_DONE();
}
