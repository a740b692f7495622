/* distrun.c - foflink under mpirun: each rank's stream linked with every other's, GMIN appended (foflink(1), DISTRIBUTED RUNS). */
#include "distrun.h"

#include <inttypes.h>
#include <omp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "attach.h"
#include "bigmem.h"
#include "device.h"
#include "dist.h"
#include "dist_link.h"
#include "kdtree.h"
#include "kv.h"
#include "linkrun.h"
#include "linkspec.h"
#include "overlay.h"
#include "phase.h"
#include "spacing.h"
#include "spacingopt.h"

static int rank, size;

static int status_of(int code)
{
    return code == FK_ENOMEM || code == FK_EDEVICE ? EXIT_RESOURCE : EXIT_DATA;
}

/* After fk_dist_agree failed: the failing rank says why, every rank removes
 * its unfinished output and exits (MPI ended by atexit). */
static _Noreturn void agreed_fail(const fk_error *err, int who)
{
    if (rank == who) prog_fail(err);
    fk_output_cleanup_all();
    exit(status_of(err->code));
}

/* One rank's failure, agreed on by all before the next collective step. */
static void check(int st, fk_error *err)
{
    int who;
    if (fk_dist_agree(st, err, &who)) agreed_fail(err, who);
}

/* A failure every rank meets alike (options, names): said once, by rank 0. */
static _Noreturn void all_die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static _Noreturn void all_die(int status, const char *fmt, ...)
{
    fk_error err = {0};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err.msg, sizeof err.msg, fmt, ap);
    va_end(ap);
    if (rank == 0) prog_die(status, "%s", err.msg);
    fk_output_cleanup_all();
    exit(status);
}

static void end_mpi(void)
{
    fk_dist_finalize();
}

void foflink_dist(const char *input, const prog_std *std, const foflink_opts *o)
{
    fk_error err = {0};
    if (fk_dist_init(&rank, &size, &err)) prog_fail(&err);
    atexit(end_mpi);
    if (rank) prog_verbose = 0; /* rank 0 reports for all (every rank's numbers gathered) */
    const char *out = std->output ? std->output : "-";
    if (size > 1 && !fk_dist_has_pattern(input))
        all_die(EXIT_USAGE, "%d ranks: the input name needs the rank pattern %%r (each rank reads its own stream), not %s",
                size, input);
    if (size > 1 && !fk_dist_has_pattern(out))
        all_die(EXIT_USAGE, "%d ranks: the output name (-o) needs the rank pattern %%r (each rank writes its own stream)",
                size);
    if (o->psi_rel) all_die(EXIT_USAGE, "--psi-rel is not supported in a distributed run yet: give --psi");
    char *inname = NULL, *outname = NULL;
    if (fk_dist_expand(input, rank, &inname, &err) || fk_dist_expand(out, rank, &outname, &err))
        all_die(EXIT_USAGE, "%s", err.msg);
    if (o->overlay && !strcmp(inname, "-"))
        all_die(EXIT_USAGE, "option --overlay needs the input in a file (the overlay names it as its base), not stdin");

    /* Each rank's stream: opened, read and checked; the chunks foflink does
     * not read pass on to its output as they come. */
    double t0 = prog_now();
    const char *name = strcmp(inname, "-") ? inname : "stdin";
    FILE *in = NULL;
    fk_output *fo = NULL;
    fk_writer *ow = NULL; /* --overlay: BASE, then LINK and GMIN alone (overlay.h) */
    fk_filter f;
    memset(&f, 0, sizeof f);
    enum { W_SINK, W_LINK, W_GMIN, W_POS, W_ID, W_MASS, W_TYPE, W_VEL, NW }; /* VEL last: read for 6D only */
    fk_want want[NW] = {
        [W_SINK] = {"SINK", FK_W_REFUSE, .hint = "is linked already"},
        [W_LINK] = {"LINK", FK_W_REFUSE, .hint = "is linked already"},
        [W_GMIN] = {"GMIN", FK_W_REFUSE, .hint = "is linked already"},
        [W_POS] = {"POS", FK_W_PARTICLE | FK_W_PASS | FK_W_REQUIRED, "<f4", 3},
        [W_ID] = {"ID", FK_W_PARTICLE | FK_W_ID | FK_W_PASS | FK_W_REQUIRED, NULL, 1,
                  "a distributed run labels groups by ID"},
        [W_MASS] = {"MASS", FK_W_PARTICLE | FK_W_PASS, "<f4", 1},
        [W_TYPE] = {"TYPE", FK_W_PARTICLE | FK_W_PASS, "|u1", 1},
        [W_VEL] = {"VEL", FK_W_PARTICLE | FK_W_PASS | FK_W_REQUIRED, "<f4", 3, "6D linking needs the velocities"},
    };
    /* MASS and TYPE for -b's mean spacing only: otherwise a tag no chunk has */
    /* MASS and TYPE always: a hydro run (attach.h) is known only once every rank's SNAP is read */
    const int sixd = o->npsi > 0, nw = sixd ? NW : NW - 1;
    int st = fk_input_open(&in, inname, 1, std->force, &err);
    if (!st) st = fk_output_open(&fo, outname, 1, std->force, &err);
    if (!st && o->overlay) st = fk_overlay_start(&ow, fk_output_file(fo), inname, outname, "foflink", std->zlevel, &err);
    /* an overlay read with its base (overlay.h); with --overlay nothing read is written on */
    if (!st)
        st = fk_filter_start_follow(&f, in, name, strcmp(inname, "-") ? inname : NULL,
                                    o->overlay ? NULL : fk_output_file(fo), std->zlevel, &err);
    /* the chunks passed on are written while the ranks link (one core's write is as long as the link) */
    if (!st) fk_filter_later(&f);
    if (!st) st = fk_filter_read(&f, want, nw, &err);
    const fk_snap snap = f.snap;
    const float *pos = want[W_POS].data[0], *vel = sixd ? want[W_VEL].data[0] : NULL;
    if (!st) st = fk_snap_check_positions(&snap, pos, name, &err);
    if (!st && sixd) st = fk_phase_check(vel, snap.n, name, &err);
    uint64_t *id = NULL;
    if (!st && !(id = fk_big_alloc((snap.n ? snap.n : 1) * sizeof *id)))
        st = fk_fail(&err, FK_ENOMEM, "out of memory for the IDs of %" PRIu64 " particles", snap.n);
    if (!st) {
        const void *raw = want[W_ID].data[0];
        int wide = !strcmp(want[W_ID].chunk[0].dtype, "<u8");
        #pragma omp parallel for schedule(static)
        for (uint64_t i = 0; i < snap.n; i++)
            id[i] = wide ? ((const uint64_t *)raw)[i] : ((const uint32_t *)raw)[i];
    }
    check(st, &err);
    /* A hydro run by default when the ranks' streams have dark matter and gas or stars. */
    uint64_t nbar[3] = {snap.ntype[FK_GAS] + snap.ntype[FK_STAR], want[W_TYPE].data[0] ? 0 : 1, snap.ntype[FK_DARK]};
    fk_dist_sum(nbar, 3);
    const int baryons = nbar[0] > 0;
    const unsigned link_types =
        o->have_link_types ? o->link_types : baryons && nbar[2] ? 1u << FK_DARK : FK_TYPES_ALL;
    const unsigned attach_types = o->have_attach_types ? o->attach_types : FK_TYPES_ALL & ~link_types;
    const int attach = link_types != FK_TYPES_ALL;
    if (!attach && o->have_attach_types && attach_types)
        all_die(EXIT_USAGE, "option --attach-types: nothing is left to attach when every type is linked");
    if (link_types & attach_types)
        all_die(EXIT_USAGE, "options --link-types and --attach-types name a type twice (a type is linked or attached)");
    if (attach && nbar[1])
        all_die(EXIT_DATA, "a stream has no TYPE chunk (linking some types only needs the types)");

    /* The same box on every rank; the mean spacing of -b from all particles. */
    uint64_t ntotal = 0;
    double blo, bhi, plo, phi;
    fk_dist_sum_u64(snap.n, &ntotal, &err);
    fk_dist_range(snap.box, &blo, &bhi, &err);
    fk_dist_range(snap.periodic, &plo, &phi, &err);
    if (blo != bhi || plo != phi)
        all_die(EXIT_DATA, "the ranks' streams disagree on the box (%g to %g) or its periodicity: they are not slices of one snapshot",
                blo, bhi);
    /* -b's mean spacing from every rank's particles: their exact per-type sums added
     * (spacing.h), so that any number of ranks links at one process's length */
    fk_link_meta par = {o->have_l ? NULL : o->b, NULL, 0, 0, 0, NULL};
    double neff = 0;
    if (!o->have_l) {
        fk_spacing_sums sums;
        st = fk_spacing_sum(want[W_MASS].data[0], want[W_TYPE].data[0], snap.n, &sums, name, &err);
        check(st, &err);
        fk_dist_sum(sums.n, 3);
        fk_dist_sum(&sums.sig[0][0], 3 * FK_SPACING_NEXP);
        fk_dist_min(sums.min_bits, 3);
        fk_dist_max(sums.max_bits, 3);
        if (attach && !o->have_spacing) {
            if (attach_spacing(&snap, &sums, link_types, baryons, o->b[0], &neff, &par, &err))
                all_die(EXIT_DATA, "%s", err.msg);
        } else {
            if (fk_spacing_neff(&o->spacing, &sums, &neff, &err)) all_die(EXIT_DATA, "%s", err.msg);
            /* every rank's LINK record names the spacing; rank 0 alone gives the hint */
            spacing_report(&o->spacing, o->have_spacing || rank != 0, &sums, neff, snap.box, o->b[0], &par);
        }
    }
    fk_linkopts lo[FK_LEVELS_MAX];
    fk_linkspec spec = {o->b, o->l, o->psi, o->nlevels, o->have_l, o->npsi, 0, o->no_periodic, (int)o->threads};
    if (fk_linkspec_levels(&spec, &snap, neff, NULL, name, lo, NULL, NULL, &err)) all_die(EXIT_USAGE, "%s", err.msg);
    if (rank == 0) {
        prog_info("linking %" PRIu64 " particles on %d ranks with l = %.9g (%s box %g)", ntotal, size, lo[0].l,
                  lo[0].periodic ? "periodic" : "isolated", snap.box);
        if (sixd) prog_info("6D: psi = %.9g", lo[0].psi);
        for (int k = 1; k < o->nlevels; k++) prog_info("level %d: l = %.9g, psi = %.9g", k, lo[k].l, lo[k].psi);
    }
    double t_read = prog_now() - t0;

    fk_gpuinfo gi;
    fk_distlink_in din = {.n = snap.n, .pos = pos, .vel = vel, .id = id, .lo = lo, .nlevels = o->nlevels,
                          .gpu = device_resolve(o->devchoice, &gi) == DEV_GPU, .brute = o->brute, .leafsize = 16,
                          .piece = (uint64_t)o->piece, .decomp = o->decomp};
    if (din.gpu) din.leafsize = 32; /* kdbuild's defaults: a leaf fills a warp on the GPU */
    din.gpu_mem = din.gpu ? gi.mem_free : 0;
    uint64_t *gmin[FK_LEVELS_MAX] = {0};
    st = FK_OK;
    for (int k = 0; k < o->nlevels && !st; k++)
        if (!(gmin[k] = fk_big_alloc((snap.n ? snap.n : 1) * sizeof *gmin[k])))
            st = fk_fail(&err, FK_ENOMEM, "out of memory for the labels of %" PRIu64 " particles", snap.n);
    check(st, &err);
    fk_distlink_report rep;
    uint64_t attached[FK_LEVELS_MAX] = {0}, nprim = 0, nsec = 0;
    if (attach) {
        char lt[32], at[32];
        if (rank == 0)
            prog_info("hydro run: the %s particles linked, the %s particles attached to the group of the nearest "
                      "one within %g l (Gadget-4's reach), on domains with ghosts within the reach",
                      fk_types_name(link_types, lt, sizeof lt), fk_types_name(attach_types, at, sizeof at),
                      FK_ATTACH_REACH);
        if (fk_distlink_attach(&din, want[W_TYPE].data[0], link_types, attach_types, gmin, &rep, attached, &nprim,
                               &nsec, &err))
            agreed_fail(&err, 0);
        for (int k = 0; rank == 0 && k < o->nlevels; k++)
            prog_info("level %d: %" PRIu64 " particles linked; %" PRIu64 " of %" PRIu64 " attached", k, nprim,
                      attached[k], nsec);
    } else if (fk_distlink_run(&din, gmin, &rep, &err))
        agreed_fail(&err, 0); /* agreed inside: the same on all */
    fk_cores cores;
    fk_dist_cores(&cores);
    rep.device = din.gpu ? gi.ordinal : -1;
    rep.threads = omp_get_max_threads();
    rep.cpu_first = cores.after ? cores.first : -1;
    rep.cpu_last = cores.after ? cores.last : -1;
    rep.cpu_count = cores.after;
    struct rusage ru;
    rep.peak_rss = getrusage(RUSAGE_SELF, &ru) == 0 ? (uint64_t)ru.ru_maxrss * 1024 : 0;

    /* -v: the whole run, then every rank's part. */
    fk_distlink_report *all = rank == 0 ? calloc((size_t)size, sizeof *all) : NULL;
    check(rank == 0 && !all ? fk_fail(&err, FK_ENOMEM, "out of memory") : FK_OK, &err);
    fk_distlink_gather(&rep, all, &err);
    if (rank == 0 && prog_verbose) {
        double td = 0, tl = 0, tm = 0, tc = 0, tr = 0, sent = 0, smax = 0;
        uint64_t ghosts = 0;
        for (int d = 0; d < size; d++) {
            const fk_distlink_report *a = &all[d];
            char cpus[64] = "";
            if (a->cpu_first >= 0)
                snprintf(cpus, sizeof cpus, ", %d core%s (%d to %d)", a->cpu_count, a->cpu_count == 1 ? "" : "s",
                         a->cpu_first, a->cpu_last);
            if (a->device >= 0)
                prog_info("rank %d: GPU %d, %d threads%s; GPU: %.2f GiB, upload %.3f s, build %.3f s, link %.3f s, "
                          "download %.3f s", d, a->device, a->threads, cpus, (double)a->link.gpu.bytes_needed / (1 << 30),
                          a->link.gpu.upload, a->link.gpu.build, a->link.gpu.link, a->link.gpu.download);
            if (a->device >= 0 && a->pieces == 1) /* level 0's link on the GPU, as foflink -v reports one process's */
                prog_info("rank %d: GPU link phases: cliques %.4f, self+walk %.4f, pairs %.4f, flatten %.4f s; %" PRIu64
                          " leaf pairs, %" PRIu64 " pair tests, %" PRIu64 " box tests",
                          d, a->link.gpu.link_phase[0], a->link.gpu.link_phase[1], a->link.gpu.link_phase[2],
                          a->link.gpu.link_phase[3], a->link.gpu.leaf_pairs, a->link.stats[0].pair_tests,
                          a->link.stats[0].node_tests);
            if (a->device < 0)
                prog_info("rank %d: CPU, %d threads%s", d, a->threads, cpus);
            prog_info("rank %d: peak memory %.2f GiB", d, (double)a->peak_rss / (1 << 30));
            if (a->decomp == FK_DECOMP_SLABS)
                prog_info("rank %d: slab %.6g to %.6g (axis %d), %" PRIu64 " owned, %" PRIu64
                          " ghosts (%.2f%%), %.3f MB sent, %.3f MB received, %" PRIu64 " boundary edges",
                          d, a->slab_lo, a->slab_hi, a->axis, a->owned, a->ghosts,
                          100.0 * (double)a->ghosts / (double)(a->owned ? a->owned : 1), a->bytes_sent / 1e6,
                          a->bytes_recv / 1e6, a->edges[0]);
            else
                prog_info("rank %d: box %.6g to %.6g, %.6g to %.6g, %.6g to %.6g, %" PRIu64 " owned, %" PRIu64
                          " ghosts (%.2f%%), %.3f MB sent, %.3f MB received, %" PRIu64 " boundary edges",
                          d, a->box_lo[0], a->box_hi[0], a->box_lo[1], a->box_hi[1], a->box_lo[2], a->box_hi[2],
                          a->owned, a->ghosts, 100.0 * (double)a->ghosts / (double)(a->owned ? a->owned : 1),
                          a->bytes_sent / 1e6, a->bytes_recv / 1e6, a->edges[0]);
            prog_info("rank %d: join across ranks: %" PRIu64 " rounds, %" PRIu64 " pointer jumps, %" PRIu64 " bytes sent, "
                      "%" PRIu64 " received, at most %" PRIu64 " records held",
                      d, a->join_rounds, a->join_jumps, a->join_sent, a->join_recv, a->join_held);
            if (attach) /* bounded by the slab and the reach, not the run's whole dark matter */
                prog_info("rank %d: attaching: %" PRIu64 " particles attached to %" PRIu64 " linked particles held, %" PRIu64
                          " of them ghosts (%.2f%% of all linked), %.3f MB",
                          d, a->att_sec, a->att_held, a->att_ghosts,
                          100.0 * (double)a->att_ghosts / (double)(nprim ? nprim : 1), a->att_bytes / 1e6);
            prog_info("rank %d: decomposition %.3f s (domains %.3f s, particles %.3f s, ghosts %.3f s), link %.3f s (%" PRIu64 " piece%s), merge %.3f s (across ranks "
                      "%.3f s), labels back %.3f s; between ranks in all %.3f s",
                      d, a->t_decomp, a->t_slabs, a->t_owned, a->t_ghosts, a->t_link, a->pieces, a->pieces == 1 ? "" : "s", a->t_merge, a->t_cross,
                      a->t_return, a->t_moved);
            td = a->t_decomp > td ? a->t_decomp : td;
            tl = a->t_link > tl ? a->t_link : tl;
            tm = a->t_merge > tm ? a->t_merge : tm;
            tc = a->t_cross > tc ? a->t_cross : tc;
            tr = a->t_return > tr ? a->t_return : tr;
            sent += (double)a->bytes_sent;
            smax = (double)a->bytes_sent > smax ? (double)a->bytes_sent : smax;
            ghosts += a->ghosts;
        }
        for (int k = 0; k < o->nlevels; k++)
            prog_info("level %d: %" PRIu64 " groups (of one particle or more)", k, rep.groups[k]);
        prog_info("ghosts: %" PRIu64 " for %" PRIu64 " particles (%.2f%%); sent per rank: mean %.3f MB, most %.3f MB",
                  ghosts, ntotal, 100.0 * (double)ghosts / (double)(ntotal ? ntotal : 1), sent / size / 1e6,
                  smax / 1e6);
        uint64_t jrounds = 0, jjumps = 0, jheld = 0;
        double jsent = 0, jmax = 0;
        for (int d = 0; d < size; d++) {
            const fk_distlink_report *a = &all[d];
            jrounds = a->join_rounds > jrounds ? a->join_rounds : jrounds; /* the same on every rank */
            jjumps = a->join_jumps > jjumps ? a->join_jumps : jjumps;
            jheld = a->join_held > jheld ? a->join_held : jheld;
            jsent += (double)a->join_sent;
            jmax = (double)a->join_sent > jmax ? (double)a->join_sent : jmax;
        }
        prog_info("join across ranks (%s): %" PRIu64 " rounds, %" PRIu64 " pointer jumps; sent per rank: mean %.6f MB, "
                  "most %.6f MB; at most %" PRIu64 " records held by a rank",
                  rep.decomp == FK_DECOMP_SLABS ? "slabs" : "rcb", jrounds, jjumps, jsent / size / 1e6, jmax / 1e6, jheld);
        prog_info("slowest rank: decomposition %.3f s, link %.3f s, merge %.3f s (%.1f%% of the link; across ranks "
                  "%.3f s, %.1f%%), labels back %.3f s",
                  td, tl, tm, 100 * tm / (tl + 1e-12), tc, 100 * tc / (tl + 1e-12), tr);
    }
    free(all);

    /* The LINK record (groups counted over all ranks) and the labels. */
    double t1 = prog_now();
    fk_tree tree;
    memset(&tree, 0, sizeof tree);
    fk_link_job job = {ntotal, NULL, NULL, &tree, lo, o->nlevels, o->brute, din.gpu, NULL, link_types, attach_types,
                       NULL, 0};
    fk_link_report lrep = rep.link;
    lrep.attach = attach, lrep.primaries = nprim, lrep.secondaries = nsec;
    for (int k = 0; k < o->nlevels; k++) lrep.attached[k] = attached[k];
    for (int k = 0; k < o->nlevels; k++) lrep.stats[k].groups = rep.groups[k];
    char *linktext = NULL, *full = NULL;
    st = fk_link_record(&job, &par, &lrep, &linktext, &err);
    if (!st) {
        size_t len = strlen(linktext) + 64;
        if (!(full = malloc(len)))
            st = fk_fail(&err, FK_ENOMEM, "out of memory");
        else
            snprintf(full, len, "%sranks %d\nrank %d\n", linktext, size, rank);
    }
    fk_writer *w = ow ? ow : f.w;
    if (!st) st = fk_writer_text(w, "LINK", 0, full, &err);
    for (int k = 0; k < o->nlevels && !st; k++) {
        fk_chunk ch;
        fk_chunk_init(&ch, "GMIN", "<u8", FK_CF_PARTICLE, snap.n, 1);
        ch.level = (uint32_t)k;
        st = fk_writer_put(w, &ch, gmin[k], &err);
    }
    if (!st) st = ow ? fk_writer_finish(ow, &err) : fk_filter_finish(&f, &err);
    check(st, &err);
    if (fk_output_commit(fo, &err)) prog_fail(&err);
    if (rank == 0)
        prog_info("read and checked in %.3f s, linked in %.3f s, written in %.3f s", t_read,
                  rep.t_decomp + rep.t_link + rep.t_merge + rep.t_return, prog_now() - t1);
    free(linktext);
    free(full);
    fk_writer_free(ow);
    fk_filter_free(&f);
    fk_input_close(in);
    fk_want_free(want, NW);
    free(id);
    for (int k = 0; k < o->nlevels; k++) free(gmin[k]);
    free(inname);
    free(outname);
    exit(EXIT_OK);
}
