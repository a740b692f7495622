/* device.h - the --device option shared by the programs that can run on a GPU. */
#ifndef FK_DEVICE_H
#define FK_DEVICE_H

#include "gpu.h"

enum { DEV_AUTO = 0, DEV_CPU = 1, DEV_GPU = 2 };

/* The default choice: $FOFKIT_DEVICE (auto, cpu or gpu) if set, else auto. */
int device_default(void);

/* Parses the value of --device (auto, cpu, gpu, or gpu:N for the N-th
 * visible GPU); a usage error otherwise. */
int device_parse(const char *arg);

/* Resolves a choice to DEV_CPU or DEV_GPU: auto takes the GPU when one is
 * usable, cpu never touches CUDA, gpu without a usable GPU exits with
 * status 3 and the reason. The GPU is the one gpu:N named; else, under
 * mpirun (after fk_dist_init), the rank's place on its node modulo the GPUs
 * the node shows (CUDA_VISIBLE_DEVICES narrows them), so that each rank of a
 * node takes its own; else the first. It is selected for every later GPU
 * call (fk_gpu_select). When a node has more ranks than GPUs, its first rank
 * says once that they share them. Fills info when a GPU was probed. Says
 * which with -v. */
int device_resolve(int choice, fk_gpuinfo *info);

#endif
