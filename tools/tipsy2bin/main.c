/* tipsy2bin - converts a tipsy snapshot (standard or native, plain or gzip) into a fofkit stream. */
#include <float.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist.h"
#include "prog.h"
#include "rankquiet.h"
#include "sliceopt.h"
#include "snap.h"
#include "stream.h"
#include "tipsy.h"

static void help(void)
{
    printf("Usage: tipsy2bin [OPTION]... [FILE]\n"
           "Convert a tipsy snapshot (FILE or stdin; standard or native, plain or gzip-compressed)\n"
           "into a fofkit stream: SNAP, POS, VEL, MASS, TYPE and ID chunks.\n"
           "\n"
           "  -t, --types=LIST      particle types to keep: gas,dark,star or all (default all)\n"
           "      --format=FORMAT   auto, standard (big-endian XDR) or native (little-endian)\n"
           "                        (default auto: detected from the header)\n"
           "      --box=L           period of the box, > 0 (default 1)\n"
           "      --origin=X        lower corner of the box (default -L/2)\n"
           "      --no-periodic     isolated run: no wrapping, the stream says periodic 0\n"
           "      --slice=K/R       convert only slice K (from 0) of R: particles [K N/R, (K+1) N/R)\n"
           "                        of the N in file order, IDs their file indices (under mpirun,\n"
           "                        rank K of R does this with -o NAME holding %%r, the rank)\n"
           "\n"
           "Units and cosmology (ChaNGa, PKDGRAV, Gasoline: G = 1; see tipsy2bin(1)); without\n"
           "them the stream has no units:\n"
           "      --kpc-unit=X      the length unit in kpc (the .param file's dKpcUnit)\n"
           "      --msol-unit=Y     the mass unit in Msun (dMsolUnit); with --kpc-unit, the velocity\n"
           "                        unit is the one that makes G = 1\n"
           "      --hubble=H        h, H0 / (100 km/s/Mpc)\n"
           "      --omega-m=X       Omega_m (dOmega0)\n"
           "      --omega-l=X       Omega_Lambda (dLambda)\n"
           "      --omega-baryon=X  Omega_b (dOmegab), for hydro linking\n"
           "      --comoving        a cosmological run (bComove): positions comoving, time = a,\n"
           "                        velocities comoving dx/dt; implied by --hubble, --omega-m and\n"
           "                        --omega-l, which it needs, with the units\n"
           "  -o, --output=FILE     write to FILE (default stdout)\n"
           "  -z, --compress[=N]    zlib-compress every chunk (level N, default 6)\n"
           "  -f, --force           read or write binary data on a terminal\n"
           "  -v, --verbose         format, counts and time taken on stderr\n"
           "  -h, --help            this help\n"
           "  -V, --version         version\n"
           "\n"
           "Exit status: 0 success, 1 bad input or I/O error, 2 usage error, 3 out of memory.\n"
           "See tipsy2bin(1) and fofstream(5).\n");
}

/* Parses "gas,dark,star" (or "all") into a type mask. */
static unsigned parse_types(const char *arg)
{
    static const char *names[3] = {"gas", "dark", "star"};
    char buf[256];
    unsigned mask = 0;
    if (strlen(arg) >= sizeof buf || arg[0] == '\0' || arg[0] == ',' || arg[strlen(arg) - 1] == ',' ||
        strstr(arg, ",,"))
        prog_usage("option --types needs a comma-separated list of gas, dark, star, not '%s'", arg);
    snprintf(buf, sizeof buf, "%s", arg);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int k = 0; k < 3; k++)
            if (!strcmp(t, names[k])) found = k;
        if (!strcmp(t, "all"))
            mask |= 7u;
        else if (found >= 0)
            mask |= 1u << found;
        else
            prog_usage("option --types: unknown particle type '%s' (gas, dark, star or all)", t);
    }
    return mask;
}

/* The units and cosmology the options give (tipsy files carry none). */
typedef struct phys {
    int units;            /* --kpc-unit and --msol-unit given */
    double kpc, msol;
    int cosmology;        /* --hubble, --omega-m and --omega-l given: a cosmological run */
    double hubble, omega_m, omega_l;
    int have_omega_b;
    double omega_b;
} phys;

/* Puts the units and cosmology of p in snap, whose time is the header's:
 * in a cosmological run an expansion factor (FK_EFORMAT otherwise). */
static int snap_physics(const phys *p, const char *name, fk_snap *snap, fk_error *err)
{
    if (p->units) fk_tipsy_units(p->kpc, p->msol, snap);
    if (p->have_omega_b) {
        snap->have_omega_baryon = 1;
        snap->omega_baryon = p->omega_b;
    }
    if (!p->cosmology) return FK_OK;
    /* a = 1.01 and a little more: runs are taken a step past z = 0 at most */
    if (!(snap->time > 0 && snap->time <= 1.01))
        return fk_fail(err, FK_EFORMAT,
                       "%s: time %g is not an expansion factor in (0, 1.01], as a cosmological run's must be (drop "
                       "--comoving, --hubble, --omega-m and --omega-l for a run that is not one)",
                       name, snap->time);
    snap->have_cosmology = 1;
    snap->hubble = p->hubble;
    snap->omega0 = p->omega_m;
    snap->omega_lambda = p->omega_l;
    snap->redshift = 1 / snap->time - 1;
    snap->comoving = 1;
    snap->vel_a_scaling = FK_TIPSY_VEL_A_SCALING;
    return FK_OK;
}

/* The array *data handed to the writer (*data NULL after): in a pipe its
 * pages go without a copy (fk_writer_give, fk_io_gift). */
static int give(fk_writer *w, const char *tag, const char *dtype, uint64_t n, uint32_t ncols, void *data, fk_error *err)
{
    void **p = data, *d = *p;
    *p = NULL;
    fk_chunk c;
    fk_chunk_init(&c, tag, dtype, FK_CF_PARTICLE, n, ncols);
    return fk_writer_give(w, &c, d, err);
}

/* Reads the snapshot (or its slice) from in into ts and writes the stream to
 * out, up to its END chunk (not committed). */
static int convert(const char *in, const char *name, int force, const fk_tipsy_opts *opts, const phys *ph, int zlevel,
                   fk_output *out, fk_tipsy_snap *ts, double *t1, fk_error *err)
{
    FILE *fin;
    int st = fk_input_open(&fin, in, 1, force, err);
    if (st) return st;
    st = fk_tipsy_read(fin, name, opts, ts, err);
    fk_input_close(fin);
    if (st) return st;
    *t1 = prog_now();
    fk_snap snap = {.n = ts->n, .nsource = ts->hdr.nbodies, .time = ts->hdr.time, .box = opts->box,
                    .origin = opts->origin, .periodic = opts->periodic};
    for (int t = 0; t < 3; t++) {
        snap.ntype[t] = ts->ntype[t];
        snap.nsource_type[t] = ts->hdr.ntype[t];
    }
    const char *base = strrchr(name, '/');
    snprintf(snap.source, sizeof snap.source, "%s", base ? base + 1 : name);
    if ((st = snap_physics(ph, name, &snap, err))) return st;
    char *text;
    fk_writer *w = NULL;
    if ((st = fk_snap_format(&snap, &text, err))) return st;
    if (!(st = fk_writer_open(&w, fk_output_file(out), zlevel, err)) && !(st = fk_writer_text(w, "SNAP", 0, text, err)) &&
        !(st = give(w, "POS", "<f4", ts->n, 3, &ts->pos, err)) && !(st = give(w, "MASS", "<f4", ts->n, 1, &ts->mass, err)) &&
        !(st = give(w, "TYPE", "|u1", ts->n, 1, &ts->type, err)) &&
        !(st = give(w, "ID", fk_id_dtype(snap.nsource), ts->n, 1, &ts->id, err)) &&
        !(st = give(w, "VEL", "<f4", ts->n, 3, &ts->vel, err)))
        st = fk_writer_finish(w, err);
    free(text);
    fk_writer_free(w);
    return st;
}

/* Under mpirun: rank r of R converts slice r/R into its own stream (the
 * output name's %r), every stream renamed into place only when every rank
 * succeeded. Messages on rank 0 alone. */
static int run_ranks(const char *in, const char *name, const prog_std *std, fk_tipsy_opts *opts, const phys *ph)
{
    fk_error err = {0};
    int rank, size, st;
    if (fk_dist_init(&rank, &size, &err)) prog_fail(&err);
    if (opts->nslices) {
        st = fk_fail(&err, FK_EINVAL, "--slice is for a run without mpirun (under mpirun each rank takes its own)");
    } else if (!std->output || !fk_dist_has_pattern(std->output)) {
        st = fk_fail(&err, FK_EINVAL, "under mpirun, -o needs a name with %%r (a stream per rank)");
    } else if (size > 1 && !strcmp(in, "-")) {
        st = fk_fail(&err, FK_EINVAL, "under mpirun with %d ranks the snapshot must be a file, not stdin", size);
    } else {
        st = FK_OK;
    }
    opts->slice = (uint32_t)rank;
    opts->nslices = (uint32_t)size;
    char *oname = NULL;
    fk_output *out = NULL;
    fk_tipsy_snap ts = {0};
    double t0 = prog_now(), t1 = t0;
    if (!st) st = fk_dist_expand(std->output, rank, &oname, &err);
    if (!st) st = fk_output_open(&out, oname, 1, std->force, &err);
    if (!st) st = convert(in, name, std->force, opts, ph, std->zlevel, out, &ts, &t1, &err);
    if ((st = fk_dist_agree(st, &err, NULL)) == FK_OK) {
        int mine = fk_output_commit(out, &err);
        out = NULL;
        /* a rename that fails on one rank undoes those that succeeded */
        if ((st = fk_dist_agree(mine, &err, NULL)) != FK_OK && mine == FK_OK) unlink(oname);
    }
    if (out) fk_output_abort(out);
    free(oname);
    /* every rank's temporary is gone before rank 0 exits (mpirun may then stop the others) */
    fk_dist_all(1);
    if (st) {
        if (rank == 0 && err.code == FK_EINVAL) prog_usage("%s", err.msg);
        if (rank == 0) prog_fail(&err);
        exit(err.code == FK_EINVAL ? EXIT_USAGE : err.code == FK_ENOMEM ? EXIT_RESOURCE : EXIT_DATA);
    }
    uint64_t n = ts.n;
    fk_dist_sum(&n, 1);
    if (rank == 0)
        prog_info("%s: %d ranks: %" PRIu64 " particles kept of %" PRIu32 "; rank 0 read %" PRIu64 " in %.3f s, wrote %.3f s",
              name, size, n, ts.hdr.nbodies, ts.n, t1 - t0, prog_now() - t1);
    fk_tipsy_snap_free(&ts);
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    prog_init("tipsy2bin");
    prog_std std = {0};
    fk_tipsy_opts opts;
    fk_tipsy_opts_default(&opts);
    int have_origin = 0;
    phys ph = {0};
    int have_kpc = 0, have_msol = 0, ncosmo = 0, comoving = 0;
    enum {
        OPT_FORMAT = 256, OPT_BOX, OPT_ORIGIN, OPT_NO_PERIODIC, OPT_SLICE, OPT_KPC_UNIT, OPT_MSOL_UNIT, OPT_HUBBLE,
        OPT_OMEGA_M, OPT_OMEGA_L, OPT_OMEGA_B, OPT_COMOVING
    };
    static const struct option longopts[] = {PROG_STD_LONG,
                                             {"types", required_argument, 0, 't'},
                                             {"format", required_argument, 0, OPT_FORMAT},
                                             {"box", required_argument, 0, OPT_BOX},
                                             {"origin", required_argument, 0, OPT_ORIGIN},
                                             {"no-periodic", no_argument, 0, OPT_NO_PERIODIC},
                                             {"slice", required_argument, 0, OPT_SLICE},
                                             {"kpc-unit", required_argument, 0, OPT_KPC_UNIT},
                                             {"msol-unit", required_argument, 0, OPT_MSOL_UNIT},
                                             {"hubble", required_argument, 0, OPT_HUBBLE},
                                             {"omega-m", required_argument, 0, OPT_OMEGA_M},
                                             {"omega-l", required_argument, 0, OPT_OMEGA_L},
                                             {"omega-baryon", required_argument, 0, OPT_OMEGA_B},
                                             {"comoving", no_argument, 0, OPT_COMOVING},
                                             {0, 0, 0, 0}};
    opterr = 0;
    prog_rank_quiet(1);
    int c;
    while ((c = getopt_long(argc, argv, ":" PROG_STD_SHORT "t:", longopts, NULL)) != -1) {
        if (prog_std_option(c, optarg, &std, help, argv)) continue;
        switch (c) {
        case 't':
            opts.types = parse_types(optarg);
            break;
        case OPT_FORMAT:
            if (!strcmp(optarg, "auto"))
                opts.format = FK_TIPSY_AUTO;
            else if (!strcmp(optarg, "standard"))
                opts.format = FK_TIPSY_STANDARD;
            else if (!strcmp(optarg, "native"))
                opts.format = FK_TIPSY_NATIVE;
            else
                prog_usage("option --format needs auto, standard or native, not '%s'", optarg);
            break;
        case OPT_BOX:
            /* The stream stores positions as floats: the box must be one too. */
            opts.box = prog_parse_positive("--box", optarg, FLT_MAX / 4);
            break;
        case OPT_ORIGIN:
            opts.origin = prog_parse_double("--origin", optarg, -FLT_MAX / 4, FLT_MAX / 4);
            have_origin = 1;
            break;
        case OPT_NO_PERIODIC:
            opts.periodic = 0;
            break;
        case OPT_SLICE:
            prog_parse_slice(optarg, &opts.slice, &opts.nslices);
            break;
        case OPT_KPC_UNIT:
            ph.kpc = prog_parse_positive("--kpc-unit", optarg, 1e30);
            have_kpc = 1;
            break;
        case OPT_MSOL_UNIT:
            ph.msol = prog_parse_positive("--msol-unit", optarg, 1e30);
            have_msol = 1;
            break;
        case OPT_HUBBLE:
            ph.hubble = prog_parse_positive("--hubble", optarg, 10);
            ncosmo |= 1;
            break;
        case OPT_OMEGA_M:
            ph.omega_m = prog_parse_positive("--omega-m", optarg, 10);
            ncosmo |= 2;
            break;
        case OPT_OMEGA_L:
            ph.omega_l = prog_parse_double("--omega-l", optarg, -10, 10);
            ncosmo |= 4;
            break;
        case OPT_OMEGA_B:
            ph.omega_b = prog_parse_double("--omega-baryon", optarg, 0, 1);
            ph.have_omega_b = 1;
            break;
        case OPT_COMOVING:
            comoving = 1;
            break;
        }
    }
    /* the units both or neither; the cosmology all three or none, and with the units */
    if (have_kpc != have_msol) prog_usage("--kpc-unit and --msol-unit go together: give both (dKpcUnit, dMsolUnit)");
    if (ncosmo && ncosmo != 7)
        prog_usage("--hubble, --omega-m and --omega-l go together: give all three (a cosmological run)");
    if (comoving && ncosmo != 7) prog_usage("--comoving needs the cosmology: give --hubble, --omega-m and --omega-l");
    if (ncosmo && !have_kpc)
        prog_usage("a cosmological run needs its units: give --kpc-unit and --msol-unit (dKpcUnit, dMsolUnit)");
    if (ph.have_omega_b && ncosmo != 7) prog_usage("--omega-baryon goes with --hubble, --omega-m and --omega-l");
    if (ph.have_omega_b && ph.omega_b > ph.omega_m)
        prog_usage("--omega-baryon=%g is above --omega-m=%g: Omega_b is a part of Omega_m", ph.omega_b, ph.omega_m);
    ph.units = have_kpc;
    ph.cosmology = ncosmo == 7;
    if (!have_origin) opts.origin = -opts.box / 2;
    const char *in = prog_one_input(argc, argv, optind);
    const char *name = strcmp(in, "-") ? in : "stdin";
    prog_input(in);
    prog_rank_quiet(0);
    if (fk_dist_wanted((const char *const[]){std.output}, 1)) return run_ranks(in, name, &std, &opts, &ph);

    fk_output *out = prog_open_output(&std, 1);
    fk_error err = {0};
    double t0 = prog_now(), t1;
    fk_tipsy_snap ts;
    if (convert(in, name, std.force, &opts, &ph, std.zlevel, out, &ts, &t1, &err)) prog_fail(&err);
    prog_commit(out);

    double t2 = prog_now();
    const fk_tipsy_header *h = &ts.hdr;
    prog_info("%s: %s tipsy%s%s, %" PRIu32 " particles (%" PRIu32 " gas, %" PRIu32 " dark, %" PRIu32
              " star), time %g; kept %" PRIu64 ", wrapped %" PRIu64 "; units %s, %s; read %.3f s (%.0f MB/s), "
              "wrote %.3f s",
              name, fk_tipsy_format_name(h->format), ts.compressed ? " (gzip)" : "",
              h->header_size == 28 ? " (28-byte header)" : "", h->nbodies, h->ntype[0], h->ntype[1], h->ntype[2],
              h->time, ts.n, ts.nwrapped, ph.units ? "yes" : "none", ph.cosmology ? "comoving" : "not comoving", t1 - t0,
              (h->header_size + 48.0 * h->ntype[0] + 36.0 * h->ntype[1] + 44.0 * h->ntype[2]) / 1e6 / (t1 - t0 + 1e-9),
              t2 - t1);
    fk_tipsy_snap_free(&ts);
    return EXIT_OK;
}
