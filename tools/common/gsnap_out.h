/* gsnap_out.h - what hdf52bin and gadget2bin share: their snapshot options, writing the stream, ending a run under mpirun. */
#ifndef FK_GSNAP_OUT_H
#define FK_GSNAP_OUT_H

#include <getopt.h>

#include "gsnap.h"
#include "gsnap_dist.h"
#include "prog.h"

/* The snapshot options, in getopt_long's table (gsnapout_options parses them). */
enum {
    GS_BOX = 300, GS_ORIGIN, GS_PERIODIC, GS_NO_PERIODIC, GS_SLICE, GS_UNIT_LENGTH, GS_UNIT_MASS, GS_UNIT_VELOCITY,
    GS_UNITS_PER_H, GS_NO_UNITS, GS_COMOVING, GS_NO_COMOVING, GS_OMEGA_BARYON
};
#define GSNAPOUT_SHORT "t:"
#define GSNAPOUT_LONG                                                                                        \
    {"types", required_argument, 0, 't'}, {"box", required_argument, 0, GS_BOX},                              \
        {"origin", required_argument, 0, GS_ORIGIN}, {"periodic", no_argument, 0, GS_PERIODIC},              \
        {"no-periodic", no_argument, 0, GS_NO_PERIODIC}, {"slice", required_argument, 0, GS_SLICE},          \
        {"unit-length-cm", required_argument, 0, GS_UNIT_LENGTH},                                           \
        {"unit-mass-g", required_argument, 0, GS_UNIT_MASS},                                                \
        {"unit-velocity-cm-s", required_argument, 0, GS_UNIT_VELOCITY},                                     \
        {"units-per-h", required_argument, 0, GS_UNITS_PER_H}, {"no-units", no_argument, 0, GS_NO_UNITS},   \
        {"comoving", no_argument, 0, GS_COMOVING}, {"no-comoving", no_argument, 0, GS_NO_COMOVING},         \
        {"omega-baryon", required_argument, 0, GS_OMEGA_BARYON}

/* Their lines of --help; each program defines GSNAP_OUT_UNITS,
 * GSNAP_OUT_COMOVING and GSNAP_OUT_OMEGA_B (its defaults, in words) before
 * using it. */
#define GSNAP_OUT_HELP                                                                                       \
    "  -t, --types=LIST      Gadget particle types to keep: numbers 0-6 or names gas (0),\n"                  \
    "                        dark (1), disk (2), bulge (3), star (4), bndry (5), neutrino (6),\n"            \
    "                        all (default all)\n"                                                            \
    "      --box=L           period of the box, > 0 (default: the header's BoxSize)\n"                       \
    "      --origin=X        lower corner of the box (default 0: Gadget boxes are [0, L))\n"                 \
    "      --periodic        a periodic box, whatever the header says\n"                                    \
    "      --no-periodic     isolated: no wrapping, the stream says periodic 0\n"                          \
    "      --slice=K/R       convert only slice K (from 0) of R: the kept particles\n"                     \
    "                        [K N/R, (K+1) N/R) of the N in the stream's order, IDs their\n"              \
    "                        snapshot indices (under mpirun, rank K of R does this with\n"                \
    "                        -o NAME holding %%r, the rank)\n"                                             \
    "      --unit-length-cm=L, --unit-mass-g=M, --unit-velocity-cm-s=V\n"                                \
    "                        the stream's units in cgs, all three (default:\n"                            \
    "                        " GSNAP_OUT_UNITS ")\n"                                                      \
    "      --units-per-h=0|1 with them: 1 when they carry a factor 1/h, as Gadget's do\n"                \
    "                        (default 1)\n"                                                                \
    "      --no-units        the stream has no units (halostats then refuses physical columns)\n"      \
    "      --comoving        positions comoving and time = a (default:\n"                                 \
    "                        " GSNAP_OUT_COMOVING ")\n"                                                   \
    "      --no-comoving     positions physical, whatever the header says\n"                             \
    "      --omega-baryon=X  Omega_b of the run, for hydro linking (default:\n"                          \
    "                        " GSNAP_OUT_OMEGA_B ")\n"

/* Parses the whole command line of a converter: the standard options into
 * std, the snapshot options into o (defaulted first), help for --help;
 * returns the one input name. Exits on a usage error. Under mpirun
 * (fk_dist_wanted) it also checks what a distributed run needs (-o with %r,
 * no --slice, a file rather than stdin with more than one rank): every
 * rank exits on the same usage error, said by rank 0 alone. */
const char *gsnapout_options(int argc, char **argv, prog_std *std, fk_gsnap_opts *o, void (*help)(void));

/* Whether the converter runs distributed (under mpirun, or -o holding %r). */
int gsnapout_distributed(const prog_std *std);

/* Under mpirun: rank r of R converts slice r of R of in (read by read, its
 * format's details in info) into its own stream (fk_gsnap_convert_ranks);
 * rank 0 reports with -v. On failure rank 0 says the message and every rank
 * exits with the status it means; else returns EXIT_OK. */
int gsnapout_run_ranks(const char *in, const prog_std *std, const fk_gsnap_opts *opts, fk_gsnap_reader read,
                       void *info);

/* Writes s as the stream (SNAP POS VEL MASS TYPE ID) to out (opened with
 * prog_open_output) and commits it; source names the input in SNAP. Exits
 * on error. */
void gsnapout_write(const fk_gsnap *s, const char *source, fk_output *out, int zlevel);

#endif
