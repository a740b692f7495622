/* main.c - halostats: one line of properties per group at every level (GID from groups): text, CSV or a HALO chunk. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "gpu.h"
#include "haloearly.h"
#include "dist.h"
#include "distrun.h"
#include "halostats.h"
#include "halostats_level.h"
#include "hdf5out.h"
#include "hs.h"
#include "kv.h"
#include "masses.h"
#include "potential.h"
#include "prog.h"
#include "ranks.h"
#include "rankquiet.h"
#include "snapunits.h"
#include "snap.h"


static void help(void)
{
    printf("Usage: halostats [OPTION]... [STREAM]\n"
           "Measures every friends-of-friends group of a fofkit stream (from groups), at every level of\n"
           "the hierarchy: one row per group, level by level, by group id: level, host (the group of\n"
           "the level above holding it), id, n, mass, centre of mass, mean velocity, 3D velocity\n"
           "dispersion, rmax; the centre (the most bound member, or the centre of mass), the most\n"
           "bound member's ID and potential, and about the centre rc_max, the half-mass radius,\n"
           "vmax and its radius, the spin parameter; the members and their mass by type (gas, dark,\n"
           "star) and a zoom-in run's contaminants: dark members heavier than the least dark mass\n"
           "(n_contam, m_contam). '#' header lines give every column's unit and definition and the\n"
           "run's parameters. Reads STREAM, or stdin.\n"
           "\n"
           "  -m, --min-size=N      take foflink's stream and do groups' work here: groups of at least\n"
           "                        N members, the catalogue of groups -m N | halostats byte for byte,\n"
           "                        without the particles written and read once more between them;\n"
           "                        the groups, members and potentials start once LINK, SINK, ID,\n"
           "                        POS and MASS have come, while the rest is read\n"
           "      --centre=mbp|com  centre on the most bound member (least softened potential,\n"
           "                        default) or on the centre of mass (no potentials)\n"
           "      --softening=EPS   Plummer softening, in the stream's length unit (default %g times\n"
           "                        the mean interparticle spacing, box / n^(1/3)); comoving in a\n"
           "                        comoving stream\n"
           "      --softening-max-phys=EPS  a comoving stream's softening capped at EPS physical, in the\n"
           "                        stream's length unit, as Gadget's SofteningMaxPhys (default: no cap)\n"
           "      --theta=T         Barnes-Hut opening angle, (0, 1] (default %g)\n"
           "      --exact-max=N     exact pairwise sums for groups of up to N members, a tree above\n"
           "                        (default %d)\n"
           "      --device=D        potentials on: auto (default: the GPU if there is one), cpu or gpu\n"
           "      --length-unit=X   one stream length unit is X output length units (default 1);\n"
           "      --mass-unit=X     the same for masses,\n"
           "      --velocity-unit=X and velocities\n"
           "      --length-name=S   the output units' names in headers (default length, mass,\n"
           "      --mass-name=S     velocity: the stream's)\n"
           "      --velocity-name=S\n"
           "      --G=VALUE         G in the output units (default: from the stream's units). A stream\n"
           "                        that carries its units (hdf52bin) gives the defaults: kpc, Msun,\n"
           "                        km/s (kpc/h, Msun/h for Gadget) and G from its units. A stream\n"
           "                        without units and no --G: phi_mbp, vmax and lambda are nan, and\n"
           "                        --unbind, --so and --format=hdf5 are refused\n"
           "A comoving stream (SNAP's comoving key, hdf52bin) gives physical properties at its redshift,\n"
           "as Gadget-4's SUBFIND: lengths comoving, velocities peculiar, the Hubble flow about the\n"
           "centre added to sigma_v and the unbinding's energies, potentials and vmax with physical r.\n"
           "      --format=FORMAT   'text' (default), 'csv' (one header row of column names with their\n"
           "                        units, mass[Msun/h]), or\n"
           "                        'stream': the input stream with HALO and HCOL chunks appended\n"
           "                        (and MRANK: each particle's place in its group, most bound first),\n"
           "                        'hdf5': a Gadget-4 style fof_subhalo_tab HDF5 file (levels 0, 1;\n"
           "                        the snapshot's units, Gadget's kpc/h, 1e10 Msun/h, km/s without;\n"
           "                        each halo's members most bound first, as IDs/MemberOrder says),\n"
           "                        or 'grp' (with --unbind): a .grp file of the bound members\n"
           "      --snapshot=FILE   with --format=hdf5, also the stream's particles as a Gadget-4\n"
           "                        snapshot in the catalogue's group order (pynbody's halos() read it)\n"
           "      --subhalos=S      with --format=hdf5, the subhalos: 'bound' (the default with --unbind:\n"
           "                        main subhalos and their satellites, self-bound) or 'levels' (the\n"
           "                        level 1 groups, the default without)\n"
           "      --csv             the same as --format=csv\n"
           "  -o, --output=FILE     write FILE (atomically) instead of stdout\n"
           "  -f, --force           read or write binary data on a terminal\n"
           "  -z, --compress[=N]    with --format=stream, zlib-compress every chunk (level N, default 6)\n"
           "  -v, --verbose         a summary and timings on stderr\n"
           "  -h, --help            show this help and exit\n"
           "  -V, --version         show the version and exit\n"
           "\n"
           "Exit status: 0 success, 1 bad input or I/O error, 2 usage error, 3 out of memory.\n"
           "Example: tipsy2bin snap.std | kdbuild | foflink -b 0.2 | groups -m 20 | halostats\n",
           SOFTENING_FRACTION, FK_POT_THETA, FK_POT_NEXACT);
    printf("\nSpherical-overdensity masses and unbinding (halostats(1), MASSES):\n");
    hs_masses_help();
}

/* GPU work time, for -v. */
static fk_gputimes gpu_times;

/* fk_gpu_pot_minima in the shape of fk_pot_minima. */
static int gpu_minima(const fk_pot_groups *g, const fk_pot_params *p, fk_pot_min *min, fk_error *err)
{
    fk_gputimes t;
    memset(&t, 0, sizeof t);
    int st = fk_gpu_pot_minima(g, p, min, &t, err);
    gpu_times.link += t.link;
    return st;
}

/* The CPU's minima behind the hook a device's takes (FOFKIT_POT_HOOK=cpu,
 * for tests without a GPU: the device's paths, the CPU's bytes). */
static int cpu_hook(const fk_pot_groups *g, const fk_pot_params *p, fk_pot_min *min, fk_error *err)
{
    return fk_pot_minima(g, p, min, err);
}

/* The potentials' minima other than the CPU's own path: the GPU's, or the
 * CPU's behind the device's hook; NULL: the CPU's. */
static fk_pot_minima_fn minima_of(const options *o)
{
    if (o->device == DEV_GPU) return gpu_minima;
    const char *e = getenv("FOFKIT_POT_HOOK");
    return e && !strcmp(e, "cpu") ? cpu_hook : NULL;
}

/* -m: what the early work takes (halostats_input.h), made as hs_setup will
 * make it once the input has ended, on copies. */
static void early_setup(void *ctx, input *seen, fk_hsin_how *how)
{
    options *o = ctx;
    options t = *o;
    hs_setup(seen, &t);
    how->pot = t.pot;
    how->mbp = o->centre == FK_CENTRE_MBP;
    how->minima = minima_of(o);
    how->phi = hs_masses_phi(&o->m, seen->snap.n, how->mbp);
}

/* -m: the work done before the input ended (file scope: stopped at exit) */
static fk_hsin_early ea;

/* At exit (a failure while the finder runs): the finder stopped after its
 * batch before the GPU's runtime is torn down (registered after it). */
static void stop_finder(void)
{
    fk_halo_early_finder_stop(&ea.e);
}

/* Reads the stream; with w, writes it on as it goes (every chunk but the
 * HALO and HCOL this run replaces). With -m (o->minsize), the early work
 * runs as soon as what it needs has come, while the feed reads on. */
static void read_stream(const char *path, int force, input *in, fk_writer *w, options *o, double t0)
{
    fk_error err = {0};
    FILE *f = prog_open_input(path, 1, force);
    if (fk_hsin_read(in, f, w, o->minsize, early_setup, o, &ea, t0, prog_progress_reader, &err)) prog_fail(&err);
    fk_input_close(f);
    if (fk_hsin_check(in, o->minsize, &err)) prog_fail(&err);
}

int bound_subhalos_asked(const options *o)
{
    return o->subhalos == 2 || (o->subhalos == 0 && o->m.unbind);
}

void hs_blank_G(const options *o, fk_halo *h, uint64_t ng)
{
    if (!o->no_G) return;
    for (uint64_t g = 0; g < ng; g++) h[g].phi_mbp = h[g].vmax = h[g].lambda = NAN;
}

static void masses_header(FILE *f, const void *ctx)
{
    const options *o = ctx;
    hs_masses_header(f, &o->m, &o->units);
}

static void masses_kv(fk_kvbuf *kv, const void *ctx)
{
    hs_masses_kv(kv, &((const options *)ctx)->m);
}

void hs_catw(const options *o, fk_catw *w)
{
    *w = (fk_catw){.units = &o->units, .flags = hs_masses_flags(&o->m), .centre = o->centre, .pot = &o->pot,
                   .gpu = o->device == DEV_GPU, .G_out = o->G_out, .have_G = o->have_G, .no_G = o->no_G,
                   .have_eps = o->have_eps, .eps_capped = o->eps_capped, .comoving = o->comoving, .a = o->a,
                   .hflow = o->hflow, .masses_header = masses_header, .masses_kv = masses_kv, .masses_ctx = o};
}

/* A unit name: printable, no white space, at most 32 bytes. */
static const char *unit_name(const char *opt, const char *arg)
{
    size_t n = strlen(arg);
    if (n == 0 || n > 32) prog_usage("option %s needs a name of 1 to 32 characters, not '%s'", opt, arg);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)arg[i] <= ' ' || (unsigned char)arg[i] == 127)
            prog_usage("option %s needs a name without spaces or control characters, not '%s'", opt, arg);
    return arg;
}

void hs_setup(input *in, options *o)
{
    fk_error err = {0};
    /* G: given in the output units, or 1 in the stream's; the library works
     * in the stream's: G_stream = G_out * mass_unit / (length_unit * velocity_unit^2). */
    const fk_halo_units *u = &o->units;
    /* linked with isolated boundaries (foflink --no-periodic): measured so too */
    in->link_isolated = in->link_isolated && in->snap.periodic;
    if (in->link_isolated) in->snap.periodic = 0;
    /* a stream that carries its units (hdf52bin) gives the default output units and G; the HDF5
     * catalogue stays in the snapshot's own units, as Gadget-4's are */
    if (o->format != 3) fk_snap_default_units(&in->snap, &o->units);
    /* A stream without units has no G: what needs one is refused, not answered in G = 1 (SO
     * needs none: its thresholds from --rho-crit or the box's mean density, but --hubble's do) */
    const char *physical = o->format == 3          ? "--format=hdf5"
                           : o->m.unbind           ? "--unbind"
                           : o->m.so && o->m.have_h ? "--so --hubble"
                                                   : NULL;
    if (!in->snap.have_units && (o->format == 3 || (physical && !o->have_G)))
        prog_die(EXIT_DATA, "the stream has no units (no unit keys in its SNAP), so %s %s", physical,
                 o->format == 3 ? "would state units it does not have: make the stream with its units (tipsy2bin "
                                  "--kpc-unit and --msol-unit, gadget2bin, hdf52bin)"
                                : "would be in G = 1: give --G=VALUE (G in the output units), or make the stream "
                                  "with its units (tipsy2bin --kpc-unit and --msol-unit, gadget2bin, hdf52bin)");
    o->no_G = !in->snap.have_units && !o->have_G;
    const double G_snap = fk_snap_G(&in->snap);
    if (!o->have_G && G_snap > 0) o->have_G = 2;
    if (!o->have_G) o->G_out = u->length * u->velocity * u->velocity / u->mass;
    if (o->have_G == 2) o->G_out = G_snap * u->length * u->velocity * u->velocity / u->mass;
    o->pot.G = o->G_out * u->mass / (u->length * u->velocity * u->velocity);
    if (!o->have_eps) o->pot.eps = SOFTENING_FRACTION * in->snap.box / cbrt((double)(in->snap.n ? in->snap.n : 1));
    /* A comoving stream: physical properties as Gadget-4's SUBFIND measures them
     * (subfind_unbind.cc, subfind_properties.cc), the arithmetic kept comoving:
     * phi with G / a and the softening comoving is -G m / sqrt(r_phys^2 + eps_phys^2),
     * vmax^2 = (G / a) M / r_com = G M / r_phys, velocities peculiar plus H(a) a d */
    int fr = fk_snap_frame(&in->snap, &o->a, &o->vscale, &o->hflow);
    if (fr < 0 && in->snap.have_units)
        prog_die(EXIT_DATA, "the stream is comoving, but its SNAP lacks the hubble, omega0, omega_lambda or a time "
                 "above 0 that the Hubble flow needs (convert the snapshot again with hdf52bin)");
    if (fr > 0) {
        o->comoving = 1;
        o->pot.G /= o->a;
        /* Gadget's eps_phys = min(eps_com a, eps_max_phys): comoving, eps_phys / a */
        if (o->eps_max_phys > 0 && o->pot.eps * o->a > o->eps_max_phys)
            o->pot.eps = o->eps_max_phys / o->a, o->eps_capped = 1;
    } else if (o->eps_max_phys > 0) {
        prog_usage("option --softening-max-phys applies to a comoving stream only (SNAP's comoving 1)");
    }
    if (fk_pot_check(&o->pot, &err)) prog_die(EXIT_USAGE, "%s", err.msg);
}

void hs_device(options *o)
{
    /* only potentials use a device */
    fk_gpuinfo gi;
    o->device = o->centre == FK_CENTRE_MBP ? device_resolve(o->device, &gi) : DEV_CPU;
}

static void parse_options(int argc, char **argv, prog_std *std, options *o)
{
    enum { O_CSV = 256, O_FORMAT, O_CENTRE, O_EPS, O_THETA, O_EXACT, O_LU, O_MU, O_VU, O_LN, O_MN, O_VN, O_G, O_DEV,
           O_SNAP, O_SUBS, O_EPSMAX };
    static const struct option longopts[] = {PROG_STD_LONG,
                                             {"csv", no_argument, 0, O_CSV},
                                             {"format", required_argument, 0, O_FORMAT},
                                             {"centre", required_argument, 0, O_CENTRE},
                                             {"center", required_argument, 0, O_CENTRE},
                                             {"softening", required_argument, 0, O_EPS},
                                             {"softening-max-phys", required_argument, 0, O_EPSMAX},
                                             {"theta", required_argument, 0, O_THETA},
                                             {"exact-max", required_argument, 0, O_EXACT},
                                             {"length-unit", required_argument, 0, O_LU},
                                             {"mass-unit", required_argument, 0, O_MU},
                                             {"velocity-unit", required_argument, 0, O_VU},
                                             {"length-name", required_argument, 0, O_LN},
                                             {"mass-name", required_argument, 0, O_MN},
                                             {"velocity-name", required_argument, 0, O_VN},
                                             {"G", required_argument, 0, O_G},
                                             {"device", required_argument, 0, O_DEV},
                                             {"snapshot", required_argument, 0, O_SNAP},
                                             {"subhalos", required_argument, 0, O_SUBS},
                                             {"min-size", required_argument, 0, 'm'},
                                             HS_MASSES_LONG,
                                             {0, 0, 0, 0}};
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":" PROG_STD_SHORT "m:", longopts, NULL)) != -1) {
        if (prog_std_option(opt, optarg, std, help, argv)) continue;
        switch (opt) {
        case O_CSV: o->format = 1; break;
        case O_FORMAT:
            if (strcmp(optarg, "text") == 0)
                o->format = 0;
            else if (strcmp(optarg, "csv") == 0)
                o->format = 1;
            else if (strcmp(optarg, "stream") == 0)
                o->format = 2;
            else if (strcmp(optarg, "hdf5") == 0 && hdf5_check())
                o->format = 3;
            else if (strcmp(optarg, "grp") == 0)
                o->format = 4, o->m.grp = 1;
            else
                prog_usage("option --format needs 'text', 'csv', 'stream', 'hdf5' or 'grp', not '%s'", optarg);
            break;
        case O_CENTRE:
            if (strcmp(optarg, "mbp") == 0)
                o->centre = FK_CENTRE_MBP;
            else if (strcmp(optarg, "com") == 0)
                o->centre = FK_CENTRE_COM;
            else
                prog_usage("option --centre needs 'mbp' or 'com', not '%s'", optarg);
            break;
        case O_EPS:
            o->pot.eps = prog_parse_positive("--softening", optarg, DBL_MAX);
            o->have_eps = 1;
            break;
        case O_EPSMAX: o->eps_max_phys = prog_parse_positive("--softening-max-phys", optarg, DBL_MAX); break;
        case O_THETA:
            o->pot.theta = prog_parse_positive("--theta", optarg, DBL_MAX);
            if (o->pot.theta > 1) prog_usage("option --theta: %s is out of range (0, 1]", optarg);
            break;
        case O_EXACT: o->pot.nexact = (uint64_t)prog_parse_int("--exact-max", optarg, 0, INT64_MAX); break;
        case O_LU: o->units.length = prog_parse_positive("--length-unit", optarg, DBL_MAX); break;
        case O_MU: o->units.mass = prog_parse_positive("--mass-unit", optarg, DBL_MAX); break;
        case O_VU: o->units.velocity = prog_parse_positive("--velocity-unit", optarg, DBL_MAX); break;
        case O_LN: o->units.length_name = unit_name("--length-name", optarg); break;
        case O_MN: o->units.mass_name = unit_name("--mass-name", optarg); break;
        case O_VN: o->units.velocity_name = unit_name("--velocity-name", optarg); break;
        case O_G:
            o->G_out = prog_parse_positive("--G", optarg, DBL_MAX);
            o->have_G = 1;
            break;
        case O_DEV: o->device = device_parse(optarg); break;
        case 'm': o->minsize = (uint64_t)prog_parse_int("-m", optarg, 1, UINT32_MAX); break;
        case O_SNAP:
            if (!*optarg || !strcmp(optarg, "-"))
                prog_usage("option --snapshot needs a file name (the snapshot is not written to stdout)");
            o->snapshot = optarg;
            break;
        case O_SUBS:
            if (!strcmp(optarg, "levels"))
                o->subhalos = 1;
            else if (!strcmp(optarg, "bound"))
                o->subhalos = 2;
            else
                prog_usage("option --subhalos needs 'levels' or 'bound', not '%s'", optarg);
            break;
        default: hs_masses_option(opt, optarg, &o->m); break;
        }
    }
    if (std->zlevel && o->format != 2) prog_usage("option -z applies to --format=stream only");
    if (o->snapshot && o->format != 3) prog_usage("option --snapshot applies to --format=hdf5 only");
    if (o->subhalos && o->format != 3) prog_usage("option --subhalos applies to --format=hdf5 only");
    if (o->subhalos == 2 && !o->m.unbind) prog_usage("option --subhalos=bound needs --unbind");
    if (o->minsize && o->format == 2)
        prog_usage("option -m does not go with --format=stream (a stream catalogue carries groups' GID: run groups -m N "
                   "before halostats)");
    hs_masses_check(&o->m);
}

int main(int argc, char **argv)
{
    prog_init("halostats");
    prog_std std = {0};
    options o = {0};
    fk_pot_defaults(&o.pot);
    fk_halo_units_default(&o.units);
    o.device = device_default();
    prog_rank_quiet(1); /* under mpirun, a usage error is said once */
    parse_options(argc, argv, &std, &o);
    const char *path = prog_one_input(argc, argv, optind);
    const int dist = fk_dist_wanted((const char *const[]){path, std.output}, 2);
    if (dist && o.minsize) prog_usage("option -m is not taken under mpirun: run groups -m N before halostats");
    prog_rank_quiet(0);
    if (dist) return halostats_dist(path, &std, &o);
    double t0 = prog_now();

    input in = {.name = strcmp(path, "-") == 0 ? "stdin" : path};
    fk_error err = {0};
    fk_output *out = NULL;
    fk_writer *w = NULL;
    /* the outputs are created (as temporaries, committed at the end) before the input is read:
     * a name that cannot be written fails at once, not after all the work */
    out = prog_open_output(&std, o.format == 2 || o.format == 3);
    fk_output *snapout = NULL;
    if (o.snapshot && fk_output_open(&snapout, o.snapshot, 1, 1, &err)) prog_fail(&err);
    if (o.format == 2 && fk_writer_open(&w, fk_output_file(out), std.zlevel, &err)) prog_fail(&err);
    hs_device(&o);
    if (o.minsize) atexit(stop_finder);
    read_stream(path, std.force, &in, w, &o, t0);
    const uint64_t n = in.snap.n;
    if (fk_hsin_groups(&in, o.minsize, &ea, &err)) prog_fail(&err);
    uint8_t *types; /* n_gas ... n_contam */
    if (hs_types(&in.snap, n, in.ids, in.type, &types, in.name, &err)) prog_fail(&err);
    uint8_t *type_chunk = in.type; /* freed with the rest: the writer may still be writing it on */
    in.type = types;
    in.m_hires = fk_halo_hires_mass(n, in.mass, in.type);
    double t_read = prog_now() - t0 - in.waited; /* -v: the work, not the wait for the stage before */

    hs_setup(&in, &o);
    /* the minima found early hold when they took this G, softening, box and these particles */
    const int early_minima = fk_hsin_early_minima_hold(&ea, &in, o.minsize, o.centre == FK_CENTRE_MBP, &o.pot);
    if (!early_minima) fk_halo_early_finder_stop(&ea.e); /* its minima are not this run's: not to be waited for */
    if (o.minsize && fk_hsin_early_holds(&ea, &in))
        prog_info("-m: groups numbered (%.3f s), members gathered%s from %.2f s to %.2f s; the input ended at %.2f s",
                  ea.e.secs_groups,
                  !early_minima ? "" : ea.finder ? " and the potentials' thread started" : " and potentials found",
                  ea.t_ready, ea.t_done, ea.t_end);
    const fk_halo_units *u = &o.units;
    hs_masses_setup(&o.m, &in.snap, in.snaptext, in.pos, in.mass, in.ids, u, o.G_out);

    /* each particle's group: the members are gathered from it (reading the
     * GID chunk through the IDs once), and --unbind keeps it */
    uint32_t *grp = NULL;
    fk_halo *halos[MAX_LEVELS] = {0};
    uint64_t ng[MAX_LEVELS] = {0};
    for (int k = 0; k < in.nlevels; k++) {
        double tk = prog_now();
        const fk_hslevel_early el = fk_hslevel_early_of(&ea, &in, k, early_minima);
        const fk_halo_early_level *E = el.E;
        const int gathered = el.gathered, found = el.found, await = el.await;
        const fk_hslevel_how how = {.centre = o.centre, .pot = &o.pot, .minima = minima_of(&o),
                                    .phi = hs_masses_phi(&o.m, n, o.centre == FK_CENTRE_MBP), .comoving = o.comoving,
                                    .vscale = o.vscale, .hflow = o.hflow, .keep_grp = hs_masses_flags(&o.m) != 0};
        fk_halo_input hin;
        fk_halo_timing tm;
        if (fk_hslevel_measure(&in, k, &ea, &el, &how, &grp, &halos[k], &ng[k], &hin, &tm, &err)) prog_fail(&err);
        if (gathered)
            prog_info("level %d: before the input ended: members gathered in %.3f s%s", k, E->secs_gather,
                      found || o.centre != FK_CENTRE_MBP ? "" : "; potentials after it");
        if (found && !await)
            prog_info("level %d: before the input ended: potentials of %" PRIu64 " of %" PRIu64 " groups in %.3f s", k,
                      E->found, ng[k], E->secs_potential);
        if (await)
            prog_info("level %d: potentials on a thread of their own since the members were gathered: %" PRIu64
                      " of %" PRIu64 " groups in %.3f s (the device's minima %.3f s); %.3f s waited for them here", k,
                      E->found, ng[k], E->secs_potential, E->secs_minima, tm.potential);
        if (fk_hsin_set_hosts(&in, k, halos[k], ng[k], k ? ng[k - 1] : 0, &err)) prog_fail(&err);
        hs_blank_G(&o, halos[k], ng[k]);
        hs_masses_level(&o.m, &hin, k, halos[k], ng[k], &o.pot, in.snap.nsource, o.device == DEV_GPU);
        uint64_t grouped = 0, ntree = 0, cand = 0;
        for (uint64_t g = 0; g < ng[k]; g++) {
            grouped += halos[k][g].n;
            ntree += halos[k][g].method == FK_POT_BY_TREE;
            cand += halos[k][g].candidates;
        }
        prog_info("level %d: %" PRIu64 " groups holding %" PRIu64 " of %" PRIu64 " particles, largest %" PRIu64, k, ng[k],
                  grouped, n, ng[k] ? halos[k][0].n : 0);
        if (o.centre == FK_CENTRE_MBP)
            prog_info("level %d: potentials: %" PRIu64 " groups by exact sums, %" PRIu64
                      " by the tree (%" PRIu64 " candidates summed exactly)", k, ng[k] - ntree, ntree, cand);
        prog_info("level %d: %.3f s: gather %.3f s, potentials %.3f s (%s), profiles %.3f s", k, prog_now() - tk,
                  tm.gather, tm.potential, o.device == DEV_GPU ? "GPU" : "CPU", tm.profile);
    }
    free(grp);

    fk_catw cw;
    hs_catw(&o, &cw);
    if (o.format == 2) {
        if (fk_catw_hcol(w, &cw, in.nlevels, &err)) prog_fail(&err);
        for (int k = 0; k < in.nlevels; k++)
            if (fk_catw_halo(w, &cw, k, halos[k], ng[k], &err)) prog_fail(&err);
        hs_masses_chunks(&o.m, w, in.nlevels, in.snap.nsource);
        hs_rank_chunks(w, &in, &o, halos, ng); /* each group's members most bound first */
        if (fk_writer_finish(w, &err)) prog_fail(&err);
        fk_writer_free(w);
    } else if (o.format == 3) {
        hdf5_write(out, snapout, &in, &o, halos, ng);
    } else if (o.format == 4) {
        hs_masses_write_grp(&o.m, fk_output_file(out), in.nlevels, in.snap.nsource);
    } else {
        FILE *f = fk_output_file(out);
        if (o.format == 1) {
            fk_catw_csv_header(f, &cw);
        } else {
            fk_catw_header(f, &cw, &in, ng);
        }
        for (int k = 0; k < in.nlevels; k++) fk_catw_rows(f, &cw, halos[k], ng[k], o.format == 1 ? ',' : ' ');
    }
    prog_commit(out);
    char wait[48] = ""; /* a pipe's writer kept it waiting: not the work */
    if (in.waited > 0) snprintf(wait, sizeof wait, "; waited %.2f s for the input", in.waited);
    prog_info("%d level%s, read in %.2f s, %.2f s in all%s%s", in.nlevels, in.nlevels > 1 ? "s" : "", t_read,
              prog_now() - t0 - in.waited, in.replaced ? "; the input's HALO and HCOL replaced" : "", wait);
    for (int k = 0; k < in.nlevels; k++) free(halos[k]), free(in.lv[k].gid), free(in.lv[k].gpar);
    free(in.pos), free(in.vel), free(in.mass), free(in.ids), free(in.pids), free(in.type), free(type_chunk), free(in.snaptext);
    hs_masses_free(&o.m, in.nlevels);
    fk_halo_early_free(&ea.e);
    return EXIT_OK;
}
