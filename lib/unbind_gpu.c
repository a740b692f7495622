/* unbind_gpu.c - the unbinding's GPU hooks and device, as halostats and fofkit_halos give them to fk_unbind_halos_run. */
#include "unbind_gpu.h"

#include <stddef.h>

#include "gpu.h"

/* fk_gpu_pot_tree in the shape of fk_pot_tree. */
static int gpu_tree(const fk_pot_members *g, const fk_pot_params *p, double *phi, fk_error *err)
{
    return fk_gpu_pot_tree(g, p, phi, NULL, err);
}

static const fk_unbind_device gpu_device = {fk_gpu_unbind_open,     fk_gpu_unbind_sum,     fk_gpu_unbind_get,
                                            fk_gpu_unbind_load,     fk_gpu_unbind_sums,    fk_gpu_unbind_energies,
                                            fk_gpu_unbind_drop,     fk_gpu_unbind_members, fk_gpu_unbind_close};

int fk_unbind_use_gpu(fk_unbind_params *p, fk_unbind_run *run, int nthreads)
{
    fk_gpuinfo gi;
    fk_error err = {0};
    if (fk_gpu_probe(&gi, &err) != FK_OK || !gi.present) return 0;
    p->tree = gpu_tree;
    p->update = fk_gpu_unbind_update;
    const int th = nthreads * 3 / 8;
    run->bytes = fk_gpu_unbind_bytes;
    run->budget = fk_gpu_unbind_budget();
    run->device = &gpu_device;
    run->feeders = th > 1 ? th : 1;
    run->big_above = FK_UNBIND_GPU_ABOVE;
    return 1;
}
