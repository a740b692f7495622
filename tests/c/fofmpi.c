/* fofmpi.c - test helper under mpirun: each rank's slice of a stream's particles through fofkit_fof_mpi (fofkit.h), its sink labels written to OUT.RANK. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef FK_HAVE_MPI
#include <mpi.h>
#endif
#include "fofkit.h"
#include "levelsarg.h"
#include "snap.h"
#include "stream.h"

/*
 * Usage: mpirun -n R fofmpi [-b B[,B...] | -l L[,L...]] [--psi=V] [--device=cpu] [--split-comm] STREAM OUT
 * Rank r takes the particles [r n / R, (r+1) n / R) of STREAM (POS, VEL) and passes
 * them, ids NULL (the ranks' particles in rank order: the stream index), to
 * fofkit_fof_mpi over MPI_COMM_WORLD (with --split-comm, r and R are its rank
 * and size in one of two communicators, of the even and of the odd ranks,
 * which link the stream side by side); it writes, for every level k, OUT.r.k
 * with one label a line: the lowest stream index in the particle's group. The
 * files of ranks 0..R-1 of a level, one after another, are the sinks of one
 * process (fofarrays --sinks -m 1). Prints "fofmpi: MESSAGE" and exits 1 when
 * the call fails.
 */

int main(int argc, char **argv)
{
#ifndef FK_HAVE_MPI
    (void)argc, (void)argv, (void)parse_list;
    fprintf(stderr, "fofmpi: built without MPI\n");
    return 77;
#else
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    fofkit_fof_options o;
    fofkit_fof_options_init(&o);
    const char *path = NULL, *out = NULL;
    int split = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-b")) o.nlevels = levels_arg(argv[++i], o.b);
        else if (!strcmp(argv[i], "-l")) o.nlevels = levels_arg(argv[++i], o.l);
        else if (!strncmp(argv[i], "--psi=", 6)) o.psi[0] = atof(argv[i] + 6);
        else if (!strcmp(argv[i], "--device=cpu")) o.device = FOFKIT_DEVICE_CPU;
        else if (!strcmp(argv[i], "--split-comm")) split = 1;
        else if (!path) path = argv[i];
        else out = argv[i];
    }
    fk_error err = {0};
    FILE *f = fopen(path, "rb");
    fk_reader *r;
    fk_chunk c;
    fk_snap snap;
    char *text;
    if (!f || fk_reader_open(&r, f, path, &err) || fk_snap_read(r, &c, &snap, &text, path, &err)) {
        fprintf(stderr, "fofmpi: %s\n", err.msg);
        return 1;
    }
    free(text);
    void *pos = NULL, *vel = NULL;
    while (fk_reader_next(r, &c, &err) == 1) {
        void **dest = !strcmp(c.tag, "POS") ? &pos : !strcmp(c.tag, "VEL") ? &vel : NULL;
        if (dest && fk_reader_load(r, dest, &err)) break;
    }
    fk_reader_close(r);
    fclose(f);
    /* --split-comm: two communicators, the even and the odd ranks, each linking the whole stream at once */
    MPI_Comm comm = MPI_COMM_WORLD;
    if (split) MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &comm);
    int crank, csize;
    MPI_Comm_rank(comm, &crank);
    MPI_Comm_size(comm, &csize);
    const uint64_t lo = snap.n * (uint64_t)crank / (uint64_t)csize, hi = snap.n * (uint64_t)(crank + 1) / (uint64_t)csize;
    fofkit_particles p;
    fofkit_particles_init(&p);
    p.n = hi - lo, p.pos = (float *)pos + 3 * lo, p.vel = vel ? (float *)vel + 3 * lo : NULL;
    p.periodic = snap.periodic, p.box = snap.box, p.origin = snap.origin;
    uint64_t *sink[FOFKIT_LEVELS_MAX] = {0};
    for (int k = 0; k < o.nlevels; k++) sink[k] = malloc((p.n ? p.n : 1) * sizeof *sink[k]);
    fofkit_fof_result res;
    fofkit_fof_result_init(&res);
    fofkit_error e;
    if (fofkit_fof_mpi(comm, &p, &o, sink, &res, &e)) {
        if (rank == 0) fprintf(stderr, "fofmpi: %s\n", e.message);
        MPI_Finalize();
        return 1;
    }
    for (int k = 0; k < o.nlevels; k++) {
        char name[4096];
        snprintf(name, sizeof name, "%s.%d.%d", out, rank, k);
        FILE *w = fopen(name, "w");
        for (uint64_t i = 0; i < p.n; i++) fprintf(w, "%" PRIu64 "\n", sink[k][i]);
        fclose(w);
        free(sink[k]);
    }
    if (rank == 0) printf("%d ranks, %llu groups at level 0\n", csize, (unsigned long long)res.ngroups[0]);
    free(pos), free(vel);
    MPI_Finalize();
    return 0;
#endif
}
