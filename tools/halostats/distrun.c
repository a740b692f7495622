/* distrun.c - halostats under mpirun: each rank's grouped stream read, rows computed by the groups' owners, one catalogue from rank 0. */
#include "distrun.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "device.h"
#include "dist.h"
#include "dist_alltoall.h"
#include "dist_halos.h"
#include "dist_so.h"
#include "fileio.h"
#include "filter.h"
#include "gpu.h"
#include "hdf5out.h"
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

/* W_PID last: read with --format=hdf5 alone (the catalogue's IDs), passed on unread otherwise */
enum { W_POS, W_VEL, W_MASS, W_ID, W_TYPE, W_GIDL, W_GRPS, W_GPAR, W_LINK, W_HALO, W_HCOL, W_PID, NW };

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

static void end_mpi(void)
{
    fk_dist_finalize();
}

/* --so: every position finite and in the periodic box (the SO grid's check,
 * here where a particle has its index in the rank's stream), the run's mass
 * summed exactly over the ranks (fk_dso_mass_total: one process's bits) when
 * the thresholds may come from the mean density, then the cosmology and thresholds as in
 * one process (a missing option is met alike by every rank: said once). */
static void so_setup(input *in, options *o, const fk_snap *snap, const float *pos, const float *mass, const char *name)
{
    fk_error err = {0};
    check(fk_snap_check_positions(snap, pos, name, &err), &err);
    if (!o->m.have_rho && !o->m.have_h) {
        check(fk_dso_mass_total(snap->n, mass, &o->m.mass_total, name, &err), &err);
        o->m.have_mass_total = 1;
    }
    char *text = NULL; /* the SNAP record: its cosmology keys */
    check(fk_snap_format(snap, &text, &err), &err);
    prog_rank_quiet(1);
    hs_masses_setup(&o->m, &in->snap, text, NULL, NULL, NULL, &o->units, o->G_out);
    prog_rank_quiet(0);
    free(text);
}

/* A grouped particle on its way to rank 0 for the HDF5 catalogue. */
typedef struct hmember {
    uint64_t id, pid; /* its original index; its snapshot ID (PID), or id without PID chunks */
    float mass;
    uint32_t g0, g1; /* its groups of levels 0 and 1 */
    float pos[3];    /* its position: its place in its group's order (memberorder.h) */
} hmember;

/* --format=hdf5: the particles in a group of level 0 or 1 gathered on rank
 * 0 (48 bytes each), in the order of the ranks' streams concatenated, as
 * gid arrays of the source's particles (gid1 NULL without level 1) and the
 * members' masses, positions, IDs and snapshot IDs (pids NULL: none; then
 * *mpids is NULL): what the catalogue reads of one process's stream. Every
 * rank must have PID chunks or none. Collective; on rank 0 *gid0, *gid1,
 * *mass, *mpos, *ids, *mpids are malloc'd and *n set. */
static int gather_members(const fk_snap *snap, const uint64_t *ids, const uint64_t *pids, const float *mass,
                          const float *pos, const uint32_t *gidl0, const uint32_t *gidl1, uint32_t **gid0,
                          uint32_t **gid1, float **mmass, float **mpos, uint64_t **mids, uint64_t **mpids, uint64_t *n,
                          fk_error *err)
{
    uint64_t k = 0, ngot = 0;
    for (uint64_t i = 0; i < snap->n; i++) k += gidl0[i] || (gidl1 && gidl1[i]);
    hmember *send = malloc((k ? k : 1) * sizeof *send), *got = NULL;
    uint64_t *count = calloc((size_t)size, sizeof *count), *rcount = calloc((size_t)size, sizeof *rcount);
    int st = send && count && rcount ? FK_OK : fk_fail(err, FK_ENOMEM, "rank %d: out of memory for %" PRIu64
                                                        " members", rank, k);
    uint64_t with = pids != NULL, all = with; /* ranks with PID chunks: all or none */
    fk_dist_sum(&all, 1);
    if (!st && all != 0 && all != (uint64_t)size)
        st = fk_fail(err, FK_EFORMAT, "%s PID chunk (the snapshot's IDs), as %" PRIu64 " of the %d ranks' streams %s: "
                     "they are not parts of one stream", with ? "a stream has a" : "a stream has no", with ? size - all : all,
                     size, with ? "do not" : "do");
    st = fk_dist_agree(st, err, NULL);
    if (!st) {
        k = 0;
        for (uint64_t i = 0; i < snap->n; i++)
            if (gidl0[i] || (gidl1 && gidl1[i]))
                send[k++] = (hmember){ids[i], pids ? pids[i] : ids[i], mass[i], gidl0[i], gidl1 ? gidl1[i] : 0,
                                      {pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]}};
        count[0] = k;
        st = fk_dist_alltoall(send, count, sizeof *send, (void **)&got, rcount, &ngot, err);
    }
    *gid0 = *gid1 = NULL, *mmass = *mpos = NULL, *mids = NULL, *mpids = NULL, *n = ngot;
    if (!st && rank == 0) {
        const uint64_t ns = snap->nsource ? snap->nsource : 1;
        *gid0 = calloc(ns, sizeof **gid0);
        if (gidl1) *gid1 = calloc(ns, sizeof **gid1);
        *mmass = malloc((ngot ? ngot : 1) * sizeof **mmass), *mids = malloc((ngot ? ngot : 1) * sizeof **mids);
        *mpos = malloc((ngot ? ngot : 1) * 3 * sizeof **mpos);
        if (pids) *mpids = malloc((ngot ? ngot : 1) * sizeof **mpids);
        if (!*gid0 || (gidl1 && !*gid1) || !*mmass || !*mpos || !*mids || (pids && !*mpids))
            st = fk_fail(err, FK_ENOMEM, "out of memory for the HDF5 catalogue's %" PRIu64 " members", ngot);
        for (uint64_t i = 0; i < ngot && !st; i++) {
            const hmember *m = &got[i];
            (*gid0)[m->id] = m->g0;
            if (*gid1) (*gid1)[m->id] = m->g1;
            (*mmass)[i] = m->mass, (*mids)[i] = m->id;
            for (int a = 0; a < 3; a++) (*mpos)[3 * i + a] = m->pos[a];
            if (*mpids) (*mpids)[i] = m->pid;
        }
    }
    free(send), free(got), free(count), free(rcount);
    return st;
}

/* Rank 0: the HDF5 catalogue (levels 0 and 1) to f. */
static int write_hdf5(FILE *f, const char *fname, const options *o, const fk_snap *snap, fk_halo *const *rows,
                      const uint64_t *ng, const uint32_t *gid0, const uint32_t *gid1, const float *mass,
                      const float *pos, const uint64_t *ids, const uint64_t *pids, uint64_t n, fk_error *err)
{
    fk_snap s = *snap; /* the members alone */
    s.n = n;
    void *image = NULL;
    size_t bytes = 0;
    int st =
        hdf5_image(&s, pos, mass, ids, pids, gid0, gid1, rows, ng, o, &image, &bytes, err);
    if (!st && fwrite(image, 1, bytes, f) != bytes) st = fk_fail(err, FK_EIO, "%s: write error", fname);
    free(image);
    return st;
}

/* -v: what the SO spheres cost, rank by rank. */
static void so_report(const fk_dso_info *s, double seconds)
{
    char asked[256] = "";
    for (int k = 0, at = 0; k < s->rounds && k < 64 && at < (int)sizeof asked - 24; k++)
        at += snprintf(asked + at, sizeof asked - (size_t)at, "%s%" PRIu64, k ? ", " : "", s->asked[k]);
    prog_info("SO: %" PRIu64 " spheres (every level) in %d round%s (spheres asked for: %s) in %.3f s; rank 0: frame "
              "and index %.3f s, ghosts found and moved %.3f s, measured %.3f s, results to rank 0 %.3f s",
              s->spheres, s->rounds, s->rounds == 1 ? "" : "s", asked, seconds, s->t_index, s->t_ghosts, s->t_measure,
              s->t_gather);
    for (int d = 0; d < s->ranks && s->rank; d++)
        prog_info("SO: rank %d measured %" PRIu64 " spheres over %" PRIu64 " particles; sent %" PRIu64 " of its "
                  "particles to other ranks' spheres, %" PRIu64 " bytes to other ranks in all; %.3f s", d,
                  s->rank[d].spheres, s->rank[d].particles, s->rank[d].sent, s->rank[d].bytes, s->rank[d].seconds);
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
    const int stream = o->format == 2;
    if (o->format == 4)
        all_die(EXIT_USAGE, "option --format=grp is not available under mpirun (one file of the bound members of the "
                "whole snapshot): the catalogue is written as text, csv, hdf5 or streams");
    if (o->snapshot || o->m.so_from)
        all_die(EXIT_USAGE, "option %s is not available under mpirun: run halostats in one process for it",
                o->snapshot ? "--snapshot" : "--so-from");
    if (o->format == 3 && bound_subhalos_asked(o))
        all_die(EXIT_USAGE, "under mpirun the HDF5 catalogue's subhalos are the level 1 groups: give --subhalos=levels "
                "(the bound subhalos of --unbind need one process)");
    if (stream && o->m.unbind)
        all_die(EXIT_USAGE, "options --format=stream and --unbind do not go together under mpirun (the BGID chunks "
                "hold every source particle): write the catalogue as text, csv or hdf5");
    if (!stream && std->output && fk_dist_has_pattern(std->output))
        all_die(EXIT_USAGE, "under mpirun the catalogue is one file: -o FILE without %%r (rank 0 writes it)");
    if (stream && size > 1 && (!std->output || !fk_dist_has_pattern(std->output)))
        all_die(EXIT_USAGE, "with %d ranks, --format=stream needs -o NAME with %%r (a stream per rank)", size);
    if (size > 1 && !fk_dist_has_pattern(path))
        all_die(EXIT_USAGE, "%d ranks: the input name needs the rank pattern %%r (each rank reads its own stream), not %s",
                size, path);
    char *inname = NULL, *outname = NULL;
    if (fk_dist_expand(path, rank, &inname, &err)) all_die(EXIT_USAGE, "%s", err.msg);
    if (stream && std->output && fk_dist_expand(std->output, rank, &outname, &err)) all_die(EXIT_USAGE, "%s", err.msg);
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
        [W_TYPE] = {"TYPE", FK_W_PARTICLE, "|u1", 1, NULL},
        [W_GIDL] = {"GIDL", FK_W_PARTICLE | FK_W_LEVELS | FK_W_REQUIRED, "<u4", 1, hint},
        [W_GRPS] = {"GRPS", FK_W_TEXT | FK_W_LEVELS | FK_W_REQUIRED, NULL, 0, hint},
        [W_GPAR] = {"GPAR", FK_W_LEVELS, "<u4", 1, NULL},
        [W_LINK] = {"LINK", FK_W_TEXT, NULL, 0, NULL},
        [W_HALO] = {"HALO", FK_W_DROP | FK_W_LEVELS, NULL, 0, NULL}, /* replaced, with --format=stream */
        [W_HCOL] = {"HCOL", FK_W_DROP, NULL, 0, NULL},
        [W_PID] = {"PID", FK_W_PARTICLE, "<u8", 1, NULL},
    };
    for (int k = 0; k < W_HALO && stream; k++) want[k].flags |= FK_W_PASS; /* each rank's stream written on */
    input in;
    memset(&in, 0, sizeof in);
    in.name = strcmp(path, "-") ? path : "stdin";
    uint64_t *ids = NULL;
    fk_output *sout = NULL; /* with --format=stream, this rank's */
    /* the outputs (this rank's stream, or rank 0's catalogue) are made before any input is opened:
     * a name that cannot be made fails at once */
    int st = stream ? fk_output_open(&sout, outname, 1, std->force, &err) : FK_OK;
    fk_output *out = NULL;
    if (!st && !stream && rank == 0) st = fk_output_open(&out, std->output, o->format == 3, std->force, &err);
    check(st, &err);
    st = fk_input_open(&f, inname, 1, std->force, &err);
    /* an overlay (groups --overlay) read with its base (overlay.h) */
    if (!st)
        st = fk_filter_start_follow(&flt, f, name, strcmp(inname, "-") ? inname : NULL,
                                    sout ? fk_output_file(sout) : NULL, std->zlevel, &err);
    if (!st) st = fk_filter_read(&flt, want, o->format == 3 ? NW : W_PID, &err);
    if (!st) st = read_levels(want, &in, name, &err);
    if (!st && want[W_LINK].data[0]) st = fk_hsin_parse_link(&in, want[W_LINK].data[0], name, &err);
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
    uint8_t *types = NULL; /* n_gas ... n_contam */
    if (!st) st = hs_types(&snap, snap.n, ids, want[W_TYPE].data[0], &types, name, &err);
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
    fk_dist_sum(in.snap.ntype, 3); /* the run's particles of each type, as the header's SO line counts them */
    st = FK_OK;
    if (o->centre == FK_CENTRE_MBP && o->device == DEV_GPU) { /* each rank its GPU, agreed on */
        fk_gpuinfo gi;
        st = fk_gpu_probe(&gi, &err);
        if (!st && !gi.present) st = fk_fail(&err, FK_EDEVICE, "rank %d: --device=gpu: %s", rank, gi.reason);
    }
    check(st, &err);
    prog_rank_quiet(1);
    hs_setup(&in, o);
    hs_device(o);
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
    if (o->m.so) so_setup(&in, o, &snap, want[W_POS].data[0], want[W_MASS].data[0], name);
    double t_read = prog_now() - t0;

    fk_dhalos_in din = {.n = snap.n, .pos = want[W_POS].data[0], .vel = want[W_VEL].data[0],
                        .mass = want[W_MASS].data[0], .ids = ids, .periodic = in.snap.periodic, .box = snap.box,
                        .origin = snap.origin, .nlevels = in.nlevels, .name = name, .comoving = o->comoving,
                        .vscale = o->vscale, .hflow = o->hflow, .type = types};
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
    st = FK_OK;
    for (int k = 0; k < in.nlevels && !st && rank == 0; k++)
        st = fk_hsin_set_hosts(&in, k, rows[k], ng[k], k ? ng[k - 1] : 0, &err);
    for (int k = 0; k < in.nlevels && !st && rank == 0; k++) hs_blank_G(o, rows[k], ng[k]);
    check(st, &err);

    /* SO: every rank's particles within each halo's sphere to the rank that
     * measures it; the radii and masses into rank 0's rows. */
    double t_so = prog_now();
    fk_dso_info sinfo;
    memset(&sinfo, 0, sizeof sinfo);
    if (o->m.so) {
        const fk_dso_in sin = {snap.n, want[W_POS].data[0], want[W_MASS].data[0], snap.periodic, snap.box, snap.origin,
                               ntotal, ids};
        if (fk_dso_run(&sin, rows, ng, in.nlevels, o->m.rho, o->m.so_min ? o->m.so_min : FK_SO_MINPART, &sinfo, &err))
            agreed_fail(&err, 0); /* agreed inside */
    }
    t_so = prog_now() - t_so;

    /* Rank 0 writes the catalogue; it is renamed into place only when that
     * succeeded, and every rank exits with rank 0's status. */
    double t1 = prog_now();
    fk_catw cw;
    hs_catw(o, &cw);
    uint32_t *gid0 = NULL, *gid1 = NULL;
    float *mmass = NULL, *mpos = NULL;
    uint64_t *mids = NULL, *mpids = NULL, nmem = 0;
    st = FK_OK;
    if (o->format == 3)
        st = gather_members(&snap, ids, want[W_PID].data[0], want[W_MASS].data[0], want[W_POS].data[0],
                            want[W_GIDL].data[0], in.nlevels > 1 ? want[W_GIDL].data[1] : NULL, &gid0, &gid1, &mmass,
                            &mpos, &mids, &mpids, &nmem, &err);
    if (stream) { /* rank 0's stream also gets the catalogue */
        if (rank == 0) st = fk_catw_hcol(flt.w, &cw, in.nlevels, &err);
        for (int k = 0; k < in.nlevels && !st && rank == 0; k++) st = fk_catw_halo(flt.w, &cw, k, rows[k], ng[k], &err);
        if (!st) st = fk_filter_finish(&flt, &err);
        check(st, &err);
        st = fk_output_commit(sout, &err);
    } else if (!st && rank == 0) {
        {
            FILE *fo = fk_output_file(out);
            if (o->format == 3)
                st = write_hdf5(fo, fk_output_name(out), o, &snap, rows, ng, gid0, gid1, mmass, mpos, mids, mpids, nmem,
                                &err);
            else if (o->format == 1)
                fk_catw_csv_header(fo, &cw);
            else
                fk_catw_header(fo, &cw, &in, ng);
            for (int k = 0; k < in.nlevels && o->format != 3; k++)
                fk_catw_rows(fo, &cw, rows[k], ng[k], o->format == 1 ? ',' : ' ');
            if (!st)
                st = fk_output_commit(out, &err);
            else
                fk_output_abort(out);
        }
    }
    free(gid0), free(gid1), free(mmass), free(mpos), free(mids), free(mpids);
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
        prog_info("rank 0's rows: members in group order %.3f s, properties %.3f s, centres: gather %.3f s, "
                  "potentials %.3f s, profiles %.3f s; unbinding %.3f s", info.t_order, info.t_props,
                  info.t_centre_gather, info.t_potential, info.t_profile, info.t_unbind);
        if (o->m.so) so_report(&sinfo, t_so);
    }
    free(sinfo.rank);
    for (int k = 0; k < FK_LEVELS_MAX; k++) free(rows[k]);
    fk_filter_free(&flt);
    fk_input_close(f);
    fk_want_free(want, NW);
    free(ids), free(types);
    free(inname), free(outname);
    return EXIT_OK;
}
