/* gsnapout.c - what hdf52bin and gadget2bin share: their snapshot options and writing the stream. */
#include "gsnapout.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "snap.h"
#include "stream.h"

/* Parses "0,1", "gas,dark" or "all" into a mask of Gadget types. */
static unsigned parse_types(const char *arg)
{
    static const char *names[FK_GSNAP_NTYPES] = {"gas", "dark", "disk", "bulge", "star", "bndry", "neutrino"};
    char buf[256];
    unsigned mask = 0;
    size_t n = strlen(arg);
    if (n >= sizeof buf || n == 0 || arg[0] == ',' || arg[n - 1] == ',' || strstr(arg, ",,"))
        prog_usage("option --types needs a comma-separated list of types (0-6 or names), not '%s'", arg);
    snprintf(buf, sizeof buf, "%s", arg);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int k = 0; k < FK_GSNAP_NTYPES; k++)
            if (!strcmp(t, names[k])) found = k;
        if (t[0] >= '0' && t[0] < '0' + FK_GSNAP_NTYPES && t[1] == '\0') found = t[0] - '0';
        if (!strcmp(t, "all"))
            mask |= (1u << FK_GSNAP_NTYPES) - 1;
        else if (found >= 0)
            mask |= 1u << found;
        else
            prog_usage("option --types: unknown particle type '%s' (0-6, gas, dark, disk, bulge, star, bndry, "
                       "neutrino or all)", t);
    }
    return mask;
}

/* Handles one of the snapshot options (returns 1) or returns 0. */
static int gsnapout_option(int c, const char *arg, fk_gsnap_opts *o)
{
    switch (c) {
    case 't': o->types = parse_types(arg); return 1;
    case GS_BOX:
        /* the stream stores positions as floats: the box must be one too */
        o->box = prog_parse_double("--box", arg, 0, FLT_MAX / 4);
        if (o->box == 0) prog_usage("option --box needs a length > 0, not '%s'", arg);
        return 1;
    case GS_ORIGIN: o->origin = prog_parse_double("--origin", arg, -FLT_MAX / 4, FLT_MAX / 4); return 1;
    case GS_PERIODIC: o->periodic = 1; return 1;
    case GS_NO_PERIODIC: o->periodic = 0; return 1;
    }
    return 0;
}

const char *gsnapout_options(int argc, char **argv, prog_std *std, fk_gsnap_opts *o, void (*help)(void))
{
    fk_gsnap_opts_default(o);
    static const struct option longopts[] = {PROG_STD_LONG, GSNAPOUT_LONG, {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":" PROG_STD_SHORT GSNAPOUT_SHORT, longopts, NULL)) != -1) {
        if (prog_std_option(c, optarg, std, help, argv)) continue;
        gsnapout_option(c, optarg, o);
    }
    return prog_one_input(argc, argv, optind);
}


static void put(fk_writer *w, const char *tag, const char *dtype, uint64_t n, uint32_t ncols, const void *data)
{
    fk_error err = {0};
    fk_chunk c;
    fk_chunk_init(&c, tag, dtype, FK_CF_PARTICLE, n, ncols);
    if (fk_writer_put(w, &c, data, &err)) prog_fail(&err);
}

void gsnapout_write(const fk_gsnap *s, const char *source, fk_output *out, int zlevel)
{
    fk_error err = {0};
    fk_snap snap;
    fk_gsnap_to_snap(s, source, &snap);
    char *text;
    fk_writer *w;
    if (fk_snap_format(&snap, &text, &err) || fk_writer_open(&w, fk_output_file(out), zlevel, &err) ||
        fk_writer_text(w, "SNAP", 0, text, &err))
        prog_fail(&err);
    free(text);
    /* the ID chunk is <u4 for up to 2^31 source particles, as tipsy2bin writes it */
    const int wide = !strcmp(fk_id_dtype(snap.nsource), "<u8");
    void *ids = s->id;
    uint32_t *narrow = NULL;
    if (!wide) {
        narrow = malloc(s->n ? s->n * sizeof *narrow : 1);
        if (!narrow) prog_die(EXIT_RESOURCE, "out of memory for %llu particle IDs", (unsigned long long)s->n);
        for (uint64_t i = 0; i < s->n; i++) narrow[i] = (uint32_t)s->id[i];
        ids = narrow;
    }
    put(w, "POS", "<f4", s->n, 3, s->pos);
    put(w, "VEL", "<f4", s->n, 3, s->vel);
    put(w, "MASS", "<f4", s->n, 1, s->mass);
    put(w, "TYPE", "|u1", s->n, 1, s->type);
    put(w, "ID", fk_id_dtype(snap.nsource), s->n, 1, ids);
    free(narrow);
    if (fk_writer_finish(w, &err)) prog_fail(&err);
    prog_commit(out);
    fk_writer_free(w);
}
