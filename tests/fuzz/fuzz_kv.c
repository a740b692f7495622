/* fuzz_kv.c - fuzz harness: "key value" text records and the SNAP, TREE and GRPS parsers, with format round trips. */
#include <math.h>

#include "fuzz.h"
#include "groups.h"
#include "kdtree.h"
#include "kv.h"
#include "snap.h"

/* The input is the text of a metadata chunk (up to its first NUL, as
 * fk_reader_load_text refuses a NUL inside). It is looked up as every reader
 * does, and parsed as SNAP, TREE and GRPS; a record that parses must hold
 * what the parser promises, and formatting it must give text that parses to
 * the same values. */

static void lookups(const char *text)
{
    static const char *keys[] = {"n", "box", "origin", "time", "source", "l", "b", "psi", "columns", "ngroups", "x", ""};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        char s[16];
        uint64_t u;
        double d;
        fk_error e1 = {0}, e2 = {0}, e3 = {0};
        int st = fk_kv_get_str(text, keys[k], s, sizeof s, "fuzz", &e1);
        FUZZ_ASSERT_ERR(st, e1);
        if (st == FK_OK) FUZZ_ASSERT(strlen(s) < sizeof s && fk_kv_has(text, keys[k]));
        FUZZ_ASSERT_ERR(fk_kv_get_u64(text, keys[k], &u, "fuzz", &e2), e2);
        st = fk_kv_get_dbl(text, keys[k], &d, "fuzz", &e3);
        FUZZ_ASSERT_ERR(st, e3);
        if (st == FK_OK) FUZZ_ASSERT(isfinite(d));
    }
}

static void snap_record(const char *text)
{
    fk_snap s, t;
    fk_error err = {0};
    int st = fk_snap_parse(text, &s, "fuzz", &err);
    FUZZ_ASSERT_ERR(st, err);
    if (st) return;
    /* The counts add up (in exact arithmetic, not modulo 2^64). */
    FUZZ_ASSERT(s.ntype[0] <= s.n && s.ntype[1] <= s.n - s.ntype[0] && s.ntype[2] == s.n - s.ntype[0] - s.ntype[1]);
    for (int k = 0; k < 3; k++) FUZZ_ASSERT(s.ntype[k] <= s.nsource_type[k] && s.nsource_type[k] <= s.nsource);
    FUZZ_ASSERT(s.n <= s.nsource);
    FUZZ_ASSERT(s.box > 0 && isfinite(s.origin) && isfinite((float)(s.origin + s.box)));
    char *again;
    FUZZ_ASSERT(fk_snap_format(&s, &again, &err) == FK_OK);
    st = fk_snap_parse(again, &t, "fuzz", &err);
    FUZZ_ASSERT(st == FK_OK);
    /* A value is one line: fk_kv_str writes a carriage return as a space. */
    for (char *p = s.source; *p; p++)
        if (*p == '\r') *p = ' ';
    FUZZ_ASSERT(memcmp(&s, &t, sizeof s) == 0);
    free(again);
}

static void tree_record(const char *text)
{
    fk_tree t, u;
    fk_error err = {0};
    int st = fk_tree_parse(text, &t, "fuzz", &err);
    FUZZ_ASSERT_ERR(st, err);
    if (st) return;
    FUZZ_ASSERT(t.leafsize >= 2 && t.depth <= FK_TREE_MAX_DEPTH && t.box == NULL);
    FUZZ_ASSERT(memchr(t.builder, '\0', sizeof t.builder) != NULL);
    char *again;
    FUZZ_ASSERT(fk_tree_format(&t, &again, &err) == FK_OK);
    FUZZ_ASSERT(fk_tree_parse(again, &u, "fuzz", &err) == FK_OK);
    FUZZ_ASSERT(u.n == t.n && u.leafsize == t.leafsize && u.depth == t.depth && u.nnodes == t.nnodes);
    free(again);
}

static void groups_record(const char *text)
{
    fk_groups g, h;
    fk_error err = {0};
    int st = fk_groups_parse(text, &g, "fuzz", &err);
    FUZZ_ASSERT_ERR(st, err);
    if (st) return;
    FUZZ_ASSERT(g.ngroups <= UINT32_MAX && g.level == 0);
    char *again;
    FUZZ_ASSERT(fk_groups_format(&g, &again, &err) == FK_OK);
    FUZZ_ASSERT(fk_groups_parse(again, &h, "fuzz", &err) == FK_OK);
    FUZZ_ASSERT(memcmp(&g, &h, sizeof g) == 0);
    free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    lookups(text);
    snap_record(text);
    tree_record(text);
    groups_record(text);
    free(text);
    return 0;
}
