/* ascii2tipsy.c - test helper: writes a tipsy file from text lines "type x y z [vx vy vz [mass]]", exactly. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prog.h"
#include "snap.h"
#include "tipsy.h"

static void help(void)
{
    printf("Usage: ascii2tipsy [OPTION]... [FILE]\n"
           "Write a tipsy file (standard by default) from text (FILE or stdin), one particle a line:\n"
           "    type x y z [vx vy vz [mass]]\n"
           "type is g, d, s (or 0, 1, 2, or gas, dark, star); '#' starts a comment; blank lines are\n"
           "skipped. Numbers are parsed with strtof, so each stored float is the float nearest to the\n"
           "decimal text (nan and inf are accepted, to make bad files). Velocities default to 0, the\n"
           "mass to 1/N (N particles in all). The file holds the gas lines first, then dark, then\n"
           "star, each in input order: a particle's index in the file (its ID) follows from that.\n"
           "\n"
           "      --native         little-endian (native) tipsy instead of standard (big-endian)\n"
           "      --time=T         header time (default 1)\n"
           "      --pad=P          header pad field (default 0)\n"
           "      --ndim=D         header ndim (default 3; to make bad files)\n"
           "      --nbodies=N      header nbodies (default the number of particles; to make bad files)\n"
           "  -o, --output=FILE    write to FILE (default stdout)\n"
           "  -f, --force          write binary data to a terminal\n"
           "  -h, --help           this help\n");
}

typedef struct particle {
    int type;
    float v[7]; /* x y z vx vy vz mass */
    int has_mass;
} particle;

static int parse_type(const char *t)
{
    static const char *names[3][3] = {{"g", "0", "gas"}, {"d", "1", "dark"}, {"s", "2", "star"}};
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 3; j++)
            if (!strcmp(t, names[k][j])) return k;
    return -1;
}

/* Parses one line into p; returns 1 for a particle, 0 for a blank or comment line. */
static int parse_line(char *line, long lineno, particle *p)
{
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char *save = NULL, *tok[9];
    int ntok = 0;
    for (char *t = strtok_r(line, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
        if (ntok == 8) prog_die(EXIT_DATA, "line %ld: more than 8 fields", lineno);
        tok[ntok++] = t;
    }
    if (ntok == 0) return 0;
    if (ntok != 4 && ntok != 7 && ntok != 8)
        prog_die(EXIT_DATA, "line %ld: %d fields; expected type x y z [vx vy vz [mass]]", lineno, ntok);
    memset(p, 0, sizeof *p);
    if ((p->type = parse_type(tok[0])) < 0) prog_die(EXIT_DATA, "line %ld: unknown type '%s'", lineno, tok[0]);
    for (int k = 1; k < ntok; k++) {
        char *end;
        p->v[k - 1] = strtof(tok[k], &end);
        if (end == tok[k] || *end) prog_die(EXIT_DATA, "line %ld: '%s' is not a number", lineno, tok[k]);
    }
    p->has_mass = ntok == 8;
    return 1;
}

int main(int argc, char **argv)
{
    prog_init("ascii2tipsy");
    prog_std std = {0};
    int format = FK_TIPSY_STANDARD;
    double time = 1.0;
    long long pad = 0, ndim = 3, nbodies = -1;
    enum { OPT_NATIVE = 256, OPT_TIME, OPT_PAD, OPT_NDIM, OPT_NBODIES };
    static const struct option longopts[] = {{"help", no_argument, 0, 'h'},
                                             {"output", required_argument, 0, 'o'},
                                             {"force", no_argument, 0, 'f'},
                                             {"native", no_argument, 0, OPT_NATIVE},
                                             {"time", required_argument, 0, OPT_TIME},
                                             {"pad", required_argument, 0, OPT_PAD},
                                             {"ndim", required_argument, 0, OPT_NDIM},
                                             {"nbodies", required_argument, 0, OPT_NBODIES},
                                             {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":ho:f", longopts, NULL)) != -1) {
        if (prog_std_option(c, optarg, &std, help, argv)) continue;
        switch (c) {
        case OPT_NATIVE: format = FK_TIPSY_NATIVE; break;
        case OPT_TIME: time = prog_parse_double("--time", optarg, -1e300, 1e300); break;
        case OPT_PAD: pad = prog_parse_int("--pad", optarg, INT32_MIN, INT32_MAX); break;
        case OPT_NDIM: ndim = prog_parse_int("--ndim", optarg, INT32_MIN, INT32_MAX); break;
        case OPT_NBODIES: nbodies = prog_parse_int("--nbodies", optarg, 0, UINT32_MAX); break;
        }
    }
    const char *in = prog_one_input(argc, argv, optind);
    FILE *fin = prog_open_input(in, 0, 0);

    particle *parts = NULL;
    size_t n = 0, cap = 0;
    char *line = NULL;
    size_t linecap = 0;
    long lineno = 0;
    while (getline(&line, &linecap, fin) >= 0) {
        lineno++;
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            if (!(parts = realloc(parts, cap * sizeof *parts))) prog_die(EXIT_RESOURCE, "out of memory");
        }
        n += (size_t)parse_line(line, lineno, &parts[n]);
    }
    if (ferror(fin)) prog_die(EXIT_DATA, "%s: read error", in);
    free(line);
    fk_input_close(fin);

    /* File order: gas, dark, star, each in input order (a stable partition). */
    float *pos = malloc(3 * n * sizeof *pos + 1), *vel = malloc(3 * n * sizeof *vel + 1);
    float *mass = malloc(n * sizeof *mass + 1);
    if (!pos || !vel || !mass) prog_die(EXIT_RESOURCE, "out of memory");
    size_t at = 0;
    uint32_t count[3] = {0, 0, 0};
    for (int t = 0; t < 3; t++)
        for (size_t i = 0; i < n; i++) {
            if (parts[i].type != t) continue;
            for (int d = 0; d < 3; d++) {
                pos[3 * at + d] = parts[i].v[d];
                vel[3 * at + d] = parts[i].v[3 + d];
            }
            mass[at] = parts[i].has_mass ? parts[i].v[6] : (float)(1.0 / (double)n);
            at++;
            count[t]++;
        }

    fk_output *out = prog_open_output(&std, 1);
    FILE *f = fk_output_file(out);
    const char *name = fk_output_name(out);
    fk_error err = {0};
    fk_tipsy_header h = {.time = time, .nbodies = nbodies >= 0 ? (uint32_t)nbodies : (uint32_t)n,
                         .ndim = (int32_t)ndim, .pad = (int32_t)pad, .format = format, .header_size = 32};
    for (int t = 0; t < 3; t++) h.ntype[t] = count[t];
    int st = fk_tipsy_write_header(f, name, &h, &err);
    size_t first = 0;
    for (int t = 0; t < 3 && !st; first += count[t], t++)
        st = fk_tipsy_write_particles(f, name, format, t, count[t], pos + 3 * first, vel + 3 * first, mass + first,
                                      0.0f, &err);
    if (st) prog_fail(&err);
    prog_commit(out);
    free(parts);
    free(pos);
    free(vel);
    free(mass);
    return EXIT_OK;
}
