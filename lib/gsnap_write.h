/* gsnap_write.h - a Gadget-family snapshot read into arrays (gsnap.h) written as a stream: SNAP POS VEL MASS TYPE ID PID. */
#ifndef FK_GSNAP_WRITE_H
#define FK_GSNAP_WRITE_H

#include <stdio.h>

#include "error.h"
#include "gsnap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes s as a stream to f (not closed; zlevel as fk_writer_open): SNAP
 * (source names the input), then POS, VEL, MASS, TYPE and ID (<u4 up to
 * 2^31 source particles, as tipsy2bin writes it, else <u8), PID (<u8:
 * the snapshot's own particle IDs, ParticleIDs or the ID block), then END.
 * Returns FK_OK, FK_EIO or FK_ENOMEM. */
int fk_gsnap_write(const fk_gsnap *s, const char *source, FILE *f, int zlevel, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
