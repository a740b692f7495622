# mpi_helpers.bash - what the MPI tests share: Open MPI's settings for CI, a probe that mpirun starts, need_mpi.

# mpirun as root (CI), ranks beyond the cores, and no single-copy mechanism (containers lack
# the ptrace permission Open MPI's default one needs).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# ob1, the PML Open MPI selects here anyway (one node, no fabric): named, each rank skips probing
# the others (cm's fabric MTLs, UCX), which took most of a small run's start, 0.4 s of 3 ranks'.
export OMPI_MCA_pml=ob1

# For setup_file: whether mpirun starts at all (a container may forbid what it needs), tried
# once: mpirun.ok (or mpirun.err) in the file's directory. Not under the sanitizers (make
# check-asan sets ASAN_OPTIONS): Open MPI's own leaks and uninstrumented code would be
# reported, so the MPI runs are left out there (docs/TESTING.md).
mpi_probe() {
    if [ -z "${ASAN_OPTIONS:-}" ] && command -v mpirun >/dev/null; then
        (cd "$BATS_FILE_TMPDIR" && mpirun -n 1 true 2>mpirun.err && touch mpirun.ok)
    fi
    return 0
}

# Skips unless MPI runs here: not under the sanitizers, mpirun installed, PROGRAM (default
# foflink) built with MPI, and mpi_probe saw mpirun start. Usage: need_mpi [PROGRAM]
need_mpi() {
    [ -z "${ASAN_OPTIONS:-}" ] || skip "Open MPI under the sanitizers"
    command -v mpirun >/dev/null || skip "mpirun is missing (Debian: openmpi-bin)"
    ldd "$(command -v "${1:-foflink}")" | grep -q libmpi || skip "this build has no MPI (libopenmpi-dev)"
    [ -f "$BATS_FILE_TMPDIR/mpirun.ok" ] || skip "mpirun -n 1 true fails here: $(head -n 1 "$BATS_FILE_TMPDIR/mpirun.err")"
}

# The rank counts a test sweeps: with FOFKIT_TEST_RANKS=all (make test-full) every one given,
# else, of more than two, the first, the one in the middle and the last (make test's time on 2
# cores). Usage: for r in $(rank_counts 1 3 5 7 8 27 64); do ...
rank_counts() {
    if [ "${FOFKIT_TEST_RANKS:-}" = all ] || [ $# -le 2 ]; then
        echo "$@"
        return
    fi
    local a=("$@")
    if [ $# -eq 3 ]; then echo "${a[0]} ${a[2]}"; else echo "${a[0]} ${a[$# / 2]} ${a[$# - 1]}"; fi
}

# ARGS with FOFKIT_TEST_RANKS=all (make test-full), else nothing: the rank counts only the full
# suite adds (make test keeps one 64-rank run, tests/dist_link.bats' tiled box).
full_only() {
    [ "${FOFKIT_TEST_RANKS:-}" != all ] || echo "$@"
}
