/* unbind_gpu.h - the unbinding's GPU hooks and device, as halostats and fofkit_halos give them to fk_unbind_halos_run. */
#ifndef FK_UNBIND_GPU_H
#define FK_UNBIND_GPU_H

#include "unbind.h"

#ifdef __cplusplus
extern "C" {
#endif

/* With a usable GPU: p's tree and update hooks the GPU's, and run's device
 * (each large group's S held there), its budget and bytes, its big groups
 * (FK_UNBIND_GPU_ABOVE) and its feeders (3/8 of the nthreads threads, at
 * least 1). Returns 1 when it set them, 0 (nothing changed) without a GPU. */
int fk_unbind_use_gpu(fk_unbind_params *p, fk_unbind_run *run, int nthreads);

#ifdef __cplusplus
}
#endif

#endif
