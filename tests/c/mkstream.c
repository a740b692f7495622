/* mkstream.c - test helper: writes a fofkit stream from a small ASCII description (particles, SINK, GID, text chunks). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prog.h"
#include "snap.h"
#include "stream.h"

/*
 * Input: one directive a line; '#' starts a comment, blank lines are skipped.
 *   box B                 side of the box (default 1)
 *   origin O              its lower corner on every axis (default 0)
 *   periodic 0|1          (default 1)
 *   time T                (default 1)
 *   nsource N             particles in the source snapshot (default: as many
 *                         as p lines); the ones not given count as dark
 *   p X Y Z [VX VY VZ [MASS [TYPE [ID]]]]
 *                         one particle, in stream order; defaults: velocity 0,
 *                         mass 1, type 1 (dark; 0 gas, 2 star), ID its rank
 *                         among the p lines
 *   sink S S ...          values of a SINK chunk (<u4, per particle), in
 *                         order; several lines append; written as given, so
 *                         values may be out of range or form cycles
 *   gid G G ...           values of a GID chunk (<u4, flags 0), the same way
 *   text TAG [KEY VALUE]...   a text chunk of "KEY VALUE" lines, e.g.
 *                         text LINK l 0.1 b 0.2 periodic 1
 * Chunks are written in the order SNAP POS VEL MASS TYPE ID, the text chunks
 * in input order, SINK, GID. Nothing is checked beyond what is needed to
 * write a stream: the point is to make bad streams too.
 */

static void help(void)
{
    printf("Usage: mkstream [OPTION]... [DESCRIPTION]\n"
           "Writes a fofkit stream described by DESCRIPTION (or stdin), one directive a line:\n"
           "  box B | origin O | periodic 0|1 | time T | nsource N\n"
           "  p X Y Z [VX VY VZ [MASS [TYPE [ID]]]]   a particle (defaults 0 0 0, 1, 1 dark, its rank)\n"
           "  sink S...    SINK values (appended)       gid G...   GID values (appended)\n"
           "  text TAG [KEY VALUE]...                   a text chunk\n"
           "\n"
           "  --omit=TAG[,TAG]   leave these chunks out (SNAP, POS, VEL, MASS, TYPE, ID, ...)\n"
           "  --level=TAG=K      give chunk TAG level K (repeatable)\n"
           "  --id-u8            write ID as <u8 (default: <u4 unless nsource > 2^31)\n"
           "  -o FILE, -f, -z[N], -v, -h, -V   as in every fofkit program\n");
}

typedef struct vec {
    void *p;
    size_t n, cap, size;
} vec;

static void *vec_push(vec *v)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 64;
        v->p = realloc(v->p, v->cap * v->size);
        if (!v->p) prog_die(EXIT_RESOURCE, "out of memory");
    }
    return (char *)v->p + v->size * v->n++;
}

typedef struct particle {
    float x[3], v[3], m;
    uint8_t type;
    uint64_t id;
} particle;

typedef struct textchunk {
    char tag[FK_TAG_MAX + 1];
    char *text;
} textchunk;

static int lineno;

static double num(const char *tok)
{
    char *end;
    errno = 0;
    if (!tok) prog_die(EXIT_DATA, "line %d: a number is missing", lineno);
    double v = strtod(tok, &end);
    if (end == tok || *end || errno == ERANGE) prog_die(EXIT_DATA, "line %d: '%s' is not a number", lineno, tok);
    return v;
}

static uint64_t count(const char *tok)
{
    double v = num(tok);
    if (v < 0 || v != floor(v) || v > 1.8e19) prog_die(EXIT_DATA, "line %d: '%s' is not a count", lineno, tok);
    return (uint64_t)v;
}

/* Levels set with --level, by tag. */
static struct {
    char tag[FK_TAG_MAX + 1];
    uint32_t level;
} levels[16];
static int nlevels;
static char omitted[256];

static int omit(const char *tag)
{
    char t[FK_TAG_MAX + 3];
    snprintf(t, sizeof t, ",%s,", tag);
    return strstr(omitted, t) != NULL;
}

static void put(fk_writer *w, const char *tag, const char *dtype, uint32_t flags, uint64_t rows, uint32_t cols,
                const void *data)
{
    fk_error err = {0};
    fk_chunk c;
    if (omit(tag)) return;
    fk_chunk_init(&c, tag, dtype, flags, rows, cols);
    for (int i = 0; i < nlevels; i++)
        if (strcmp(levels[i].tag, tag) == 0) c.level = levels[i].level;
    if (fk_writer_put(w, &c, data ? data : "", &err)) prog_fail(&err);
}

int main(int argc, char **argv)
{
    prog_init("mkstream");
    prog_std std = {0};
    int id8 = 0;
    static const struct option longopts[] = {PROG_STD_LONG,
                                             {"omit", required_argument, 0, 'O'},
                                             {"level", required_argument, 0, 'L'},
                                             {"id-u8", no_argument, 0, '8'},
                                             {0, 0, 0, 0}};
    strcpy(omitted, ",");
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":" PROG_STD_SHORT, longopts, NULL)) != -1) {
        if (prog_std_option(opt, optarg, &std, help, argv)) continue;
        if (opt == 'O') {
            if (strlen(omitted) + strlen(optarg) + 2 >= sizeof omitted) prog_usage("--omit: too many tags");
            strcat(omitted, optarg);
            strcat(omitted, ",");
        } else if (opt == 'L') {
            const char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || eq - optarg > FK_TAG_MAX || nlevels == 16)
                prog_usage("option --level needs TAG=K, not '%s'", optarg);
            snprintf(levels[nlevels].tag, sizeof levels[nlevels].tag, "%.*s", (int)(eq - optarg), optarg);
            levels[nlevels++].level = (uint32_t)prog_parse_int("--level", eq + 1, 0, UINT32_MAX);
        } else if (opt == '8') {
            id8 = 1;
        }
    }
    const char *path = prog_one_input(argc, argv, optind);
    FILE *in = prog_open_input(path, 0, 0);

    fk_snap s;
    memset(&s, 0, sizeof s);
    s.box = 1;
    s.periodic = 1;
    s.time = 1;
    snprintf(s.source, sizeof s.source, "mkstream %s", path);
    int have_nsource = 0;
    vec ps = {.size = sizeof(particle)}, sink = {.size = 4}, gid = {.size = 4}, texts = {.size = sizeof(textchunk)};

    char line[65536];
    while (fgets(line, sizeof line, in)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *save = NULL, *tok[64];
        int nt = 0;
        for (char *t = strtok_r(line, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
            if (nt == 64) prog_die(EXIT_DATA, "line %d: too many fields (split it)", lineno);
            tok[nt++] = t;
        }
        if (nt == 0) continue;
        const char *d = tok[0];
        if (strcmp(d, "box") == 0) {
            s.box = num(nt > 1 ? tok[1] : NULL);
        } else if (strcmp(d, "origin") == 0) {
            s.origin = num(nt > 1 ? tok[1] : NULL);
        } else if (strcmp(d, "periodic") == 0) {
            s.periodic = (int)count(nt > 1 ? tok[1] : NULL);
        } else if (strcmp(d, "time") == 0) {
            s.time = num(nt > 1 ? tok[1] : NULL);
        } else if (strcmp(d, "nsource") == 0) {
            s.nsource = count(nt > 1 ? tok[1] : NULL);
            have_nsource = 1;
        } else if (strcmp(d, "p") == 0) {
            if (nt < 4 || nt > 11) prog_die(EXIT_DATA, "line %d: p needs 3 to 10 numbers", lineno);
            particle *p = vec_push(&ps);
            double f[10] = {0, 0, 0, 0, 0, 0, 1, FK_DARK, (double)(ps.n - 1)};
            for (int k = 1; k < nt; k++) f[k - 1] = num(tok[k]);
            for (int k = 0; k < 3; k++) p->x[k] = (float)f[k], p->v[k] = (float)f[3 + k];
            p->m = (float)f[6];
            p->type = (uint8_t)count(nt > 8 ? tok[8] : "1");
            p->id = nt > 9 ? count(tok[9]) : ps.n - 1;
            if (p->type > 2) prog_die(EXIT_DATA, "line %d: type must be 0, 1 or 2", lineno);
        } else if (strcmp(d, "sink") == 0 || strcmp(d, "gid") == 0) {
            vec *v = d[0] == 's' ? &sink : &gid;
            for (int k = 1; k < nt; k++) {
                uint64_t x = count(tok[k]);
                if (x > UINT32_MAX) prog_die(EXIT_DATA, "line %d: %s does not fit 32 bits", lineno, tok[k]);
                *(uint32_t *)vec_push(v) = (uint32_t)x;
            }
        } else if (strcmp(d, "text") == 0) {
            if (nt < 2 || nt % 2) prog_die(EXIT_DATA, "line %d: text needs a tag, then KEY VALUE pairs", lineno);
            textchunk *t = vec_push(&texts);
            snprintf(t->tag, sizeof t->tag, "%s", tok[1]);
            size_t len = 1;
            for (int k = 2; k < nt; k++) len += strlen(tok[k]) + 1;
            t->text = malloc(len);
            if (!t->text) prog_die(EXIT_RESOURCE, "out of memory");
            t->text[0] = '\0';
            for (int k = 2; k < nt; k += 2) sprintf(t->text + strlen(t->text), "%s %s\n", tok[k], tok[k + 1]);
        } else {
            prog_die(EXIT_DATA, "line %d: unknown directive '%s'", lineno, d);
        }
    }
    if (ferror(in)) prog_die(EXIT_DATA, "read error");
    fk_input_close(in);

    uint64_t n = ps.n;
    particle *p = ps.p;
    s.n = n;
    for (uint64_t i = 0; i < n; i++) s.ntype[p[i].type]++;
    if (!have_nsource) s.nsource = n;
    if (s.nsource < n) prog_die(EXIT_DATA, "nsource %" PRIu64 " is below the %" PRIu64 " particles given", s.nsource, n);
    for (int t = 0; t < 3; t++) s.nsource_type[t] = s.ntype[t];
    s.nsource_type[FK_DARK] += s.nsource - n;

    float *pos = malloc(n * 12 + 1), *vel = malloc(n * 12 + 1), *mass = malloc(n * 4 + 1);
    uint8_t *type = malloc(n + 1);
    uint64_t *id64 = malloc(n * 8 + 1);
    uint32_t *id32 = malloc(n * 4 + 1);
    if (!pos || !vel || !mass || !type || !id64 || !id32) prog_die(EXIT_RESOURCE, "out of memory");
    for (uint64_t i = 0; i < n; i++) {
        memcpy(pos + 3 * i, p[i].x, 12);
        memcpy(vel + 3 * i, p[i].v, 12);
        mass[i] = p[i].m;
        type[i] = p[i].type;
        id64[i] = p[i].id;
        id32[i] = (uint32_t)p[i].id;
    }
    const char *idtype = id8 ? "<u8" : fk_id_dtype(s.nsource);

    fk_error err = {0};
    char *snaptext;
    fk_output *out = prog_open_output(&std, 1);
    fk_writer *w;
    if (fk_snap_format(&s, &snaptext, &err) || fk_writer_open(&w, fk_output_file(out), std.zlevel, &err))
        prog_fail(&err);
    put(w, "SNAP", "|u1", FK_CF_TEXT, strlen(snaptext), 1, snaptext);
    put(w, "POS", "<f4", FK_CF_PARTICLE, n, 3, pos);
    put(w, "VEL", "<f4", FK_CF_PARTICLE, n, 3, vel);
    put(w, "MASS", "<f4", FK_CF_PARTICLE, n, 1, mass);
    put(w, "TYPE", "|u1", FK_CF_PARTICLE, n, 1, type);
    put(w, "ID", idtype, FK_CF_PARTICLE, n, 1, strcmp(idtype, "<u8") == 0 ? (void *)id64 : (void *)id32);
    for (size_t k = 0; k < texts.n; k++) {
        textchunk *t = (textchunk *)texts.p + k;
        put(w, t->tag, "|u1", FK_CF_TEXT, strlen(t->text), 1, t->text);
        free(t->text);
    }
    if (sink.n) put(w, "SINK", "<u4", FK_CF_PARTICLE, sink.n, 1, sink.p);
    if (gid.n) put(w, "GID", "<u4", 0, gid.n, 1, gid.p);
    if (fk_writer_finish(w, &err)) prog_fail(&err);
    fk_writer_free(w);
    prog_commit(out);
    prog_info("%" PRIu64 " particles, %zu sink values, %zu gid values, %zu text chunks", n, sink.n, gid.n, texts.n);
    free(snaptext);
    free(pos), free(vel), free(mass), free(type), free(id64), free(id32);
    free(ps.p), free(sink.p), free(gid.p), free(texts.p);
    return EXIT_OK;
}
