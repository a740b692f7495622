/* rankquiet.c - under mpirun, the ranks above 0 keep quiet while options are parsed (every rank would say the same). */
#include "rankquiet.h"

#include "dist.h"

#include <fcntl.h>
#include <unistd.h>

static int saved = -1;

void prog_rank_quiet(int on)
{
    if (on && saved < 0 && fk_dist_env_rank() > 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null < 0) return;
        saved = dup(STDERR_FILENO);
        dup2(null, STDERR_FILENO);
        close(null);
    } else if (!on && saved >= 0) {
        dup2(saved, STDERR_FILENO);
        close(saved);
        saved = -1;
    }
}
