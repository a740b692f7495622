/* dist_node.c - a rank's place on its node: its rank among the node's ranks, its share of the node's cores (no MPI needed). */
#define _GNU_SOURCE
#include "dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __linux__
#include <sched.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

static int node_rank = 0, node_size = 1;
static fk_cores cores;

void fk_dist_cores(fk_cores *got)
{
    *got = cores;
}

void fk_dist_set_node(int local_rank, int local_size)
{
    node_rank = local_rank;
    node_size = local_size > 0 ? local_size : 1;
}

void fk_dist_node(int *local_rank, int *local_size)
{
    *local_rank = node_rank;
    *local_size = node_size;
}

static int share(int local_rank, int local_size, int overlap, fk_cores *got);

int fk_dist_share_cores(int local_rank, int local_size, int overlap, fk_cores *got)
{
    int did = share(local_rank, local_size, overlap, got);
    cores = *got;
    return did;
}

/* got's after, first and last from the affinity in effect. */
static void in_effect(fk_cores *got)
{
#ifdef __linux__
    cpu_set_t now;
    if (sched_getaffinity(0, sizeof now, &now)) return;
    got->after = CPU_COUNT(&now);
    got->first = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &now)) {
            if (got->first < 0) got->first = c;
            got->last = c;
        }
#else
    (void)got;
#endif
}

static int share(int local_rank, int local_size, int overlap, fk_cores *got)
{
    memset(got, 0, sizeof *got);
#ifdef __linux__
    cpu_set_t was, all;
    if (sched_getaffinity(0, sizeof was, &was)) return 0;
    got->before = CPU_COUNT(&was);
    if (overlap < 0) { /* keep it as it is */
        in_effect(got);
        return 0;
    }
    /* Every CPU: the kernel keeps those of our cpuset that are online. */
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; c++) CPU_SET(c, &all);
    int did = 0;
    if (sched_setaffinity(0, sizeof all, &all) == 0 && sched_getaffinity(0, sizeof all, &all) == 0) {
        int n = CPU_COUNT(&all);
        if (local_size < 1) local_size = 1;
        int a = (int)((long)n * local_rank / local_size), b = (int)((long)n * (local_rank + 1) / local_size);
        got->node = n;
        if (b - a > got->before || overlap) { /* wider than the binding we were given, or not shared with others */
            cpu_set_t mine;
            CPU_ZERO(&mine);
            for (int c = 0, k = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &all)) {
                    if (k >= a && k < b) CPU_SET(c, &mine);
                    k++;
                }
            did = sched_setaffinity(0, sizeof mine, &mine) == 0;
        }
    }
    if (!did) sched_setaffinity(0, sizeof was, &was);
    in_effect(got);
#ifdef _OPENMP
    /* The OpenMP runtime counted the CPUs when the program started (one, when
     * bound to a core): its default team is the share now, unless asked. */
    const char *e = getenv("OMP_NUM_THREADS");
    if (did && (!e || !*e)) omp_set_num_threads(got->after);
#endif
    return did;
#else
    (void)local_rank, (void)local_size, (void)overlap;
    in_effect(got);
    return 0;
#endif
}
