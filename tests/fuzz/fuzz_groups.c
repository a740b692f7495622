/* fuzz_groups.c - fuzz harness: groups' and halostats' chunk checks (SINK, ID, GID, GPAR, GRPS) and what they feed. */
#include <math.h>

#include "fuzz.h"
#include "groups.h"
#include "groupsrun.h"
#include "halostats.h"
#include "potential.h"
#include "snap.h"
#include "stream.h"

/* The input is a stream (CRCs bypassed), read as groups and halostats read
 * it, through the same library calls: SNAP (fk_snap_read), ID
 * (fk_snap_check_chunk, fk_snap_load_ids, then fk_groups_check_ids), SINK of
 * each level (<u4 per particle), POS VEL MASS, and the stream's own GID
 * (<u4 x nsource), GRPS (fk_groups_parse) and GPAR of each level.
 *
 * groups: each SINK level is resolved (fk_groups_resolve) and numbered
 * (fk_groups_number), and the result must keep the promises of groups.h:
 * every chain ends at a sink, group sizes decrease with the number, the
 * counts add up; consecutive levels give parents (fk_groups_parents).
 * halostats: the stream's GID levels, with GRPS's group count, are checked
 * by fk_groups_parents and turned into halos (fk_halostats_compute and
 * fk_halostats_centres), which must refuse a group id beyond the count.
 * groups' own reading (fk_groups_read, and fk_groups_read_until then
 * _read_rest, which start the work once the LINK's levels have come) must
 * agree: both fail or both give the same IDs and SINK levels.
 * Sizes are limited (MAX_SOURCE rows) so that one input takes milliseconds. */

#define LEVELS 4
#define MAX_SOURCE (1u << 16)

typedef struct input {
    fk_snap s;
    uint64_t *ids;
    uint32_t *sink[LEVELS], *gid[LEVELS], *gpar[LEVELS];
    uint64_t ngpar[LEVELS];
    fk_groups grps[LEVELS];
    int have_grps[LEVELS];
    float *pos, *vel, *mass;
} input;

/* Loads a <u4 x 1 chunk of rows rows (0: any) into *dest; 0 when done, 1 when
 * refused (as the programs refuse it), or a negative status. */
static int load_u32(fk_reader *r, const fk_chunk *c, uint64_t rows, uint32_t **dest, fk_error *err)
{
    if (*dest || strcmp(c->dtype, "<u4") || c->ncols != 1 || (rows && c->nrows != rows)) return 1;
    return fk_reader_load(r, (void **)dest, err);
}

static int read_input(fk_reader *r, input *in, fk_error *err)
{
    fk_chunk c;
    char *text;
    int st = fk_snap_read(r, &c, &in->s, &text, "fuzz", err);
    if (st) return st;
    free(text);
    if (in->s.nsource > MAX_SOURCE) return 1;
    while ((st = fk_reader_next(r, &c, err)) == 1) {
        st = FK_OK;
        int lev = c.level < LEVELS ? (int)c.level : -1;
        if (!strcmp(c.tag, "ID")) {
            if (in->ids) return 1;
            st = fk_snap_check_chunk(&in->s, &c, NULL, 1, "fuzz", err);
            if (!st) st = fk_snap_load_ids(r, &c, &in->ids, err);
        } else if (!strcmp(c.tag, "SINK") && lev >= 0) {
            if (in->sink[lev]) return 1;
            st = fk_snap_check_chunk(&in->s, &c, "<u4", 1, "fuzz", err);
            if (!st) st = fk_reader_load(r, (void **)&in->sink[lev], err);
        } else if (!strcmp(c.tag, "POS") || !strcmp(c.tag, "VEL") || !strcmp(c.tag, "MASS")) {
            float **dest = c.tag[0] == 'P' ? &in->pos : c.tag[0] == 'V' ? &in->vel : &in->mass;
            if (*dest) return 1;
            st = fk_snap_check_chunk(&in->s, &c, "<f4", c.tag[0] == 'M' ? 1 : 3, "fuzz", err);
            if (!st) st = fk_reader_load(r, (void **)dest, err);
        } else if (!strcmp(c.tag, "GID") && lev >= 0) {
            st = load_u32(r, &c, in->s.nsource, &in->gid[lev], err);
        } else if (!strcmp(c.tag, "GPAR") && lev >= 1) {
            st = load_u32(r, &c, 0, &in->gpar[lev], err);
            in->ngpar[lev] = c.nrows;
        } else if (!strcmp(c.tag, "GRPS") && lev >= 0) {
            if (in->have_grps[lev] || !(c.flags & FK_CF_TEXT)) return 1;
            st = fk_reader_load_text(r, &text, err);
            if (!st) {
                st = fk_groups_parse(text, &in->grps[lev], "fuzz", err);
                free(text);
            }
            in->have_grps[lev] = st == FK_OK;
        }
        if (st) return st;
    }
    return st;
}

/* groups: resolve and number every SINK level, check what comes out. */
static void run_groups(input *in)
{
    const uint64_t n = in->s.n, ns = in->s.nsource;
    uint32_t *gid[LEVELS] = {0};
    fk_groups info[LEVELS];
    for (int k = 0; k < LEVELS && in->sink[k]; k++) {
        fk_error err = {0};
        uint32_t *root = in->sink[k];
        int st = fk_groups_resolve(root, n, "fuzz", &err);
        FUZZ_ASSERT_ERR(st, err);
        if (st) break;
        for (uint64_t i = 0; i < n; i++) FUZZ_ASSERT(root[i] < n && root[root[i]] == root[i]);
        uint64_t minsize = 1 + (uint64_t)k;
        gid[k] = malloc(ns ? ns * 4 : 1);
        if (!gid[k]) abort();
        st = fk_groups_number(root, in->ids, n, ns, minsize, gid[k], &info[k], &err);
        FUZZ_ASSERT(st == FK_OK);
        /* Sizes: group g has size[g] members, decreasing with g. */
        uint64_t *size = calloc(info[k].ngroups + 1, sizeof *size), grouped = 0;
        if (!size) abort();
        for (uint64_t r = 0; r < ns; r++) {
            FUZZ_ASSERT(gid[k][r] <= info[k].ngroups);
            size[gid[k][r]]++;
        }
        for (uint64_t g = 1; g <= info[k].ngroups; g++) {
            FUZZ_ASSERT(size[g] >= minsize && (g == 1 || size[g] <= size[g - 1]));
            grouped += size[g];
        }
        FUZZ_ASSERT(grouped == info[k].ngrouped && info[k].largest == (info[k].ngroups ? size[1] : 0));
        FUZZ_ASSERT(info[k].ngroups <= info[k].nfound && info[k].nfound <= n);
        free(size);
        /* Members of one group share a root. */
        for (uint64_t i = 0; i < n; i++) {
            uint32_t g = gid[k][in->ids[i]];
            uint64_t rid = in->ids[root[i]];
            FUZZ_ASSERT(g == gid[k][rid]);
        }
        if (k > 0 && gid[k - 1]) {
            uint32_t *par = malloc((info[k].ngroups + 1) * sizeof *par);
            if (!par) abort();
            fk_error e2 = {0};
            st = fk_groups_parents(gid[k - 1], gid[k], ns, info[k].ngroups, par, (uint32_t)k, "fuzz", &e2);
            FUZZ_ASSERT_ERR(st, e2);
            for (uint64_t g = 1; st == FK_OK && g <= info[k].ngroups; g++)
                FUZZ_ASSERT(par[g] >= 1 && par[g] <= info[k - 1].ngroups);
            free(par);
        }
    }
    for (int k = 0; k < LEVELS; k++) free(gid[k]);
}

/* halostats: the stream's own GID levels. */
static void run_halostats(input *in)
{
    const uint64_t n = in->s.n, ns = in->s.nsource;
    if (!in->pos || !in->vel || !in->mass) return;
    uint32_t *grp = malloc(n ? n * 4 : 1);
    if (!grp) abort();
    for (int k = 0; k < LEVELS && in->gid[k]; k++) {
        uint64_t ng = in->have_grps[k] ? in->grps[k].ngroups : 0;
        for (uint64_t i = 0; i < n; i++) {
            grp[i] = in->gid[k][in->ids[i]];
            if (!in->have_grps[k] && grp[i] > ng) ng = grp[i];
        }
        if (ng > MAX_SOURCE) break;
        fk_halo *h = malloc((ng ? ng : 1) * sizeof *h);
        if (!h) abort();
        fk_halo_input hin = {n, in->pos, in->vel, in->mass, in->ids, grp, in->s.periodic, in->s.box, in->s.origin, 0, 0, 0, NULL, 0};
        fk_error err = {0};
        int st = fk_halostats_compute(&hin, ng, h, "fuzz", &err);
        FUZZ_ASSERT_ERR(st, err);
        int bad_id = 0;
        for (uint64_t i = 0; i < n; i++) bad_id |= grp[i] > ng;
        if (bad_id) FUZZ_ASSERT(st != FK_OK);
        if (st == FK_OK) {
            fk_pot_params pot;
            fk_pot_defaults(&pot);
            pot.eps = in->s.box / 100;
            fk_centre centre = n <= 256 ? FK_CENTRE_MBP : FK_CENTRE_COM;
            st = fk_halostats_centres(&hin, ng, centre, &pot, NULL, h, NULL, &err);
            FUZZ_ASSERT_ERR(st, err);
            uint64_t members = 0;
            for (uint64_t g = 0; g < ng; g++) members += h[g].n;
            uint64_t grouped = 0;
            for (uint64_t i = 0; i < n; i++) grouped += grp[i] != 0;
            FUZZ_ASSERT(members == grouped);
        }
        if (k > 0) {
            uint32_t *par = malloc((ng + 1) * sizeof *par);
            if (!par) abort();
            fk_error e2 = {0};
            st = fk_groups_parents(in->gid[k - 1], in->gid[k], ns, ng, par, (uint32_t)k, "fuzz", &e2);
            FUZZ_ASSERT_ERR(st, e2);
            free(par);
        }
        free(h);
    }
    free(grp);
}

/* data read by groups in one pass (until = 0) or two; < 0 when refused. */
static int groups_read(const uint8_t *data, size_t size, int until, fk_snap *s, fk_groups_in *gin)
{
    FILE *f = fuzz_memfile(data, size);
    if (!f) return -1;
    fk_reader *r;
    fk_error err = {0};
    char *text = NULL;
    fk_chunk c;
    int st = fk_reader_open(&r, f, "fuzz", &err);
    if (st) {
        fclose(f);
        return -1;
    }
    st = fk_snap_read(r, &c, s, &text, "fuzz", &err);
    free(text);
    if (!st && s->nsource > MAX_SOURCE) st = -1;
    if (!st && !until) st = fk_groups_read(r, NULL, s, "fuzz", gin, &err);
    if (!st && until) {
        st = fk_groups_read_until(r, NULL, s, "fuzz", gin, &err);
        if (!st) st = fk_groups_read_rest(r, NULL, s, "fuzz", gin, &err);
        if (st) fk_groups_in_free(gin);
    }
    if (st > 0) FUZZ_ASSERT_ERR(st, err);
    fk_reader_close(r);
    fclose(f);
    return st ? -1 : 0;
}

static void compare_reads(const uint8_t *data, size_t size)
{
    fk_snap s1, s2;
    fk_groups_in a, b;
    memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
    int ra = groups_read(data, size, 0, &s1, &a), rb = groups_read(data, size, 1, &s2, &b);
    FUZZ_ASSERT(ra == rb);
    if (ra == 0 && rb == 0) {
        FUZZ_ASSERT(a.nlevels == b.nlevels && s1.n == s2.n);
        FUZZ_ASSERT(!memcmp(a.ids, b.ids, s1.n * sizeof *a.ids));
        for (int k = 0; k < a.nlevels; k++) FUZZ_ASSERT(!memcmp(a.sinks[k], b.sinks[k], s1.n * sizeof *a.sinks[k]));
    }
    fk_groups_in_free(&a), fk_groups_in_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    compare_reads(data, size);
    FILE *f = fuzz_memfile(data, size);
    if (!f) return 0;
    fk_reader *r;
    fk_error err = {0};
    if (fk_reader_open(&r, f, "fuzz", &err)) {
        fclose(f);
        return 0;
    }
    input in;
    memset(&in, 0, sizeof in);
    int st = read_input(r, &in, &err);
    FUZZ_ASSERT_ERR(st, err);
    if (st >= 0 && in.ids) {
        fk_error e2 = {0};
        st = fk_groups_check_ids(in.ids, in.s.n, in.s.nsource, "fuzz", &e2);
        FUZZ_ASSERT_ERR(st, e2);
        if (st == FK_OK) {
            run_groups(&in);
            run_halostats(&in);
        }
    }
    free(in.ids);
    for (int k = 0; k < LEVELS; k++) free(in.sink[k]), free(in.gid[k]), free(in.gpar[k]);
    free(in.pos), free(in.vel), free(in.mass);
    fk_reader_close(r);
    fclose(f);
    return 0;
}
