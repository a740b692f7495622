/* hdf52bin - converts an HDF5 snapshot (Gadget-3/4, AREPO, SWIFT; one file or many) into a fofkit stream. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gsnap_dist.h"
#include "gsnap_out.h"
#include "hdf5snap.h"
#include "prog.h"

#define GSNAP_OUT_UNITS "the header's"
#define GSNAP_OUT_COMOVING                                                                                   \
    "the header's ComovingIntegrationOn or SWIFT's\n"                                                        \
    "                        Cosmological run; velocities as their a_scaling says"
#define GSNAP_OUT_OMEGA_B "the header's OmegaBaryon or Omega_b"

static void help(void)
{
    printf("Usage: hdf52bin [OPTION]... FILE\n"
           "Convert an HDF5 snapshot of Gadget-3, Gadget-4, AREPO or SWIFT (FILE; split over files\n"
           "NAME.0.hdf5 ... when FILE ends in .0.hdf5) into a fofkit stream: SNAP, POS, VEL, MASS,\n"
           "TYPE and ID chunks. The header's units and cosmology travel in SNAP.\n"
           "\n" GSNAP_OUT_HELP
           "  -o, --output=FILE     write to FILE (default stdout)\n"
           "  -z, --compress[=N]    zlib-compress every chunk (level N, default 6)\n"
           "  -f, --force           write binary data on a terminal\n"
           "  -v, --verbose         layout, counts and time taken on stderr\n"
           "  -h, --help            this help\n"
           "  -V, --version         version\n"
           "\n"
           "\n"
           "Under mpirun -n R with -o NAME holding %%r, rank r writes its share into NAME\n"
           "with %%r the rank: whole files [F r/R, F (r+1)/R) of a snapshot of F >= R files\n"
           "(no other file opened), else slice r of R; every stream is kept only when every\n"
           "rank succeeded.\n"
           "\n"
           "Exit status: 0 success, 1 bad input, I/O error or a build without HDF5, 2 usage error,\n"
           "3 out of memory. See hdf52bin(1) and fofstream(5).\n");
}

static int reader(const char *path, const fk_gsnap_opts *o, fk_gsnap *s, void *info, fk_error *err)
{
    return fk_hdf5_read(path, o, s, info, err);
}

int main(int argc, char **argv)
{
    prog_init("hdf52bin");
    prog_std std = {0};
    fk_gsnap_opts opts;
    const char *in = gsnapout_options(argc, argv, &std, &opts, help);
    if (!strcmp(in, "-")) prog_usage("HDF5 cannot be read from stdin: name the snapshot's file");
    if (gsnapout_distributed(&std)) {
        fk_hdf5_info info;
        return gsnapout_run_ranks(in, &std, &opts, reader, &info);
    }
    fk_output *out = prog_open_output(&std, 1);
    fk_error err = {0};
    double t0 = prog_now();
    fk_gsnap s;
    fk_hdf5_info info;
    if (fk_hdf5_read(in, &opts, &s, &info, &err)) prog_fail(&err);
    double t1 = prog_now();
    gsnapout_write(&s, in, out, std.zlevel);
    prog_info("%s: HDF5 (%s layout), %d file%s, %s coordinates; %" PRIu64 " particles, kept %" PRIu64
              ", wrapped %" PRIu64 "; box %g%s; units %s, cosmology %s; read %.3f s, wrote %.3f s",
              in, info.swift ? "SWIFT" : "Gadget", s.hdr.nfiles, s.hdr.nfiles > 1 ? "s" : "",
              info.double_pos ? "double" : "float", s.nsource, s.n, s.nwrapped, s.box,
              s.periodic ? " periodic" : " isolated", s.hdr.have_units ? "yes" : "no",
              s.hdr.have_cosmology ? "yes" : "no", t1 - t0, prog_now() - t1);
    fk_gsnap_free(&s);
    return EXIT_OK;
}
