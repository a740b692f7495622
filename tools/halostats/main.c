/* main.c - halostats: one line of properties per group at every level (GID from groups): text, CSV or a HALO chunk. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "device.h"
#include "gpu.h"
#include "groups.h"
#include "groupsrun.h"
#include "haloearly.h"
#include "dist.h"
#include "distrun.h"
#include "halostats.h"
#include "hdf5out.h"
#include "hs.h"
#include "kv.h"
#include "masses.h"
#include "potential.h"
#include "prog.h"
#include "ranks.h"
#include "rankquiet.h"
#include "snapunits.h"
#include "snap.h"
#include "stream.h"
#include "streamfeed.h"
#include "version.h"


static void help(void)
{
    printf("Usage: halostats [OPTION]... [STREAM]\n"
           "Measures every friends-of-friends group of a fofkit stream (from groups), at every level of\n"
           "the hierarchy: one row per group, level by level, by group id: level, host (the group of\n"
           "the level above holding it), id, n, mass, centre of mass, mean velocity, 3D velocity\n"
           "dispersion, rmax; the centre (the most bound member, or the centre of mass), the most\n"
           "bound member's ID and potential, and about the centre rc_max, the half-mass radius,\n"
           "vmax and its radius, the spin parameter; the members and their mass by type (gas, dark,\n"
           "star) and a zoom-in run's contaminants: dark members heavier than the least dark mass\n"
           "(n_contam, m_contam). '#' header lines give every column's unit and definition and the\n"
           "run's parameters. Reads STREAM, or stdin.\n"
           "\n"
           "  -m, --min-size=N      take foflink's stream and do groups' work here: groups of at least\n"
           "                        N members, the catalogue of groups -m N | halostats byte for byte,\n"
           "                        without the particles written and read once more between them;\n"
           "                        the groups, members and potentials start once LINK, SINK, ID,\n"
           "                        POS and MASS have come, while the rest is read\n"
           "      --centre=mbp|com  centre on the most bound member (least softened potential,\n"
           "                        default) or on the centre of mass (no potentials)\n"
           "      --softening=EPS   Plummer softening, in the stream's length unit (default %g times\n"
           "                        the mean interparticle spacing, box / n^(1/3)); comoving in a\n"
           "                        comoving stream\n"
           "      --softening-max-phys=EPS  a comoving stream's softening capped at EPS physical, in the\n"
           "                        stream's length unit, as Gadget's SofteningMaxPhys (default: no cap)\n"
           "      --theta=T         Barnes-Hut opening angle, (0, 1] (default %g)\n"
           "      --exact-max=N     exact pairwise sums for groups of up to N members, a tree above\n"
           "                        (default %d)\n"
           "      --device=D        potentials on: auto (default: the GPU if there is one), cpu or gpu\n"
           "      --length-unit=X   one stream length unit is X output length units (default 1);\n"
           "      --mass-unit=X     the same for masses,\n"
           "      --velocity-unit=X and velocities\n"
           "      --length-name=S   the output units' names in headers (default length, mass,\n"
           "      --mass-name=S     velocity: the stream's)\n"
           "      --velocity-name=S\n"
           "      --G=VALUE         G in the output units (default: from the stream's units). A stream\n"
           "                        that carries its units (hdf52bin) gives the defaults: kpc, Msun,\n"
           "                        km/s (kpc/h, Msun/h for Gadget) and G from its units. A stream\n"
           "                        without units and no --G: phi_mbp, vmax and lambda are nan, and\n"
           "                        --unbind, --so and --format=hdf5 are refused\n"
           "A comoving stream (SNAP's comoving key, hdf52bin) gives physical properties at its redshift,\n"
           "as Gadget-4's SUBFIND: lengths comoving, velocities peculiar, the Hubble flow about the\n"
           "centre added to sigma_v and the unbinding's energies, potentials and vmax with physical r.\n"
           "      --format=FORMAT   'text' (default), 'csv' (one header row of column names with their\n"
           "                        units, mass[Msun/h]), or\n"
           "                        'stream': the input stream with HALO and HCOL chunks appended\n"
           "                        (and MRANK: each particle's place in its group, most bound first),\n"
           "                        'hdf5': a Gadget-4 style fof_subhalo_tab HDF5 file (levels 0, 1;\n"
           "                        the snapshot's units, Gadget's kpc/h, 1e10 Msun/h, km/s without;\n"
           "                        each halo's members most bound first, as IDs/MemberOrder says),\n"
           "                        or 'grp' (with --unbind): a .grp file of the bound members\n"
           "      --snapshot=FILE   with --format=hdf5, also the stream's particles as a Gadget-4\n"
           "                        snapshot in the catalogue's group order (pynbody's halos() read it)\n"
           "      --subhalos=S      with --format=hdf5, the subhalos: 'bound' (the default with --unbind:\n"
           "                        main subhalos and their satellites, self-bound) or 'levels' (the\n"
           "                        level 1 groups, the default without)\n"
           "      --csv             the same as --format=csv\n"
           "  -o, --output=FILE     write FILE (atomically) instead of stdout\n"
           "  -f, --force           read or write binary data on a terminal\n"
           "  -z, --compress[=N]    with --format=stream, zlib-compress every chunk (level N, default 6)\n"
           "  -v, --verbose         a summary and timings on stderr\n"
           "  -h, --help            show this help and exit\n"
           "  -V, --version         show the version and exit\n"
           "\n"
           "Exit status: 0 success, 1 bad input or I/O error, 2 usage error, 3 out of memory.\n"
           "Example: tipsy2bin snap.std | kdbuild | foflink -b 0.2 | groups -m 20 | halostats\n",
           SOFTENING_FRACTION, FK_POT_THETA, FK_POT_NEXACT);
    printf("\nSpherical-overdensity masses and unbinding (halostats(1), MASSES):\n");
    hs_masses_help();
}

/* GPU work time, for -v. */
static fk_gputimes gpu_times;

/* fk_gpu_pot_minima in the shape of fk_pot_minima. */
static int gpu_minima(const fk_pot_groups *g, const fk_pot_params *p, fk_pot_min *min, fk_error *err)
{
    fk_gputimes t;
    memset(&t, 0, sizeof t);
    int st = fk_gpu_pot_minima(g, p, min, &t, err);
    gpu_times.link += t.link;
    return st;
}

/* The CPU's minima behind the hook a device's takes (FOFKIT_POT_HOOK=cpu,
 * for tests without a GPU: the device's paths, the CPU's bytes). */
static int cpu_hook(const fk_pot_groups *g, const fk_pot_params *p, fk_pot_min *min, fk_error *err)
{
    return fk_pot_minima(g, p, min, err);
}

/* The potentials' minima other than the CPU's own path: the GPU's, or the
 * CPU's behind the device's hook; NULL: the CPU's. */
static fk_pot_minima_fn minima_of(const options *o)
{
    if (o->device == DEV_GPU) return gpu_minima;
    const char *e = getenv("FOFKIT_POT_HOOK");
    return e && !strcmp(e, "cpu") ? cpu_hook : NULL;
}

static int check_level(const input *in, const fk_chunk *c, fk_error *err)
{
    if (c->level >= MAX_LEVELS)
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s has level %" PRIu32 ": at most %d levels (0 to %d) are read",
                       in->name, c->tag, c->level, MAX_LEVELS, MAX_LEVELS - 1);
    return FK_OK;
}

/* Loads a chunk of <u4 x 1 into *dest (refusing a second one of its level)
 * after checking its rows (0: any). */
static int load_u32(fk_reader *r, const input *in, const fk_chunk *c, uint64_t rows, uint32_t **dest, void **raw,
                    fk_error *err)
{
    if (*dest)
        return fk_fail(err, FK_EFORMAT, "%s: stream has two %s chunks of level %" PRIu32, in->name, c->tag, c->level);
    if (strcmp(c->dtype, "<u4") != 0 || c->ncols != 1)
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s holds %s x %" PRIu32 ", expected <u4 x 1", in->name, c->tag,
                       c->dtype, c->ncols);
    if (rows && c->nrows != rows)
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s has %" PRIu64 " rows for the %" PRIu64 " particles of the source",
                       in->name, c->tag, c->nrows, rows);
    int st = fk_reader_load(r, raw, err);
    if (!st) *dest = *raw;
    return st;
}

int hs_parse_link(input *in, const char *text, const char *name, fk_error *err)
{
    char what[300], key[32];
    snprintf(what, sizeof what, "%s: LINK chunk", name);
    for (int k = 0; k < MAX_LEVELS; k++) {
        level *L = &in->lv[k];
        const char *names[3] = {"l", "b", "psi"};
        double *vals[3] = {&L->l, &L->b, &L->psi};
        int *have[3] = {&L->have_l, &L->have_b, NULL};
        for (int q = 0; q < 3; q++) {
            if (k == 0)
                snprintf(key, sizeof key, "%s", names[q]);
            else
                snprintf(key, sizeof key, "%s_%d", names[q], k);
            if (!fk_kv_has(text, key)) continue;
            if (fk_kv_get_dbl(text, key, vals[q], what, err)) return err->code;
            if (have[q]) *have[q] = 1;
        }
    }
    uint64_t periodic = 1;
    if (fk_kv_has(text, "periodic") && fk_kv_get_u64(text, "periodic", &periodic, what, err)) return err->code;
    in->link_isolated = periodic == 0;
    in->have_link = 1;
    return FK_OK;
}

/* The input as the feed reads it (streamfeed.h): what halostats keeps, and
 * with -m what the work before its end needs. */
typedef struct reading {
    input *in;
    fk_writer *w;     /* --format=stream: every chunk but HALO and HCOL written on */
    uint64_t minsize; /* -m */
    int link_levels;  /* -m: the levels LINK names (its levels key; 0: none) */
    input seen;       /* -m: the input as it was when the early work could start */
    int seen_levels;  /* and link_levels then */
} reading;

/* One chunk of the input (the feed's take): checked, loaded or passed on. */
static int take_chunk(void *ctx, fk_reader *r, const fk_chunk *cp, fk_error *err)
{
    reading *rd = ctx;
    input *in = rd->in;
    fk_writer *w = rd->w;
    const uint64_t minsize = rd->minsize;
    fk_chunk c = *cp;
    void *raw = NULL;
    int is = 1; /* a chunk halostats reads */
    int st = FK_OK;
    if (strcmp(c.tag, "POS") == 0 || strcmp(c.tag, "VEL") == 0 || strcmp(c.tag, "MASS") == 0) {
        float **dest = c.tag[0] == 'P' ? &in->pos : c.tag[0] == 'V' ? &in->vel : &in->mass;
        if (*dest) return fk_fail(err, FK_EFORMAT, "%s: stream has two %s chunks", in->name, c.tag);
        if ((st = fk_snap_check_chunk(&in->snap, &c, "<f4", c.tag[0] == 'M' ? 1 : 3, in->name, err)) ||
            (st = fk_reader_load(r, &raw, err)))
            return st;
        *dest = raw;
    } else if (strcmp(c.tag, "ID") == 0) {
        if (in->ids) return fk_fail(err, FK_EFORMAT, "%s: stream has two ID chunks", in->name);
        if ((st = fk_snap_check_chunk(&in->snap, &c, NULL, 1, in->name, err)) || (st = fk_reader_load(r, &raw, err)))
            return st;
    } else if (strcmp(c.tag, "PID") == 0) {
        if (in->pids) return fk_fail(err, FK_EFORMAT, "%s: stream has two PID chunks", in->name);
        if ((st = fk_snap_check_chunk(&in->snap, &c, "<u8", 1, in->name, err)) || (st = fk_reader_load(r, &raw, err)))
            return st;
        in->pids = raw;
    } else if (strcmp(c.tag, "TYPE") == 0) {
        if (in->type) return fk_fail(err, FK_EFORMAT, "%s: stream has two TYPE chunks", in->name);
        if ((st = fk_snap_check_chunk(&in->snap, &c, "|u1", 1, in->name, err)) || (st = fk_reader_load(r, &raw, err)))
            return st;
        in->type = raw;
    } else if (minsize && strcmp(c.tag, "SINK") == 0) {
        if ((st = check_level(in, &c, err)) || (st = load_u32(r, in, &c, in->snap.n, &in->sinks[c.level], &raw, err)))
            return st;
        if ((int)c.level >= in->nsinks) in->nsinks = (int)c.level + 1;
    } else if (minsize && (strcmp(c.tag, "GID") == 0 || strcmp(c.tag, "GRPS") == 0 || strcmp(c.tag, "GPAR") == 0)) {
        return fk_fail(err, FK_EFORMAT,
                       "%s: the stream has groups already (a %s chunk): -m takes foflink's stream; drop -m", in->name,
                       c.tag);
    } else if (strcmp(c.tag, "GID") == 0 || strcmp(c.tag, "GPAR") == 0) {
        if ((st = check_level(in, &c, err))) return st;
        level *L = &in->lv[c.level];
        if (c.tag[1] == 'I') {
            st = load_u32(r, in, &c, in->snap.nsource, &L->gid, &raw, err);
        } else {
            if (c.level == 0)
                return fk_fail(err, FK_EFORMAT, "%s: chunk GPAR has level 0 (parents start at level 1)", in->name);
            st = load_u32(r, in, &c, 0, &L->gpar, &raw, err);
            L->ngpar = c.nrows;
        }
        if (st) return st;
        if ((int)c.level >= in->nlevels) in->nlevels = (int)c.level + 1;
    } else if ((strcmp(c.tag, "GRPS") == 0 || (strcmp(c.tag, "LINK") == 0 && c.level == 0))) {
        if ((st = check_level(in, &c, err)) || (st = fk_reader_load(r, &raw, err))) return st;
        uint64_t size = fk_chunk_rawsize(&c);
        char *text = malloc(size + 1);
        if (!text) {
            free(raw);
            return fk_fail(err, FK_ENOMEM, "out of memory for chunk %s", c.tag);
        }
        memcpy(text, raw, size);
        text[size] = '\0';
        if (c.tag[0] == 'G') {
            level *L = &in->lv[c.level];
            if (L->have_grps)
                st = fk_fail(err, FK_EFORMAT, "%s: stream has two GRPS chunks of level %" PRIu32, in->name, c.level);
            else
                st = fk_groups_parse(text, &L->grps, in->name, err);
            L->have_grps = 1;
            if ((int)c.level >= in->nlevels) in->nlevels = (int)c.level + 1;
        } else {
            st = hs_parse_link(in, text, in->name, err);
            /* the levels whose SINK chunks the early work waits for, as groups reads them */
            uint64_t k;
            fk_error e = {0};
            rd->link_levels = fk_kv_has(text, "levels") && !fk_kv_get_u64(text, "levels", &k, "LINK", &e) && k >= 1 &&
                                      k <= FK_LEVELS_MAX ? (int)k : 0;
        }
        free(text);
        if (st) {
            free(raw);
            return st;
        }
    } else if (strcmp(c.tag, "HALO") == 0 || strcmp(c.tag, "HCOL") == 0 || strcmp(c.tag, "MORDER") == 0 ||
               strcmp(c.tag, "MRANK") == 0) {
        in->replaced = 1;
        return FK_OK;
    } else {
        is = 0;
    }
    if (w && (st = is ? fk_writer_put_read(w, &c, raw, err) : fk_writer_copy(w, r, &c, err))) return st;
    /* kept: POS VEL MASS PID GID GPAR, and ID widened on every core; the rest was copied or parsed */
    if (strcmp(c.tag, "ID") == 0 && (st = fk_snap_widen_ids(raw, &c, &in->ids, err))) return st;
    if (strcmp(c.tag, "GRPS") == 0 || strcmp(c.tag, "LINK") == 0) free(raw);
    return FK_OK;
}

/* -m (the feed's ready, on its thread): whether the IDs, every SINK level
 * LINK names, the positions and the masses have come; then the input as it
 * is is copied, for the early work. */
static int early_ready(void *ctx)
{
    reading *rd = ctx;
    const input *in = rd->in;
    if (!in->ids || !in->pos || !in->mass || rd->link_levels == 0) return 0;
    for (int k = 0; k < rd->link_levels; k++)
        if (!in->sinks[k]) return 0;
    rd->seen = *in;
    rd->seen_levels = rd->link_levels;
    return 1;
}

/* What -m did before its input ended (haloearly.h), and what it assumed. */
typedef struct early {
    fk_halo_early e;
    int ran;            /* the groups were numbered: st their status */
    int st;
    fk_error err;
    int levels;         /* the SINK levels numbered */
    const uint64_t *ids;
    const float *pos, *mass;
    fk_pot_params pot;  /* the potentials' parameters and box taken */
    int periodic;
    double box, origin;
    double t_ready, t_done, t_end; /* seconds from the start: the work began, ended; the input ended */
    int finder;         /* the minima went on on the finder's thread */
} early;

/* -m: the work done before the input ended (file scope: stopped at exit) */
static early ea;

/* At exit (a failure while the finder runs): the finder stopped after its
 * batch before the GPU's runtime is torn down (registered after it). */
static void stop_finder(void)
{
    fk_halo_early_finder_stop(&ea.e);
}

/* Whether the input has ended (the early minima's stop). */
static int input_ended(void *feed)
{
    return fk_feed_done(feed);
}

/* -m, once the IDs, the SINK levels, the positions and the masses have
 * come and while the rest is read: the groups numbered (a failure is
 * reported once the input has been read, as before), each level's members
 * gathered and, for potential centres, their minima found batch after
 * batch until the input has ended (the rest then beside the profiles, as
 * before; level 0 only when --unbind keeps the potentials of one level at a
 * time), with the G, softening and box that hs_setup will give (made here
 * on copies). */
static void early_work(const reading *rd, fk_feed *feed, options *o, early *ea, double t0)
{
    input s = rd->seen;
    ea->t_ready = prog_now() - t0;
    ea->ran = 1;
    ea->levels = rd->seen_levels;
    ea->ids = s.ids, ea->pos = s.pos, ea->mass = s.mass;
    ea->st = fk_halo_early_groups(&ea->e, &s.snap, s.ids, s.sinks, ea->levels, o->minsize, s.name, &ea->err);
    if (ea->st) return;
    options t = *o;
    hs_setup(&s, &t);
    ea->pot = t.pot, ea->periodic = s.snap.periodic, ea->box = s.snap.box, ea->origin = s.snap.origin;
    const int mbp = o->centre == FK_CENTRE_MBP;
    const uint64_t n = s.snap.n;
    fk_halo_input hin = {.n = n, .pos = s.pos, .mass = s.mass, .ids = s.ids, .periodic = s.snap.periodic,
                         .box = s.snap.box, .origin = s.snap.origin};
    /* a device's minima go on to the last batch on a thread of their own (the finder) while
     * the rest is read and measured; the CPU's stop when the input has ended */
    const fk_pot_minima_fn minima = minima_of(o);
    int gathered = 0, pots = 0;
    for (int k = 0; k < ea->levels; k++) {
        double *phi = k == 0 ? hs_masses_phi(&o->m, n, mbp) : NULL;
        const int pot_k = mbp && (k == 0 || !hs_masses_phi(&o->m, n, mbp));
        fk_error err = {0};
        if (fk_halo_early_level_work(&ea->e, k, &hin, pot_k && !minima ? &t.pot : NULL, NULL, input_ended, feed, phi,
                                     &err))
            break; /* the rest gathered after the input, as before */
        gathered = k + 1;
        if (pot_k && pots == k) pots = k + 1;
    }
    fk_error err = {0};
    if (minima && pots)
        ea->finder = fk_halo_early_finder_start(&ea->e, pots < gathered ? pots : gathered, &hin, &t.pot, minima,
                                                hs_masses_phi(&o->m, n, mbp), &err) == FK_OK;
    ea->t_done = prog_now() - t0;
}

/* Reads the stream; with w, writes it on as it goes (every chunk but the
 * HALO and HCOL this run replaces). With -m (o->minsize), the early work
 * runs as soon as what it needs has come, while the feed reads on. */
static void read_stream(const char *path, int force, input *in, fk_writer *w, options *o, early *ea, double t0)
{
    fk_error err = {0};
    FILE *f = prog_open_input(path, 1, force);
    fk_reader *r;
    fk_chunk c;
    char *snaptext;
    const uint64_t minsize = o->minsize;
    if (fk_reader_open(&r, f, in->name, &err) || fk_snap_read(r, &c, &in->snap, &snaptext, in->name, &err) ||
        (w && fk_writer_text(w, "SNAP", c.level, snaptext, &err)))
        prog_fail(&err);
    fk_reader_set_progress(r, prog_progress_reader, r);
    in->snaptext = snaptext;
    static reading rd; /* large (a copy of the input): not on the stack */
    rd = (reading){.in = in, .w = w, .minsize = minsize};
    fk_feed *feed;
    if (fk_feed_start(&feed, r, take_chunk, minsize ? early_ready : NULL, &rd, &err)) prog_fail(&err);
    if (minsize && fk_feed_wait(feed)) early_work(&rd, feed, o, ea, t0);
    double ended;
    if (fk_feed_join(feed, &ended, &err)) prog_fail(&err);
    ea->t_end = ended - t0; /* prog_now's clock is fk_now's */
    in->waited = fk_reader_waited(r);
    fk_reader_close(r);
    fk_input_close(f);
    if (minsize) {
        if (in->nsinks == 0)
            prog_die(EXIT_DATA, "%s: stream has no SINK chunk (halostats -m takes foflink's stream)", in->name);
        for (int k = 1; k < in->nsinks; k++)
            if (!in->sinks[k])
                prog_die(EXIT_DATA, "%s: stream has no SINK chunk of level %d (but one of level %d)", in->name, k,
                         in->nsinks - 1);
    } else if (in->nlevels == 0 || !in->lv[0].gid) {
        prog_die(EXIT_DATA, "stream has no GID chunk (run groups first, or halostats -m N on foflink's stream)");
    }
    for (int k = 1; k < in->nlevels; k++)
        if (!in->lv[k].gid) prog_die(EXIT_DATA, "stream has no GID chunk of level %d (but one of level %d)", k, in->nlevels - 1);
    static const char *tags[] = {"POS", "VEL", "MASS", "ID"};
    const void *have[] = {in->pos, in->vel, in->mass, in->ids};
    for (int k = 0; k < 4; k++)
        if (!have[k]) prog_die(EXIT_DATA, "stream has no %s chunk (run tipsy2bin first)", tags[k]);
}

/* Whether the early work's groups are those of the whole input: every SINK
 * level numbered, from the IDs that stayed (a second chunk is an error). */
static int early_groups_hold(const early *ea, const input *in)
{
    return ea->ran && !ea->st && ea->levels == in->nsinks && ea->ids == in->ids;
}

/* -m: groups' work on foflink's stream, in process: every SINK level
 * resolved and numbered (groups of at least minsize members) into the GID
 * GRPS and GPAR that groups -m minsize would have written, so that the
 * particles are not written and read once more between the two; the early
 * work's, when it numbered them all. */
static void resolve_levels(input *in, uint64_t minsize, early *ea)
{
    fk_error err = {0};
    if (early_groups_hold(ea, in)) {
        for (int k = 0; k < in->nsinks; k++) {
            level *L = &in->lv[k];
            fk_halo_early_level *E = &ea->e.lv[k];
            L->gid = E->gid, L->grps = E->grps, L->have_grps = 1;
            L->gpar = E->gpar, L->ngpar = k ? E->grps.ngroups + 1 : 0;
            E->gid = E->gpar = NULL;
            free(in->sinks[k]);
            in->sinks[k] = NULL;
        }
        in->nlevels = in->nsinks;
        return;
    }
    fk_halo_early_free(&ea->e); /* its sinks resolved in place: resolved again, unchanged */
    fk_groups_in gin = {.ids = in->ids, .nlevels = in->nsinks};
    for (int k = 0; k < in->nsinks; k++) gin.sinks[k] = in->sinks[k];
    for (int k = 0; k < in->nsinks; k++) {
        level *L = &in->lv[k];
        if (fk_groups_grp_ids(&gin, &in->snap, k, minsize, in->name, &L->gid, &L->grps, &err)) prog_fail(&err);
        L->have_grps = 1;
        free(in->sinks[k]);
        in->sinks[k] = gin.sinks[k] = NULL;
        if (k == 0) continue;
        L->ngpar = L->grps.ngroups + 1;
        if (!(L->gpar = malloc(L->ngpar * sizeof *L->gpar)))
            prog_die(EXIT_RESOURCE, "out of memory for the parents of %" PRIu64 " groups", L->grps.ngroups);
        if (fk_groups_parents(in->lv[k - 1].gid, L->gid, in->snap.nsource, L->grps.ngroups, L->gpar, (uint32_t)k,
                              in->name, &err))
            prog_fail(&err);
    }
    in->nlevels = in->nsinks;
}

/* The groups of every stream particle at level L; the number of groups
 * (GRPS's, or without it the largest id). */
static uint64_t level_groups(const input *in, const level *L, uint32_t *grp)
{
    uint64_t top = 0;
#pragma omp parallel for schedule(static) reduction(max : top)
    for (uint64_t i = 0; i < in->snap.n; i++) {
        grp[i] = L->gid[in->ids[i]];
        if (grp[i] > top) top = grp[i];
    }
    return L->have_grps ? L->grps.ngroups : top;
}

/* The hosts of level k's groups: GPAR's rows, checked against the level
 * above, or without GPAR the level above's group of each group's reference
 * member. */
static void set_hosts(const input *in, int k, fk_halo *h, uint64_t ng, uint64_t ng_up)
{
    const level *L = &in->lv[k];
    if (L->gpar && L->ngpar != ng + 1)
        prog_die(EXIT_DATA, "%s: chunk GPAR of level %d has %" PRIu64 " rows for %" PRIu64 " groups (expected %" PRIu64
                 ")", in->name, k, L->ngpar, ng, ng + 1);
    for (uint64_t g = 0; g < ng; g++) {
        h[g].level = (uint64_t)k;
        if (k == 0) continue;
        h[g].host = L->gpar ? L->gpar[g + 1] : in->lv[k - 1].gid[h[g].minid];
        if (h[g].host > ng_up)
            prog_die(EXIT_DATA, "%s: chunk GPAR of level %d gives group %" PRIu64 " the host %" PRIu64
                     ", beyond the %" PRIu64 " groups of level %d", in->name, k, g + 1, h[g].host, ng_up, k - 1);
    }
}

int bound_subhalos_asked(const options *o)
{
    return o->subhalos == 2 || (o->subhalos == 0 && o->m.unbind);
}

const char *hs_frame_word(const options *o, const fk_halo_column *c)
{
    if (c->dim == FK_DIM_1) return "";
    return c->dim == FK_DIM_LENGTH && o->comoving ? "comoving: " : "physical: ";
}

void hs_blank_G(const options *o, fk_halo *h, uint64_t ng)
{
    if (!o->no_G) return;
    for (uint64_t g = 0; g < ng; g++) h[g].phi_mbp = h[g].vmax = h[g].lambda = NAN;
}

/* Whether column c is written: every column but those of --so and --unbind
 * when not asked for (the mbp columns stay with --centre=com, -1 and nan,
 * so that a column's number does not depend on the centre). */
int shown(const options *o, const fk_halo_column *c)
{
    return !(c->flags & (FK_HCOL_SO | FK_HCOL_UNBIND)) || (c->flags & hs_masses_flags(&o->m));
}

void write_header(FILE *f, const input *in, const options *o, const uint64_t *ng)
{
    const fk_snap *s = &in->snap;
    const fk_halo_units *u = &o->units;
    char un[3][64];
    fprintf(f, "# halostats (fofkit %s): one line per friends-of-friends group, level by level, by group id\n",
            FK_VERSION);
    fprintf(f, "# input %s: source '%s', %" PRIu64 " particles of %" PRIu64 ", time %.10g\n", in->name, s->source, s->n,
            s->nsource, s->time);
    fprintf(f, "# box %.10g origin %.10g periodic %d (the stream's length unit)%s\n", s->box, s->origin, s->periodic,
            in->link_isolated ? ": the snapshot's box is periodic, but foflink --no-periodic linked it with isolated "
                                "boundaries, and so are the groups measured" : "");
    fprintf(f, "# levels %d%s\n", in->nlevels, in->nlevels > 1 ? ": a group of level k lies inside group host of level k-1" : "");
    for (int k = 0; k < in->nlevels; k++) {
        const level *L = &in->lv[k];
        fprintf(f, "# level %d: ", k);
        if (L->have_l)
            fprintf(f, "linking length l %.10g (b %.10g, psi %.10g; psi 0 is 3D linking)", L->l, L->have_b ? L->b : 0,
                    L->psi);
        else
            fprintf(f, "linking length unknown (no LINK chunk)");
        fprintf(f, ", %" PRIu64 " groups, min size ", ng[k]);
        if (L->have_grps)
            fprintf(f, "%" PRIu64, L->grps.minsize);
        else
            fprintf(f, "unknown (no GRPS chunk)");
        if (k > 0 && !L->gpar) fprintf(f, ", hosts from the members (no GPAR chunk)");
        fputc('\n', f);
    }
    fprintf(f, "# units: length %s, mass %s, velocity %s; one stream unit is %.10g, %.10g, %.10g of them\n",
            u->length_name, u->mass_name, u->velocity_name, u->length, u->mass, u->velocity);
    fk_halo_units_name(u, FK_DIM_LENGTH, un[0], sizeof un[0]); /* the softening's line below names it too */
    if (o->no_G)
        fprintf(f, "# G: none, the stream has no units: phi_mbp, vmax and lambda are nan (give --G=VALUE)\n");
    else
        fprintf(f, "# G = %.10g %s %s / %s (%s)\n", o->G_out, fk_halo_units_name(u, FK_DIM_LENGTH, un[0], sizeof un[0]),
                fk_halo_units_name(u, FK_DIM_VELOCITY2, un[1], sizeof un[1]),
                fk_halo_units_name(u, FK_DIM_MASS, un[2], sizeof un[2]),
                o->have_G == 1 ? "given" : o->have_G == 2 ? "from the stream's units" : "1 in the stream's units");
    if (o->comoving)
        fprintf(f, "# comoving stream at a = %.10g (z = %.10g), H(a) = %.10g %s per %s physical: lengths comoving,\n"
                   "#   velocities peculiar (VEL a^%g), the rest physical, as Gadget-4's SUBFIND: the Hubble\n"
                   "#   flow H(a) a dx about the centre of mass added to sigma_v and the unbinding's energies,\n"
                   "#   potentials and vmax with physical r = a dx (G / a over comoving lengths), the softening\n"
                   "#   comoving (physical eps a)\n",
                o->a, 1 / o->a - 1, o->hflow / o->a * u->velocity / u->length, u->velocity_name, u->length_name,
                in->snap.vel_a_scaling);
    else
        fprintf(f, "# physical stream (no comoving key): lengths and velocities as stored, no Hubble flow\n");
    if (o->centre == FK_CENTRE_MBP) {
        fprintf(f, "# centre: the most bound member, least phi_i = -G sum_(j != i) m_j / sqrt(r_ij^2 + eps^2),\n"
                   "#   eps %.10g %s (%s%s); exact sums for groups of up to %" PRIu64 " members, else a\n"
                   "#   Barnes-Hut tree (theta %.3g, quadrupoles), then exact sums for its candidates (tree phi\n"
                   "#   within %.3g |phi| of its least); on the %s\n",
                o->pot.eps * u->length, un[0], o->have_eps ? "given" : "0.05 box / n^(1/3)",
                o->eps_capped ? "; capped: --softening-max-phys / a" : "", o->pot.nexact, o->pot.theta,
                fk_pot_tolerance(&o->pot), o->device == DEV_GPU ? "GPU" : "CPU");
    } else {
        fprintf(f, "# centre: the centre of mass (no potentials: --centre=com)\n");
    }
    fprintf(f, "# groups are unwrapped about the member with the lowest ID, assuming a group spans less than\n"
               "# half the box; a group of total mass 0 gets unweighted means; M(<=r): mass of the members\n"
               "# within r of the centre\n");
    hs_masses_header(f, &o->m, u);
    fprintf(f, "# column name unit: definition\n");
    size_t col = 0;
    for (size_t k = 0; k < fk_halo_ncolumns; k++) {
        const fk_halo_column *c = &fk_halo_columns[k];
        if (!shown(o, c)) continue;
        fprintf(f, "# %2zu %-8s %-10s %s%s\n", ++col, c->name, fk_halo_units_name(u, c->dim, un[0], sizeof un[0]),
                hs_frame_word(o, c), c->desc);
    }
    fputc('#', f);
    for (size_t k = 0; k < fk_halo_ncolumns; k++)
        if (shown(o, &fk_halo_columns[k])) fprintf(f, " %s", fk_halo_columns[k].name);
    fputc('\n', f);
}

/* Rows [g0, g1) into f. */
static void format_rows(FILE *f, const options *o, const fk_halo *h, uint64_t g0, uint64_t g1, char sep)
{
    char buf[64];
    for (uint64_t g = g0; g < g1; g++) {
        int first = 1;
        for (size_t k = 0; k < fk_halo_ncolumns; k++) {
            if (!shown(o, &fk_halo_columns[k])) continue;
            fk_halo_format(&h[g], &fk_halo_columns[k], &o->units, buf, sizeof buf);
            if (!first) fputc(sep, f);
            fputs(buf, f);
            first = 0;
        }
        fputc('\n', f);
    }
}

/* The rows formatted on every core, a block at a time, and written in order
 * (a block that finds no memory is formatted in its turn). */
void write_rows(FILE *f, const options *o, const fk_halo *h, uint64_t ng, char sep)
{
    enum { BLOCK = 1024 };
#pragma omp parallel for ordered schedule(static, 1)
    for (uint64_t g0 = 0; g0 < ng; g0 += BLOCK) {
        const uint64_t g1 = g0 + BLOCK < ng ? g0 + BLOCK : ng;
        char *text = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        if (m) format_rows(m, o, h, g0, g1, sep);
        if (m && fclose(m) != 0) m = NULL, free(text), text = NULL;
#pragma omp ordered
        {
            if (m)
                fwrite(text, 1, len, f);
            else
                format_rows(f, o, h, g0, g1, sep);
        }
        free(text);
    }
}

void write_csv_header(FILE *f, const options *o)
{
    int first = 1;
    char un[64];
    for (size_t k = 0; k < fk_halo_ncolumns; k++) {
        const fk_halo_column *c = &fk_halo_columns[k];
        if (!shown(o, c)) continue;
        /* name[unit], the unit as the text header names it; a pure number bare */
        fprintf(f, "%s%s", first ? "" : ",", c->name);
        if (c->dim != FK_DIM_1) fprintf(f, "[%s]", fk_halo_units_name(&o->units, c->dim, un, sizeof un));
        first = 0;
    }
    fputc('\n', f);
}

int write_hcol(fk_writer *w, const input *in, const options *o, fk_error *err)
{
    fk_kvbuf kv;
    char key[32], val[512], un[64];
    fk_kv_init(&kv);
    size_t ncol = 0;
    for (size_t k = 0; k < fk_halo_ncolumns; k++) ncol += shown(o, &fk_halo_columns[k]);
    fk_kv_u64(&kv, "columns", ncol);
    fk_kv_u64(&kv, "levels", (uint64_t)in->nlevels);
    fk_kv_str(&kv, "centre", o->centre == FK_CENTRE_MBP ? "mbp" : "com");
    fk_kv_dbl(&kv, "G", o->G_out);
    if (o->centre == FK_CENTRE_MBP) {
        fk_kv_dbl(&kv, "softening", o->pot.eps * o->units.length);
        fk_kv_dbl(&kv, "theta", o->pot.theta);
        fk_kv_u64(&kv, "exact_max", o->pot.nexact);
        fk_kv_dbl(&kv, "tolerance", fk_pot_tolerance(&o->pot));
        fk_kv_str(&kv, "device", o->device == DEV_GPU ? "gpu" : "cpu");
    }
    fk_kv_dbl(&kv, "length_unit", o->units.length);
    fk_kv_dbl(&kv, "mass_unit", o->units.mass);
    fk_kv_dbl(&kv, "velocity_unit", o->units.velocity);
    fk_kv_str(&kv, "length_name", o->units.length_name);
    fk_kv_str(&kv, "mass_name", o->units.mass_name);
    fk_kv_str(&kv, "velocity_name", o->units.velocity_name);
    hs_masses_kv(&kv, &o->m);
    /* the columns that hold whole numbers (ids, counts; -1 for none), for readers' types */
    char ints[256] = "";
    for (size_t k = 0; k < fk_halo_ncolumns; k++)
        if (shown(o, &fk_halo_columns[k]) && fk_halo_columns[k].type == FK_HCOL_U64)
            snprintf(ints + strlen(ints), sizeof ints - strlen(ints), "%s%s", ints[0] ? " " : "", fk_halo_columns[k].name);
    fk_kv_str(&kv, "integer_columns", ints);
    /* a comoving stream: which columns are comoving lengths (the others with a unit physical) */
    fk_kv_u64(&kv, "comoving", (uint64_t)o->comoving);
    if (o->comoving) {
        char com[512] = "";
        for (size_t k = 0; k < fk_halo_ncolumns; k++)
            if (shown(o, &fk_halo_columns[k]) && !strcmp(hs_frame_word(o, &fk_halo_columns[k]), "comoving: "))
                snprintf(com + strlen(com), sizeof com - strlen(com), "%s%s", com[0] ? " " : "", fk_halo_columns[k].name);
        fk_kv_dbl(&kv, "scale_factor", o->a);
        fk_kv_dbl(&kv, "hubble_of_a", o->hflow / o->a * o->units.velocity / o->units.length);
        fk_kv_str(&kv, "comoving_columns", com);
    }
    size_t col = 0;
    for (size_t k = 0; k < fk_halo_ncolumns; k++) {
        const fk_halo_column *c = &fk_halo_columns[k];
        if (!shown(o, c)) continue;
        snprintf(key, sizeof key, "column_%zu", ++col);
        snprintf(val, sizeof val, "%s %s %s", c->name, fk_halo_units_name(&o->units, c->dim, un, sizeof un), c->desc);
        fk_kv_str(&kv, key, val);
    }
    char *text = NULL;
    int st = fk_kv_finish(&kv, &text, err);
    if (!st) st = fk_writer_text(w, "HCOL", 0, text, err);
    free(text);
    return st;
}

int write_halo(fk_writer *w, const options *o, int k, const fk_halo *h, uint64_t ng, fk_error *err)
{
    size_t ncol = 0;
    for (size_t c = 0; c < fk_halo_ncolumns; c++) ncol += shown(o, &fk_halo_columns[c]);
    double *rows = malloc(ng && ncol ? ng * ncol * sizeof *rows : 1);
    if (!rows) return fk_fail(err, FK_ENOMEM, "out of memory for the HALO chunk of %" PRIu64 " groups", ng);
    for (uint64_t g = 0; g < ng; g++) {
        size_t j = 0;
        for (size_t c = 0; c < fk_halo_ncolumns; c++)
            if (shown(o, &fk_halo_columns[c])) rows[g * ncol + j++] = fk_halo_value(&h[g], &fk_halo_columns[c], &o->units);
    }
    fk_chunk c;
    fk_chunk_init(&c, "HALO", "<f8", 0, ng, (uint32_t)ncol);
    c.level = (uint32_t)k;
    int st = fk_writer_put(w, &c, rows, err);
    free(rows);
    return st;
}

/* A unit name: printable, no white space, at most 32 bytes. */
static const char *unit_name(const char *opt, const char *arg)
{
    size_t n = strlen(arg);
    if (n == 0 || n > 32) prog_usage("option %s needs a name of 1 to 32 characters, not '%s'", opt, arg);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)arg[i] <= ' ' || (unsigned char)arg[i] == 127)
            prog_usage("option %s needs a name without spaces or control characters, not '%s'", opt, arg);
    return arg;
}

void hs_setup(input *in, options *o)
{
    fk_error err = {0};
    /* G: given in the output units, or 1 in the stream's; the library works
     * in the stream's: G_stream = G_out * mass_unit / (length_unit * velocity_unit^2). */
    const fk_halo_units *u = &o->units;
    /* linked with isolated boundaries (foflink --no-periodic): measured so too */
    in->link_isolated = in->link_isolated && in->snap.periodic;
    if (in->link_isolated) in->snap.periodic = 0;
    /* a stream that carries its units (hdf52bin) gives the default output units and G; the HDF5
     * catalogue stays in the snapshot's own units, as Gadget-4's are */
    if (o->format != 3) fk_snap_default_units(&in->snap, &o->units);
    /* A stream without units has no G: what needs one is refused, not answered in G = 1 (SO
     * needs none: its thresholds from --rho-crit or the box's mean density, but --hubble's do) */
    const char *physical = o->format == 3          ? "--format=hdf5"
                           : o->m.unbind           ? "--unbind"
                           : o->m.so && o->m.have_h ? "--so --hubble"
                                                   : NULL;
    if (!in->snap.have_units && (o->format == 3 || (physical && !o->have_G)))
        prog_die(EXIT_DATA, "the stream has no units (no unit keys in its SNAP), so %s %s", physical,
                 o->format == 3 ? "would state units it does not have: make the stream with its units (tipsy2bin "
                                  "--kpc-unit and --msol-unit, gadget2bin, hdf52bin)"
                                : "would be in G = 1: give --G=VALUE (G in the output units), or make the stream "
                                  "with its units (tipsy2bin --kpc-unit and --msol-unit, gadget2bin, hdf52bin)");
    o->no_G = !in->snap.have_units && !o->have_G;
    const double G_snap = fk_snap_G(&in->snap);
    if (!o->have_G && G_snap > 0) o->have_G = 2;
    if (!o->have_G) o->G_out = u->length * u->velocity * u->velocity / u->mass;
    if (o->have_G == 2) o->G_out = G_snap * u->length * u->velocity * u->velocity / u->mass;
    o->pot.G = o->G_out * u->mass / (u->length * u->velocity * u->velocity);
    if (!o->have_eps) o->pot.eps = SOFTENING_FRACTION * in->snap.box / cbrt((double)(in->snap.n ? in->snap.n : 1));
    /* A comoving stream: physical properties as Gadget-4's SUBFIND measures them
     * (subfind_unbind.cc, subfind_properties.cc), the arithmetic kept comoving:
     * phi with G / a and the softening comoving is -G m / sqrt(r_phys^2 + eps_phys^2),
     * vmax^2 = (G / a) M / r_com = G M / r_phys, velocities peculiar plus H(a) a d */
    int fr = fk_snap_frame(&in->snap, &o->a, &o->vscale, &o->hflow);
    if (fr < 0 && in->snap.have_units)
        prog_die(EXIT_DATA, "the stream is comoving, but its SNAP lacks the hubble, omega0, omega_lambda or a time "
                 "above 0 that the Hubble flow needs (convert the snapshot again with hdf52bin)");
    if (fr > 0) {
        o->comoving = 1;
        o->pot.G /= o->a;
        /* Gadget's eps_phys = min(eps_com a, eps_max_phys): comoving, eps_phys / a */
        if (o->eps_max_phys > 0 && o->pot.eps * o->a > o->eps_max_phys)
            o->pot.eps = o->eps_max_phys / o->a, o->eps_capped = 1;
    } else if (o->eps_max_phys > 0) {
        prog_usage("option --softening-max-phys applies to a comoving stream only (SNAP's comoving 1)");
    }
    if (fk_pot_check(&o->pot, &err)) prog_die(EXIT_USAGE, "%s", err.msg);
}

void hs_device(options *o)
{
    /* only potentials use a device */
    fk_gpuinfo gi;
    o->device = o->centre == FK_CENTRE_MBP ? device_resolve(o->device, &gi) : DEV_CPU;
}

static void parse_options(int argc, char **argv, prog_std *std, options *o)
{
    enum { O_CSV = 256, O_FORMAT, O_CENTRE, O_EPS, O_THETA, O_EXACT, O_LU, O_MU, O_VU, O_LN, O_MN, O_VN, O_G, O_DEV,
           O_SNAP, O_SUBS, O_EPSMAX };
    static const struct option longopts[] = {PROG_STD_LONG,
                                             {"csv", no_argument, 0, O_CSV},
                                             {"format", required_argument, 0, O_FORMAT},
                                             {"centre", required_argument, 0, O_CENTRE},
                                             {"center", required_argument, 0, O_CENTRE},
                                             {"softening", required_argument, 0, O_EPS},
                                             {"softening-max-phys", required_argument, 0, O_EPSMAX},
                                             {"theta", required_argument, 0, O_THETA},
                                             {"exact-max", required_argument, 0, O_EXACT},
                                             {"length-unit", required_argument, 0, O_LU},
                                             {"mass-unit", required_argument, 0, O_MU},
                                             {"velocity-unit", required_argument, 0, O_VU},
                                             {"length-name", required_argument, 0, O_LN},
                                             {"mass-name", required_argument, 0, O_MN},
                                             {"velocity-name", required_argument, 0, O_VN},
                                             {"G", required_argument, 0, O_G},
                                             {"device", required_argument, 0, O_DEV},
                                             {"snapshot", required_argument, 0, O_SNAP},
                                             {"subhalos", required_argument, 0, O_SUBS},
                                             {"min-size", required_argument, 0, 'm'},
                                             HS_MASSES_LONG,
                                             {0, 0, 0, 0}};
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":" PROG_STD_SHORT "m:", longopts, NULL)) != -1) {
        if (prog_std_option(opt, optarg, std, help, argv)) continue;
        switch (opt) {
        case O_CSV: o->format = 1; break;
        case O_FORMAT:
            if (strcmp(optarg, "text") == 0)
                o->format = 0;
            else if (strcmp(optarg, "csv") == 0)
                o->format = 1;
            else if (strcmp(optarg, "stream") == 0)
                o->format = 2;
            else if (strcmp(optarg, "hdf5") == 0 && hdf5_check())
                o->format = 3;
            else if (strcmp(optarg, "grp") == 0)
                o->format = 4, o->m.grp = 1;
            else
                prog_usage("option --format needs 'text', 'csv', 'stream', 'hdf5' or 'grp', not '%s'", optarg);
            break;
        case O_CENTRE:
            if (strcmp(optarg, "mbp") == 0)
                o->centre = FK_CENTRE_MBP;
            else if (strcmp(optarg, "com") == 0)
                o->centre = FK_CENTRE_COM;
            else
                prog_usage("option --centre needs 'mbp' or 'com', not '%s'", optarg);
            break;
        case O_EPS:
            o->pot.eps = prog_parse_positive("--softening", optarg, DBL_MAX);
            o->have_eps = 1;
            break;
        case O_EPSMAX: o->eps_max_phys = prog_parse_positive("--softening-max-phys", optarg, DBL_MAX); break;
        case O_THETA:
            o->pot.theta = prog_parse_positive("--theta", optarg, DBL_MAX);
            if (o->pot.theta > 1) prog_usage("option --theta: %s is out of range (0, 1]", optarg);
            break;
        case O_EXACT: o->pot.nexact = (uint64_t)prog_parse_int("--exact-max", optarg, 0, INT64_MAX); break;
        case O_LU: o->units.length = prog_parse_positive("--length-unit", optarg, DBL_MAX); break;
        case O_MU: o->units.mass = prog_parse_positive("--mass-unit", optarg, DBL_MAX); break;
        case O_VU: o->units.velocity = prog_parse_positive("--velocity-unit", optarg, DBL_MAX); break;
        case O_LN: o->units.length_name = unit_name("--length-name", optarg); break;
        case O_MN: o->units.mass_name = unit_name("--mass-name", optarg); break;
        case O_VN: o->units.velocity_name = unit_name("--velocity-name", optarg); break;
        case O_G:
            o->G_out = prog_parse_positive("--G", optarg, DBL_MAX);
            o->have_G = 1;
            break;
        case O_DEV: o->device = device_parse(optarg); break;
        case 'm': o->minsize = (uint64_t)prog_parse_int("-m", optarg, 1, UINT32_MAX); break;
        case O_SNAP:
            if (!*optarg || !strcmp(optarg, "-"))
                prog_usage("option --snapshot needs a file name (the snapshot is not written to stdout)");
            o->snapshot = optarg;
            break;
        case O_SUBS:
            if (!strcmp(optarg, "levels"))
                o->subhalos = 1;
            else if (!strcmp(optarg, "bound"))
                o->subhalos = 2;
            else
                prog_usage("option --subhalos needs 'levels' or 'bound', not '%s'", optarg);
            break;
        default: hs_masses_option(opt, optarg, &o->m); break;
        }
    }
    if (std->zlevel && o->format != 2) prog_usage("option -z applies to --format=stream only");
    if (o->snapshot && o->format != 3) prog_usage("option --snapshot applies to --format=hdf5 only");
    if (o->subhalos && o->format != 3) prog_usage("option --subhalos applies to --format=hdf5 only");
    if (o->subhalos == 2 && !o->m.unbind) prog_usage("option --subhalos=bound needs --unbind");
    if (o->minsize && o->format == 2)
        prog_usage("option -m does not go with --format=stream (a stream catalogue carries groups' GID: run groups -m N "
                   "before halostats)");
    hs_masses_check(&o->m);
}

int main(int argc, char **argv)
{
    prog_init("halostats");
    prog_std std = {0};
    options o = {0};
    fk_pot_defaults(&o.pot);
    fk_halo_units_default(&o.units);
    o.device = device_default();
    prog_rank_quiet(1); /* under mpirun, a usage error is said once */
    parse_options(argc, argv, &std, &o);
    const char *path = prog_one_input(argc, argv, optind);
    const int dist = fk_dist_wanted((const char *const[]){path, std.output}, 2);
    if (dist && o.minsize) prog_usage("option -m is not taken under mpirun: run groups -m N before halostats");
    prog_rank_quiet(0);
    if (dist) return halostats_dist(path, &std, &o);
    double t0 = prog_now();

    input in = {.name = strcmp(path, "-") == 0 ? "stdin" : path};
    fk_error err = {0};
    fk_output *out = NULL;
    fk_writer *w = NULL;
    /* the outputs are created (as temporaries, committed at the end) before the input is read:
     * a name that cannot be written fails at once, not after all the work */
    out = prog_open_output(&std, o.format == 2 || o.format == 3);
    fk_output *snapout = NULL;
    if (o.snapshot && fk_output_open(&snapout, o.snapshot, 1, 1, &err)) prog_fail(&err);
    if (o.format == 2 && fk_writer_open(&w, fk_output_file(out), std.zlevel, &err)) prog_fail(&err);
    hs_device(&o);
    if (o.minsize) atexit(stop_finder);
    read_stream(path, std.force, &in, w, &o, &ea, t0);
    const uint64_t n = in.snap.n;
    if (ea.ran && ea.st && ea.ids == in.ids) prog_fail(&ea.err); /* the IDs' checks or a level's numbering */
    if (!early_groups_hold(&ea, &in) && fk_groups_check_ids(in.ids, n, in.snap.nsource, in.name, &err))
        prog_fail(&err);
    if (o.minsize) resolve_levels(&in, o.minsize, &ea);
    uint8_t *types; /* n_gas ... n_contam */
    if (hs_types(&in.snap, n, in.ids, in.type, &types, in.name, &err)) prog_fail(&err);
    uint8_t *type_chunk = in.type; /* freed with the rest: the writer may still be writing it on */
    in.type = types;
    in.m_hires = fk_halo_hires_mass(n, in.mass, in.type);
    double t_read = prog_now() - t0 - in.waited; /* -v: the work, not the wait for the stage before */

    hs_setup(&in, &o);
    /* the minima found early hold when they took this G, softening, box and these particles */
    const fk_pot_params *p = &ea.pot;
    const int early_minima = o.minsize && o.centre == FK_CENTRE_MBP && early_groups_hold(&ea, &in) &&
                             ea.pos == in.pos && ea.mass == in.mass && p->G == o.pot.G && p->eps == o.pot.eps &&
                             p->theta == o.pot.theta && p->nexact == o.pot.nexact && p->tol == o.pot.tol &&
                             p->ncand == o.pot.ncand && ea.periodic == in.snap.periodic && ea.box == in.snap.box &&
                             ea.origin == in.snap.origin;
    if (!early_minima) fk_halo_early_finder_stop(&ea.e); /* its minima are not this run's: not to be waited for */
    if (o.minsize && early_groups_hold(&ea, &in))
        prog_info("-m: groups numbered (%.3f s), members gathered%s from %.2f s to %.2f s; the input ended at %.2f s",
                  ea.e.secs_groups,
                  !early_minima ? "" : ea.finder ? " and the potentials' thread started" : " and potentials found",
                  ea.t_ready, ea.t_done, ea.t_end);
    const fk_halo_units *u = &o.units;
    hs_masses_setup(&o.m, &in.snap, in.snaptext, in.pos, in.mass, in.ids, u, o.G_out);

    /* each particle's group: the members are gathered from it (reading the
     * GID chunk through the IDs once), and --unbind keeps it */
    uint32_t *grp = NULL;
    fk_halo *halos[MAX_LEVELS] = {0};
    uint64_t ng[MAX_LEVELS] = {0};
    for (int k = 0; k < in.nlevels; k++) {
        double tk = prog_now(), tg = tk;
        /* -m: the members gathered and the minima found before the input ended, when they were */
        fk_halo_early_level *E = k < ea.e.nlevels && early_groups_hold(&ea, &in) ? &ea.e.lv[k] : NULL;
        const int gathered = E && E->members.first, found = gathered && early_minima && E->min,
                  await = found && E->bg;
        if (gathered && !hs_masses_flags(&o.m)) {
            ng[k] = in.lv[k].grps.ngroups;
        } else {
            if (!grp && !(grp = fk_big_alloc(n ? n * sizeof *grp : 1)))
                prog_die(EXIT_RESOURCE, "out of memory for %" PRIu64 " particles", n);
            ng[k] = level_groups(&in, &in.lv[k], grp);
        }
        if (!(halos[k] = malloc(ng[k] ? ng[k] * sizeof *halos[k] : 1)))
            prog_die(EXIT_RESOURCE, "out of memory for %" PRIu64 " groups", ng[k]);
        fk_halo_input hin = {n,           in.pos,     in.vel,     in.mass,       in.ids,   grp, in.snap.periodic,
                             in.snap.box, in.snap.origin, o.comoving, o.vscale, o.hflow, in.type, in.m_hires};
        fk_halo_order own = {0}, *mo = &own; /* the members: the early work's stay its own (the finder reads them) */
        fk_halo_timing tm;
        if (gathered)
            mo = &E->members;
        else if (fk_halo_order_build(n, grp, in.ids, ng[k], &own, &err))
            prog_fail(&err);
        fk_halo_early_wait waiter = {&ea.e, k};
        if (!hs_masses_flags(&o.m)) free(grp), grp = NULL, hin.grp = NULL; /* the rest reads the members */
        tg = prog_now() - tg;
        double *phi = hs_masses_phi(&o.m, n, o.centre == FK_CENTRE_MBP);
        if (fk_halostats_compute_members(&hin, mo, halos[k], in.name, &err) ||
            (await   ? fk_halostats_centres_await(&hin, mo, &o.pot, minima_of(&o), E->min, fk_halo_early_found, &waiter,
                                                  halos[k], &tm, phi, &err)
             : found ? fk_halostats_centres_found(&hin, mo, &o.pot, minima_of(&o), E->min, E->found, halos[k], &tm, phi,
                                                  &err)
                     : fk_halostats_centres_members(&hin, mo, o.centre, &o.pot, minima_of(&o), halos[k], &tm, phi, &err)))
            prog_fail(&err);
        fk_halo_order_free(mo); /* the finder is done with this level */
        tm.gather += tg;
        if (gathered)
            prog_info("level %d: before the input ended: members gathered in %.3f s%s", k, E->secs_gather,
                      found || o.centre != FK_CENTRE_MBP ? "" : "; potentials after it");
        if (found && !await)
            prog_info("level %d: before the input ended: potentials of %" PRIu64 " of %" PRIu64 " groups in %.3f s", k,
                      E->found, ng[k], E->secs_potential);
        if (await)
            prog_info("level %d: potentials on a thread of their own since the members were gathered: %" PRIu64
                      " of %" PRIu64 " groups in %.3f s; %.3f s waited for them here", k, E->found, ng[k],
                      E->secs_potential, tm.potential);
        set_hosts(&in, k, halos[k], ng[k], k ? ng[k - 1] : 0);
        hs_blank_G(&o, halos[k], ng[k]);
        hs_masses_level(&o.m, &hin, k, halos[k], ng[k], &o.pot, in.snap.nsource, o.device == DEV_GPU);
        uint64_t grouped = 0, ntree = 0, cand = 0;
        for (uint64_t g = 0; g < ng[k]; g++) {
            grouped += halos[k][g].n;
            ntree += halos[k][g].method == FK_POT_BY_TREE;
            cand += halos[k][g].candidates;
        }
        prog_info("level %d: %" PRIu64 " groups holding %" PRIu64 " of %" PRIu64 " particles, largest %" PRIu64, k, ng[k],
                  grouped, n, ng[k] ? halos[k][0].n : 0);
        if (o.centre == FK_CENTRE_MBP)
            prog_info("level %d: potentials: %" PRIu64 " groups by exact sums, %" PRIu64
                      " by the tree (%" PRIu64 " candidates summed exactly)", k, ng[k] - ntree, ntree, cand);
        prog_info("level %d: %.3f s: gather %.3f s, potentials %.3f s (%s), profiles %.3f s", k, prog_now() - tk,
                  tm.gather, tm.potential, o.device == DEV_GPU ? "GPU" : "CPU", tm.profile);
    }
    free(grp);

    if (o.format == 2) {
        if (write_hcol(w, &in, &o, &err)) prog_fail(&err);
        for (int k = 0; k < in.nlevels; k++)
            if (write_halo(w, &o, k, halos[k], ng[k], &err)) prog_fail(&err);
        hs_masses_chunks(&o.m, w, in.nlevels, in.snap.nsource);
        hs_rank_chunks(w, &in, &o, halos, ng); /* each group's members most bound first */
        if (fk_writer_finish(w, &err)) prog_fail(&err);
        fk_writer_free(w);
    } else if (o.format == 3) {
        hdf5_write(out, snapout, &in, &o, halos, ng);
    } else if (o.format == 4) {
        hs_masses_write_grp(&o.m, fk_output_file(out), in.nlevels, in.snap.nsource);
    } else {
        FILE *f = fk_output_file(out);
        if (o.format == 1) {
            write_csv_header(f, &o);
        } else {
            write_header(f, &in, &o, ng);
        }
        for (int k = 0; k < in.nlevels; k++) write_rows(f, &o, halos[k], ng[k], o.format == 1 ? ',' : ' ');
    }
    prog_commit(out);
    char wait[48] = ""; /* a pipe's writer kept it waiting: not the work */
    if (in.waited > 0) snprintf(wait, sizeof wait, "; waited %.2f s for the input", in.waited);
    prog_info("%d level%s, read in %.2f s, %.2f s in all%s%s", in.nlevels, in.nlevels > 1 ? "s" : "", t_read,
              prog_now() - t0 - in.waited, in.replaced ? "; the input's HALO and HCOL replaced" : "", wait);
    for (int k = 0; k < in.nlevels; k++) free(halos[k]), free(in.lv[k].gid), free(in.lv[k].gpar);
    free(in.pos), free(in.vel), free(in.mass), free(in.ids), free(in.pids), free(in.type), free(type_chunk), free(in.snaptext);
    hs_masses_free(&o.m, in.nlevels);
    fk_halo_early_free(&ea.e);
    return EXIT_OK;
}
