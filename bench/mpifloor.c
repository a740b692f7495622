/* mpifloor - the floor of an exchange between ranks: MPI_Alltoallv of B bytes to every other rank, against a memcpy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *usage_text =
    "usage: mpirun -n R mpifloor BYTES\n"
    "Each rank sends BYTES bytes to every other rank in one MPI_Alltoallv (records of 64\n"
    "bytes), twice, into buffers faulted in beforehand; rank 0 prints the slower round as\n"
    "'alltoallv BYTES_OUT_OF_A_RANK SECONDS', then 'memcpy BYTES SECONDS' for a copy of as\n"
    "many bytes by one thread of rank 0: what a rank moves, and the copy that bounds it.\n"
    "Errors on stderr, exit 1 (2 for usage).\n";

#ifndef FK_HAVE_MPI

int main(void)
{
    fprintf(stderr, "mpifloor: this build of fofkit has no MPI (build it with libopenmpi-dev installed)\n%s", usage_text);
    return 1;
}

#else

#include <mpi.h>

#define REC 64 /* bytes a record: MPI's int counts reach 128 GiB a pair */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int R, me;
    MPI_Comm_size(MPI_COMM_WORLD, &R);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    char *end = NULL;
    double b = argc == 2 ? strtod(argv[1], &end) : 0;
    if (argc != 2 || !end || *end || !(b >= REC) || b / REC > 2e9) {
        if (!me) fputs(usage_text, stderr);
        MPI_Finalize();
        return 2;
    }
    const size_t per = (size_t)(b / REC) * REC, tot = per * (size_t)R;
    char *send = malloc(tot), *recv = malloc(tot);
    int *c = malloc((size_t)R * sizeof *c), *d = malloc((size_t)R * sizeof *d);
    int bad = !send || !recv || !c || !d, anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anybad) {
        if (!me) fprintf(stderr, "mpifloor: out of memory for %zu bytes a rank\n", 2 * tot);
        MPI_Finalize();
        return 1;
    }
    memset(send, me + 1, tot);
    memset(recv, 0, tot);
    MPI_Datatype t;
    MPI_Type_contiguous(REC, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    for (int q = 0; q < R; q++) c[q] = q == me ? 0 : (int)(per / REC), d[q] = (int)((size_t)q * (per / REC));
    double worst = 0;
    for (int round = 0; round < 2; round++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Alltoallv(send, c, d, t, recv, c, d, t, MPI_COMM_WORLD);
        double s = MPI_Wtime() - t0, most;
        MPI_Reduce(&s, &most, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (most > worst) worst = most;
    }
    bad = 0;
    for (int q = 0; q < R; q++)
        if (q != me && (recv[(size_t)q * per] != (char)(q + 1) || recv[(size_t)q * per + per - 1] != (char)(q + 1)))
            bad = 1;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!me) {
        const size_t out = per * (size_t)(R - 1);
        double t0 = MPI_Wtime();
        memcpy(recv, send, out);
        double s = MPI_Wtime() - t0;
        if (anybad)
            fprintf(stderr, "mpifloor: the bytes received are not those sent\n");
        else
            printf("alltoallv %zu %.6f\nmemcpy %zu %.6f\n", out, worst, out, s);
    }
    MPI_Type_free(&t);
    free(send), free(recv), free(c), free(d);
    MPI_Finalize();
    return anybad ? 1 : 0;
}

#endif
