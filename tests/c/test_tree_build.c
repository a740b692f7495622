/* test_tree_build.c - merger trees from catalogues made in memory (lib/tree_build, tree_ctrees): descendants, main progenitors by history, mergers, skips, roots, the depth-first order and the Consistent-Trees lines, as built. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tree_build.h"
#include "tree_ctrees.h"

/* One halo: its name and its members, runs of particle indices [lo, hi). */
typedef struct halo {
    const char *name;
    int runs[3][2];
} halo;

/* The series of tests/py/treecat.py (its docstring tells the story). */
static const halo S0[] = {{"A", {{0, 100}}}, {"B", {{100, 150}}}, {"C", {{200, 230}}}, {"D", {{300, 340}}}, {"E", {{400, 420}}}};
static const halo S1[] = {{"A1", {{0, 140}}}, {"D1", {{300, 325}}}, {"F", {{500, 535}}},
                          {"C1", {{200, 230}}}, {"D2", {{325, 340}}}, {"X", {{605, 620}, {600, 605}}}};
static const halo S2[] = {{"A2", {{0, 140}, {337, 340}}}, {"CF", {{200, 230}, {500, 535}}}, {"D3", {{300, 325}}},
                          {"D2b", {{325, 337}}}, {"E2", {{400, 420}}}, {"Z", {{605, 620}}}, {"Y", {{600, 605}}}};
static const halo *SNAP[3] = {S0, S1, S2};
static const int NH[3] = {5, 6, 7};
static const double TIME[3] = {0.25, 0.5, 1.0};

static void make(fk_treecat *c, int s)
{
    memset(c, 0, sizeof *c);
    const uint64_t n = (uint64_t)NH[s];
    c->time = TIME[s], c->redshift = 1 / TIME[s] - 1, c->hubble = 0.7, c->omega0 = 0.3, c->omega_lambda = 0.7, c->box = 1;
    c->nhalo = n;
    c->len = calloc(n, sizeof *c->len), c->first = calloc(n, sizeof *c->first), c->pid = malloc(n * sizeof *c->pid);
    c->mass = calloc(n, sizeof *c->mass), c->mvir = calloc(n, sizeof *c->mvir), c->vmax = calloc(n, sizeof *c->vmax);
    c->pos = calloc(3 * n, sizeof *c->pos), c->vel = calloc(3 * n, sizeof *c->vel);
    c->ids = malloc(1000 * sizeof *c->ids);
    for (uint64_t h = 0; h < n; h++) {
        c->first[h] = c->nids;
        c->pid[h] = -1;
        for (int r = 0; r < 3 && SNAP[s][h].runs[r][1]; r++)
            for (int i = SNAP[s][h].runs[r][0]; i < SNAP[s][h].runs[r][1]; i++) c->ids[c->nids++] = 1000 + i;
        c->len[h] = c->nids - c->first[h];
        c->mass[h] = c->mvir[h] = 1e8 * (double)c->len[h];
    }
}

/* Node g's name. */
static const char *name_of(const fk_mtree *t, int64_t g)
{
    if (g < 0) return "-";
    int s = fk_mtree_snap_of(t, g);
    return SNAP[s][(uint64_t)g - t->base[s]].name;
}

static int64_t node(const fk_mtree *t, const char *name)
{
    for (int s = 0; s < 3; s++)
        for (int h = 0; h < NH[s]; h++)
            if (!strcmp(SNAP[s][h].name, name)) return (int64_t)t->base[s] + h;
    return -1;
}

static void build(fk_mtree *t, int skip, int weight)
{
    fk_error err = {0};
    CHECK(fk_mtree_init(t, 3, &err) == FK_OK);
    for (int s = 0; s < 3; s++) {
        fk_treecat c;
        make(&c, s);
        CHECK(fk_mtree_add(t, s, s, &c, "now", "before", &err) == FK_OK);
        for (int g = 1; g <= skip + 1 && s - g >= 0; g++) {
            uint64_t shared;
            CHECK(fk_mtree_link(t, s - g, g, weight, "a", "b", &shared, &err) == FK_OK);
        }
    }
    CHECK(fk_mtree_finish(t, &err) == FK_OK);
}

static void check_desc(const fk_mtree *t, const char *h, const char *d)
{
    const char *got = name_of(t, t->node[node(t, h)].desc);
    CHECK_MSG(!strcmp(got, d), "%s's descendant is %s, built %s", h, got, d);
}

static void check_main(const fk_mtree *t, const char *h, const char *p)
{
    const char *got = name_of(t, t->node[node(t, h)].mainprog);
    CHECK_MSG(!strcmp(got, p), "%s's main progenitor is %s, built %s", h, got, p);
}

int main(void)
{
    fk_mtree t;
    build(&t, 1, FK_TREE_WEIGHT_COUNT);
    static const char *desc[][2] = {{"A", "A1"}, {"B", "A1"}, {"C", "C1"}, {"D", "D1"}, {"E", "E2"}, {"A1", "A2"},
                                    {"D1", "D3"}, {"F", "CF"}, {"C1", "CF"}, {"D2", "D2b"}, {"X", "Z"}, {"A2", "-"},
                                    {"Y", "-"}};
    for (size_t k = 0; k < sizeof desc / sizeof *desc; k++) check_desc(&t, desc[k][0], desc[k][1]);
    /* the most massive history: C1 (30 + 30) over F (35), though F is the heavier */
    static const char *mainp[][2] = {{"A1", "A"}, {"A2", "A1"}, {"CF", "C1"}, {"D3", "D1"}, {"E2", "E"}, {"Z", "X"},
                                     {"Y", "-"}, {"D2", "-"}};
    for (size_t k = 0; k < sizeof mainp / sizeof *mainp; k++) check_main(&t, mainp[k][0], mainp[k][1]);
    CHECK(t.node[node(&t, "A1")].nprog == 2 && t.node[node(&t, "CF")].nprog == 2 && t.node[node(&t, "A2")].nprog == 1);
    CHECK(t.ntrees == 7);
    /* the first tree: A2's, depth-first from the root, the main branch first */
    CHECK(t.order[t.tree_start[0]] == node(&t, "A2"));
    CHECK(t.tree_start[1] - t.tree_start[0] == 4);
    CHECK(t.order[1] == node(&t, "A1") && t.order[2] == node(&t, "A") && t.order[3] == node(&t, "B"));
    CHECK(t.node[node(&t, "A2")].last_mainleaf == t.node[node(&t, "A")].df);
    CHECK(t.node[node(&t, "A2")].last_prog == 3);
    CHECK(t.node[node(&t, "A")].next_coprog == t.node[node(&t, "B")].df);
    CHECK(t.node[node(&t, "B")].root == node(&t, "A2") && t.node[node(&t, "E")].root == node(&t, "E2"));
    /* major mergers: A1 (B 50 of A 100), CF (C1 30 and F 35) */
    CHECK(t.node[node(&t, "A1")].last_mm == 0.5 && t.node[node(&t, "A2")].last_mm == 0.5);
    CHECK(t.node[node(&t, "CF")].last_mm == 1.0 && t.node[node(&t, "D3")].last_mm == 0);
    /* the Consistent-Trees lines: the header's count, the first tree's root line */
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    fk_error err = {0};
    CHECK(fk_mtree_write_ctrees(&t, f, "test", "FoF groups", NULL, &err) == FK_OK);
    fclose(f);
    static const char head[] = "#scale(0) id(1) desc_scale(2) desc_id(3) num_prog(4) pid(5) ";
    CHECK(strncmp(buf, head, strlen(head)) == 0);
    CHECK(strstr(buf, "\n7\n#tree 11\n1.00000000 11 0.00000000 -1 1 -1 -1 -1 0 1.430000e+10 1.430000e+10 ") != NULL);
    CHECK(strstr(buf, "#Consistent Trees format") != NULL);
    free(buf);
    fk_mtree_free(&t);

    /* 1/rank in the list's order: X's first 15 members went to Z */
    build(&t, 1, FK_TREE_WEIGHT_RANK);
    check_desc(&t, "X", "Z");
    fk_mtree_free(&t);

    /* no skip: E has no descendant, E2 no progenitor, 8 trees */
    build(&t, 0, FK_TREE_WEIGHT_COUNT);
    check_desc(&t, "E", "-");
    check_main(&t, "E2", "-");
    CHECK(t.ntrees == 8);
    fk_mtree_free(&t);

    /* out of time order */
    fk_treecat c;
    CHECK(fk_mtree_init(&t, 2, &err) == FK_OK);
    make(&c, 1);
    CHECK(fk_mtree_add(&t, 0, 0, &c, "late.hdf5", "", &err) == FK_OK);
    make(&c, 0);
    CHECK(fk_mtree_add(&t, 1, 1, &c, "early.hdf5", "late.hdf5", &err) == FK_EFORMAT);
    CHECK_MSG(!strcmp(err.msg, "early.hdf5: its time a = 0.25 is not later than late.hdf5's, a = 0.5 (give the catalogues "
                               "in time order, earliest first)"), "%s", err.msg);
    fk_treecat_free(&c);
    fk_mtree_free(&t);
    CHECK_DONE();
}
