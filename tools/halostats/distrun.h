/* distrun.h - halostats under mpirun: each rank's grouped stream read, the catalogue written once by rank 0. */
#ifndef HALOSTATS_DISTRUN_H
#define HALOSTATS_DISTRUN_H

#include "hs.h"
#include "prog.h"

/* Runs halostats on this rank's stream (input with "%r" for the rank);
 * returns the exit status on success, exits (after one message, from rank
 * 0) on failure. */
int halostats_dist(const char *input, const prog_std *std, options *o);

#endif
