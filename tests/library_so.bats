#!/usr/bin/env bats
# library_so.bats - libfofkit.so loads no MPI, HDF5, libpng or cairo; its fofkit_fof_mpi opens libfofkit_mpi.so at the first call, in the build tree and installed, and says so when it is missing.

bats_require_minimum_version 1.5.0

REPO=$BATS_TEST_DIRNAME/..

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    [ -n "${FOFKIT_BUILD:-}" ] && [ -f "$FOFKIT_BUILD/libfofkit.so" ] || skip "no shared library (FOFKIT_BUILD unset)"
    command -v readelf >/dev/null || skip "no binutils"
}

# The libraries FILE needs (readelf's NEEDED), one a line.
needed() {
    readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}

@test "libfofkit.so needs no MPI, HDF5, libpng or cairo; libfofkit_mpi.so exports fofkit_fof_mpi alone" {
    needed "$FOFKIT_BUILD/libfofkit.so"
    needed "$FOFKIT_BUILD/libfofkit.so" | grep -q '^libc\.so'
    ! needed "$FOFKIT_BUILD/libfofkit.so" | grep -E 'mpi|hdf5|png|cairo'
    # a program linked as fofkit.pc says (the build tree's) needs none of them either
    printf '#include <fofkit.h>\n#include <stdio.h>\nint main(void) { puts(fofkit_version()); return 0; }\n' >v.c
    cc v.c $(PKG_CONFIG_PATH=$FOFKIT_BUILD pkg-config --cflags --libs fofkit) -Wl,-rpath,"$FOFKIT_BUILD" -o v
    ./v
    ! ldd ./v | grep -E 'libmpi|libhdf5|libpng|libcairo'
    local mpi=$FOFKIT_BUILD/libfofkit_mpi.so.0
    [ -f "$mpi" ] || skip "a build without MPI: no libfofkit_mpi.so"
    readelf -d "$mpi" | grep -q 'SONAME.*\[libfofkit_mpi\.so\.0\]'
    needed "$mpi" | grep -q '^libmpi'
    [ "$(nm -D --defined-only "$mpi" | awk '$2 ~ /[TDBR]/ { print $3 }' | sed 's/@.*//' | sort -u)" = fofkit_fof_mpi ]
}

# mpiprog: each rank's slice of the particles of fofkit(3)'s example through fofkit_fof_mpi, against
# fofkit_fof's sinks of them all; says whether libfofkit_mpi was loaded before and after the call.
write_mpiprog() {
    cat >mpiprog.c <<'EOF'
#include <mpi.h>
#include <fofkit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mapped(const char *name)
{
    char line[4096];
    int found = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f)) found |= strstr(line, name) != NULL;
    if (f) fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    enum { N = 20000 };
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    float *pos = malloc(3 * N * sizeof *pos);
    unsigned s = 12345;
    for (int i = 0; i < 3 * N; i++) {
        s = s * 1103515245u + 12345u;
        float u = (s >> 8) / 16777216.0f;
        pos[i] = i < N ? 0.25f + 0.04f * (u - 0.5f) : i < 2 * N ? 0.7f + 0.04f * (u - 0.5f) : u;
    }
    fofkit_particles p, q;
    fofkit_fof_options o;
    fofkit_fof_result r, rr;
    fofkit_error e;
    fofkit_particles_init(&p);
    p.n = N, p.pos = pos, p.periodic = 1, p.box = 1;
    fofkit_fof_options_init(&o);
    o.device = FOFKIT_DEVICE_CPU;
    fofkit_fof_result_init(&r);
    uint32_t *one = malloc(N * sizeof *one);
    r.sink[0] = one;
    if (fofkit_fof(&p, &o, &r, &e)) { fprintf(stderr, "%s\n", e.message); return 1; }
    uint64_t lo = (uint64_t)N * rank / size, hi = (uint64_t)N * (rank + 1) / size;
    uint64_t *ids = malloc((hi - lo + 1) * sizeof *ids), *sink = malloc((hi - lo + 1) * sizeof *sink);
    for (uint64_t i = lo; i < hi; i++) ids[i - lo] = i;
    q = p;
    q.n = hi - lo, q.pos = pos + 3 * lo, q.ids = ids;
    fofkit_fof_result_init(&rr);
    int before = mapped("libfofkit_mpi"), st = fofkit_fof_mpi(MPI_COMM_WORLD, &q, &o, &sink, &rr, &e);
    if (st) {
        printf("rank %d: status %d: %s\n", rank, st, e.message);
    } else {
        uint64_t differ = 0;
        for (uint64_t i = lo; i < hi; i++) differ += sink[i - lo] != one[i];
        printf("rank %d: %llu groups, %llu sinks differ, libfofkit_mpi %d then %d\n", rank,
               (unsigned long long)rr.ngroups[0], (unsigned long long)differ, before, mapped("libfofkit_mpi"));
    }
    fofkit_fof_result_free(&r);
    fofkit_fof_result_free(&rr);
    MPI_Finalize();
    return 0;
}
EOF
}

need_mpi_here() {
    load mpi_helpers
    [ -f "$FOFKIT_BUILD/libfofkit_mpi.so" ] || [ -f "$FOFKIT_BUILD/libfofkit_mpi.so.0" ] || skip "a build without MPI"
    command -v mpicc >/dev/null && command -v pkg-config >/dev/null || skip "no mpicc or pkg-config"
    [ -z "${ASAN_OPTIONS:-}" ] || skip "Open MPI under the sanitizers"
    command -v mpirun >/dev/null || skip "mpirun is missing (Debian: openmpi-bin)"
    mpirun -n 1 true 2>mpirun.err || skip "mpirun -n 1 true fails here: $(head -n 1 mpirun.err)"
}

@test "fofkit_fof_mpi through libfofkit.so: libfofkit_mpi.so opened at the call, the one-process partition on 1 and 2 ranks" {
    need_mpi_here
    write_mpiprog
    mpicc -Wall -Wextra -Werror mpiprog.c $(PKG_CONFIG_PATH=$FOFKIT_BUILD pkg-config --cflags --libs fofkit) \
        -Wl,-rpath,"$FOFKIT_BUILD" -o mpiprog
    ldd ./mpiprog | grep -q "libfofkit.so.0 => $FOFKIT_BUILD/libfofkit.so.0"
    ! ldd ./mpiprog | grep libfofkit_mpi
    local R
    for R in 1 2; do
        run mpirun -n $R ./mpiprog
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(grep -c '^rank [0-9]: 6626 groups, 0 sinks differ, libfofkit_mpi 0 then 1$' <<<"$output")" -eq $R ]
    done
}

@test "fofkit_fof_mpi installed: libfofkit_mpi.so beside libfofkit.so; without it, FOFKIT_EUNSUP naming it" {
    need_mpi_here
    make -s -C "$REPO" B="$FOFKIT_BUILD" install PREFIX="$PWD/root" >install.log 2>&1 || { cat install.log; return 1; }
    [ -f root/lib/libfofkit_mpi.so.0 ] && [ -L root/lib/libfofkit_mpi.so.0 ]
    write_mpiprog
    mpicc mpiprog.c $(PKG_CONFIG_PATH=$PWD/root/lib/pkgconfig pkg-config --cflags --libs fofkit) \
        -Wl,-rpath,"$PWD/root/lib" -o mpiprog
    run mpirun -n 2 ./mpiprog
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$(grep -c '^rank [0-9]: 6626 groups, 0 sinks differ, libfofkit_mpi 0 then 1$' <<<"$output")" -eq 2 ]
    make -s -C "$REPO" B="$FOFKIT_BUILD" uninstall PREFIX="$PWD/root" >/dev/null
    [ ! -e root/lib/libfofkit_mpi.so.0 ]
    # libfofkit.so alone: the call fails, on every rank, naming what is missing
    mkdir alone && cp "$FOFKIT_BUILD/libfofkit.so.0" alone/
    mpicc mpiprog.c -I"$REPO/include" -Lalone -l:libfofkit.so.0 -Wl,-rpath,"$PWD/alone" -o alone/mpiprog
    run mpirun -n 1 alone/mpiprog
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == "rank 0: status -7: fofkit_fof_mpi: cannot load libfofkit_mpi.so.0, which holds the MPI calls: $PWD/alone/libfofkit_mpi.so.0: cannot open shared object file: No such file or directory" ]]
}
