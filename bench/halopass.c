/* halopass - times halostats' passes over a grouped stream, each beside a copy of as many bytes on every core. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "benchclock.h"
#include "bigmem.h"
#include "clock.h"
#include "filter.h"
#include "groups.h"
#include "halostats.h"
#include "prog.h"
#include "snap.h"

static void help(void)
{
    printf("Usage: halopass [OPTION]... STREAM\n"
           "Times the passes halostats makes over the level-0 groups of STREAM (a fofkit stream from\n"
           "groups: POS VEL MASS ID GID), REPEAT times each, and beside each the machine's floor: a\n"
           "copy on every core of as many bytes as the pass reads and writes (half read, half\n"
           "written), timed in the same run. Prints a table: the best wall time of each, the bytes\n"
           "(counted from the arrays each pass touches once), the rate and the ratio to the floor,\n"
           "and the least CPU time of the process's threads (on a loaded machine, the wall time\n"
           "of a pass whose threads got whole cores is about its CPU time over the threads).\n"
           "\n"
           "      --repeat=N     runs of each (default 5)\n"
           "      --potentials   also the potential centres on the CPU (slow: minutes at 2^24)\n");
}

/* What halostats reads of a stream. */
typedef struct data {
    fk_snap snap;
    float *pos, *vel, *mass;
    uint64_t *ids;
    uint32_t *gid;
} data;

static void load(const char *path, data *d)
{
    fk_error err = {0};
    FILE *f = prog_open_input(path, 1, 0);
    fk_filter fl;
    enum { W_POS, W_VEL, W_MASS, W_ID, W_GID, NW };
    fk_want want[NW] = {
        [W_POS] = {"POS", FK_W_PARTICLE | FK_W_REQUIRED, "<f4", 3},
        [W_VEL] = {"VEL", FK_W_PARTICLE | FK_W_REQUIRED, "<f4", 3},
        [W_MASS] = {"MASS", FK_W_PARTICLE | FK_W_REQUIRED, "<f4", 1},
        [W_ID] = {"ID", FK_W_PARTICLE | FK_W_ID | FK_W_REQUIRED, NULL, 1},
        [W_GID] = {"GID", FK_W_REQUIRED, "<u4", 1, "run groups first"},
    };
    if (fk_filter_start(&fl, f, path, NULL, 0, &err) || fk_filter_read(&fl, want, NW, &err)) prog_fail(&err);
    d->snap = fl.snap;
    d->pos = want[W_POS].data[0], d->vel = want[W_VEL].data[0], d->mass = want[W_MASS].data[0];
    d->gid = want[W_GID].data[0];
    if (want[W_GID].chunk[0].nrows != d->snap.nsource)
        prog_die(EXIT_DATA, "%s: GID has %" PRIu64 " rows for %" PRIu64 " particles", path, want[W_GID].chunk[0].nrows,
                 d->snap.nsource);
    const uint64_t n = d->snap.n;
    if (fk_snap_widen_ids(want[W_ID].data[0], &want[W_ID].chunk[0], &d->ids, &err) ||
        fk_groups_check_ids(d->ids, n, d->snap.nsource, path, &err))
        prog_fail(&err);
    fk_filter_free(&fl);
    fk_input_close(f);
}

/* A pass's best wall and CPU times over the runs. */
typedef struct timing {
    double wall, cpu, w0, c0;
} timing;

static void start(timing *t)
{
    t->w0 = fk_now(), t->c0 = cpu_now();
}

static void stop(timing *t)
{
    double w = fk_now() - t->w0, c = cpu_now() - t->c0;
    if (w < t->wall) t->wall = w;
    if (c < t->cpu) t->cpu = c;
}

/* The floor of a pass that moves bytes: the best of repeat copies of bytes / 2 on every core. */
static double floor_of(uint64_t bytes, int repeat, char *src, char *dst)
{
    const size_t half = (size_t)(bytes / 2);
    double best = 1e30;
    for (int r = 0; r < repeat; r++) {
        double t = fk_now();
#pragma omp parallel
        {
            int th = 0, nt = 1;
#ifdef _OPENMP
            th = omp_get_thread_num(), nt = omp_get_num_threads();
#endif
            size_t lo = half * (size_t)th / (size_t)nt, hi = half * (size_t)(th + 1) / (size_t)nt;
            memcpy(dst + lo, src + lo, hi - lo);
        }
        t = fk_now() - t;
        if (t < best) best = t;
    }
    return best;
}

static void row(const char *name, timing t, uint64_t bytes, double floor)
{
    printf("| %-36s | %8.3f | %8.3f | %9.1f | %6.2f | %8.3f | %7.1f |\n", name, t.wall, t.cpu, bytes / 1e6,
           bytes / t.wall / 1e9, floor, t.wall / floor);
}

int main(int argc, char **argv)
{
    prog_init("halopass");
    prog_std std = {0};
    int repeat = 5, potentials = 0;
    static const struct option longopts[] = {PROG_STD_LONG, {"repeat", required_argument, 0, 'r'},
                                             {"potentials", no_argument, 0, 'p'}, {0, 0, 0, 0}};
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":" PROG_STD_SHORT, longopts, NULL)) != -1) {
        if (prog_std_option(opt, optarg, &std, help, argv)) continue;
        if (opt == 'r')
            repeat = (int)prog_parse_int("--repeat", optarg, 1, 1000);
        else if (opt == 'p')
            potentials = 1;
        else
            prog_usage("unknown option");
    }
    const char *path = prog_one_input(argc, argv, optind);
    data d;
    load(path, &d);
    const uint64_t n = d.snap.n;
    fk_error err = {0};
    uint32_t *grp = fk_big_alloc((n ? n : 1) * sizeof *grp);
    if (!grp) prog_die(EXIT_RESOURCE, "out of memory");

    /* the passes, in halostats' order */
    timing t_grp = {1e30, 1e30, 0, 0}, t_order = t_grp, t_compute = t_grp, t_com = t_grp;
    double t_mbp = 0;
    uint64_t ng = 0, members = 0;
    fk_halo *h = NULL;
    fk_pot_params pot;
    fk_pot_defaults(&pot);
    pot.eps = 0.05 * d.snap.box / cbrt((double)(n ? n : 1));
    for (int r = 0; r < repeat; r++) {
        start(&t_grp);
        uint64_t top = 0;
#pragma omp parallel for schedule(static) reduction(max : top)
        for (uint64_t i = 0; i < n; i++) {
            grp[i] = d.gid[d.ids[i]];
            if (grp[i] > top) top = grp[i];
        }
        stop(&t_grp);
        ng = top;
        fk_halo_order o;
        start(&t_order);
        if (fk_halo_order_build(n, grp, d.ids, ng, &o, &err)) prog_fail(&err);
        stop(&t_order);
        members = o.first[ng];
        if (!h && !(h = malloc((ng ? ng : 1) * sizeof *h))) prog_die(EXIT_RESOURCE, "out of memory");
        fk_halo_input hin = {n, d.pos, d.vel, d.mass, d.ids, NULL, d.snap.periodic, d.snap.box, d.snap.origin, 0, 0, 0, NULL, 0};
        start(&t_compute);
        if (fk_halostats_compute_members(&hin, &o, h, path, &err)) prog_fail(&err);
        stop(&t_compute);
        start(&t_com);
        if (fk_halostats_centres_members(&hin, &o, FK_CENTRE_COM, &pot, NULL, h, NULL, NULL, &err)) prog_fail(&err);
        stop(&t_com);
        if (potentials && r == 0) {
            double t = fk_now();
            if (fk_halostats_centres_members(&hin, &o, FK_CENTRE_MBP, &pot, NULL, h, NULL, NULL, &err)) prog_fail(&err);
            t_mbp = fk_now() - t;
        }
        fk_halo_order_free(&o);
    }

    /* bytes each pass reads and writes once (n particles, M members):
     * groups   IDs 8n, a GID entry each 4n (scattered), the groups 4n
     * members  the groups twice 8n, the members' indices 4M
     * compute  three passes over the members: index, position, velocity, mass (32 B), and the ID once (8 B)
     * profiles index, position, velocity, mass (32 B); the shells written (16 B), their sort: one read
     *          to count, three passes (32 B each), the runs read (16 B) */
    const uint64_t b_grp = 16 * n, b_order = 8 * n + 4 * members, b_compute = 104 * members,
                   b_com = 160 * members;
    uint64_t most = b_com > b_compute ? b_com : b_compute;
    if (b_grp > most) most = b_grp;
    char *src = fk_big_alloc(most / 2 + 64), *dst = fk_big_alloc(most / 2 + 64);
    if (!src || !dst) prog_die(EXIT_RESOURCE, "out of memory for the floor's copy");
    memset(src, 1, most / 2 + 64);
    int nt = 1;
#ifdef _OPENMP
    nt = omp_get_max_threads();
#endif
    printf("halopass %s: %" PRIu64 " particles, %" PRIu64 " groups holding %" PRIu64 " members; %d threads, best of "
           "%d; load %.2f\n\n",
           path, n, ng, members, nt, repeat, loadavg());
    printf("| pass                                 |   best s |    cpu s |        MB |   GB/s |  floor s | x floor |\n");
    printf("|--------------------------------------|----------|----------|-----------|--------|----------|---------|\n");
    row("groups: GID through the IDs", t_grp, b_grp, floor_of(b_grp, repeat, src, dst));
    row("members: counting sort", t_order, b_order, floor_of(b_order, repeat, src, dst));
    row("compute: mass, centre, velocity", t_compute, b_compute, floor_of(b_compute, repeat, src, dst));
    row("profiles about the centre of mass", t_com, b_com, floor_of(b_com, repeat, src, dst));
    if (potentials) printf("\npotential centres and profiles on the CPU (one run): %.3f s\n", t_mbp);
    free(src), free(dst), free(grp), free(h);
    free(d.pos), free(d.vel), free(d.mass), free(d.ids), free(d.gid);
    return EXIT_OK;
}
