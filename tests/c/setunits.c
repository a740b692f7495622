/* setunits.c - test helper: a stream's SNAP given unit keys (and a cosmology), every other chunk passed on, as a converter that knows them writes it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog.h"
#include "snap.h"
#include "snapunits.h"
#include "stream.h"

/*
 * Usage: setunits [OPTION]... STREAM
 * Writes STREAM ('-': stdin) to stdout (or -o FILE) with its SNAP's unit keys
 * set to Gadget's units: 1 kpc/h, 1e10 Msun/h and 1 km/s, per h (the
 * stream's positions, masses and velocities taken as such).
 *   --cosmology=H,OM,OL  also hubble H, omega0 OM, omega_lambda OL and the
 *                        redshift 1 / time - 1
 *   --comoving=E         also comoving 1, vel_a_scaling E
 *   --time=A             SNAP's time A (before the redshift is set)
 * For the tests of what a stream with units gets (halostats' physical
 * columns and HDF5 catalogue) from streams a test makes.
 */

static void help(void)
{
    printf("Usage: setunits [--cosmology=H,OM,OL] [--comoving=E] [--time=A] [-o FILE] STREAM\n");
}

int main(int argc, char **argv)
{
    prog_init("setunits");
    prog_std std = {0};
    enum { O_COSMO = 256, O_COMOVING, O_TIME };
    static const struct option longopts[] = {PROG_STD_LONG,
                                             {"cosmology", required_argument, 0, O_COSMO},
                                             {"comoving", required_argument, 0, O_COMOVING},
                                             {"time", required_argument, 0, O_TIME},
                                             {0, 0, 0, 0}};
    double h = 0, om = 0, ol = 0, e = 0, t = 0;
    int cosmo = 0, comoving = 0, have_t = 0;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":" PROG_STD_SHORT, longopts, NULL)) != -1) {
        if (prog_std_option(opt, optarg, &std, help, argv)) continue;
        if (opt == O_COSMO) {
            if (sscanf(optarg, "%lf,%lf,%lf", &h, &om, &ol) != 3) prog_usage("--cosmology needs H,OM,OL");
            cosmo = 1;
        } else if (opt == O_TIME) {
            t = prog_parse_double("--time", optarg, 1e-6, 1e6), have_t = 1;
        } else if (opt == O_COMOVING) {
            e = prog_parse_double("--comoving", optarg, -10, 10);
            comoving = 1;
        }
    }
    if (optind >= argc) prog_usage("a stream is needed ('-' for stdin)");
    const char *path = argv[optind];
    fk_error err = {0};
    FILE *in = prog_open_input(path, 1, std.force);
    fk_reader *r;
    fk_writer *w;
    fk_chunk c;
    fk_snap s;
    char *text = NULL, *out_text = NULL;
    if (fk_reader_open(&r, in, path, &err) || fk_snap_read(r, &c, &s, &text, path, &err)) prog_fail(&err);
    if (have_t) s.time = t;
    s.have_units = 1, s.units_per_h = 1;
    s.unit_length_cm = FK_KPC_CM, s.unit_mass_g = 1e10 * FK_MSUN_G, s.unit_velocity_cm_s = 1e5;
    if (cosmo) {
        s.have_cosmology = 1;
        s.hubble = h, s.omega0 = om, s.omega_lambda = ol;
        s.redshift = s.time > 0 ? 1 / s.time - 1 : 0;
    }
    if (comoving) s.comoving = 1, s.vel_a_scaling = e;
    fk_output *out = prog_open_output(&std, 1);
    if (fk_snap_format(&s, &out_text, &err) || fk_writer_open(&w, fk_output_file(out), 0, &err) ||
        fk_writer_text(w, "SNAP", 0, out_text, &err))
        prog_fail(&err);
    int st;
    while ((st = fk_reader_next(r, &c, &err)) == 1)
        if (fk_writer_copy(w, r, &c, &err)) prog_fail(&err);
    if (st < 0 || fk_writer_finish(w, &err)) prog_fail(&err);
    fk_writer_free(w);
    fk_reader_close(r);
    fk_input_close(in);
    prog_commit(out);
    free(text), free(out_text);
    return EXIT_OK;
}
