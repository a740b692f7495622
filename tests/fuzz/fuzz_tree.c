/* fuzz_tree.c - fuzz harness: kdbuild's and foflink's chunk checks (SNAP, POS, VEL, TREE, TBOX), then build and link. */
#include <math.h>

#include "fuzz.h"
#include "kdtree.h"
#include "link.h"
#include "snap.h"
#include "stream.h"

/* The input is a stream (CRCs bypassed). It is read as kdbuild and foflink
 * read it, through the same library calls: SNAP (fk_snap_read), POS and VEL
 * (fk_snap_check_chunk, then fk_snap_check_positions), TREE (fk_tree_parse),
 * TBOX (rows = nodes, 6 <f4), then the tree against the positions
 * (fk_tree_check). What passes the checks is used as the programs use it:
 * checked positions get a CPU tree that must pass fk_tree_check, and a
 * checked tree (the stream's, or the one built) is linked by the tree
 * linker, whose sink array must equal the all-pairs linker's, particle for
 * particle. Linking is limited to small snapshots (MAX_LINK particles) so
 * that one input takes milliseconds. */

#define MAX_LINK 400

/* Links pos (n particles in t's order) with the tree and by brute force,
 * 3D and 6D, at a linking length that the input's first position chooses. */
static void link_both(const fk_snap *s, const fk_tree *t, const float *pos, const float *vel)
{
    if (s->n == 0 || s->n > MAX_LINK) return;
    fk_linkopts o = {0};
    o.periodic = s->periodic;
    o.box = s->box;
    /* From 1/64 to 1/4 of the box: few to many friends. */
    uint32_t u;
    memcpy(&u, &pos[0], 4);
    o.l = s->box * (1.0 + (double)(u % 16)) / 64.0;
    o.nthreads = 1;
    fk_error err = {0};
    if (fk_link_check(&o, &err)) return;
    for (int sixd = 0; sixd < 1 + (vel != NULL); sixd++) {
        o.psi = sixd ? 0.5 : 0;
        uint32_t *a = malloc(s->n * 4), *b = malloc(s->n * 4);
        if (!a || !b) abort();
        int sa = fk_link_cpu(t, pos, vel, &o, a, NULL, &err);
        int sb = fk_link_brute_cpu(s->n, pos, vel, &o, b, NULL, &err);
        FUZZ_ASSERT(sa == FK_OK && sb == FK_OK);
        for (uint64_t i = 0; i < s->n; i++) FUZZ_ASSERT(a[i] == b[i]);
        free(a);
        free(b);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fuzz_memfile(data, size);
    if (!f) return 0;
    fk_reader *r;
    fk_error err = {0};
    int st = fk_reader_open(&r, f, "fuzz", &err);
    if (st) {
        fclose(f);
        return 0;
    }
    fk_chunk c;
    fk_snap s;
    char *snaptext = NULL;
    float *pos = NULL, *vel = NULL;
    fk_tree tree;
    memset(&tree, 0, sizeof tree);
    int have_tree = 0;
    st = fk_snap_read(r, &c, &s, &snaptext, "fuzz", &err);
    while (st == FK_OK && (st = fk_reader_next(r, &c, &err)) == 1) {
        st = FK_OK;
        if (!strcmp(c.tag, "POS") || !strcmp(c.tag, "VEL")) {
            float **dest = c.tag[0] == 'P' ? &pos : &vel;
            if (*dest) break; /* the programs stop at a second one */
            st = fk_snap_check_chunk(&s, &c, "<f4", 3, "fuzz", &err);
            if (!st) st = fk_reader_load(r, (void **)dest, &err);
            if (!st && dest == &pos) st = fk_snap_check_positions(&s, pos, "fuzz", &err);
        } else if (!strcmp(c.tag, "TREE")) {
            if (have_tree) break;
            char *text;
            st = fk_reader_load_text(r, &text, &err);
            if (!st) {
                st = fk_tree_parse(text, &tree, "fuzz", &err);
                free(text);
            }
            have_tree = st == FK_OK;
        } else if (!strcmp(c.tag, "TBOX")) {
            if (!have_tree || tree.box) break;
            if (strcmp(c.dtype, "<f4") || c.ncols != 6 || c.nrows != tree.nnodes) break;
            st = fk_reader_load(r, (void **)&tree.box, &err);
        }
    }
    FUZZ_ASSERT_ERR(st, err);
    if (st >= 0 && pos && vel) {
        /* foflink's 6D check: finite velocities (else no 6D linking). */
        for (uint64_t i = 0; i < 3 * s.n && vel; i++)
            if (!isfinite(vel[i])) {
                free(vel);
                vel = NULL;
            }
    }
    if (st >= 0 && pos && s.n <= (1u << 16)) {
        /* kdbuild: a tree over checked positions passes foflink's check. */
        float *p = malloc(s.n ? s.n * 12 : 1);
        if (!p) abort();
        memcpy(p, pos, s.n * 12);
        fk_tree built;
        uint32_t *perm = NULL;
        uint32_t leaf = 2 + (uint32_t)(s.n % 15);
        if (fk_tree_build_cpu(p, s.n, leaf, &built, &perm, &err) == FK_OK) {
            FUZZ_ASSERT(fk_tree_check(&built, p, "fuzz", &err) == FK_OK);
            for (uint64_t i = 0; i < s.n; i++) {
                FUZZ_ASSERT(perm[i] < s.n);
                FUZZ_ASSERT(memcmp(p + 3 * i, pos + 3 * (uint64_t)perm[i], 12) == 0);
            }
            float *v = NULL;
            if (vel) {
                v = malloc(s.n * 12 + 1);
                if (!v) abort();
                for (uint64_t i = 0; i < s.n; i++) memcpy(v + 3 * i, vel + 3 * (uint64_t)perm[i], 12);
            }
            link_both(&s, &built, p, v);
            free(v);
            fk_tree_free(&built);
        }
        free(perm);
        free(p);
    }
    if (st >= 0 && pos && tree.box && tree.n == s.n) {
        /* foflink: the stream's own tree, checked, then linked. */
        fk_error e2 = {0};
        int ts = fk_tree_check(&tree, pos, "fuzz", &e2);
        FUZZ_ASSERT_ERR(ts, e2);
        if (ts == FK_OK) link_both(&s, &tree, pos, vel);
    }
    fk_tree_free(&tree);
    free(pos);
    free(vel);
    free(snaptext);
    fk_reader_close(r);
    fclose(f);
    return 0;
}
