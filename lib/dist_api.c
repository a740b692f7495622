/* dist_api.c - fofkit_fof_mpi (fofkit.h): friends-of-friends over MPI ranks, each with its own particle arrays, through fk_distlink_run. */
#ifdef FK_HAVE_MPI
#include <mpi.h>
#endif

#include "api.h"
#include "api_fof.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "dist.h"
#include "dist_link.h"
#include "gpu.h"

#ifdef FK_HAVE_MPI

/* The run on this rank, over the thread's communicator (fk_dist_comm); every
 * failure before the collective linking is agreed on, so that all ranks
 * return together. */
static int fof_mpi(const fofkit_particles *pin, const fofkit_fof_options *oin, uint64_t *const *sink,
                   fofkit_fof_result *r, fk_error *err)
{
    const double t0 = fk_now();
    fofkit_particles p;
    fofkit_fof_options o;
    fofkit_particles_init(&p);
    fofkit_fof_options_init(&o);
    int st = fk_api_take(&p, sizeof p, pin, sizeof p, "fofkit_particles", err);
    if (!st) st = fk_api_take(&o, sizeof o, oin, sizeof o, "fofkit_fof_options", err);
    if (!st && (!r || r->size < sizeof *r))
        st = fk_fail(err, FK_EINVAL, "fofkit_fof_result is NULL or not set by fofkit_fof_result_init");
    const int nl = o.nlevels ? o.nlevels : 1;
    if (!st && (nl < 1 || nl > FOFKIT_LEVELS_MAX))
        st = fk_fail(err, FK_EINVAL, "nlevels %d: 1 to %d levels", o.nlevels, FOFKIT_LEVELS_MAX);
    for (int k = 0; !st && k < nl; k++)
        if (!sink || (!sink[k] && p.n)) st = fk_fail(err, FK_EINVAL, "no sink array for level %d", k);
    if (!st && o.psi_relative)
        st = fk_fail(err, FK_EUNSUP, "psi_relative: distributed runs take psi as an absolute velocity");
    if (!st && o.device != FOFKIT_DEVICE_AUTO && o.device != FOFKIT_DEVICE_CPU && o.device != FOFKIT_DEVICE_GPU)
        st = fk_fail(err, FK_EINVAL, "device %d: FOFKIT_DEVICE_AUTO, _CPU or _GPU", o.device);
    fk_api_arrays a;
    memset(&a, 0, sizeof a);
    if (!st) st = fk_api_arrays_get(&p, o.psi[0] > 0, 0, 1, &a, err);
    if ((st = fk_dist_agree(st, err, NULL))) {
        fk_api_arrays_free(&a);
        return st;
    }
    fofkit_fof_result_free(r);
    /* the same box everywhere; the ids, given or the ranks' particles in rank order */
    uint64_t ntotal = 0, off = 0, n = p.n;
    double blo, bhi, plo, phi;
    fk_dist_sum_u64(n, &ntotal, err);
    fk_dist_range(p.box, &blo, &bhi, err);
    fk_dist_range(p.periodic, &plo, &phi, err);
    MPI_Exscan(&n, &off, 1, MPI_UINT64_T, MPI_SUM, fk_dist_comm());
    int rank = 0;
    MPI_Comm_rank(fk_dist_comm(), &rank);
    if (rank == 0) off = 0;
    if (blo != bhi || plo != phi)
        st = fk_fail(err, FK_EINVAL, "the ranks disagree on the box (%g to %g) or its periodicity", blo, bhi);
    uint64_t *ids = NULL;
    if (!st && !p.ids) {
        if (!(ids = malloc(n ? n * sizeof *ids : 1)))
            st = fk_fail(err, FK_ENOMEM, "out of memory for the ids of %" PRIu64 " particles", n);
        for (uint64_t i = 0; !st && i < n; i++) ids[i] = off + i;
    }
    fk_linkopts lo[FK_LEVELS_MAX];
    if (!st) st = fk_api_fof_levels(&o, &p, ntotal, a.vel, lo, err);
    fk_gpuinfo gi;
    memset(&gi, 0, sizeof gi);
    if (!st && o.device != FOFKIT_DEVICE_CPU) {
        st = fk_gpu_probe(&gi, err);
        if (!st && !gi.present && o.device == FOFKIT_DEVICE_GPU)
            st = fk_fail(err, FK_EDEVICE, "device GPU asked: %s", gi.reason);
    }
    fk_api_threads th;
    fk_api_threads_set(&th, o.nthreads);
    if (!(st = fk_dist_agree(st, err, NULL))) {
        const int gpu = o.device != FOFKIT_DEVICE_CPU && gi.present;
        fk_distlink_in din = {.n = n, .pos = a.pos, .vel = o.psi[0] > 0 ? a.vel : NULL, .id = p.ids ? p.ids : ids,
                              .lo = lo, .nlevels = nl, .gpu = gpu, .brute = 0, .leafsize = gpu ? 32 : 16,
                              .piece = 0, .gpu_mem = gpu ? gi.mem_free : 0};
        fk_distlink_report rep;
        st = fk_distlink_run(&din, sink, &rep, err); /* agreed inside */
        for (int k = 0; !st && k < nl; k++) {
            r->ngroups[k] = r->nfound[k] = rep.groups[k];
            r->l[k] = (double)(float)lo[k].l;
            r->psi[k] = (double)(float)lo[k].psi;
        }
        if (!st) {
            r->nlevels = nl;
            r->device = gpu ? FOFKIT_DEVICE_GPU : FOFKIT_DEVICE_CPU;
            r->seconds_link = rep.t_decomp + rep.t_link + rep.t_merge + rep.t_return;
        }
    }
    fk_api_threads_restore(&th);
    free(ids);
    fk_api_arrays_free(&a);
    r->seconds = fk_now() - t0;
    return st;
}

int fofkit_fof_mpi(MPI_Comm comm, const fofkit_particles *p, const fofkit_fof_options *o, uint64_t *const *sink,
                   fofkit_fof_result *r, fofkit_error *e)
{
    fk_error err = {0};
    int init = 0;
    MPI_Initialized(&init);
    if (!init) {
        fk_fail(&err, FK_EINVAL, "MPI is not initialised: call MPI_Init first");
    } else if (comm == MPI_COMM_NULL) {
        fk_fail(&err, FK_EINVAL, "the communicator is MPI_COMM_NULL");
    } else { /* every collective of the run over comm, on this thread, for the length of the call */
        MPI_Comm was = fk_dist_comm_set(comm);
        fof_mpi(p, o, sink, r, &err);
        fk_dist_comm_set(was);
    }
    return fk_api_give(&err, "fofkit_fof_mpi", e);
}

#else

/* Without MPI the call exists (its communicator unread) and says so. */
int fofkit_fof_mpi(void *comm, const fofkit_particles *p, const fofkit_fof_options *o, uint64_t *const *sink,
                   fofkit_fof_result *r, fofkit_error *e);
int fofkit_fof_mpi(void *comm, const fofkit_particles *p, const fofkit_fof_options *o, uint64_t *const *sink,
                   fofkit_fof_result *r, fofkit_error *e)
{
    (void)comm, (void)p, (void)o, (void)sink, (void)r;
    fk_error err = {0};
    fk_fail(&err, FK_EUNSUP, "this build of fofkit has no MPI");
    return fk_api_give(&err, "fofkit_fof_mpi", e);
}

#endif
