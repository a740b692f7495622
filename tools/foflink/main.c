/* foflink - links the particles of a tree-ordered stream into friends-of-friends groups and appends the SINK array. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "bigmem.h"
#include "device.h"
#include "dist.h"
#include "distrun.h"
#include "kdtree.h"
#include "filter.h"
#include "levels.h"
#include "linkrun.h"
#include "linkspec.h"
#include "phase.h"
#include "prog.h"
#include "snap.h"
#include "spacing.h"
#include "spacingopt.h"
#include "treechunk.h"
#include "stream.h"

static void help(void)
{
    printf("Usage: foflink [OPTION]... [FILE]\n"
           "Link the particles of a tree-ordered fofkit stream (FILE or stdin; run kdbuild\n"
           "first) into friends-of-friends groups and append the sink array.\n"
           "\n"
           "  -b, --b=B              linking length as B times the mean interparticle\n"
           "                         spacing box/n_eff^(1/3) (default 0.2): of the lightest\n"
           "                         particles of each type, as if they filled the box\n"
           "      --spacing=S        what -b's spacing is of: lightest (default), all (every\n"
           "                         particle, box/n^(1/3)), types (gas,dark,star) or a mass\n"
           "  -l, --link-length=L    absolute linking length (instead of -b)\n"
           "                         -b and -l take a list too, B0,B1,... strictly decreasing:\n"
           "                         up to %d levels, level k linked inside level k-1's groups\n"
           "      --psi=V            6D phase-space linking, V the velocity linking length\n"
           "                         (one for every level, or a list, one per level, never growing)\n"
           "      --psi-rel=F        6D with psi = F times the 3D rms velocity of the particles\n"
           "                         about their mean (one F, or one per level)\n"
           "      --link-types=T     the types linked: a list of gas, dark, star, or all\n"
           "                         (default: dark when the stream has dark matter and gas\n"
           "                         or stars, else all)\n"
           "      --attach-types=T   the types attached to the group of their nearest linked\n"
           "                         particle within 6.4 l (Gadget-4's reach), or none\n"
           "                         (default: every type not linked)\n"
           "      --no-periodic      isolated boundaries even if the stream's box is periodic\n"
           "      --method=M         tree (default) or brute (all pairs, O(n^2): small inputs)\n"
           "      --device=D         auto (default: the GPU if there is one), cpu or gpu\n"
           "  -j, --threads=N        CPU threads (default: all)\n"
           "      --piece-size=N     distributed runs: link at most N of a rank's particles at\n"
           "                         a time (default: all, or what fits the GPU)\n"
           "      --decomp=D         distributed runs: each rank's domain, rcb (default: boxes\n"
           "                         of equal counts, recursive bisection) or slabs\n"
           "      --overlay          distributed runs: write only LINK and GMIN, after a BASE\n"
           "                         chunk naming the input, not the input's chunks again\n"
           "  -o, --output=FILE      write to FILE (default stdout)\n"
           "  -z, --compress[=N]     zlib-compress every chunk (level N, default 6)\n"
           "  -f, --force            read or write binary data on a terminal\n"
           "  -v, --verbose          progress and timings on stderr\n"
           "  -h, --help             this help\n"
           "  -V, --version          version\n"
           "\n"
           "Two particles are friends when their binary32 minimum-image separation squared,\n"
           "(dx*dx + dy*dy) + dz*dz, is strictly below l*l: see foflink(1) for the exact rule.\n"
           "In 6D they must also have r2/l2 + w2/psi2 < 1, w2 the velocity difference squared.\n"
           "A stream with dark matter and gas or stars is linked as Gadget, Arepo and SWIFT\n"
           "link it: the dark matter at -b times its own mean spacing (Gadget-4's density\n"
           "rule when the stream has its units and cosmology), every other particle attached\n"
           "to the group of its nearest dark matter particle within 6.4 l (none farther);\n"
           "--link-types=all links every particle together.\n"
           "Exit status: 0 success, 1 bad input or I/O error, 2 usage error, 3 out of memory,\n"
           "no GPU or not enough GPU memory.\n",
           FK_LEVELS_MAX);
}

/* The operand of -b or -l: one positive number, or a list of up to
 * FK_LEVELS_MAX of them, strictly decreasing (the levels). Returns how many. */
static int parse_lengths(const char *opt, const char *arg, double *out)
{
    if (!strchr(arg, ',')) {
        out[0] = prog_parse_double(opt, arg, -HUGE_VAL, HUGE_VAL);
        if (!(out[0] > 0)) prog_usage("option %s: the linking length must be positive, not %s", opt, arg);
        return 1;
    }
    int n = prog_parse_list(opt, arg, out, FK_LEVELS_MAX, -HUGE_VAL, HUGE_VAL);
    for (int k = 0; k < n; k++) {
        if (!(out[k] > 0)) prog_usage("option %s: the linking length must be positive, not %g", opt, out[k]);
        if (k && !(out[k] < out[k - 1]))
            prog_usage("option %s: the levels' linking lengths must decrease strictly, not %g then %g", opt,
                       out[k - 1], out[k]);
    }
    return n;
}

/* The operand of --psi or --psi-rel: positive finite numbers, one or one
 * per level, never growing from a level to the next (else the levels would
 * not nest). Returns how many. */
static int parse_psis(const char *opt, const char *arg, double *out)
{
    int n = prog_parse_list(opt, arg, out, FK_LEVELS_MAX, -HUGE_VAL, HUGE_VAL);
    for (int k = 0; k < n; k++) {
        if (!(out[k] > 0) || !isfinite(out[k]))
            prog_usage("option %s: the value must be a positive number, not %g", opt, out[k]);
        if (k && out[k] > out[k - 1])
            prog_usage("option %s: the levels' values must not grow, not %g then %g (the groups would not nest)",
                       opt, out[k - 1], out[k]);
    }
    return n;
}

int main(int argc, char **argv)
{
    prog_init("foflink");
    prog_std std = {0};
    double b[FK_LEVELS_MAX] = {0.2}, l[FK_LEVELS_MAX] = {0}, psiv[FK_LEVELS_MAX] = {0};
    int nb = 1, nl = 0, npsi = 0, psi_rel = 0;
    int have_l = 0, have_b = 0, no_periodic = 0, brute = 0, devchoice = device_default();
    long long threads = 0, piece = 0;
    int decomp = 0, have_decomp = 0, overlay = 0;
    fk_spacing_spec spacing = {FK_SPACING_LIGHTEST, 0, 0};
    int have_spacing = 0;
    fk_error err = {0};
    unsigned link_types = 0, attach_types = 0;
    int have_link_types = 0, have_attach_types = 0;
    enum { OPT_NOPER = 256, OPT_METHOD, OPT_DEVICE, OPT_PSI, OPT_PSIREL, OPT_PIECE, OPT_SPACING, OPT_LINKT, OPT_ATTACHT, OPT_DECOMP, OPT_OVERLAY };
    static const struct option longopts[] = {PROG_STD_LONG,
                                             {"b", required_argument, 0, 'b'},
                                             {"link-length", required_argument, 0, 'l'},
                                             {"no-periodic", no_argument, 0, OPT_NOPER},
                                             {"method", required_argument, 0, OPT_METHOD},
                                             {"threads", required_argument, 0, 'j'},
                                             {"device", required_argument, 0, OPT_DEVICE},
                                             {"psi", required_argument, 0, OPT_PSI},
                                             {"psi-rel", required_argument, 0, OPT_PSIREL},
                                             {"piece-size", required_argument, 0, OPT_PIECE},
                                             {"spacing", required_argument, 0, OPT_SPACING},
                                             {"link-types", required_argument, 0, OPT_LINKT},
                                             {"attach-types", required_argument, 0, OPT_ATTACHT},
                                             {"decomp", required_argument, 0, OPT_DECOMP},
                                             {"overlay", no_argument, 0, OPT_OVERLAY},
                                             {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":" PROG_STD_SHORT "b:l:j:", longopts, NULL)) != -1) {
        if (prog_std_option(c, optarg, &std, help, argv)) continue;
        switch (c) {
        case 'b':
            nb = parse_lengths("-b", optarg, b);
            have_b = 1;
            break;
        case 'l':
            nl = parse_lengths("-l", optarg, l);
            have_l = 1;
            break;
        case OPT_PSI:
        case OPT_PSIREL:
            if (npsi && psi_rel != (c == OPT_PSIREL)) prog_usage("options --psi and --psi-rel are exclusive");
            psi_rel = c == OPT_PSIREL;
            npsi = parse_psis(psi_rel ? "--psi-rel" : "--psi", optarg, psiv);
            break;
        case OPT_NOPER: no_periodic = 1; break;
        case OPT_OVERLAY: overlay = 1; break;
        case OPT_METHOD:
            if (!strcmp(optarg, "tree"))
                brute = 0;
            else if (!strcmp(optarg, "brute"))
                brute = 1;
            else
                prog_usage("option --method takes tree or brute, not '%s'", optarg);
            break;
        case 'j': threads = prog_parse_int("--threads", optarg, 1, 4096); break;
        case OPT_DEVICE: devchoice = device_parse(optarg); break;
        case OPT_PIECE: piece = prog_parse_int("--piece-size", optarg, 1, INT64_MAX); break;
        case OPT_DECOMP:
            if (!strcmp(optarg, "rcb"))
                decomp = 0;
            else if (!strcmp(optarg, "slabs"))
                decomp = 1;
            else
                prog_usage("option --decomp takes rcb or slabs, not '%s'", optarg);
            have_decomp = 1;
            break;
        case OPT_SPACING:
            if (fk_spacing_parse(optarg, &spacing, &err)) prog_usage("%s", err.msg);
            have_spacing = 1;
            break;
        case OPT_LINKT:
            if (fk_types_parse("--link-types", optarg, 0, &link_types, &err)) prog_usage("%s", err.msg);
            have_link_types = 1;
            break;
        case OPT_ATTACHT:
            if (fk_types_parse("--attach-types", optarg, 1, &attach_types, &err)) prog_usage("%s", err.msg);
            have_attach_types = 1;
            break;
        }
    }
    if (have_attach_types && attach_types == FK_TYPES_ALL)
        prog_usage("option --attach-types: the types attached cannot be all (some type is linked)");
    if (have_link_types && have_attach_types && (link_types & attach_types))
        prog_usage("options --link-types and --attach-types name a type twice (a type is linked or attached)");
    if (have_l && have_b) prog_usage("options -l and -b are exclusive");
    if (have_l && have_spacing) prog_usage("option --spacing applies to -b, not -l");
    const int nlev = have_l ? nl : nb, sixd = npsi > 0;
    if (npsi > 1 && npsi != nlev)
        prog_usage("option %s gives %d values for %d level%s (give one, or one per level)",
                   psi_rel ? "--psi-rel" : "--psi", npsi, nlev, nlev > 1 ? "s" : "");
    const char *input = prog_one_input(argc, argv, optind), *names[] = {input, std.output};
    if (fk_dist_wanted(names, 2)) { /* under mpirun, or a %r in a name: DISTRIBUTED RUNS in foflink(1) */
        foflink_opts fo = {b,     l,         psiv,     nlev,  have_l,  npsi,         psi_rel,
                           no_periodic, brute, devchoice, threads, piece, spacing, have_spacing,
                           link_types, attach_types, have_link_types, have_attach_types, decomp, overlay};
        foflink_dist(input, &std, &fo);
    }
    if (piece) prog_usage("option --piece-size is for distributed runs (under mpirun, or %%r in a name)");
    if (have_decomp) prog_usage("option --decomp is for distributed runs (under mpirun, or %%r in a name)");
    if (overlay) prog_usage("option --overlay is for distributed runs (under mpirun, or %%r in a name)");
    /* The device taken before the input comes: in a pipe, the GPU is ready
     * (its context made, 0.2 s) while the stages before build the tree. */
    fk_gpuinfo gi;
    const int gpu = device_resolve(devchoice, &gi) == DEV_GPU;
    prog_filter pf;
    prog_filter_open(&pf, input, &std);
    /* POS and the rest of what foflink reads are written on by the writer's
     * thread while the next chunks are read; none of them changes after */
    if (pf.f.w) fk_writer_list_reads(pf.f.w);
    const char *name = pf.name;
    const fk_snap snap = pf.f.snap;
    double t0 = prog_now(), w0 = fk_reader_waited(pf.f.r);

    /* What foflink reads; every other chunk passes on unread: VEL for 6D,
     * MASS and TYPE for the mean spacing of -b. */
    enum { W_SINK, W_LINK, W_POS, W_TREE, W_TBOX, W_VEL, W_MASS, W_TYPE, W_ID, NW };
    const int by_b = !have_l;
    fk_want want[NW] = {
        [W_SINK] = {"SINK", FK_W_REFUSE, .hint = "is linked already"},
        [W_LINK] = {"LINK", FK_W_REFUSE, .hint = "is linked already"},
        [W_POS] = {"POS", FK_W_PARTICLE | FK_W_PASS | FK_W_REQUIRED, "<f4", 3},
        [W_TREE] = {"TREE", FK_W_TEXT | FK_W_PASS},
        [W_TBOX] = {"TBOX", FK_W_PASS, "<f4", 6},
        [W_VEL] = {"VEL", FK_W_PARTICLE | FK_W_PASS | FK_W_REQUIRED, "<f4", 3, "6D linking needs the velocities"},
        [W_MASS] = {"MASS", FK_W_PARTICLE | FK_W_PASS, "<f4", 1},
        [W_TYPE] = {"TYPE", FK_W_PARTICLE | FK_W_PASS, "|u1", 1},
        [W_ID] = {"ID", FK_W_PARTICLE | FK_W_ID | FK_W_PASS, NULL, 1},
    };
    /* A hydro run (attach.h) by default when the stream has dark matter and gas or stars. */
    const int baryons = snap.ntype[FK_GAS] + snap.ntype[FK_STAR] > 0;
    if (!have_link_types) link_types = baryons && snap.ntype[FK_DARK] ? 1u << FK_DARK : FK_TYPES_ALL;
    if (!have_attach_types) attach_types = FK_TYPES_ALL & ~link_types;
    const int attach = link_types != FK_TYPES_ALL;
    if (!attach && have_attach_types && attach_types)
        prog_usage("option --attach-types: nothing is left to attach when every type is linked");
    if (link_types & attach_types)
        prog_usage("options --link-types and --attach-types name a type twice (a type is linked or attached)");
    if (attach) want[W_TYPE].flags |= FK_W_REQUIRED, want[W_TYPE].hint = "linking some types only needs the types";
    if (!attach) want[W_ID].tag = "";
    /* the chunks not needed this run are read as none: a tag no chunk has */
    if (!sixd) want[W_VEL].tag = "", want[W_VEL].flags = 0;
    if (!by_b || (!(attach && !have_spacing) && !spacing_needs_mass(&spacing))) want[W_MASS].tag = "";
    if (!attach && (!by_b || !spacing_needs_type(&spacing))) want[W_TYPE].tag = "";
    /* Linked as soon as what it reads has come (kdbuild writes TREE and TBOX
     * right after POS): SINK goes out before the chunks after them, which
     * pass on once it is written. */
    int more;
    if (fk_filter_read_until(&pf.f, want, NW, &more, &err)) prog_fail(&err);
    const float *pos = want[W_POS].data[0], *vel = want[W_VEL].data[0];
    fk_tree tree;
    if (fk_tree_from_chunks(&want[W_TREE], &want[W_TBOX], &snap, pos, name, &tree, &err)) prog_fail(&err);
    if (sixd && fk_phase_check(vel, snap.n, name, &err)) prog_fail(&err);
    /* -v: the time spent waiting for the stage before is not the work */
    double w_read = fk_reader_waited(pf.f.r) - w0, t_read = prog_now() - t0 - w_read;

    /* One set of options per level; level 0 has the longest linking length. */
    fk_linkopts lo[FK_LEVELS_MAX];
    double vscale = 0, rel[FK_LEVELS_MAX];
    fk_linkspec spec = {b, l, psiv, nlev, have_l, npsi, psi_rel, no_periodic, (int)threads};
    fk_link_meta par = {have_l ? NULL : b, psi_rel ? rel : NULL, 0, 0, 0, NULL};
    double neff = 0;
    const uint8_t *type = want[W_TYPE].data[0];
    if (by_b) {
        fk_spacing_sums sums;
        if (fk_spacing_sum(want[W_MASS].data[0], type, snap.n, &sums, name, &err)) prog_fail(&err);
        if (attach && !have_spacing) {
            if (attach_spacing(&snap, &sums, link_types, baryons, b[0], &neff, &par, &err))
                prog_die(EXIT_DATA, "%s: %s", name, err.msg);
        } else {
            if (fk_spacing_neff(&spacing, &sums, &neff, &err)) prog_die(EXIT_DATA, "%s: %s", name, err.msg);
            spacing_report(&spacing, have_spacing, &sums, neff, snap.box, b[0], &par);
        }
    }
    /* --psi-rel in a hydro run: the rms velocity of the linked particles */
    fk_snap vsnap = snap;
    float *pvel = NULL;
    if (attach && psi_rel) {
        uint64_t m = 0;
        if (!(pvel = malloc((snap.n ? snap.n : 1) * 3 * sizeof *pvel)))
            prog_die(EXIT_RESOURCE, "out of memory for the velocities of %" PRIu64 " particles", snap.n);
        for (uint64_t i = 0; i < snap.n; i++)
            if (link_types >> type[i] & 1u) memcpy(pvel + 3 * m++, vel + 3 * i, 3 * sizeof *vel);
        vsnap.n = m;
    }
    int st = fk_linkspec_levels(&spec, &vsnap, neff, pvel ? pvel : vel, name, lo, &vscale, rel, &err);
    free(pvel);
    if (st == FK_EINVAL) prog_die(EXIT_USAGE, "%s", err.msg);
    if (st) prog_fail(&err);
    par.vscale = vscale;
    uint64_t nlinked = 0;
    char ltn[32];
    for (int t = 0; t < 3; t++) nlinked += link_types >> t & 1u ? snap.ntype[t] : 0;
    prog_info("linking %" PRIu64 " %s%s with l = %.9g (%s box %g)", attach ? nlinked : snap.n,
              attach ? fk_types_name(link_types, ltn, sizeof ltn) : "", attach ? " particles" : "particles", lo[0].l,
              lo[0].periodic ? "periodic" : "isolated", snap.box);
    if (psi_rel)
        prog_info("6D: psi = %.9g (%g times the rms velocity %.9g)", lo[0].psi, psiv[0], vscale);
    else if (sixd)
        prog_info("6D: psi = %.9g", lo[0].psi);
    for (int k = 1; k < nlev; k++) prog_info("level %d: l = %.9g, psi = %.9g", k, lo[k].l, lo[k].psi);

    const int idw = want[W_ID].data[0] && !strcmp(want[W_ID].chunk[0].dtype, "<u8") ? 8 : 4;
    fk_link_job job = {snap.n,      pos,          vel,        &tree, lo, nlev, brute, gpu, attach ? type : NULL,
                       link_types, attach_types, want[W_ID].data[0], idw};
    if (attach) {
        char lt[32], at[32];
        prog_info("hydro run: the %s particles linked, the %s particles attached to the group of the nearest "
                  "one within %g l (Gadget-4's reach; --link-types=all links every particle together)",
                  fk_types_name(link_types, lt, sizeof lt), fk_types_name(attach_types, at, sizeof at), FK_ATTACH_REACH);
    }
    uint32_t *sinks[FK_LEVELS_MAX];
    for (int k = 0; k < nlev; k++)
        if (!(sinks[k] = fk_big_alloc(snap.n * sizeof *sinks[k])))
            prog_die(EXIT_RESOURCE, "out of memory for the sink array of %" PRIu64 " particles", snap.n);
    if (job.gpu) prog_info("GPU memory needed: %.3f GiB", (double)fk_link_gpu_bytes(&job) / (1 << 30));
    fk_link_report rep;
    prog_progress(job.gpu ? "linking on the GPU" : "linking", 0, 0);
    if (fk_link_run(&job, sinks, &rep, &err)) prog_fail(&err);

    const fk_linkstats *ls = rep.stats;
    double dt = nlev > 1 ? rep.seconds[0] : rep.total;
    const fk_gputimes *gt = &rep.gpu;
    if (job.gpu)
        prog_info("GPU times: upload %.4f s, link %.4f s (%.3g particles/s; cliques %.4f, self+walk %.4f, "
                  "pairs %.4f, flatten %.4f; %" PRIu64 " leaf pairs), download %.4f s",
                  gt->upload, gt->link, snap.n / (gt->link + 1e-12), gt->link_phase[0], gt->link_phase[1],
                  gt->link_phase[2], gt->link_phase[3], gt->leaf_pairs, gt->download);
    prog_info("linked on the %s (%s) in %.3f s (%.3g particles/s): %" PRIu64 " groups, %" PRIu64
              " pair tests, %" PRIu64 " box tests",
              job.gpu ? "GPU" : "CPU", brute ? "brute" : "tree", dt, snap.n / (dt + 1e-12), ls->groups,
              ls->pair_tests, ls->node_tests);
    for (int k = 1; k < nlev; k++)
        prog_info("level %d linked in %.3f s (%.3g particles/s): %" PRIu64 " groups, %" PRIu64 " pair tests, %" PRIu64
                  " box tests",
                  k, rep.seconds[k], snap.n / (rep.seconds[k] + 1e-12), ls[k].groups, ls[k].pair_tests,
                  ls[k].node_tests);
    if (nlev > 1) prog_info("%d levels linked in %.3f s", nlev, rep.total);
    for (int k = 0; rep.attach && k < nlev; k++)
        prog_info("level %d: %" PRIu64 " particles linked; %" PRIu64 " of %" PRIu64 " attached, %" PRIu64
                  " alone (no linked particle within %.9g)",
                  k, rep.primaries, rep.attached[k], rep.secondaries, rep.secondaries - rep.attached[k],
                  (double)(float)(FK_ATTACH_REACH * lo[k].l));
    if (rep.attach) prog_info("nearest linked particles found in %.3f s", rep.attach_seconds);

    double t1 = prog_now();
    prog_progress("writing", 0, 0);
    if (fk_link_write(pf.f.w, &job, &par, &rep, sinks, &err)) prog_fail(&err);
    if (more && fk_filter_read(&pf.f, want, NW, &err)) prog_fail(&err);
    prog_filter_close(&pf);
    char wait[48] = ""; /* a pipe's writer kept it waiting: not the work */
    if (pf.waited > 0) snprintf(wait, sizeof wait, "; waited %.3f s for the input", pf.waited);
    prog_info("read and checked in %.3f s, linked in %.3f s, written in %.3f s%s", t_read, rep.total,
              prog_now() - t1 - (pf.waited - w0 - w_read), wait);
    fk_tree_free(&tree);
    fk_want_free(want, NW);
    for (int k = 0; k < nlev; k++) free(sinks[k]);
    return EXIT_OK;
}
