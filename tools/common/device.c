/* device.c - the --device option: auto, cpu or gpu, resolved once per run and reported with -v. */
#include "device.h"

#include <stdlib.h>
#include <string.h>

#include "prog.h"

int device_default(void)
{
    const char *e = getenv("FOFKIT_DEVICE");
    if (!e || !*e) return DEV_AUTO;
    if (!strcmp(e, "auto")) return DEV_AUTO;
    if (!strcmp(e, "cpu")) return DEV_CPU;
    if (!strcmp(e, "gpu")) return DEV_GPU;
    prog_usage("FOFKIT_DEVICE must be auto, cpu or gpu, not '%s'", e);
}

int device_parse(const char *arg)
{
    if (!strcmp(arg, "auto")) return DEV_AUTO;
    if (!strcmp(arg, "cpu")) return DEV_CPU;
    if (!strcmp(arg, "gpu")) return DEV_GPU;
    prog_usage("option --device takes auto, cpu or gpu, not '%s'", arg);
}

int device_resolve(int choice, fk_gpuinfo *info)
{
    memset(info, 0, sizeof *info);
    if (choice == DEV_CPU) {
        prog_info("device: CPU (as asked)");
        return DEV_CPU;
    }
    fk_error err = {0};
    if (fk_gpu_probe(info, &err)) prog_fail(&err);
    if (info->present) {
        prog_info("device: GPU 0, %s (compute capability %d.%d, %d multiprocessors, %.1f of %.1f GiB free)",
                  info->name, info->cc_major, info->cc_minor, info->multiprocessors,
                  (double)info->mem_free / (1 << 30), (double)info->mem_total / (1 << 30));
        return DEV_GPU;
    }
    if (choice == DEV_GPU) prog_die(EXIT_RESOURCE, "--device=gpu: %s", info->reason);
    prog_info("device: CPU (%s)", info->reason);
    return DEV_CPU;
}
