/* distrun.h - groups under mpirun: the options handed to the distributed run, its messages on rank 0 alone. */
#ifndef GROUPS_DISTRUN_H
#define GROUPS_DISTRUN_H

#include <stdint.h>

#include "prog.h"

/* Runs groups on this rank's stream (input holds "%r"; with overlay the
 * output an overlay of it); returns the exit status on success and exits
 * (after a message on rank 0) on failure. */
int groups_dist(const char *input, const prog_std *std, int grp, uint32_t level, uint64_t minsize, int overlay);

#endif
