/* distrun.c - halostats under mpirun: each rank's grouped stream read, rows computed by the groups' owners, one catalogue from rank 0. */
#include "distrun.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "device.h"
#include "dist.h"
#include "dist_halos.h"
#include "fileio.h"
#include "filter.h"
#include "gpu.h"
#include "kv.h"
#include "rankquiet.h"

static int rank, size;

static int status_of(int code)
{
    return code == FK_EINVAL ? EXIT_USAGE : code == FK_ENOMEM || code == FK_EDEVICE ? EXIT_RESOURCE : EXIT_DATA;
}

/* A failure's one line (and for a usage error the pointer to --help), on
 * stderr; then every rank waits until it is out, so that no rank's early
 * exit makes mpirun end the one that prints before it has. */
static _Noreturn void end_all(int status, const char *msg, int says)
{
    if (says) {
        fprintf(stderr, "%s: %s\n", prog_name, msg);
        if (status == EXIT_USAGE) fprintf(stderr, "Try '%s --help' for more information.\n", prog_name);
        fflush(stderr);
    }
    fk_output_cleanup_all();
    fk_dist_all(1);
    exit(status);
}

/* After fk_dist_agree failed: the failing rank says why, every rank removes
 * its unfinished output and exits (MPI ended by atexit). */
static _Noreturn void agreed_fail(const fk_error *err, int who)
{
    end_all(status_of(err->code), err->msg, rank == who);
}

/* One rank's failure, agreed on by all before the next collective step. */
static void check(int st, fk_error *err)
{
    int who;
    if (fk_dist_agree(st, err, &who)) agreed_fail(err, who);
}

/* A failure every rank meets alike: said once, by rank 0. */
static _Noreturn void all_die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static _Noreturn void all_die(int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    end_all(status, msg, rank == 0);
}

/* fk_gpu_pot_minima and fk_gpu_pot_tree in the shapes of fk_pot_minima and
 * fk_pot_tree (each rank on its own GPU: CUDA_VISIBLE_DEVICES per rank). */
static int gpu_minima(const fk_pot_groups *g, const fk_pot_params *p, fk_pot_min *min, fk_error *err)
{
    return fk_gpu_pot_minima(g, p, min, NULL, err);
}

static int gpu_tree(const fk_pot_members *g, const fk_pot_params *p, double *phi, fk_error *err)
{
    return fk_gpu_pot_tree(g, p, phi, NULL, err);
}

enum { W_POS, W_VEL, W_MASS, W_ID, W_GIDL, W_GRPS, W_GPAR, W_LINK, NW };

/* Checks this rank's levels: GIDL and GRPS of every level up to the
 * highest, GPAR from level 1 on; fills in's levels. */
static int read_levels(fk_want *want, input *in, const char *name, fk_error *err)
{
    int nl = want[W_GIDL].nlevels;
    if (want[W_GRPS].nlevels > nl) nl = want[W_GRPS].nlevels;
    if (want[W_GPAR].nlevels > nl) nl = want[W_GPAR].nlevels;
    in->nlevels = nl;
    for (int k = 0; k < nl; k++) {
        level *L = &in->lv[k];
        if (!want[W_GIDL].data[k])
            return fk_fail(err, FK_EFORMAT, "%s: stream has no GIDL chunk of level %d (but one of level %d)", name, k,
                           nl - 1);
        if (!want[W_GRPS].data[k])
            return fk_fail(err, FK_EFORMAT, "%s: stream has no GRPS chunk of level %d (run groups --format=stream "
                           "under mpirun first)", name, k);
        if (k > 0 && !want[W_GPAR].data[k])
            return fk_fail(err, FK_EFORMAT, "%s: stream has no GPAR chunk of level %d (groups under mpirun writes "
                           "one)", name, k);
        if (fk_groups_parse(want[W_GRPS].data[k], &L->grps, name, err)) return err->code;
        /* groups under mpirun says which part of the run a stream is */
        const char *text = want[W_GRPS].data[k];
        uint64_t v;
        char what[300];
        snprintf(what, sizeof what, "%s: GRPS chunk", name);
        if (fk_kv_has(text, "ranks") && !fk_kv_get_u64(text, "ranks", &v, what, err) && v != (uint64_t)size)
            return fk_fail(err, FK_EFORMAT, "%s: grouped by %" PRIu64 " ranks, this run has %d", name, v, size);
        if (fk_kv_has(text, "rank") && !fk_kv_get_u64(text, "rank", &v, what, err) && v != (uint64_t)rank)
            return fk_fail(err, FK_EFORMAT, "%s: holds the particles of rank %" PRIu64 ", read by rank %d", name, v,
                           rank);
        if (err->code) return err->code;
        L->have_grps = 1;
        L->gpar = want[W_GPAR].data[k];
        L->ngpar = L->gpar ? want[W_GPAR].chunk[k].nrows : 0;
        if (L->gpar && L->ngpar != L->grps.ngroups + 1)
            return fk_fail(err, FK_EFORMAT, "%s: chunk GPAR of level %d has %" PRIu64 " rows for %" PRIu64
                           " groups (expected %" PRIu64 ")", name, k, L->ngpar, L->grps.ngroups, L->grps.ngroups + 1);
    }
    return FK_OK;
}

/* The hosts of level k's rows from GPAR, checked against the level above. */
static int set_hosts(const input *in, int k, fk_halo *h, uint64_t ng, uint64_t ng_up, fk_error *err)
{
    for (uint64_t g = 0; g < ng; g++) {
        h[g].level = (uint64_t)k;
        if (k == 0) continue;
        h[g].host = in->lv[k].gpar[g + 1];
        if (h[g].host > ng_up)
            return fk_fail(err, FK_EFORMAT, "%s: chunk GPAR of level %d gives group %" PRIu64 " the host %" PRIu64
                           ", beyond the %" PRIu64 " groups of level %d", in->name, k, g + 1, h[g].host, ng_up, k - 1);
    }
    return FK_OK;
}

static void end_mpi(void)
{
    fk_dist_finalize();
}

int halostats_dist(const char *path, const prog_std *std, options *o)
{
    fk_error err = {0};
    if (fk_dist_init(&rank, &size, &err)) {
        prog_rank_quiet(1); /* no MPI in this build: said once */
        prog_fail(&err);
    }
    atexit(end_mpi);
    if (rank) prog_verbose = 0; /* rank 0 reports for all */
    if (o->m.so)
        all_die(EXIT_USAGE, "option --so is not available under mpirun (a halo's SO sphere reaches particles of every "
                "rank): run halostats --so in one process");
    if (o->format >= 2)
        all_die(EXIT_USAGE, "option --format=%s is not available under mpirun: the catalogue is written as text or csv",
                o->format == 2 ? "stream" : o->format == 3 ? "hdf5" : "grp");
    if (std->output && fk_dist_has_pattern(std->output))
        all_die(EXIT_USAGE, "under mpirun the catalogue is one file: -o FILE without %%r (rank 0 writes it)");
    if (size > 1 && !fk_dist_has_pattern(path))
        all_die(EXIT_USAGE, "%d ranks: the input name needs the rank pattern %%r (each rank reads its own stream), not %s",
                size, path);
    char *inname = NULL;
    if (fk_dist_expand(path, rank, &inname, &err)) all_die(EXIT_USAGE, "%s", err.msg);
    double t0 = prog_now();

    /* Each rank's stream: read and checked. */
    const char *name = strcmp(inname, "-") ? inname : "stdin";
    FILE *f = NULL;
    fk_filter flt;
    memset(&flt, 0, sizeof flt);
    const char *hint = "run groups --format=stream under mpirun first";
    fk_want want[NW] = {
        [W_POS] = {"POS", FK_W_PARTICLE | FK_W_REQUIRED, "<f4", 3, "run tipsy2bin first"},
        [W_VEL] = {"VEL", FK_W_PARTICLE | FK_W_REQUIRED, "<f4", 3, "run tipsy2bin first"},
        [W_MASS] = {"MASS", FK_W_PARTICLE | FK_W_REQUIRED, "<f4", 1, "run tipsy2bin first"},
        [W_ID] = {"ID", FK_W_PARTICLE | FK_W_ID | FK_W_REQUIRED, NULL, 1, "run tipsy2bin first"},
        [W_GIDL] = {"GIDL", FK_W_PARTICLE | FK_W_LEVELS | FK_W_REQUIRED, "<u4", 1, hint},
        [W_GRPS] = {"GRPS", FK_W_TEXT | FK_W_LEVELS | FK_W_REQUIRED, NULL, 0, hint},
        [W_GPAR] = {"GPAR", FK_W_LEVELS, "<u4", 1, NULL},
        [W_LINK] = {"LINK", FK_W_TEXT, NULL, 0, NULL},
    };
    input in;
    memset(&in, 0, sizeof in);
    in.name = strcmp(path, "-") ? path : "stdin";
    uint64_t *ids = NULL;
    int st = fk_input_open(&f, inname, 1, std->force, &err);
    if (!st) st = fk_filter_start(&flt, f, name, NULL, 0, &err);
    if (!st) st = fk_filter_read(&flt, want, NW, &err);
    if (!st) st = read_levels(want, &in, name, &err);
    if (!st && want[W_LINK].data[0]) st = hs_parse_link(&in, want[W_LINK].data[0], name, &err);
    const fk_snap snap = flt.snap;
    if (!st && !(ids = fk_big_alloc((snap.n ? snap.n : 1) * sizeof *ids)))
        st = fk_fail(&err, FK_ENOMEM, "out of memory for the IDs of %" PRIu64 " particles", snap.n);
    if (!st) {
        const void *raw = want[W_ID].data[0];
        int wide = !strcmp(want[W_ID].chunk[0].dtype, "<u8");
        uint64_t first = snap.n; /* the first ID beyond the source's particles */
        #pragma omp parallel for schedule(static) reduction(min : first)
        for (uint64_t i = 0; i < snap.n; i++) {
            ids[i] = wide ? ((const uint64_t *)raw)[i] : ((const uint32_t *)raw)[i];
            if (ids[i] >= snap.nsource && i < first) first = i;
        }
        if (first < snap.n)
            st = fk_fail(&err, FK_EFORMAT, "%s: particle %" PRIu64 " has ID %" PRIu64 ", beyond the %" PRIu64
                         " particles of the source", name, first, ids[first], snap.nsource);
    }
    check(st, &err);
    uint64_t ntotal = 0, lo = snap.nsource, hi = snap.nsource;
    fk_dist_sum_u64(snap.n, &ntotal, &err);
    fk_dist_min(&lo, 1);
    fk_dist_max(&hi, 1);
    if (lo != hi)
        all_die(EXIT_DATA, "the ranks' streams disagree on nsource (%" PRIu64 " to %" PRIu64 "): they are not parts of "
                "one snapshot", lo, hi);
    if (ntotal > snap.nsource)
        all_die(EXIT_DATA, "the ranks hold %" PRIu64 " particles, more than the %" PRIu64 " of the source", ntotal,
                snap.nsource);

    /* The whole run's particles set the default softening, as in one
     * process on the concatenated stream. */
    in.snap = snap;
    in.snap.n = ntotal;
    st = FK_OK;
    if (o->centre == FK_CENTRE_MBP && o->device == DEV_GPU) { /* each rank its GPU, agreed on */
        fk_gpuinfo gi;
        st = fk_gpu_probe(&gi, &err);
        if (!st && !gi.present) st = fk_fail(&err, FK_EDEVICE, "rank %d: --device=gpu: %s", rank, gi.reason);
    }
    check(st, &err);
    prog_rank_quiet(1);
    hs_setup(&in, o);
    prog_rank_quiet(0);
    { /* -v: each rank's GPU (or the CPU), as rank 0 learns them; collective on every rank */
        uint64_t *dev = calloc((size_t)size, sizeof *dev);
        check(dev ? FK_OK : fk_fail(&err, FK_ENOMEM, "out of memory"), &err);
        dev[rank] = o->device == DEV_GPU ? (uint64_t)fk_gpu_selected() + 1 : 0;
        fk_dist_sum(dev, size);
        char list[256] = "";
        for (int d = 0, at = 0; d < size && at < (int)sizeof list - 16; d++)
            at += dev[d] ? snprintf(list + at, sizeof list - (size_t)at, "%sGPU %d", d ? ", " : "", (int)dev[d] - 1)
                         : snprintf(list + at, sizeof list - (size_t)at, "%sCPU", d ? ", " : "");
        if (rank == 0) prog_info("the ranks' devices (rank 0 first): %s", list);
        free(dev);
    }
    double t_read = prog_now() - t0;

    fk_dhalos_in din = {.n = snap.n, .pos = want[W_POS].data[0], .vel = want[W_VEL].data[0],
                        .mass = want[W_MASS].data[0], .ids = ids, .periodic = snap.periodic, .box = snap.box,
                        .origin = snap.origin, .nlevels = in.nlevels, .name = name};
    for (int k = 0; k < in.nlevels && k < FK_LEVELS_MAX; k++) {
        din.gid[k] = want[W_GIDL].data[k];
        din.ngroups[k] = in.lv[k].grps.ngroups;
    }
    const int gpu = o->device == DEV_GPU;
    fk_dhalos_opts dop = {.centre = o->centre, .pot = o->pot, .minima = gpu ? gpu_minima : NULL, .unbind = o->m.unbind,
                          .up = {o->pot, o->m.minbound ? o->m.minbound : FK_UNBIND_MINBOUND, gpu ? gpu_tree : NULL,
                                 gpu ? fk_gpu_unbind_update : NULL}};
    fk_halo *rows[FK_LEVELS_MAX];
    uint64_t ng[MAX_LEVELS] = {0};
    fk_dhalos_info info;
    if (fk_dhalos_run(&din, &dop, rows, &info, &err)) agreed_fail(&err, 0); /* agreed inside: the same on all */
    for (int k = 0; k < in.nlevels; k++) ng[k] = in.lv[k].grps.ngroups;

    /* Rank 0 writes the catalogue; it is renamed into place only when that
     * succeeded, and every rank exits with rank 0's status. */
    double t1 = prog_now();
    st = FK_OK;
    if (rank == 0) {
        for (int k = 0; k < in.nlevels && !st; k++) st = set_hosts(&in, k, rows[k], ng[k], k ? ng[k - 1] : 0, &err);
        fk_output *out = NULL;
        if (!st) st = fk_output_open(&out, std->output, 0, std->force, &err);
        if (!st) {
            FILE *fo = fk_output_file(out);
            if (o->format == 1)
                write_csv_header(fo, o);
            else
                write_header(fo, &in, o, ng);
            for (int k = 0; k < in.nlevels; k++) write_rows(fo, o, rows[k], ng[k], o->format == 1 ? ',' : ' ');
            st = fk_output_commit(out, &err);
        }
    }
    check(st, &err);
    if (rank == 0) {
        for (int k = 0; k < in.nlevels; k++) {
            uint64_t grouped = 0;
            for (uint64_t g = 0; g < ng[k]; g++) grouped += rows[k][g].n;
            prog_info("level %d: %" PRIu64 " groups holding %" PRIu64 " of %" PRIu64 " particles, largest %" PRIu64, k,
                      ng[k], grouped, ntotal, ng[k] ? rows[k][0].n : 0);
            if (o->centre == FK_CENTRE_MBP)
                prog_info("level %d: potentials: %" PRIu64 " groups by exact sums, %" PRIu64 " by the tree (%" PRIu64
                          " candidates summed exactly)", k, ng[k] - info.ntree[k], info.ntree[k], info.candidates[k]);
        }
        prog_info("%d ranks: members per rank (all levels) %" PRIu64 " to %" PRIu64 "; sent to other ranks %" PRIu64
                  " bytes in all, at most %" PRIu64 " by one rank", size, info.members_min, info.members_max,
                  info.sent_sum, info.sent_max);
        prog_info("read in %.3f s; rank 0: members to owners %.3f s, rows %.3f s (slowest rank %.3f s), rows to rank 0 "
                  "%.3f s; written in %.3f s; %.3f s in all", t_read, info.t_route, info.t_compute, info.t_compute_max,
                  info.t_gather, prog_now() - t1, prog_now() - t0);
    }
    for (int k = 0; k < FK_LEVELS_MAX; k++) free(rows[k]);
    fk_filter_free(&flt);
    fk_input_close(f);
    fk_want_free(want, NW);
    free(ids);
    free(inname);
    return EXIT_OK;
}
