/* potbench - the tree's potentials against exact sums on the groups of a grouped stream: errors, minima, times (for halostats(1)'s tolerance). */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "potential.h"
#include "prog.h"
#include "snap.h"
#include "stream.h"

static void help(void)
{
    printf("Usage: potbench [OPTION]... [STREAM]\n"
           "For every group of level 0 of a grouped fofkit stream (from groups) with MIN to MAX\n"
           "members: the exact potentials (all pairs), then for every opening angle the tree's,\n"
           "its largest and rms relative error over the members, its largest error relative to\n"
           "the minimum's depth (max |error| / |least phi|: what the candidate window must cover),\n"
           "whether the tree's own minimum\n"
           "is the exact one (and the exact potential's relative excess where not), and whether\n"
           "the minimum after the exact candidates is. One line per group and angle, then a\n"
           "summary per angle.\n"
           "\n"
           "      --min=N        smallest group (default 2000)\n"
           "      --max=N        largest group (default 200000: exact sums are O(n^2))\n"
           "      --theta=LIST   opening angles (default 0.3,0.5,0.7,1)\n"
           "      --softening=EPS   (default 0.05 box / n^(1/3), as halostats)\n");
}

typedef struct input {
    fk_snap snap;
    float *pos, *mass;
    uint64_t *ids;
    uint32_t *gid;
} input;

static void load(const char *path, input *in)
{
    fk_error err = {0};
    FILE *f = prog_open_input(path, 1, 0);
    fk_reader *r;
    fk_chunk c;
    char *text;
    if (fk_reader_open(&r, f, path, &err) || fk_snap_read(r, &c, &in->snap, &text, path, &err)) prog_fail(&err);
    free(text);
    int st;
    while ((st = fk_reader_next(r, &c, &err)) == 1) {
        void *raw = NULL;
        if (strcmp(c.tag, "POS") == 0 || strcmp(c.tag, "MASS") == 0) {
            if (fk_reader_load(r, &raw, &err)) prog_fail(&err);
            *(c.tag[0] == 'P' ? &in->pos : &in->mass) = raw;
        } else if (strcmp(c.tag, "ID") == 0) {
            if (fk_snap_load_ids(r, &c, &in->ids, &err)) prog_fail(&err);
        } else if (strcmp(c.tag, "GID") == 0 && c.level == 0) {
            if (fk_reader_load(r, &raw, &err)) prog_fail(&err);
            in->gid = raw;
        }
    }
    if (st < 0) prog_fail(&err);
    fk_reader_close(r);
    fk_input_close(f);
    if (!in->pos || !in->mass || !in->ids || !in->gid) prog_die(EXIT_DATA, "%s: needs POS, MASS, ID and GID", path);
}

int main(int argc, char **argv)
{
    prog_init("potbench");
    prog_std std = {0};
    uint64_t nmin = 2000, nmax = 200000;
    double thetas[8] = {0.3, 0.5, 0.7, 1};
    int nth = 4;
    double eps = 0;
    static const struct option longopts[] = {PROG_STD_LONG,
                                             {"min", required_argument, 0, 'm'},
                                             {"max", required_argument, 0, 'M'},
                                             {"theta", required_argument, 0, 't'},
                                             {"softening", required_argument, 0, 'e'},
                                             {0, 0, 0, 0}};
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":" PROG_STD_SHORT, longopts, NULL)) != -1) {
        if (prog_std_option(opt, optarg, &std, help, argv)) continue;
        if (opt == 'm') nmin = (uint64_t)prog_parse_int("--min", optarg, 1, INT64_MAX);
        if (opt == 'M') nmax = (uint64_t)prog_parse_int("--max", optarg, 1, INT64_MAX);
        if (opt == 't') nth = prog_parse_list("--theta", optarg, thetas, 8, 1e-3, 1);
        if (opt == 'e') eps = prog_parse_double("--softening", optarg, DBL_MIN, DBL_MAX);
    }
    const char *path = prog_one_input(argc, argv, optind);
    input in = {0};
    load(path, &in);
    const uint64_t n = in.snap.n;
    if (eps == 0) eps = 0.05 * in.snap.box / cbrt((double)(n ? n : 1));
    uint32_t ng = 0;
    for (uint64_t i = 0; i < n; i++)
        if (in.gid[in.ids[i]] > ng) ng = in.gid[in.ids[i]];
    uint64_t *count = calloc(ng + 2, sizeof *count), *ref = malloc((ng + 1) * sizeof *ref);
    if (!count || !ref) prog_die(EXIT_RESOURCE, "out of memory");
    for (uint64_t i = n; i-- > 0;) {
        uint32_t g = in.gid[in.ids[i]];
        count[g]++;
        ref[g] = i;
    }
    printf("# %s: %" PRIu64 " particles, %" PRIu32 " groups, eps %.6g; groups of %" PRIu64 " to %" PRIu64 " members\n",
           path, n, ng, eps, nmin, nmax);
    printf("# group n theta | maxrel rmsrel maxdepth | tree_min exact? excess | after candidates: exact? candidates | "
           "t_exact t_tree t_min (s)\n");
    double worst[8] = {0}, worst_excess[8] = {0}, worst_depth[8] = {0};
    int wrong_tree[8] = {0}, wrong_min[8] = {0}, groups = 0;
    for (uint32_t g = 1; g <= ng; g++) {
        uint64_t m = count[g];
        if (m < nmin || m > nmax) continue;
        groups++;
        double *x = malloc(m * 8), *y = malloc(m * 8), *z = malloc(m * 8), *ms = malloc(m * 8);
        double *pe = malloc(m * 8), *pt = malloc(m * 8);
        if (!x || !y || !z || !ms || !pe || !pt) prog_die(EXIT_RESOURCE, "out of memory");
        uint64_t k = 0;
        for (uint64_t i = 0; i < n; i++) {
            if (in.gid[in.ids[i]] != g) continue;
            double d[3];
            for (int e = 0; e < 3; e++) {
                d[e] = (double)in.pos[3 * i + e] - in.pos[3 * ref[g] + e];
                if (in.snap.periodic) d[e] -= in.snap.box * nearbyint(d[e] / in.snap.box);
            }
            x[k] = d[0], y[k] = d[1], z[k] = d[2], ms[k] = in.mass[i];
            k++;
        }
        fk_pot_members mem = {m, x, y, z, ms};
        double t0 = prog_now();
        fk_pot_exact(&mem, 1, eps, pe);
        double te = prog_now() - t0;
        uint64_t best = 0;
        for (uint64_t i = 1; i < m; i++)
            if (pe[i] < pe[best]) best = i;
        for (int q = 0; q < nth; q++) {
            fk_pot_params p;
            fk_pot_defaults(&p);
            p.eps = eps, p.theta = thetas[q], p.nexact = 0;
            fk_error err = {0};
            t0 = prog_now();
            if (fk_pot_tree(&mem, &p, pt, NULL, &err)) prog_fail(&err);
            double tt = prog_now() - t0;
            fk_pot_min mn;
            t0 = prog_now();
            if (fk_pot_minimum(&mem, &p, &mn, &err)) prog_fail(&err);
            double tm = prog_now() - t0;
            double mx = 0, rms = 0, depth = 0;
            uint64_t tb = 0;
            for (uint64_t i = 0; i < m; i++) {
                double r = fabs(pt[i] - pe[i]) / fabs(pe[i]);
                mx = r > mx ? r : mx;
                depth = fabs(pt[i] - pe[i]) > depth ? fabs(pt[i] - pe[i]) : depth;
                rms += r * r;
                if (pt[i] < pt[tb]) tb = i;
            }
            double excess = (pe[tb] - pe[best]) / fabs(pe[best]);
            depth /= fabs(pe[best]);
            worst_depth[q] = depth > worst_depth[q] ? depth : worst_depth[q];
            worst[q] = mx > worst[q] ? mx : worst[q];
            worst_excess[q] = excess > worst_excess[q] ? excess : worst_excess[q];
            wrong_tree[q] += tb != best;
            wrong_min[q] += mn.index != best;
            printf("%" PRIu32 " %" PRIu64 " %.2f | %.2e %.2e %.2e | %s %.2e | %s %" PRIu32 " | %.3f %.3f %.3f\n", g, m,
                   thetas[q], mx, sqrt(rms / (double)m), depth, tb == best ? "yes" : "NO", excess,
                   mn.index == best ? "yes" : "NO", mn.candidates, te, tt, tm);
        }
        free(x), free(y), free(z), free(ms), free(pe), free(pt);
    }
    for (int q = 0; q < nth; q++) {
        fk_pot_params p;
        fk_pot_defaults(&p);
        p.theta = thetas[q];
        printf("# theta %.2f: %d groups; largest relative error %.2e, largest error / |least phi| %.2e (window tol "
               "%.2e); tree minimum not the exact one in %d (largest excess %.2e); after the candidates: %d\n",
               thetas[q], groups, worst[q], worst_depth[q], fk_pot_tolerance(&p), wrong_tree[q], worst_excess[q],
               wrong_min[q]);
    }
    free(count), free(ref), free(in.pos), free(in.mass), free(in.ids), free(in.gid);
    return EXIT_OK;
}
