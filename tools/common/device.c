/* device.c - the --device option: auto, cpu or gpu, resolved once per run and reported with -v. */
#include "device.h"

#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "prog.h"

/* The GPU named by --device=gpu:N or FOFKIT_DEVICE=gpu:N, else -1. */
static int named_gpu = -1;

/* "auto", "cpu", "gpu" or "gpu:N": the choice, or -1. */
static int parse(const char *s)
{
    if (!strcmp(s, "auto")) return DEV_AUTO;
    if (!strcmp(s, "cpu")) return DEV_CPU;
    if (!strcmp(s, "gpu")) return DEV_GPU;
    if (!strncmp(s, "gpu:", 4) && s[4] >= '0' && s[4] <= '9') {
        char *end;
        long k = strtol(s + 4, &end, 10);
        if (*end || k > 1024) return -1;
        named_gpu = (int)k;
        return DEV_GPU;
    }
    return -1;
}

int device_default(void)
{
    const char *e = getenv("FOFKIT_DEVICE");
    if (!e || !*e) return DEV_AUTO;
    int c = parse(e);
    if (c < 0) prog_usage("FOFKIT_DEVICE must be auto, cpu, gpu or gpu:N, not '%s'", e);
    return c;
}

int device_parse(const char *arg)
{
    named_gpu = -1; /* the option overrides the environment */
    int c = parse(arg);
    if (c < 0) prog_usage("option --device takes auto, cpu, gpu or gpu:N (the N-th GPU), not '%s'", arg);
    return c;
}

/* The GPU this process takes: the one named, else under mpirun its rank on
 * the node modulo the node's GPUs, else the first. */
static int pick_gpu(int count, int *shared)
{
    int lr, ls;
    fk_dist_node(&lr, &ls);
    *shared = named_gpu < 0 && ls > count && count > 0;
    if (named_gpu >= 0) return named_gpu;
    return count > 0 ? lr % count : 0;
}

int device_resolve(int choice, fk_gpuinfo *info)
{
    memset(info, 0, sizeof *info);
    if (choice == DEV_CPU) {
        prog_info("device: CPU (as asked)");
        return DEV_CPU;
    }
    fk_error err = {0};
    int count = fk_gpu_count(), shared = 0, gpu = pick_gpu(count, &shared);
    if (count > 0 && fk_gpu_select(gpu, &err)) prog_usage("--device=gpu:%d: %s", gpu, err.msg);
    if (fk_gpu_probe(info, &err)) prog_fail(&err);
    if (info->present) {
        prog_info("device: GPU %d of %d, %s (compute capability %d.%d, %d multiprocessors, %.1f of %.1f GiB free)",
                  info->ordinal, info->count, info->name, info->cc_major, info->cc_minor, info->multiprocessors,
                  (double)info->mem_free / (1 << 30), (double)info->mem_total / (1 << 30));
        if (shared && choice == DEV_GPU) {
            int lr, ls;
            fk_dist_node(&lr, &ls);
            if (lr == 0) /* once a node, from its first rank */
                prog_note("%d ranks on this node share its %d GPU%s in turn (rank %d of the node takes GPU %d)", ls,
                          count, count == 1 ? "" : "s", lr, gpu);
        }
        return DEV_GPU;
    }
    if (choice == DEV_GPU) prog_die(EXIT_RESOURCE, "--device=gpu: %s (--device=cpu runs without a GPU)", info->reason);
    prog_info("device: CPU (%s)", info->reason);
    return DEV_CPU;
}
