/* gpuarrays_none.c - gpuarrays.h in a build without CUDA: every array is host memory, every GPU call refused. */
#include "gpuarrays.h"

int fk_gpu_is_device_ptr(const void *p, int *dev)
{
    (void)p;
    if (dev) *dev = 0;
    return 0;
}

int fk_gpu_copy_to_host(void *dst, const void *src, uint64_t bytes, int dev, fk_error *err)
{
    (void)dst, (void)src, (void)bytes, (void)dev;
    return fk_fail(err, FK_EUNSUP, "this build of fofkit has no GPU support (built without CUDA)");
}

int fk_gpu_first_bad(const float *a, uint64_t n, int ncols, int periodic, float lo, float hi, int dev, uint64_t *bad,
                     fk_error *err)
{
    (void)a, (void)n, (void)ncols, (void)periodic, (void)lo, (void)hi, (void)dev, (void)bad;
    return fk_fail(err, FK_EUNSUP, "this build of fofkit has no GPU support (built without CUDA)");
}

int fk_gpu_fof_arrays(const float *pos, const float *vel, int on_device, int dev, uint64_t n, uint32_t leafsize,
                      double lo, double span, const fk_linkopts *o, int nlevels, uint64_t minsize,
                      fk_gpu_fof_level *out, uint32_t *perm, fk_error *err)
{
    (void)pos, (void)vel, (void)on_device, (void)dev, (void)n, (void)leafsize, (void)lo, (void)span, (void)o;
    (void)nlevels, (void)minsize, (void)out, (void)perm;
    return fk_fail(err, FK_EDEVICE, "this build of fofkit has no GPU support (built without CUDA)");
}
