/* test_snapunits.c - SNAP's optional unit and cosmology keys: round trip, old records, partial keys; default units and G. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gsnap.h"
#include "snap.h"
#include "snapunits.h"

static fk_snap base(void)
{
    fk_snap s = {.n = 10, .nsource = 12, .time = 1, .box = 50000, .origin = 0, .periodic = 1};
    s.ntype[FK_DARK] = 10;
    s.nsource_type[FK_DARK] = 10;
    s.nsource_type[FK_GAS] = 2;
    strcpy(s.source, "x.hdf5");
    return s;
}

static void test_round_trip(void)
{
    fk_error err = {0};
    fk_snap s = base(), t;
    char *text;
    /* without the keys: the record of old streams, and none of the new keys */
    CHECK(fk_snap_format(&s, &text, &err) == FK_OK);
    CHECK(!strstr(text, "unit_") && !strstr(text, "hubble"));
    CHECK(fk_snap_parse(text, &t, "in", &err) == FK_OK && !t.have_units && !t.have_cosmology);
    free(text);
    /* with them: every value back exactly */
    s.have_units = 1, s.units_per_h = 1;
    s.unit_length_cm = 3.085678e21, s.unit_mass_g = 1.989e43, s.unit_velocity_cm_s = 1e5;
    s.have_cosmology = 1, s.hubble = 0.7, s.omega0 = 0.3, s.omega_lambda = 0.7, s.redshift = 0.1;
    CHECK(fk_snap_format(&s, &text, &err) == FK_OK);
    CHECK_MSG(fk_snap_parse(text, &t, "in", &err) == FK_OK, "%s", err.msg);
    CHECK(t.have_units && t.units_per_h && t.unit_length_cm == 3.085678e21 && t.unit_mass_g == 1.989e43 &&
          t.unit_velocity_cm_s == 1e5);
    CHECK(t.have_cosmology && t.hubble == 0.7 && t.omega0 == 0.3 && t.omega_lambda == 0.7 && t.redshift == 0.1);
    /* a record with only some unit keys, or a unit that is not positive, is refused */
    char *cut = strdup(text), *p = strstr(cut, "unit_mass_g");
    CHECK(p != NULL);
    memcpy(p, "xnit", 4);
    fk_error_clear(&err);
    CHECK(fk_snap_parse(cut, &t, "in", &err) == FK_EFORMAT);
    CHECK_MSG(!strcmp(err.msg, "in: SNAP chunk: has only some of the unit keys"), "%s", err.msg);
    free(cut);
    /* cosmology keys stand alone: a record with some of them is valid (halostats --so reads them one by one) */
    cut = strdup(text);
    p = strstr(cut, "hubble");
    CHECK(p != NULL);
    memcpy(p, "xubble", 6);
    fk_error_clear(&err);
    CHECK_MSG(fk_snap_parse(cut, &t, "in", &err) == FK_OK, "%s", err.msg);
    CHECK(!t.have_cosmology && t.omega0 == 0.3 && t.redshift == 0.1 && t.have_units);
    free(cut);
    s.unit_mass_g = 0;
    free(text);
    CHECK(fk_snap_format(&s, &text, &err) == FK_OK);
    fk_error_clear(&err);
    CHECK(fk_snap_parse(text, &t, "in", &err) == FK_EFORMAT);
    CHECK_MSG(!strcmp(err.msg, "in: SNAP chunk: unit_mass_g 0 is not a positive unit"), "%s", err.msg);
    free(text);
}

static void test_default_units(void)
{
    fk_snap s = base();
    fk_halo_units u;
    fk_halo_units_default(&u);
    CHECK(fk_snap_default_units(&s, &u) == 0 && u.length == 1 && !strcmp(u.mass_name, "mass"));
    CHECK(fk_snap_G(&s) == 0);
    s.have_units = 1, s.units_per_h = 1;
    s.unit_length_cm = 3.085678e21, s.unit_mass_g = 1.989e43, s.unit_velocity_cm_s = 1e5;
    u.velocity = 2; /* given by the user: kept */
    CHECK(fk_snap_default_units(&s, &u) == 2);
    CHECK(u.length == 1 && !strcmp(u.length_name, "kpc/h"));
    CHECK(fabs(u.mass - 1e10) <= 1e-6 && !strcmp(u.mass_name, "Msun/h"));
    CHECK(u.velocity == 2 && !strcmp(u.velocity_name, "velocity"));
    /* Gadget's G in its units: 43007.1 with its G = 6.672e-8; 43021.9 with CODATA 2018's */
    double G = fk_snap_G(&s);
    CHECK_MSG(fabs(G - 6.6743e-8 * 1.989e43 / 3.085678e21 / 1e10) <= 1e-12 * G && fabs(G - 43021.93) < 0.01, "%.9g", G);
    s.units_per_h = 0;
    fk_halo_units_default(&u);
    fk_snap_default_units(&s, &u);
    CHECK(!strcmp(u.length_name, "kpc") && !strcmp(u.mass_name, "Msun") && !strcmp(u.velocity_name, "km/s"));
}

static void test_gsnap_types(void)
{
    /* Gadget types in the stream: 0 gas, 4 star, the rest dark */
    const int want[FK_GSNAP_NTYPES] = {FK_GAS, FK_DARK, FK_DARK, FK_DARK, FK_STAR, FK_DARK, FK_DARK};
    for (int t = 0; t < FK_GSNAP_NTYPES; t++) CHECK(fk_gsnap_stream_type(t) == want[t]);
    /* order type by type, IDs over every type, kept or not */
    fk_gsnap_header h = {.ntypes = 6, .box = 10, .periodic = 1, .nfiles = 1};
    h.ntotal[0] = 2, h.ntotal[1] = 3, h.ntotal[4] = 1;
    fk_gsnap_opts o;
    fk_gsnap_opts_default(&o);
    o.types = 1u << 1 | 1u << 4;
    fk_gsnap s;
    fk_error err = {0};
    CHECK(fk_gsnap_begin(&s, &h, &o, "in", &err) == FK_OK && s.n == 4 && s.nsource == 6 && !s.pos);
    /* arrays grown as particles arrive, then whole */
    CHECK(fk_gsnap_reserve(&s, 1, "in", &err) == FK_OK && s.cap == 1 && s.pid[0] == 0);
    s.pid[0] = 7;
    CHECK(fk_gsnap_reserve(&s, 2, "in", &err) == FK_OK && s.cap == 2 && s.pid[0] == 7 && s.pid[1] == 0);
    CHECK(fk_gsnap_reserve(&s, 99, "in", &err) == FK_OK && s.cap == 4 && s.pid[3] == 0);
    CHECK(fk_gsnap_slot(&s, 1, 0) == 0 && fk_gsnap_slot(&s, 4, 0) == 3);
    for (uint64_t i = 0; i < 4; i++) {
        s.pos[3 * i] = (float)i, s.pos[3 * i + 1] = 10.5f, s.pos[3 * i + 2] = -0.5f; /* wrapped to 0.5 and 9.5 */
        s.vel[3 * i] = s.vel[3 * i + 1] = s.vel[3 * i + 2] = 0;
        s.mass[i] = 1;
    }
    CHECK_MSG(fk_gsnap_finish(&s, "in", &err) == FK_OK, "%s", err.msg);
    CHECK(s.id[0] == 2 && s.id[2] == 4 && s.id[3] == 5 && s.type[3] == FK_STAR && s.type[0] == FK_DARK);
    CHECK(s.nwrapped == 4 && s.pos[1] == 0.5f && s.pos[2] == 9.5f);
    fk_snap snap;
    fk_gsnap_to_snap(&s, "dir/x.hdf5", &snap);
    CHECK(snap.ntype[FK_DARK] == 3 && snap.ntype[FK_STAR] == 1 && snap.nsource_type[FK_GAS] == 2 &&
          !strcmp(snap.source, "x.hdf5"));
    s.pos[0] = 25;
    fk_gsnap_free(&s);
    /* a periodic box of size 0 needs --box */
    h.box = 0;
    fk_error_clear(&err);
    CHECK(fk_gsnap_begin(&s, &h, &o, "in", &err) == FK_EINVAL);
    CHECK_MSG(!strcmp(err.msg, "in: header gives no box size (BoxSize 0): give --box, or --no-periodic"), "%s", err.msg);
    fk_gsnap_free(&s);
    /* a box that rounds to nothing in float (fuzz_hdf5 found a header's BoxSize of 1.4e-312 taken, and
     * positions said to lie in an empty box); so does one narrower than a float's step at the origin */
    h.box = 1.4e-312;
    fk_error_clear(&err);
    CHECK(fk_gsnap_begin(&s, &h, &o, "in", &err) == FK_EFORMAT && strstr(err.msg, "not a usable float box"));
    fk_gsnap_free(&s);
    h.box = 1;
    o.origin = 1e10;
    fk_error_clear(&err);
    CHECK(fk_gsnap_begin(&s, &h, &o, "in", &err) == FK_EFORMAT);
    fk_gsnap_free(&s);
    o.origin = 0;
    CHECK(fk_snap_box_ok(0, 1, 1) && fk_snap_box_ok(1e10, 1, 0) && !fk_snap_box_ok(1e10, 1, 1) && !fk_snap_box_ok(0, 0, 0));
}

/* The length unit's name for the scale bar of fofmap. */
static void test_length_name(void)
{
    fk_snap s = {.have_units = 1, .units_per_h = 1, .unit_length_cm = 3.085678e21};
    char buf[64];
    CHECK(!strcmp(fk_snap_length_name(&s, buf, sizeof buf), "kpc/h"));
    s.units_per_h = 0, s.unit_length_cm = 3.085678e24;
    CHECK(!strcmp(fk_snap_length_name(&s, buf, sizeof buf), "Mpc"));
    s.unit_length_cm = 1e5;
    CHECK(!strcmp(fk_snap_length_name(&s, buf, sizeof buf), "(100000 cm)"));
    s.have_units = 0;
    CHECK(!strcmp(fk_snap_length_name(&s, buf, sizeof buf), ""));
}

/* The physical frame of a comoving stream: a, a^e and H(a) a in the stream's units. */
static void test_frame(void)
{
    fk_snap s = {.have_units = 1, .units_per_h = 1, .unit_length_cm = 3.085678e21, .unit_mass_g = 1.989e43,
                 .unit_velocity_cm_s = 1e5, .time = 0.25};
    double a = -1, vs = -1, hf = -1;
    CHECK(fk_snap_frame(&s, &a, &vs, &hf) == 0 && a == -1); /* not comoving: nothing set */
    s.comoving = 1, s.vel_a_scaling = 0.5;
    CHECK(fk_snap_frame(&s, &a, &vs, &hf) == -1 && a == -1); /* no cosmology */
    s.have_cosmology = 1, s.hubble = 0.7, s.omega0 = 0.3, s.omega_lambda = 0.7;
    CHECK(fk_snap_frame(&s, &a, &vs, &hf) == 1);
    CHECK(a == 0.25 && vs == 0.5);
    /* H0 0.1 km/s per kpc/h, E^2(1/4) = 0.3 * 64 + 0.7 = 19.9 */
    CHECK(fabs(fk_snap_H0(&s) - 0.1) < 1e-15);
    CHECK(fabs(hf - 0.1 * sqrt(19.9) * 0.25) < 1e-14);
    /* units not per h (kpc): H0 = 0.1 h; an open universe's curvature term */
    s.units_per_h = 0, s.omega_lambda = 0;
    CHECK(fabs(fk_snap_H0(&s) - 0.07) < 1e-15);
    CHECK(fk_snap_frame(&s, &a, &vs, &hf) == 1 && fabs(hf - 0.07 * sqrt(0.3 * 64 + 0.7 * 16) * 0.25) < 1e-14);
    s.have_units = 0;
    CHECK(fk_snap_H0(&s) == 0 && fk_snap_frame(&s, &a, &vs, &hf) == -1);
}

int main(void)
{
    test_frame();
    test_length_name();
    test_round_trip();
    test_default_units();
    test_gsnap_types();
    CHECK_DONE();
}
