/* sobench - times the SO grid and radius searches of halostats --so on a stream and its catalogue, by method, and compares the methods' radii. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "benchclock.h"
#include "filter.h"
#include "prog.h"
#include "snap.h"
#include "so.h"
#include "so_profile.h"

static void help(void)
{
    printf("Usage: sobench [OPTION]... STREAM CATALOGUE\n"
           "Builds the SO grid over the particles of STREAM (a fofkit stream with POS and MASS)\n"
           "and finds the SO radii (thresholds 200, 500 and 177.65 times the box's mean density:\n"
           "halostats --so --omega-m=1 --scale-factor=1) about the level-0 centres (xc, yc, zc)\n"
           "of CATALOGUE (halostats' text output) from their rc_max, REPEAT times by each\n"
           "method: the full sort, the radial bins and the default. Prints the grid's time, each\n"
           "method's best wall time, and how many radii differ from the full sort's.\n"
           "\n"
           "      --repeat=N     runs of each (default 3)\n"
           "      --method=LIST  of sort, bins, auto (default sort,bins,auto)\n");
}

static void load(const char *path, fk_snap *snap, float **pos, float **mass)
{
    fk_error err = {0};
    FILE *f = prog_open_input(path, 1, 0);
    fk_filter fl;
    enum { W_POS, W_MASS, NW };
    fk_want want[NW] = {
        [W_POS] = {"POS", FK_W_PARTICLE | FK_W_REQUIRED, "<f4", 3},
        [W_MASS] = {"MASS", FK_W_PARTICLE | FK_W_REQUIRED, "<f4", 1},
    };
    if (fk_filter_start(&fl, f, path, NULL, 0, &err) || fk_filter_read(&fl, want, NW, &err)) prog_fail(&err);
    *snap = fl.snap;
    *pos = want[W_POS].data[0], *mass = want[W_MASS].data[0];
    fk_filter_free(&fl);
    fk_input_close(f);
}

/* The level-0 rows' xc, yc, zc and rc_max of a halostats text catalogue. */
static uint64_t catalogue(const char *path, double **centre, double **r0)
{
    FILE *f = fopen(path, "r");
    if (!f) prog_die(EXIT_DATA, "%s: cannot open", path);
    int col[5] = {0}; /* level xc yc zc rc_max */
    const char *names[5] = {"level", "xc", "yc", "zc", "rc_max"};
    char line[1 << 16];
    uint64_t n = 0, cap = 0;
    *centre = NULL, *r0 = NULL;
    while (fgets(line, sizeof line, f)) {
        int k;
        char name[64];
        if (line[0] == '#') {
            if (sscanf(line, "# %d %63s", &k, name) == 2)
                for (int j = 0; j < 5; j++)
                    if (strcmp(name, names[j]) == 0) col[j] = k;
            continue;
        }
        for (int j = 0; j < 5; j++)
            if (!col[j]) prog_die(EXIT_DATA, "%s: no column %s", path, names[j]);
        double v[5] = {0};
        char *p = line;
        for (k = 1; *p; k++) {
            char *end;
            double x = strtod(p, &end);
            if (end == p) break;
            for (int j = 0; j < 5; j++)
                if (col[j] == k) v[j] = x;
            p = end;
        }
        if (v[0] != 0) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            *centre = realloc(*centre, 3 * cap * sizeof **centre), *r0 = realloc(*r0, cap * sizeof **r0);
            if (!*centre || !*r0) prog_die(EXIT_RESOURCE, "out of memory");
        }
        for (int j = 0; j < 3; j++) (*centre)[3 * n + j] = v[1 + j];
        (*r0)[n++] = v[4];
    }
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    prog_init("sobench");
    prog_std std = {0};
    int repeat = 3;
    const char *methods = "sort,bins,auto";
    static const struct option longopts[] = {
        PROG_STD_LONG, {"repeat", required_argument, 0, 'r'}, {"method", required_argument, 0, 'M'}, {0, 0, 0, 0}};
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":" PROG_STD_SHORT, longopts, NULL)) != -1) {
        if (prog_std_option(opt, optarg, &std, help, argv)) continue;
        if (opt == 'r') repeat = (int)prog_parse_int("--repeat", optarg, 1, 1000);
        if (opt == 'M') methods = optarg;
    }
    if (argc - optind != 2) prog_die(EXIT_USAGE, "needs a stream and a catalogue (--help)");
    fk_snap snap;
    float *pos = NULL, *mass = NULL;
    load(argv[optind], &snap, &pos, &mass);
    double *centre, *r0;
    uint64_t nh = catalogue(argv[optind + 1], &centre, &r0);
    double total = 0;
    for (uint64_t i = 0; i < snap.n; i++) total += mass[i];
    double mean = total / pow(snap.box, 3), rho[3] = {200 * mean, 500 * mean, 177.6528792 * mean};
    fk_so_particles p = {snap.n, pos, mass, snap.periodic, snap.box, snap.origin, NULL};
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    fk_error err = {0};
    fk_so_grid *g = NULL;
    double tgrid = INFINITY, cgrid = INFINITY;
    for (int i = 0; i < repeat; i++) {
        fk_so_grid_free(g);
        double t = prog_now(), c = cpu_now();
        if (fk_so_grid_build(&p, &g, &err)) prog_fail(&err);
        if (prog_now() - t < tgrid) tgrid = prog_now() - t;
        if (cpu_now() - c < cgrid) cgrid = cpu_now() - c;
    }
    printf("# %s: %" PRIu64 " particles, %" PRIu64 " centres, %d threads; load %.2f\n", argv[optind], snap.n, nh,
           threads, loadavg());
    printf("# times: the best of %d, wall and CPU (all threads) seconds\n", repeat);
    printf("# part    wall s   CPU s  radii differing from sort  largest relative difference\n");
    printf("%-8s %7.3f %7.3f\n", "grid", tgrid, cgrid);
    double *R = malloc(3 * nh * sizeof *R), *M = malloc(3 * nh * sizeof *M), *Rs = malloc(3 * nh * sizeof *Rs);
    if (!R || !M || !Rs) prog_die(EXIT_RESOURCE, "out of memory");
    const char *name[3] = {"sort", "bins", "auto"};
    const int meth[3] = {FK_SO_SORT, FK_SO_BINS, FK_SO_AUTO};
    int have_sort = 0;
    for (int m = 0; m < 3; m++) {
        if (!strstr(methods, name[m])) continue;
        double best = INFINITY, cbest = INFINITY;
        for (int i = 0; i < repeat; i++) {
            double t = prog_now(), c = cpu_now();
            if (fk_so_measure_method(g, nh, centre, r0, 3, rho, FK_SO_MINPART, meth[m], R, M, &err)) prog_fail(&err);
            if (prog_now() - t < best) best = prog_now() - t;
            if (cpu_now() - c < cbest) cbest = cpu_now() - c;
        }
        if (m == 0) memcpy(Rs, R, 3 * nh * sizeof *R), have_sort = 1;
        uint64_t differ = 0;
        double worst = 0;
        for (uint64_t k = 0; have_sort && k < 3 * nh; k++) {
            if (isnan(R[k]) != isnan(Rs[k]) || (!isnan(R[k]) && R[k] != Rs[k])) differ++;
            if (!isnan(R[k]) && !isnan(Rs[k]) && fabs(R[k] / Rs[k] - 1) > worst) worst = fabs(R[k] / Rs[k] - 1);
        }
        if (have_sort)
            printf("%-8s %7.3f %7.3f %10" PRIu64 " of %" PRIu64 " %12.3g\n", name[m], best, cbest, differ, 3 * nh, worst);
        else
            printf("%-8s %7.3f %7.3f %10s %12s\n", name[m], best, cbest, "-", "-");
    }
    fk_so_grid_free(g);
    free(R), free(M), free(Rs), free(centre), free(r0), free(pos), free(mass);
    return 0;
}
