/* test_dist_node.c - a rank's share of its node's cores: widened from a narrow binding, a wide one kept. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "dist.h"

/* Binds this process to its first allowed CPU, as Open MPI binds one of
 * one or two ranks; returns how many it could use before. */
static int bind_to_one(void)
{
    cpu_set_t was, one;
    CHECK(sched_getaffinity(0, sizeof was, &was) == 0);
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &was)) {
            CPU_SET(c, &one);
            break;
        }
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
    return CPU_COUNT(&was);
}

static int allowed(void)
{
    cpu_set_t now;
    CHECK(sched_getaffinity(0, sizeof now, &now) == 0);
    return CPU_COUNT(&now);
}

int main(void)
{
    int lr = -1, ls = -1;
    fk_dist_node(&lr, &ls);
    CHECK(lr == 0 && ls == 1); /* before any run: alone on the node */
    fk_dist_set_node(3, 4);
    fk_dist_node(&lr, &ls);
    CHECK(lr == 3 && ls == 4);

    int ncpu = bind_to_one();
    fk_cores got;
    if (ncpu < 2) {
        printf("test_dist_node: one CPU: nothing to widen\n");
        CHECK(fk_dist_share_cores(0, 1, 0, &got) == 0 && got.after == 1);
        CHECK_DONE();
    }
    /* The only rank of its node, bound to one core: it takes them all. */
    CHECK(fk_dist_share_cores(0, 1, 0, &got) == 1);
    CHECK_MSG(got.before == 1 && got.after == ncpu && got.node == ncpu && allowed() == ncpu,
              "before %d, after %d, node %d, allowed %d, of %d", got.before, got.after, got.node, allowed(), ncpu);
    fk_cores seen;
    fk_dist_cores(&seen);
    CHECK(!memcmp(&seen, &got, sizeof got));

    /* Already as wide as its share: kept as it is. */
    CHECK(fk_dist_share_cores(0, 1, 0, &got) == 0 && got.after == ncpu && allowed() == ncpu);

    /* Two ranks on the node: each takes its half, the second the upper one. */
    if (ncpu >= 4) {
        bind_to_one();
        CHECK(fk_dist_share_cores(1, 2, 0, &got) == 1);
        CHECK_MSG(got.after == ncpu - ncpu / 2 && allowed() == got.after && got.first >= 0 && got.last >= got.first,
                  "after %d (first %d, last %d) of %d", got.after, got.first, got.last, ncpu);
    }

    /* Unbound, but sharing the node with another rank: each takes its half. */
    CHECK(fk_dist_share_cores(0, 1, 0, &got) >= 0 && allowed() == ncpu); /* unbound again (the block above halved it) */
    CHECK(fk_dist_share_cores(1, 2, 1, &got) == 1);
    CHECK_MSG(got.before == ncpu && got.after == ncpu - ncpu / 2 && allowed() == got.after,
              "before %d, after %d, of %d", got.before, got.after, ncpu);
    CHECK(fk_dist_share_cores(0, 1, 0, &got) == 1 && allowed() == ncpu); /* alone again: all of them */

    /* As many ranks as cores: a share of one is no wider than one core. */
    bind_to_one();
    CHECK(fk_dist_share_cores(ncpu - 1, ncpu, 0, &got) == 0 && got.after == 1 && allowed() == 1);
    CHECK_DONE();
}
