/* device.h - the --device option shared by the programs that can run on a GPU. */
#ifndef FK_DEVICE_H
#define FK_DEVICE_H

#include "gpu.h"

enum { DEV_AUTO = 0, DEV_CPU = 1, DEV_GPU = 2 };

/* The default choice: $FOFKIT_DEVICE (auto, cpu or gpu) if set, else auto. */
int device_default(void);

/* Parses the value of --device (auto, cpu, gpu); a usage error otherwise. */
int device_parse(const char *arg);

/* Resolves a choice to DEV_CPU or DEV_GPU: auto takes the GPU when one is
 * usable, cpu never touches CUDA, gpu without a usable GPU exits with
 * status 3 and the reason. Fills info when a GPU was probed. Says which
 * with -v. */
int device_resolve(int choice, fk_gpuinfo *info);

#endif
