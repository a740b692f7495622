/* fofkit-gpu-arrays.c - example: makes particles, puts them on the GPU, finds their friends-of-friends groups there with libfofkit (fofkit.h) and prints them; without a GPU, on the host arrays. */
#include <fofkit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_CUDA
#include <cuda_runtime.h>
#endif

/*
 * Usage: fofkit-gpu-arrays [N]   (default 100000 particles)
 * A periodic unit box: a quarter of the particles uniform, the rest in 50
 * clumps. The positions go to the GPU with cudaMalloc (a simulation code's
 * arrays would be there already) and fofkit_fof gets the device pointers:
 * the tree is built and linked on that GPU, no copy of the positions comes
 * back; then once more with the group numbers written into a GPU array.
 * Then the same particles from the host, on the CPU: the groups must be
 * the same. Without CUDA or a GPU it says so and runs on the host only.
 * Exit status 0 when every run agreed, 1 otherwise.
 */

static float *make_particles(uint64_t n)
{
    float *pos = malloc(3 * n * sizeof *pos);
    unsigned s = 2024;
#define U() ((s = s * 1103515245u + 12345u), (float)(s >> 8) / 16777216.0f)
    float c[50][3];
    for (int k = 0; k < 50; k++)
        for (int a = 0; a < 3; a++) c[k][a] = U();
    for (uint64_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) {
            float x = i < n / 4 ? U() : c[i % 50][a] + 0.02f * (U() - 0.5f) * (U() + U());
            pos[3 * i + a] = x < 0 ? x + 1 : x >= 1 ? x - 1 : x;
        }
#undef U
    return pos;
}

/* fofkit_fof at b = 0.2 on pos (host or GPU memory) on device; the groups into group. */
static int groups(const float *pos, uint64_t n, int device, uint32_t *group, fofkit_fof_result *r)
{
    fofkit_particles p;
    fofkit_fof_options o;
    fofkit_error err;
    fofkit_particles_init(&p);
    p.n = n, p.pos = pos, p.periodic = 1, p.box = 1;
    fofkit_fof_options_init(&o);
    o.device = device;
    o.minsize = 20;
    fofkit_fof_result_init(r);
    r->group[0] = group;
    if (fofkit_fof(&p, &o, r, &err)) {
        fprintf(stderr, "fofkit-gpu-arrays: %s\n", err.message);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
    float *pos = make_particles(n);
    uint32_t *host = malloc(n * sizeof *host), *gpu = malloc(n * sizeof *gpu);
    fofkit_fof_result rh;
    if (groups(pos, n, FOFKIT_DEVICE_CPU, host, &rh)) return 1;
    printf("%llu particles, l = %g: %llu groups of 20 or more (on the CPU, %.3f s)\n", (unsigned long long)n, rh.l[0],
           (unsigned long long)rh.ngroups[0], rh.seconds);
    for (uint64_t g = 1; g <= rh.ngroups[0] && g <= 5; g++)
        printf("group %llu: %llu members\n", (unsigned long long)g, (unsigned long long)rh.sizes[0][g]);
    int status = 0;
#ifdef HAVE_CUDA
    int count = 0;
    float *d_pos = NULL;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        printf("no GPU (%s): the GPU arrays were not tried\n", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    } else if (cudaMalloc((void **)&d_pos, 3 * n * sizeof *d_pos) != cudaSuccess ||
               cudaMemcpy(d_pos, pos, 3 * n * sizeof *d_pos, cudaMemcpyHostToDevice) != cudaSuccess) {
        printf("no GPU memory for the particles: the GPU arrays were not tried\n");
    } else {
        fofkit_fof_result rg;
        if (groups(d_pos, n, FOFKIT_DEVICE_AUTO, gpu, &rg)) return 1;
        int same = rg.device == FOFKIT_DEVICE_GPU && rg.ngroups[0] == rh.ngroups[0] && !memcmp(gpu, host, n * sizeof *gpu);
        printf("GPU arrays: %llu groups on the %s in %.3f s: %s\n", (unsigned long long)rg.ngroups[0],
               rg.device == FOFKIT_DEVICE_GPU ? "GPU" : "CPU", rg.seconds, same ? "the same groups" : "DIFFERENT groups");
        status |= !same;
        fofkit_fof_result_free(&rg);
        /* the group numbers written on the GPU too, for a code that keeps working there */
        uint32_t *d_group = NULL;
        if (cudaMalloc((void **)&d_group, n * sizeof *d_group) == cudaSuccess) {
            memset(gpu, 0, n * sizeof *gpu);
            if (groups(d_pos, n, FOFKIT_DEVICE_AUTO, d_group, &rg)) return 1;
            same = cudaMemcpy(gpu, d_group, n * sizeof *gpu, cudaMemcpyDeviceToHost) == cudaSuccess &&
                   rg.ngroups[0] == rh.ngroups[0] && !memcmp(gpu, host, n * sizeof *gpu);
            printf("group numbers written on the GPU in %.3f s: %s\n", rg.seconds,
                   same ? "the same groups" : "DIFFERENT groups");
            status |= !same;
            fofkit_fof_result_free(&rg);
            cudaFree(d_group);
        }
        cudaFree(d_pos);
    }
#else
    printf("built without CUDA: the GPU arrays were not tried\n");
#endif
    fofkit_fof_result_free(&rh);
    free(pos), free(host), free(gpu);
    return status;
}
