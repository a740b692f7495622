#!/usr/bin/env bats
# mpi_halos.bats - halostats under mpirun: the catalogue of 1 to 8 ranks byte for byte the single-process one (levels, --unbind, real snapshots), bad input on every rank.

bats_require_minimum_version 1.5.0

load mpi_helpers
export OMP_NUM_THREADS=1

DATA=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}

# A 2-level mock linked in one process (kd-tree order), made once.
setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    mpi_probe
    mkuniverse -n 20000 -s 7 -o mock.std
    tipsy2bin mock.std | kdbuild | foflink -b 0.2,0.1 -o link.fof
}

# The catalogue with its input's name (header line 2) replaced: a distributed
# run names the pattern it read, one process its file.
unnamed() {
    sed '2s|^# input [^:]*:|# input NAME:|' "$1"
}

# Splits the single-process linked STREAM into R per-rank streams in its
# stream order (as foflink under mpirun leaves them), groups them under
# mpirun, and checks that `mpirun -n R halostats OPTIONS` writes what one
# process writes on the single-process grouped stream (ref.txt, made by the
# caller with the same options). Usage: same R M STREAM OPTIONS...
same() {
    local R=$1 m=$2 s=$3
    shift 3
    mkgmin "$R" "$s" "l$R.%r.fof"
    mpirun -n "$R" groups -m "$m" --format=stream "l$R.%r.fof" -o "g$R.%r.fof"
    mpirun -n "$R" halostats "$@" "g$R.%r.fof" -o "d$R.txt"
    cmp <(unnamed ref.txt) <(unnamed "d$R.txt")
    [ "$(sed -n 2p "d$R.txt" | cut -d: -f1)" = "# input g$R.%r.fof" ]
    ! ls d$R.txt.* 2>/dev/null
}

@test "mock, 2 levels: the catalogue of 1, 2, 3, 4 and 8 ranks is the single-process one (text, CSV)" {
    need_mpi halostats
    groups -m 20 link.fof -o grp.fof
    halostats grp.fof -o ref.txt
    for R in 1 2 3 4 8; do same "$R" 20 link.fof; done
    [ "$(grep -vc '^#' ref.txt)" -gt 100 ]               # groups of both levels: not an empty comparison
    grep -q '^1 ' ref.txt                                 # level 1 rows
    halostats --csv grp.fof -o ref.csv
    mpirun -n 3 halostats --csv g3.%r.fof -o d3.csv
    cmp ref.csv d3.csv
}

@test "mock: --unbind on 2, 3 and 8 ranks, and with --centre=com, is the single-process catalogue" {
    need_mpi halostats
    groups -m 10 link.fof | halostats --unbind -o ref.txt
    grep -q n_bound ref.txt
    for R in 3 8; do same "$R" 10 link.fof --unbind; done
    groups -m 10 link.fof | halostats --unbind --centre=com --bound-min=5 -o ref.txt
    same 2 10 link.fof --unbind --centre=com --bound-min=5
}

@test "mock: the whole pipeline under mpirun (tipsy2bin, foflink, groups, halostats) on 2 and 4 ranks writes the single-process catalogue" {
    need_mpi halostats
    tipsy2bin mock.std | kdbuild | foflink -b 0.2,0.1 | groups -m 20 | halostats --unbind -o ref.txt
    for R in 2 4; do
        mpirun -n "$R" tipsy2bin mock.std -o "p$R.%r.fof"
        mpirun -n "$R" foflink -b 0.2,0.1 "p$R.%r.fof" -o "q$R.%r.fof"
        mpirun -n "$R" groups -m 20 --format=stream "q$R.%r.fof" -o "r$R.%r.fof"
        mpirun -n "$R" halostats --unbind "r$R.%r.fof" -o "f$R.txt"
        cmp <(unnamed ref.txt) <(unnamed "f$R.txt")
    done
}

@test "GPU: 2 ranks computing their potentials on the GPU write the single-process CPU catalogue (skips without a GPU)" {
    need_mpi halostats
    groups -m 20 link.fof -o grp.fof
    halostats --device=gpu grp.fof -o /dev/null 2>/dev/null || skip "no usable GPU"
    halostats --device=cpu grp.fof -o ref.txt
    mkgmin 2 link.fof l.%r.fof
    mpirun -n 2 groups -m 20 --format=stream l.%r.fof -o g.%r.fof
    mpirun -n 2 halostats --device=gpu g.%r.fof -o gpu.txt
    grep -q 'least); on the GPU$' gpu.txt # the header says where the potentials were summed, the rows agree
    cmp <(unnamed ref.txt) <(unnamed gpu.txt | sed 's/least); on the GPU$/least); on the CPU/')
}

@test "real snapshots: the catalogue of 3 ranks is the single-process one (isolated; Gadget-4 units)" {
    need_mpi halostats
    [ -f "$DATA/run581-dark-star.std" ] && [ -f "$DATA/g4-lcdm-gas-z0.hdf5" ] || skip "no snapshots in $DATA"
    tipsy2bin --no-periodic "$DATA/run581-dark-star.std" | kdbuild | foflink -b 0.2 -o real.fof
    groups -m 10 real.fof | halostats --unbind -o ref.txt
    [ "$(grep -vc '^#' ref.txt)" -gt 0 ]
    same 3 10 real.fof --unbind
    command -v hdf52bin >/dev/null && hdf52bin "$DATA/g4-lcdm-gas-z0.hdf5" -o g4.fof 2>/dev/null ||
        skip "this build reads no HDF5"
    kdbuild g4.fof | foflink -b 0.2 -o g4link.fof
    groups -m 10 g4link.fof | halostats -o ref.txt
    grep -q '^# units: length kpc' ref.txt
    same 3 10 g4link.fof
}

# Checks a failed run: status STATUS on every rank (mpirun's), one halostats message MATCHING, no
# output. Usage: fails STATUS MATCHING COMMAND...
fails() {
    local status=$1 msg=$2
    shift 2
    run -"$status" --separate-stderr "$@"
    [ "$(grep -c '^halostats:' <<<"$stderr")" -eq 1 ]
    grep -q "^halostats: .*$msg" <<<"$stderr"
    [ ! -e bad.txt ] && ! ls bad.txt.* 2>/dev/null
}

@test "bad input: a rank's stream missing, no group ids, wrong rank count, --so, --format=stream, no GPU: one message, every rank fails, no output" {
    need_mpi halostats
    mkgmin 3 link.fof l.%r.fof
    mpirun -n 3 groups -m 20 --format=stream l.%r.fof -o g.%r.fof
    mv g.1.fof away.fof
    fails 1 "g.1.fof: cannot open: No such file" mpirun -n 3 halostats g.%r.fof -o bad.txt
    mv away.fof g.1.fof
    fails 1 "l.0.fof: stream has no GIDL chunk (run groups --format=stream under mpirun first)" \
        mpirun -n 3 halostats l.%r.fof -o bad.txt
    fails 1 "g.0.fof: grouped by 3 ranks, this run has 2" mpirun -n 2 halostats g.%r.fof -o bad.txt
    fails 2 "option --so is not available under mpirun" mpirun -n 3 halostats --so --omega-m=0.3 g.%r.fof -o bad.txt
    fails 2 "option --format=stream is not available under mpirun" mpirun -n 3 halostats --format=stream g.%r.fof -o bad.txt
    fails 2 "one file: -o FILE without %r" mpirun -n 3 halostats g.%r.fof -o bad.%r.txt
    fails 2 "the input name needs the rank pattern" mpirun -n 3 halostats g.0.fof -o bad.txt
    if ! groups -m 20 link.fof | halostats --device=gpu -o /dev/null 2>/dev/null; then # no GPU here: every rank says so, once
        fails 3 "rank 0: --device=gpu: " mpirun -n 3 halostats --device=gpu g.%r.fof -o bad.txt
    fi
}
