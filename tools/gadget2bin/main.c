/* gadget2bin - converts a Gadget-2 binary snapshot (format 1 or 2, either byte order, one file or many) into a fofkit stream. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gadget.h"
#include "gsnap_dist.h"
#include "gsnap_out.h"
#include "prog.h"

#define GSNAP_OUT_UNITS "Gadget's: kpc/h, 1e10 Msun/h, km/s"
#define GSNAP_OUT_COMOVING                                                                                   \
    "when the header has HubbleParam > 0, Omega0 > 0,\n"                                                     \
    "                        0 < Time <= 1 and Redshift 1/Time - 1; velocities v_pec / sqrt(a)"
#define GSNAP_OUT_OMEGA_B "none, the header has no Omega_b"

static void help(void)
{
    printf("Usage: gadget2bin [OPTION]... [FILE]\n"
           "Convert a Gadget-2 binary snapshot (FILE or stdin; SnapFormat 1 or 2, either byte order;\n"
           "split over files FILE.0 ... FILE.N-1 when FILE ends in .0) into a fofkit stream: SNAP,\n"
           "POS, VEL, MASS, TYPE and ID chunks. Every Fortran record marker is checked. SNAP records\n"
           "Gadget's default units, the header's cosmology and whether the run is comoving.\n"
           "\n" GSNAP_OUT_HELP
           "  -o, --output=FILE     write to FILE (default stdout)\n"
           "  -z, --compress[=N]    zlib-compress every chunk (level N, default 6)\n"
           "  -f, --force           read or write binary data on a terminal\n"
           "  -v, --verbose         format, counts and time taken on stderr\n"
           "  -h, --help            this help\n"
           "  -V, --version         version\n"
           "\n"
           "\n"
           "Under mpirun -n R with -o NAME holding %%r, rank r writes its share into NAME\n"
           "with %%r the rank: whole files [F r/R, F (r+1)/R) of a snapshot of F >= R files\n"
           "(no other file opened), else slice r of R; every stream is kept only when every\n"
           "rank succeeded.\n"
           "\n"
           "Exit status: 0 success, 1 bad input or I/O error, 2 usage error, 3 out of memory.\n"
           "See gadget2bin(1) and fofstream(5).\n");
}

static int reader(const char *path, const fk_gsnap_opts *o, fk_gsnap *s, void *info, fk_error *err)
{
    return fk_gadget_read(path, o, s, info, err);
}

int main(int argc, char **argv)
{
    prog_init("gadget2bin");
    prog_std std = {0};
    fk_gsnap_opts opts;
    const char *in = gsnapout_options(argc, argv, &std, &opts, help);
    if (!strcmp(in, "-") && !std.force && isatty(0)) prog_die(EXIT_USAGE, "stdin is a terminal (use -f to read it anyway)");
    if (gsnapout_distributed(&std)) {
        fk_gadget_info info;
        return gsnapout_run_ranks(in, &std, &opts, reader, &info);
    }
    fk_output *out = prog_open_output(&std, 1);
    fk_error err = {0};
    double t0 = prog_now();
    fk_gsnap s;
    fk_gadget_info info;
    if (fk_gadget_read(in, &opts, &s, &info, &err)) prog_fail(&err);
    double t1 = prog_now();
    gsnapout_write(&s, strcmp(in, "-") ? in : "stdin", out, std.zlevel);
    prog_info("%s: Gadget-2 format %d, %s-endian, %d file%s, %s positions, %d-byte IDs; %" PRIu64
              " particles, kept %" PRIu64 ", wrapped %" PRIu64 "; box %g%s; units %s, %s; read %.3f s (%.0f MB/s), "
              "wrote %.3f s",
              strcmp(in, "-") ? in : "stdin", info.format, info.big_endian ? "big" : "little", s.hdr.nfiles,
              s.hdr.nfiles > 1 ? "s" : "", info.double_pos ? "double" : "float", info.id_bytes, s.nsource, s.n,
              s.nwrapped, s.box, s.periodic ? " periodic" : " isolated", s.hdr.have_units ? "yes" : "none",
              s.hdr.comoving ? "comoving" : "not comoving", t1 - t0, info.bytes / 1e6 / (t1 - t0 + 1e-9),
              prog_now() - t1);
    fk_gsnap_free(&s);
    return EXIT_OK;
}
