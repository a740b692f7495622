#!/usr/bin/env bats
# mpi_pipeline.bats - the whole distributed pipeline (tipsy2bin, foflink, groups under mpirun) writes the single-process .grp, for 1 to 4 ranks, 3D, 6D and levels.

bats_require_minimum_version 1.5.0

load mpi_helpers
export OMP_NUM_THREADS=1

DATA=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}

setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    mpi_probe
    mkuniverse -n 30000 -s 11 -o mock.std
}

# The pipeline on R ranks against one process (tipsy2bin options in $TIPSY), the .grp of each
# level in LEVELS (the streams linked once for them all).
# Usage: same R SNAPSHOT MINSIZE "LEVELS" FOFLINK-OPTIONS...
same() {
    local R=$1 snap=$2 m=$3 levels=$4 L
    shift 4
    [ -n "$levels" ]
    tipsy2bin ${TIPSY:-} "$snap" | kdbuild | foflink "$@" -o ref.fof
    mpirun -n "$R" tipsy2bin ${TIPSY:-} "$snap" -o "part$R.%r.fof"
    mpirun -n "$R" foflink "$@" "part$R.%r.fof" -o "link$R.%r.fof"
    for L in $levels; do
        groups -m "$m" --level="$L" --format=grp ref.fof >ref.grp
        mpirun -n "$R" groups -m "$m" --level="$L" --format=grp "link$R.%r.fof" -o "dist$R.grp"
        cmp ref.grp "dist$R.grp"
    done
}

@test "mock: tipsy2bin | foflink | groups on 1, 2, 3 and 4 ranks writes the single-process .grp" {
    need_mpi
    for R in $(rank_counts 1 2 3 4); do same "$R" "$BATS_FILE_TMPDIR/mock.std" 20 0 -b 0.2; done # make test: 1, 3, 4
    [ "$(wc -l <ref.grp)" -eq 30001 ]
    [ "$(sort -u ref.grp | wc -l)" -gt 20 ] # groups were found: the comparison is not of zeros
}

@test "mock, 6D and 3 levels: the distributed pipeline's .grp of every level is the single-process one" {
    need_mpi
    same 3 "$BATS_FILE_TMPDIR/mock.std" 8 "0 1 2" -b 0.2,0.1,0.05
    same 2 "$BATS_FILE_TMPDIR/mock.std" 8 0 -b 0.2 --psi=0.5
    same 4 "$BATS_FILE_TMPDIR/mock.std" 8 1 -b 0.2,0.1 --psi=0.5,0.4
}

@test "real snapshots: the distributed pipeline on 3 ranks writes the single-process .grp" {
    need_mpi
    [ -f "$DATA/run581-dark-star.std" ] && [ -f "$DATA/cube300-ics.std" ] || skip "no snapshots in $DATA"
    TIPSY=--no-periodic same 3 "$DATA/run581-dark-star.std" 10 0 -b 0.2 # isolated
    same 3 "$DATA/cube300-ics.std" 10 0 -b 0.2                          # periodic, wrapped
}
