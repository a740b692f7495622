/* gpu_none.c - the GPU interface in a build without CUDA: no device, every call refused. */
#include <stdio.h>
#include <string.h>

#include "gpu.h"

int fk_gpu_compiled(void)
{
    return 0;
}

int fk_gpu_count(void)
{
    return 0;
}

int fk_gpu_select(int ordinal, fk_error *err)
{
    return fk_fail(err, FK_EINVAL, "there is no GPU %d: this build has no CUDA support, built with CUDA=0", ordinal);
}

int fk_gpu_selected(void)
{
    return 0;
}

int fk_gpu_probe(fk_gpuinfo *info, fk_error *err)
{
    (void)err;
    memset(info, 0, sizeof *info);
    snprintf(info->reason, sizeof info->reason, "this build has no CUDA support, built with CUDA=0");
    return FK_OK;
}

uint64_t fk_gpu_link_bytes(uint64_t n, uint64_t nnodes, int sixd)
{
    (void)n, (void)nnodes, (void)sixd;
    return 0;
}

uint64_t fk_gpu_build_bytes(uint64_t n, uint32_t leafsize)
{
    (void)n, (void)leafsize;
    return 0;
}

static int none(fk_error *err)
{
    return fk_fail(err, FK_EDEVICE, "this build has no CUDA support, built with CUDA=0");
}

int fk_gpu_link(const fk_tree *t, const float *pos, const float *vel, const fk_linkopts *o, uint32_t *sink,
                fk_linkstats *stats, fk_gputimes *times, fk_error *err)
{
    (void)t, (void)pos, (void)vel, (void)o, (void)sink, (void)stats, (void)times;
    return none(err);
}

int fk_gpu_link_levels(const fk_tree *t, const float *pos, const float *vel, const fk_linkopts *lo, int nlevels,
                       uint32_t *const *sinks, fk_linkstats *stats, fk_gputimes *times, fk_error *err)
{
    (void)t, (void)pos, (void)vel, (void)lo, (void)nlevels, (void)sinks, (void)stats, (void)times;
    return none(err);
}

int fk_gpu_link_brute(uint64_t n, const float *pos, const float *vel, const fk_linkopts *o, uint32_t *sink,
                      fk_linkstats *stats, fk_gputimes *times, fk_error *err)
{
    (void)n, (void)pos, (void)vel, (void)o, (void)sink, (void)stats, (void)times;
    return none(err);
}

int fk_gpu_groups_number(const uint32_t *root, const uint32_t *perm, uint64_t n, uint64_t minsize, uint32_t *gid,
                         uint64_t **sizes, fk_groups *info, fk_error *err)
{
    (void)root, (void)perm, (void)n, (void)minsize, (void)gid;
    memset(info, 0, sizeof *info);
    if (sizes) *sizes = NULL;
    return none(err);
}

int fk_gpu_build(float *pos, uint64_t n, uint32_t leafsize, double lo, double span, fk_tree *t, uint32_t **perm,
                 fk_gputimes *times, fk_error *err)
{
    (void)pos, (void)n, (void)leafsize, (void)lo, (void)span, (void)t, (void)perm, (void)times;
    return none(err);
}

uint64_t fk_gpu_build_link_bytes(uint64_t n, uint32_t leafsize, int sixd)
{
    (void)n, (void)leafsize, (void)sixd;
    return 0;
}

int fk_gpu_build_link(const float *pos, const float *vel, uint64_t n, uint32_t leafsize, double lo, double span,
                      const fk_linkopts *o, uint32_t *sink, uint32_t *perm, fk_linkstats *stats, fk_gputimes *times,
                      fk_error *err)
{
    (void)pos, (void)vel, (void)n, (void)leafsize, (void)lo, (void)span, (void)o, (void)sink, (void)perm;
    (void)stats, (void)times;
    return none(err);
}

uint64_t fk_gpu_pot_bytes(uint64_t nmembers, uint64_t ngroups, uint64_t largest)
{
    (void)nmembers, (void)ngroups, (void)largest;
    return 0;
}

int fk_gpu_pot_minima(const fk_pot_groups *g, const fk_pot_params *p, fk_pot_min *min, fk_gputimes *times,
                      fk_error *err)
{
    (void)g, (void)p, (void)min, (void)times;
    return none(err);
}

int fk_gpu_pot_exact(const fk_pot_members *g, double G, double eps, double *phi, fk_gputimes *times, fk_error *err)
{
    (void)g, (void)G, (void)eps, (void)phi, (void)times;
    return none(err);
}

int fk_gpu_pot_tree(const fk_pot_members *g, const fk_pot_params *p, double *phi, fk_gputimes *times, fk_error *err)
{
    (void)g, (void)p, (void)phi, (void)times;
    return none(err);
}

int fk_gpu_unbind_update(const fk_pot_members *stay, double *phi, const fk_pot_members *leave, double G, double eps,
                         fk_error *err)
{
    (void)stay, (void)phi, (void)leave, (void)G, (void)eps;
    return none(err);
}

int fk_gpu_unbind_open(void **ctx, const fk_unbind_group *g, fk_error *err)
{
    (void)g;
    *ctx = NULL;
    return none(err);
}

int fk_gpu_unbind_sum(void *ctx, const fk_pot_params *p, fk_error *err)
{
    (void)ctx, (void)p;
    return none(err);
}

int fk_gpu_unbind_get(void *ctx, double *x, double *y, double *z, double *m, double *phi, fk_error *err)
{
    (void)ctx, (void)x, (void)y, (void)z, (void)m, (void)phi;
    return none(err);
}

int fk_gpu_unbind_load(void *ctx, const double *phi, fk_error *err)
{
    (void)ctx, (void)phi;
    return none(err);
}

int fk_gpu_unbind_sums(void *ctx, double (*part)[7], fk_error *err)
{
    (void)ctx, (void)part;
    return none(err);
}

int fk_gpu_unbind_energies(void *ctx, const double v[3], int massive, double (*part)[7], fk_error *err)
{
    (void)ctx, (void)v, (void)massive, (void)part;
    return none(err);
}

int fk_gpu_unbind_drop(void *ctx, double emin, size_t maxupd, double G, double eps, size_t *nu, fk_error *err)
{
    (void)ctx, (void)emin, (void)maxupd, (void)G, (void)eps;
    *nu = 0;
    return none(err);
}

int fk_gpu_unbind_members(void *ctx, size_t *idx, fk_error *err)
{
    (void)ctx, (void)idx;
    return none(err);
}

void fk_gpu_unbind_close(void *ctx)
{
    (void)ctx;
}

uint64_t fk_gpu_unbind_bytes(uint64_t n)
{
    (void)n;
    return 0;
}

uint64_t fk_gpu_unbind_budget(void)
{
    return 0;
}

uint64_t fk_gpu_link_owned_bytes(uint64_t n, uint64_t no, uint32_t leafsize, int sixd, int idw)
{
    (void)n, (void)no, (void)leafsize, (void)sixd, (void)idw;
    return 0;
}

int fk_gpu_link_owned(const float *pos, const float *vel, uint64_t n, uint64_t no, const void *id, int idw,
                      uint32_t leafsize, double lo, double span, const fk_linkopts *o, int nlevels,
                      uint32_t *const *key, void *const *low, fk_linkstats *stats, fk_gputimes *times,
                      fk_error *err)
{
    (void)pos, (void)vel, (void)n, (void)no, (void)id, (void)idw, (void)leafsize, (void)lo, (void)span, (void)o, (void)nlevels;
    (void)key, (void)low, (void)stats, (void)times;
    return none(err);
}
