/* gsnap_out.c - what hdf52bin and gadget2bin share: their snapshot options, writing the stream, ending a run under mpirun. */
#include "gsnap_out.h"

#include <float.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "gsnap_write.h"
#include "rankquiet.h"
#include "sliceopt.h"

/* Parses "0,1", "gas,dark" or "all" into a mask of Gadget types. */
static unsigned parse_types(const char *arg)
{
    static const char *names[FK_GSNAP_NTYPES] = {"gas", "dark", "disk", "bulge", "star", "bndry", "neutrino"};
    char buf[256];
    unsigned mask = 0;
    size_t n = strlen(arg);
    if (n >= sizeof buf || n == 0 || arg[0] == ',' || arg[n - 1] == ',' || strstr(arg, ",,"))
        prog_usage("option --types needs a comma-separated list of types (0-6 or names), not '%s'", arg);
    snprintf(buf, sizeof buf, "%s", arg);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int k = 0; k < FK_GSNAP_NTYPES; k++)
            if (!strcmp(t, names[k])) found = k;
        if (t[0] >= '0' && t[0] < '0' + FK_GSNAP_NTYPES && t[1] == '\0') found = t[0] - '0';
        if (!strcmp(t, "all"))
            mask |= (1u << FK_GSNAP_NTYPES) - 1;
        else if (found >= 0)
            mask |= 1u << found;
        else
            prog_usage("option --types: unknown particle type '%s' (0-6, gas, dark, disk, bulge, star, bndry, "
                       "neutrino or all)", t);
    }
    return mask;
}

/* Which of the unit and comoving options were given. */
typedef struct given {
    int length, mass, velocity, per_h, no_units, comoving, no_comoving;
} given;

/* Handles one of the snapshot options (returns 1) or returns 0. */
static int gsnapout_option(int c, const char *arg, fk_gsnap_opts *o, given *g)
{
    switch (c) {
    case GS_UNIT_LENGTH:
        o->unit_length_cm = prog_parse_positive("--unit-length-cm", arg, 1e300);
        g->length = 1;
        return 1;
    case GS_UNIT_MASS:
        o->unit_mass_g = prog_parse_positive("--unit-mass-g", arg, 1e300);
        g->mass = 1;
        return 1;
    case GS_UNIT_VELOCITY:
        o->unit_velocity_cm_s = prog_parse_positive("--unit-velocity-cm-s", arg, 1e300);
        g->velocity = 1;
        return 1;
    case GS_UNITS_PER_H:
        o->units_per_h = (int)prog_parse_int("--units-per-h", arg, 0, 1);
        g->per_h = 1;
        return 1;
    case GS_NO_UNITS: g->no_units = 1; return 1;
    case GS_COMOVING: g->comoving = 1; return 1;
    case GS_NO_COMOVING: g->no_comoving = 1; return 1;
    case GS_OMEGA_BARYON:
        o->omega_baryon = prog_parse_double("--omega-baryon", arg, 0, 1);
        o->have_omega_baryon = 1;
        return 1;
    case 't': o->types = parse_types(arg); return 1;
    case GS_BOX:
        /* the stream stores positions as floats: the box must be one too */
        o->box = prog_parse_positive("--box", arg, FLT_MAX / 4);
        return 1;
    case GS_ORIGIN: o->origin = prog_parse_double("--origin", arg, -FLT_MAX / 4, FLT_MAX / 4); return 1;
    case GS_PERIODIC: o->periodic = 1; return 1;
    case GS_NO_PERIODIC: o->periodic = 0; return 1;
    case GS_SLICE: prog_parse_slice(arg, &o->slice, &o->nslices); return 1;
    }
    return 0;
}

const char *gsnapout_options(int argc, char **argv, prog_std *std, fk_gsnap_opts *o, void (*help)(void))
{
    fk_gsnap_opts_default(o);
    static const struct option longopts[] = {PROG_STD_LONG, GSNAPOUT_LONG, {0, 0, 0, 0}};
    opterr = 0;
    prog_rank_quiet(1);
    int c;
    given g = {0};
    while ((c = getopt_long(argc, argv, ":" PROG_STD_SHORT GSNAPOUT_SHORT, longopts, NULL)) != -1) {
        if (prog_std_option(c, optarg, std, help, argv)) continue;
        gsnapout_option(c, optarg, o, &g);
    }
    /* units: all three, or --no-units, or none (the reader's) */
    const int nunits = g.length + g.mass + g.velocity;
    if (nunits && nunits < 3)
        prog_usage("--unit-length-cm, --unit-mass-g and --unit-velocity-cm-s go together: give all three");
    if (g.per_h && !nunits) prog_usage("--units-per-h goes with --unit-length-cm, --unit-mass-g and --unit-velocity-cm-s");
    if (g.no_units && nunits) prog_usage("--no-units contradicts --unit-length-cm, --unit-mass-g and --unit-velocity-cm-s");
    if (g.comoving && g.no_comoving) prog_usage("--comoving contradicts --no-comoving: give one");
    if (g.comoving && g.no_units) prog_usage("--comoving needs units for the physical frame: drop --no-units");
    if (nunits) {
        o->units = 1;
        if (!g.per_h) o->units_per_h = 1;
    }
    if (g.no_units) o->units = 0;
    if (g.comoving) o->comoving = 1;
    if (g.no_comoving) o->comoving = 0;
    const char *in = prog_one_input(argc, argv, optind);
    prog_input(in);
    if (gsnapout_distributed(std)) {
        /* the same command line on every rank: the same verdict, said once */
        const char *e = getenv("OMPI_COMM_WORLD_SIZE");
        if (!e) e = getenv("PMI_SIZE");
        if (o->nslices) prog_usage("--slice is for a run without mpirun (under mpirun each rank takes its own)");
        if (!std->output || !fk_dist_has_pattern(std->output))
            prog_usage("under mpirun, -o needs a name with %%r (a stream per rank)");
        if (e && atol(e) > 1 && !strcmp(in, "-"))
            prog_usage("under mpirun with %ld ranks the snapshot must be a file, not stdin", atol(e));
    }
    prog_rank_quiet(0);
    return in;
}

int gsnapout_distributed(const prog_std *std)
{
    return fk_dist_wanted((const char *const[]){std->output}, 1);
}

int gsnapout_run_ranks(const char *in, const prog_std *std, const fk_gsnap_opts *opts, fk_gsnap_reader read,
                       void *info)
{
    fk_error err = {0};
    fk_gsnap s;
    fk_gsnap_ranks run;
    const char *name = strcmp(in, "-") ? in : "stdin";
    int st = fk_gsnap_convert_ranks(in, name, std->output, std->force, std->zlevel, opts, read, info, &s, &run, &err);
    if (st) {
        if (run.rank == 0) prog_fail(&err);
        exit(err.code == FK_ENOMEM ? EXIT_RESOURCE : EXIT_DATA); /* prog_fail's status */
    }
    if (run.rank == 0)
        prog_info("%s: %d ranks: %" PRIu64 " particles kept of %" PRIu64 "; rank 0 read %" PRIu64 " in %.3f s, wrote %.3f s",
                  name, run.size, run.n_all, s.nsource, s.n, run.read_s, run.write_s);
    /* whole files: each rank says which it read (and nothing else) */
    if (run.file_hi > 0)
        prog_info("%s: rank %d: files %d-%d of %d, %" PRIu64 " particles, %" PRIu64 " bytes read", name, run.rank,
                  run.file_lo, run.file_hi - 1, run.nfiles, s.n, run.bytes);
    fk_gsnap_free(&s);
    return EXIT_OK;
}

void gsnapout_write(const fk_gsnap *s, const char *source, fk_output *out, int zlevel)
{
    fk_error err = {0};
    if (fk_gsnap_write(s, source, fk_output_file(out), zlevel, &err)) prog_fail(&err);
    prog_commit(out);
}
