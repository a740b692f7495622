#!/usr/bin/env bats
# mpi_rounds.bats - foflink and groups under mpirun with every exchange cut into rounds (FOFKIT_DIST_ROUND): the single-process .grp still.

bats_require_minimum_version 1.5.0

load mpi_helpers
export OMP_NUM_THREADS=1

setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    mpi_probe
    mkuniverse -n 30000 -s 11 -o mock.std
}

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
}

# The pipeline on R ranks, every exchange in rounds of at most N records between two ranks,
# against one process. Usage: rounds_agree R N MINSIZE LEVEL FOFLINK-OPTIONS...
rounds_agree() {
    local R=$1 N=$2 m=$3 L=$4
    shift 4
    tipsy2bin "$BATS_FILE_TMPDIR/mock.std" | kdbuild | foflink "$@" | groups -m "$m" --level="$L" --format=grp >ref.grp
    mpirun -n "$R" tipsy2bin "$BATS_FILE_TMPDIR/mock.std" -o "p.%r.fof"
    FOFKIT_DIST_ROUND=$N mpirun -n "$R" foflink "$@" p.%r.fof -o l.%r.fof
    FOFKIT_DIST_ROUND=$N mpirun -n "$R" groups -m "$m" --level="$L" --format=grp l.%r.fof -o dist.grp
    cmp ref.grp dist.grp
    [ "$(sort -u ref.grp | wc -l)" -gt 20 ] # groups were found
}

@test "exchanges in rounds of 37 records (hundreds of rounds a run) give the single-process .grp: 3 ranks, 2 levels" {
    need_mpi
    rounds_agree 3 37 8 1 -b 0.2,0.1
}

@test "exchanges in rounds of 1000 records, 4 ranks, 6D: the single-process .grp" {
    need_mpi
    rounds_agree 4 1000 8 0 -b 0.2 --psi=0.5
}
