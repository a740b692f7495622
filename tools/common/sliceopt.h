/* sliceopt.h - the --slice=K/R option of the snapshot converters: slice K (from 0) of R. */
#ifndef FK_SLICEOPT_H
#define FK_SLICEOPT_H

#include <stdint.h>

/* Parses "K/R" (0 <= K < R, R >= 1) into *k and *r; a usage error otherwise. */
void prog_parse_slice(const char *arg, uint32_t *k, uint32_t *r);

#endif
