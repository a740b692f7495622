/* distrun.c - groups under mpirun: the options handed to the distributed run, its messages on rank 0 alone. */
#include "distrun.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dist_groups.h"
#include "dist.h"

int groups_dist(const char *input, const prog_std *std, int grp, uint32_t level, uint64_t minsize, int overlay)
{
    fk_error err = {0};
    int rank, size;
    if (fk_dist_init(&rank, &size, &err)) prog_fail(&err);
    fk_dgroups_opts o = {.input = input, .output = std->output, .format = grp ? FK_DGROUPS_GRP : FK_DGROUPS_STREAM,
                         .level = level, .minsize = minsize, .zlevel = std->zlevel, .force = std->force,
                         .overlay = overlay};
    fk_dgroups_info info;
    if (fk_dgroups_run(&o, &info, &err)) {
        /* every rank has the same status and message: rank 0 says it */
        if (rank == 0 && err.code == FK_EINVAL) prog_usage("%s", err.msg);
        if (rank == 0) prog_fail(&err);
        exit(err.code == FK_EINVAL ? EXIT_USAGE
             : err.code == FK_ENOMEM || err.code == FK_EDEVICE ? EXIT_RESOURCE
                                                               : EXIT_DATA);
    }
    if (rank != 0) return EXIT_OK;
    for (int k = 0; k < info.nlev; k++) {
        if (grp && k != (int)level) continue;
        const fk_groups *g = &info.lev[k];
        char lev[32] = "";
        if (info.nlev > 1) snprintf(lev, sizeof lev, "level %d: ", k);
        prog_info("%s%" PRIu64 " groups found, %" PRIu64 " kept (at least %" PRIu64 " members), largest %" PRIu64
                  ", %.1f%% of %" PRIu64 " particles grouped",
                  lev, g->nfound, g->ngroups, g->minsize, g->largest,
                  g->n ? 100.0 * (double)g->ngrouped / (double)g->n : 0.0, g->n);
    }
    prog_info("%d ranks: %.2f s (rank 0: read %.2f, IDs to owners %.2f, numbering %.2f, checks %.2f, writing %.2f);"
              " sent to other ranks %" PRIu64 " bytes in all, at most %" PRIu64 " by one rank",
              info.ranks, info.seconds, info.t_read, info.t_route, info.t_number, info.t_check, info.t_write,
              info.sent_sum, info.sent_max);
    return EXIT_OK;
}
