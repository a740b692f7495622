/* mkuniverse - writes a tipsy snapshot of a clustered mock universe (NFW halos in a uniform background). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mock.h"
#include "prog.h"
#include "snap.h"
#include "tipsy.h"

/* Particles generated and written per block: 24 MB of arrays, plenty of
 * pieces for every thread. */
#define BLOCK (UINT64_C(1) << 20)

/* The gas's share of the mass with --gas and no value: Omega_b / Omega_m
 * of the g4-lcdm runs (0.04 / 0.3). */
#define GAS_FRACTION (0.04 / 0.3)

static void help(void)
{
    printf("Usage: mkuniverse [OPTION]...\n"
           "Write a tipsy snapshot (standard by default) of a clustered mock universe in the periodic box\n"
           "[-0.5, 0.5)^3: NFW halos with dN/dM ~ M^-1.9 in a uniform background, dark matter (and gas).\n"
           "Counts take a suffix: k M G (10^3, 10^6, 10^9) or Ki Mi Gi (2^10, 2^20, 2^30).\n"
           "\n"
           "  -n, --particles=N     particles in all (default 1Mi = 1048576; at most 2^31 - 1)\n"
           "  -s, --seed=S          random seed, 0 to 2^64 - 1 (default %u)\n"
           "      --halo-fraction=F share of the particles in halos, 0 to 1 (default 0.55)\n"
           "      --min-halo=N      smallest halo (default 32)\n"
           "      --max-halo=N      upper end of the halo mass function (default N/4)\n"
           "      --big-halo=N      add one dense halo (concentration 15) of N particles, taken out of\n"
           "                        the total before the rest is shared out (default 0: none)\n"
           "      --big-halo-c=C    the big halo's concentration (default 15)\n"
           "      --big-halo-radius=R\n"
           "                        its radius r200, in box lengths (default: from its mass)\n"
           "      --big-halo-centre=X,Y,Z\n"
           "                        its centre, each in [-0.5, 0.5) (default: a random place)\n"
           "      --gas[=F]         also one gas particle per dark matter particle, of mass F/N (the\n"
           "                        dark's (1-F)/N), offset from it by 0.05 N^(-1/3) per component\n"
           "                        (Gaussian), F in (0, 1) (default 0.04/0.3 = Omega_b/Omega_m)\n"
           "      --tile=K          the box as K^3 copies (K from 1 to 16) of one mock of N/K^3 particles,\n"
           "                        on a grid of 2^-20 of the copy's side, exact: linking at l/K finds\n"
           "                        each group of --tile=1 at l K^3 times (N a multiple of K^3)\n"
           "      --native          write native (little-endian) tipsy instead of standard\n"
           "      --catalog=FILE    write the halo catalogue (text, one halo a line) to FILE\n"
           "  -o, --output=FILE     write to FILE (default stdout)\n"
           "  -f, --force           write binary data to a terminal\n"
           "  -v, --verbose         the universe's make-up and the time taken on stderr\n"
           "  -h, --help            this help\n"
           "  -V, --version         version\n"
           "\n"
           "Exit status: 0 success, 1 I/O error, 2 usage error, 3 out of memory.\n"
           "See mkuniverse(1) and tipsy2bin(1).\n",
           FK_MOCK_SEED);
}

/* A count: digits with an optional suffix k, M, G (powers of 1000) or Ki,
 * Mi, Gi (powers of 1024), within [lo, hi]. */
static uint64_t parse_count(const char *opt, const char *arg, uint64_t lo, uint64_t hi)
{
    static const struct {
        const char *suffix;
        uint64_t mult;
    } units[] = {{"", 1}, {"k", 1000}, {"M", 1000000}, {"G", 1000000000}, {"Ki", 1u << 10}, {"Mi", 1u << 20},
                 {"Gi", 1u << 30}};
    char *end;
    errno = 0;
    if (arg[0] < '0' || arg[0] > '9') prog_usage("option %s needs a count, not '%s'", opt, arg);
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno == ERANGE) prog_usage("option %s: %s is out of range [%" PRIu64 ", %" PRIu64 "]", opt, arg, lo, hi);
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].suffix)) continue;
        if (v > hi / units[i].mult || v * units[i].mult < lo)
            prog_usage("option %s: %s is out of range [%" PRIu64 ", %" PRIu64 "]", opt, arg, lo, hi);
        return v * units[i].mult;
    }
    prog_usage("option %s needs a count (digits, then k, M, G, Ki, Mi or Gi), not '%s'", opt, arg);
}

/* Particles of the tile (box [-0.5, 0.5)) moved to copy (cx, cy, cz) of
 * K^3 in the same box: each coordinate put on a grid of 2^-20 of the
 * tile's side, then (p + 0.5 + c) / K - 0.5, every step exact in binary32
 * for K <= 16 (p + 0.5 + c < 16 on a 2^-20 grid needs 24 bits; dividing by a
 * power of two is exact, and the results lie on a grid of 2^-24 within
 * [-0.5, 0.5)), K not a power of two rounding once. So the differences of two
 * particles' coordinates in the tiled box are the tile's divided by K, and
 * linking at l / K finds every group of the tile at l in each copy (unless a
 * group of the tile wraps its whole period). */
static void tile_copy(float *pos, uint64_t count, int K, const int c[3])
{
    for (uint64_t i = 0; i < count; i++)
        for (int d = 0; d < 3; d++) {
            double q = nearbyint((double)pos[3 * i + d] * 1048576.0) / 1048576.0;
            if (q >= 0.5) q -= 1.0;
            pos[3 * i + d] = (float)((q + 0.5 + c[d]) / K - 0.5);
        }
}

static void write_catalog(const fk_mock *m, const char *path, double gas)
{
    prog_std cs = {.output = path};
    fk_output *out = prog_open_output(&cs, 0);
    FILE *f = fk_output_file(out);
    fprintf(f, "# mkuniverse halo catalogue: n %" PRIu64 " seed %" PRIu64 " halos %" PRIu64 " background %" PRIu64,
            m->p.n, m->p.seed, m->nhalo, m->nbackground);
    if (gas > 0) fprintf(f, " gas %.9g", gas);
    fputc('\n', f);
    fprintf(f, "# id first npart mass r200 c x y z vx vy vz sigma\n");
    for (uint64_t i = 0; i < m->nhalo; i++) {
        const fk_mock_halo *h = &m->halo[i];
        fprintf(f, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %.9g %.9g %.6g %.9g %.9g %.9g %.6g %.6g %.6g %.6g\n", i, h->first,
                h->npart, h->mass, h->r200, h->c, h->centre[0], h->centre[1], h->centre[2], h->vbulk[0], h->vbulk[1],
                h->vbulk[2], h->sigma);
    }
    prog_commit(out);
}

int main(int argc, char **argv)
{
    prog_init("mkuniverse");
    prog_std std = {0};
    fk_mock_params p;
    fk_mock_defaults(&p, UINT64_C(1) << 20);
    int format = FK_TIPSY_STANDARD;
    const char *catalog = NULL;
    double gas = 0; /* the gas's share of the mass; 0: no gas */
    int tile = 0;   /* --tile: copies a side; 0: none, coordinates as generated */
    enum { OPT_HALO_FRACTION = 256, OPT_MIN_HALO, OPT_MAX_HALO, OPT_BIG_HALO, OPT_BIG_C, OPT_BIG_R, OPT_BIG_AT, OPT_NATIVE,
           OPT_CATALOG, OPT_GAS, OPT_TILE };
    static const struct option longopts[] = {{"help", no_argument, 0, 'h'},
                                             {"output", required_argument, 0, 'o'},
                                             {"force", no_argument, 0, 'f'},
                                             {"verbose", no_argument, 0, 'v'},
                                             {"version", no_argument, 0, 'V'},
                                             {"particles", required_argument, 0, 'n'},
                                             {"seed", required_argument, 0, 's'},
                                             {"halo-fraction", required_argument, 0, OPT_HALO_FRACTION},
                                             {"min-halo", required_argument, 0, OPT_MIN_HALO},
                                             {"max-halo", required_argument, 0, OPT_MAX_HALO},
                                             {"big-halo", required_argument, 0, OPT_BIG_HALO},
                                             {"big-halo-c", required_argument, 0, OPT_BIG_C},
                                             {"big-halo-radius", required_argument, 0, OPT_BIG_R},
                                             {"big-halo-centre", required_argument, 0, OPT_BIG_AT},
                                             {"native", no_argument, 0, OPT_NATIVE},
                                             {"gas", optional_argument, 0, OPT_GAS},
                                             {"catalog", required_argument, 0, OPT_CATALOG},
                                             {"tile", required_argument, 0, OPT_TILE},
                                             {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":ho:fvVn:s:", longopts, NULL)) != -1) {
        if (prog_std_option(c, optarg, &std, help, argv)) continue;
        switch (c) {
        case 'n': p.n = parse_count("-n", optarg, 1, INT32_MAX); break;
        case 's': p.seed = parse_count("--seed", optarg, 0, UINT64_MAX); break;
        case OPT_HALO_FRACTION: p.halo_fraction = prog_parse_double("--halo-fraction", optarg, 0, 1); break;
        case OPT_MIN_HALO: p.min_halo = parse_count("--min-halo", optarg, 1, INT32_MAX); break;
        case OPT_MAX_HALO: p.max_halo = parse_count("--max-halo", optarg, 1, INT32_MAX); break;
        case OPT_BIG_HALO: p.big_halo = parse_count("--big-halo", optarg, 0, INT32_MAX); break;
        case OPT_BIG_C: p.big_c = prog_parse_positive("--big-halo-c", optarg, 1000); break;
        case OPT_BIG_R: p.big_r200 = prog_parse_positive("--big-halo-radius", optarg, 0.5); break;
        case OPT_BIG_AT:
            if (prog_parse_list("--big-halo-centre", optarg, p.big_centre, 3, -0.5, 0.5) != 3)
                prog_usage("option --big-halo-centre needs three numbers X,Y,Z, not '%s'", optarg);
            for (int d = 0; d < 3; d++)
                if (p.big_centre[d] == 0.5)
                    prog_usage("option --big-halo-centre: %s is outside the box [-0.5, 0.5)", optarg);
            p.big_placed = 1;
            break;
        case OPT_NATIVE: format = FK_TIPSY_NATIVE; break;
        case OPT_GAS:
            gas = optarg ? prog_parse_double("--gas", optarg, 0, 1) : GAS_FRACTION;
            if (!(gas > 0 && gas < 1)) prog_usage("option --gas: the gas's share F must be above 0 and below 1, not %s", optarg);
            break;
        case OPT_TILE: tile = (int)parse_count("--tile", optarg, 1, 16); break;
        case OPT_CATALOG:
            if (optarg[0] == '\0' || (optarg[0] == '-' && optarg[1] != '\0'))
                prog_usage("option --catalog needs a file name, not '%s'", optarg);
            catalog = optarg;
            break;
        }
    }
    if (optind < argc) prog_usage("unexpected argument '%s' (mkuniverse reads no input)", argv[optind]);
    const uint64_t ntotal = p.n, copies = tile ? (uint64_t)tile * tile * tile : 1;
    if (tile) {
        if (p.n % copies)
            prog_usage("option --tile=%d: the %" PRIu64 " particles are not a multiple of %" PRIu64 " copies", tile, p.n,
                       copies);
        if (catalog) prog_usage("options --tile and --catalog: the catalogue of a tiled box is not written");
        p.n /= copies; /* the tile's; --max-halo and --big-halo apply to it */
    }
    if (p.big_halo > p.n) prog_usage("option --big-halo: %" PRIu64 " is more than the %" PRIu64 " particles", p.big_halo, p.n);
    if (!p.big_halo && (p.big_c > 0 || p.big_r200 > 0 || p.big_placed))
        prog_usage("options --big-halo-c, --big-halo-radius and --big-halo-centre shape the halo of --big-halo, which is not given");
    if (p.max_halo && p.max_halo < p.min_halo)
        prog_usage("option --max-halo: %" PRIu64 " is below the smallest halo (%" PRIu64 ")", p.max_halo, p.min_halo);

    fk_error err = {0};
    fk_output *out = prog_open_output(&std, 1);
    double t0 = prog_now();
    fk_mock m;
    if (fk_mock_plan(&m, &p, &err)) prog_fail(&err);
    if (catalog) write_catalog(&m, catalog, gas);

    uint64_t block = p.n < BLOCK ? p.n : BLOCK;
    float *pos = malloc(block * 12), *vel = malloc(block * 12);
    if (!pos || !vel) prog_die(EXIT_RESOURCE, "out of memory");
    FILE *f = fk_output_file(out);
    const char *name = fk_output_name(out);
    /* with gas, n gas particles first (tipsy's order), then the n dark ones: 2n <= 2^32 - 2 fits */
    uint32_t ngas = gas > 0 ? (uint32_t)ntotal : 0;
    fk_tipsy_header h = {.time = 1.0, .nbodies = (uint32_t)ntotal + ngas, .ndim = 3, .ntype = {ngas, (uint32_t)ntotal, 0},
                         .format = format, .header_size = 32};
    if (fk_tipsy_write_header(f, name, &h, &err)) prog_fail(&err);
    double tgen = 0;
    for (int type = gas > 0 ? FK_GAS : FK_DARK; type <= FK_DARK; type++) {
        float mass = (float)((type == FK_GAS ? gas : 1 - gas) / (double)ntotal);
        for (uint64_t k = 0; k < copies; k++) { /* copy k at (k % K, k / K % K, k / K^2) */
            const int cell[3] = {tile ? (int)(k % tile) : 0, tile ? (int)(k / tile % tile) : 0, tile ? (int)(k / tile / tile) : 0};
            for (uint64_t at = 0; at < p.n; at += block) {
                uint64_t count = p.n - at < block ? p.n - at : block;
                double t = prog_now();
                if (type == FK_GAS)
                    fk_mock_generate_gas(&m, at, count, pos, vel);
                else
                    fk_mock_generate(&m, at, count, pos, vel);
                if (tile) tile_copy(pos, count, tile, cell);
                tgen += prog_now() - t;
                if (fk_tipsy_write_particles(f, name, format, type, count, pos, vel, NULL, mass, &err)) prog_fail(&err);
            }
        }
    }
    prog_commit(out);
    double t1 = prog_now();
    uint64_t nbig = p.big_halo ? 1 : 0, nh = m.nhalo - nbig;
    char gasinfo[96] = "";
    if (gas > 0)
        snprintf(gasinfo, sizeof gasinfo, "; and %" PRIu64 " gas particles, %.6g of the mass", ntotal, gas);
    if (tile) prog_info("%" PRIu64 " copies of a box of %" PRIu64 " particles, %d a side", copies, p.n, tile);
    prog_info("%" PRIu64 " particles (%s tipsy, seed %" PRIu64 "): %" PRIu64 " halos of %" PRIu64 " to %" PRIu64
              " particles, %" PRIu64 " in all; big halo %" PRIu64 "; background %" PRIu64 "%s; generated in %.3f s, "
              "%.3f s in all (%.3g particles/s)",
              ntotal, fk_tipsy_format_name(format), p.seed, nh, nh ? m.halo[m.nhalo - 1].npart : 0,
              nh ? m.halo[nbig].npart : 0, m.nhalo_particles - p.big_halo, p.big_halo, m.nbackground, gasinfo, tgen,
              t1 - t0, (double)(ntotal + ngas) / (t1 - t0 + 1e-12));
    free(pos);
    free(vel);
    fk_mock_free(&m);
    return EXIT_OK;
}
