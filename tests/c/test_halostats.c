/* test_halostats.c - group properties on hand-built groups with known answers: periodic centres, dispersion, extent, errors. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "halostats.h"

#define MAXP 16

/* A small hand-built stream: particles in stream order. */
typedef struct scene {
    uint64_t n;
    float pos[3 * MAXP], vel[3 * MAXP], mass[MAXP];
    uint64_t ids[MAXP];
    uint32_t grp[MAXP];
    int periodic;
    double box, origin;
} scene;

static void add(scene *s, uint32_t g, double x, double y, double z, double vx, double vy, double vz, double m)
{
    uint64_t i = s->n++;
    float p[6] = {(float)x, (float)y, (float)z, (float)vx, (float)vy, (float)vz};
    memcpy(s->pos + 3 * i, p, 12);
    memcpy(s->vel + 3 * i, p + 3, 12);
    s->mass[i] = (float)m;
    s->ids[i] = i;
    s->grp[i] = g;
}

static int compute(const scene *s, uint64_t ng, fk_halo *h, fk_error *err)
{
    fk_halo_input in = {s->n, s->pos, s->vel, s->mass, s->ids, s->grp, s->periodic, s->box, s->origin};
    return fk_halostats_compute(&in, ng, h, "t", err);
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-12 * (1 + fabs(b));
}

/* Every value below is exact in binary32, so the answers are exact. */
static void test_periodic_centres(void)
{
    scene s = {.periodic = 1, .box = 1, .origin = -0.5};
    fk_halo h[3];
    fk_error err = {0};
    /* group 1: equal masses at +0.4375 and -0.4375 on x: 0.125 apart across
     * the boundary, centre on the boundary itself, wrapped to -0.5 */
    add(&s, 1, 0.4375, 0, 0, 0, 0, 0, 1);
    add(&s, 1, -0.4375, 0, 0, 0, 0, 0, 1);
    /* group 2: masses 1 and 3 at y = 0.375 and -0.375 (0.25 apart across
     * the boundary): centre 0.1875 from the first, at 0.5625 = -0.4375 */
    add(&s, 2, 0.25, 0.375, 0, 0, 0, 0, 1);
    add(&s, 2, 0.25, -0.375, 0, 0, 0, 0, 3);
    /* group 3: three unit masses around the corner (-0.5,-0.5,-0.5) */
    add(&s, 3, 0.46875, 0.46875, 0.46875, 0, 0, 0, 1);
    add(&s, 3, -0.46875, 0.46875, -0.46875, 0, 0, 0, 1);
    add(&s, 3, -0.46875, -0.46875, 0.46875, 0, 0, 0, 1);
    CHECK_MSG(compute(&s, 3, h, &err) == FK_OK, "%s", err.msg);
    CHECK(h[0].id == 1 && h[0].n == 2 && h[0].mass == 2 && h[0].minid == 0);
    CHECK(h[0].x[0] == -0.5 && h[0].x[1] == 0 && h[0].x[2] == 0);
    CHECK(h[0].rmax == 0.0625);
    CHECK(h[1].id == 2 && h[1].mass == 4 && h[1].minid == 2);
    CHECK(h[1].x[0] == 0.25 && h[1].x[1] == -0.4375 && h[1].x[2] == 0);
    CHECK(h[1].rmax == 0.1875); /* the light member is 3/4 of 0.25 away */
    /* group 3: from the reference (0.46875 on every axis) the others lie
     * 0.0625 away across the boundary on two axes each: x twice, y and z
     * once; the mean x wraps, y and z do not */
    CHECK(near(h[2].x[0], 0.46875 + 0.0625 / 3 * 2 - 1));
    CHECK(near(h[2].x[1], 0.46875 + 0.0625 / 3));
    CHECK(near(h[2].x[2], 0.46875 + 0.0625 / 3));
    /* every member is off by (2, 1, 1)/3 of 0.0625 in some order of axes and signs */
    CHECK(near(h[2].rmax, 0.0625 / 3 * sqrt(6)));
    for (int g = 0; g < 3; g++)
        for (int k = 0; k < 3; k++) CHECK(h[g].x[k] >= -0.5 && h[g].x[k] < 0.5);

    /* The same groups, stream reversed and IDs shuffled: the reference
     * member changes, the answers must not. */
    scene r = s;
    uint64_t newid[7] = {5, 3, 6, 0, 2, 4, 1};
    for (uint64_t i = 0; i < s.n; i++) {
        uint64_t j = s.n - 1 - i;
        memcpy(r.pos + 3 * i, s.pos + 3 * j, 12);
        memcpy(r.vel + 3 * i, s.vel + 3 * j, 12);
        r.mass[i] = s.mass[j];
        r.grp[i] = s.grp[j];
        r.ids[i] = newid[j];
    }
    fk_halo q[3];
    CHECK(compute(&r, 3, q, &err) == FK_OK);
    for (int g = 0; g < 3; g++) {
        for (int k = 0; k < 3; k++) CHECK_MSG(near(q[g].x[k], h[g].x[k]), "group %d axis %d", g + 1, k);
        CHECK(near(q[g].rmax, h[g].rmax) && q[g].mass == h[g].mass);
    }
    CHECK(q[0].minid == 3 && q[1].minid == 0 && q[2].minid == 1);
}

static void test_isolated(void)
{
    /* Not periodic: no unwrapping, no wrapping, even far outside any box. */
    scene s = {.periodic = 0, .box = 1, .origin = 0};
    fk_halo h[1];
    fk_error err = {0};
    add(&s, 1, 0.875, 0, 0, 0, 0, 0, 1);
    add(&s, 1, 0.125, 0, 0, 0, 0, 0, 1);
    add(&s, 1, 3.5, 0, 0, 0, 0, 0, 2);
    CHECK(compute(&s, 1, h, &err) == FK_OK);
    CHECK(h[0].x[0] == 2.0 && h[0].rmax == 1.875);
}

static void test_velocities(void)
{
    scene s = {.periodic = 1, .box = 4, .origin = 0};
    fk_halo h[3];
    fk_error err = {0};
    /* group 1: opposite velocities (1,2,2) and (-1,-2,-2), equal masses:
     * mean 0, 3D dispersion |v| = 3 */
    add(&s, 1, 1, 1, 1, 1, 2, 2, 0.5);
    add(&s, 1, 1.5, 1, 1, -1, -2, -2, 0.5);
    /* group 2: masses 1, 3, 1 with vx 1, -1, 0: mean -0.4, sum m |dv|^2 =
     * 1.96 + 1.08 + 0.16 = 3.2 over mass 5: dispersion 0.8; positions 0,
     * 0.5, 1 in y, z: centre (2, 0.5, 0.5) from (2, 0, 0), (2, 0.5, 0.5)
     * x3 mass, (2, 1, 1): rmax sqrt(0.5) */
    add(&s, 2, 2, 0, 0, 1, 7, 0, 1);
    add(&s, 2, 2, 0.5, 0.5, -1, 7, 0, 3);
    add(&s, 2, 2, 1, 1, 0, 7, 0, 1);
    /* group 3: a particle in no group (grp 0) in between changes nothing;
     * a single member: no dispersion, no extent */
    add(&s, 0, 0, 0, 0, 100, 100, 100, 100);
    add(&s, 3, 3.75, 3.75, 3.75, 5, 6, 7, 2);
    CHECK_MSG(compute(&s, 3, h, &err) == FK_OK, "%s", err.msg);
    CHECK(h[0].v[0] == 0 && h[0].v[1] == 0 && h[0].v[2] == 0 && near(h[0].sigma_v, 3));
    CHECK(h[0].x[0] == 1.25 && h[0].rmax == 0.25);
    CHECK(near(h[1].v[0], -0.4) && h[1].v[1] == 7 && h[1].v[2] == 0);
    CHECK(near(h[1].sigma_v, 0.8));
    CHECK(h[1].x[0] == 2 && h[1].x[1] == 0.5 && h[1].x[2] == 0.5);
    CHECK(near(h[1].rmax, sqrt(0.5)));
    CHECK(h[2].n == 1 && h[2].sigma_v == 0 && h[2].rmax == 0 && h[2].v[2] == 7 && h[2].x[0] == 3.75);

    /* zero total mass: unweighted means */
    scene z = {.periodic = 1, .box = 4, .origin = 0};
    add(&z, 1, 1, 1, 1, 1, 0, 0, 0);
    add(&z, 1, 2, 1, 1, 3, 0, 0, 0);
    CHECK(compute(&z, 1, h, &err) == FK_OK);
    CHECK(h[0].mass == 0 && h[0].x[0] == 1.5 && h[0].v[0] == 2 && h[0].sigma_v == 1 && h[0].rmax == 0.5);
}

static void fails(scene *s, uint64_t ng, const char *want)
{
    fk_halo h[4];
    fk_error err = {0};
    int st = compute(s, ng, h, &err);
    CHECK_MSG(st == FK_EFORMAT && strstr(err.msg, want), "status %d, message '%s', wanted '%s'", st, err.msg, want);
}

static void test_errors(void)
{
    scene s = {.periodic = 1, .box = 1, .origin = 0};
    add(&s, 1, 0.5, 0.5, 0.5, 0, 0, 0, 1);
    add(&s, 2, 0.5, 0.5, 0.5, 0, 0, 0, 1);
    fails(&s, 1, "t: particle 1 is in group 2, beyond the 1 groups");
    fails(&s, 3, "t: group 3 has no member");
    s.mass[1] = -1;
    fails(&s, 2, "particle 1 has mass -1");
    s.mass[1] = NAN;
    fails(&s, 2, "particle 1 has mass nan");
    s.mass[1] = 1;
    s.vel[4] = INFINITY;
    fails(&s, 2, "particle 1 has a non-finite velocity");
    s.vel[4] = 0;
    s.pos[0] = NAN;
    fails(&s, 2, "particle 0 has a non-finite position");
    s.pos[0] = 0.5;
    fk_halo h[2];
    fk_error err = {0};
    CHECK(compute(&s, 2, h, &err) == FK_OK);
    CHECK(compute(&s, 0, h, &err) == FK_EFORMAT); /* groups present, none expected */
}

static void test_columns(void)
{
    CHECK(fk_halo_ncolumns == 11);
    static const char *names[] = {"id", "n", "mass", "x", "y", "z", "vx", "vy", "vz", "sigma_v", "rmax"};
    for (size_t k = 0; k < fk_halo_ncolumns && k < 11; k++) {
        CHECK_MSG(strcmp(fk_halo_columns[k].name, names[k]) == 0, "column %zu is %s", k, fk_halo_columns[k].name);
        CHECK(fk_halo_columns[k].unit && fk_halo_columns[k].desc && fk_halo_columns[k].desc[0]);
    }
    fk_halo h = {.id = 7, .n = 12345678901ull, .mass = 0.25, .x = {1, 2, 3}, .v = {-1, 0.5, 1e-20},
                 .sigma_v = 1.0 / 3, .rmax = 2};
    char buf[64];
    const char *want[] = {"7", "12345678901", "0.25", "1", "2", "3", "-1", "0.5", "1e-20", "0.333333333", "2"};
    for (size_t k = 0; k < fk_halo_ncolumns && k < 11; k++) {
        fk_halo_format(&h, &fk_halo_columns[k], buf, sizeof buf);
        CHECK_MSG(strcmp(buf, want[k]) == 0, "column %s: '%s'", names[k], buf);
    }
}

int main(void)
{
    test_periodic_centres();
    test_isolated();
    test_velocities();
    test_errors();
    test_columns();
    CHECK_DONE();
}
