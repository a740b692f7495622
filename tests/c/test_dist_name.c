/* test_dist_name.c - the rank pattern of distributed runs: "%r" and "%%" in file names, and when a run is distributed. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dist.h"

static void expands(const char *pattern, int rank, const char *want)
{
    fk_error err = {0};
    char *got = NULL;
    CHECK_MSG(fk_dist_expand(pattern, rank, &got, &err) == FK_OK, "%s: %s", pattern, err.msg);
    CHECK_MSG(got && !strcmp(got, want), "%s on rank %d: %s, not %s", pattern, rank, got ? got : "(none)", want);
    free(got);
}

int main(void)
{
    expands("in.%r.fof", 0, "in.0.fof");
    expands("in.%r.fof", 12, "in.12.fof");
    expands("%r/%r", 3, "3/3");
    expands("plain.fof", 5, "plain.fof");
    expands("100%%.%r", 7, "100%.7");
    expands("", 1, "");
    fk_error err = {0};
    char *got = NULL;
    CHECK(fk_dist_expand("in.%d.fof", 0, &got, &err) == FK_EINVAL && !got);
    CHECK(strstr(err.msg, "must be followed by r") != NULL);
    fk_error_clear(&err);
    CHECK(fk_dist_expand("trailing%", 0, &got, &err) == FK_EINVAL && !got);

    CHECK(fk_dist_has_pattern("a.%r"));
    CHECK(!fk_dist_has_pattern("a.%%r")); /* a percent sign, then r */
    CHECK(fk_dist_has_pattern("a.%%%r"));
    CHECK(!fk_dist_has_pattern("a.fof"));
    CHECK(!fk_dist_has_pattern(NULL));

    /* Distributed: more than one process under mpirun (Open MPI or PMI says
     * so), or a %r in a name; one process under mpirun runs as without it. */
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    const char *plain[] = {"in.fof", NULL}, *pattern[] = {"in.fof", "out.%r.fof"};
    CHECK(!fk_dist_wanted(plain, 2));
    CHECK(fk_dist_wanted(pattern, 2));
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    CHECK(fk_dist_wanted(plain, 2));
    setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
    CHECK(!fk_dist_wanted(plain, 2));
    CHECK(fk_dist_wanted(pattern, 2));
    unsetenv("OMPI_COMM_WORLD_SIZE");
    setenv("PMI_SIZE", "2", 1);
    CHECK(fk_dist_wanted(plain, 2));
    unsetenv("PMI_SIZE");
    setenv("OMPI_COMM_WORLD_RANK", "3", 1);
    CHECK(fk_dist_env_rank() == 3);
    unsetenv("OMPI_COMM_WORLD_RANK");
    CHECK(fk_dist_env_rank() == 0 || getenv("PMIX_RANK"));
    CHECK_DONE();
}
