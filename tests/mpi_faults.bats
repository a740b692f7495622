#!/usr/bin/env bats
# mpi_faults.bats - distributed runs on CPU ranks meeting a rank killed mid-run (SIGKILL) or a full disk on one rank: every rank ends, no hang, no output left, one message.

bats_require_minimum_version 1.5.0
load ref_helpers
load mpi_helpers
export OMP_NUM_THREADS=1

# Every mpirun here runs under a time limit: a hang fails the test instead of stopping CI.
LIMIT=120

setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    mpi_probe
    mkuniverse -n 30000 -s 9 -o u.std
    tipsy2bin -o whole.fof u.std
    # every stage's streams of 3 ranks, made once (ref/), when MPI runs here
    if [ -f mpirun.ok ] && ldd "$(command -v tipsy2bin)" | grep -q libmpi; then
        mkdir ref
        mpirun -n 3 tipsy2bin u.std -o ref/part.%r.fof
        mpirun -n 3 foflink -b 0.2 ref/part.%r.fof -o ref/link.%r.fof
        mpirun -n 3 groups -m 5 --format=stream ref/link.%r.fof -o ref/grp.%r.fof
    fi
}

# The tests share the file's folder (its snapshot and stream).
setup() {
    cd "$BATS_FILE_TMPDIR" || return 1
}

# The run (status) failed by itself: not success, not the time limit.
failed_alone() {
    [ "$status" -ne 0 ]
    [ "$status" -ne 124 ]
}

# The pid of rank R of PROG running under mpirun in this test's folder (never another's).
rank_pid() {
    local prog=$1 r=$2 p
    for p in $(pgrep -x "$prog"); do
        [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$PWD" ] || continue
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$r" && echo "$p" && return 0
    done
    return 0
}

# Waits (at most 30 s) for rank R of PROG to run here; prints its pid.
wait_rank() {
    local p= i
    for ((i = 0; i < 300; i++)); do
        p=$(rank_pid "$1" "$2")
        [ -n "$p" ] && echo "$p" && return 0
        sleep 0.1
    done
    echo "rank $2 of $1 never started" >&2
    return 1
}

# After a run that failed: no output named OUT.* (but the ones given in KEEP...) and no
# temporary file anywhere here. Usage: nothing_left OUT [KEEP...]
nothing_left() {
    local out=$1 f
    shift
    for f in "$out".*; do
        [ -e "$f" ] || [ -L "$f" ] || continue
        [[ " $* " == *" $f "* ]] && continue
        echo "left behind: $f"
        return 1
    done
    [ -z "$(find . -name '*.tmp.*')" ]
}

# Runs `mpirun -n 3 PROG ARGS...` in the background with rank 1's input (or output) FILE a
# FIFO: rank 1 blocks on it while the others go on to wait for it; writes the first BYTES of
# SOURCE into it (no SOURCE: rank 1 stays blocked opening its output), then kills rank 1
# with SIGKILL. The run must end by
# itself, failing, within LIMIT seconds. Usage: kill_rank1 FILE SOURCE BYTES PROG ARGS...
kill_rank1() {
    local fifo=$1 src=$2 bytes=$3 prog=$4
    shift 3
    rm -f "$fifo"
    mkfifo "$fifo"
    timeout "$LIMIT" mpirun -n 3 "$@" >run.out 2>run.err &
    local run=$! pid
    pid=$(wait_rank "$prog" 1)
    if [ -n "$src" ]; then
        exec 8>"$fifo"
        head -c "$bytes" "$src" >&8
    fi
    sleep 0.5
    kill -9 "$pid"
    [ -z "$src" ] || exec 8>&-
    status=0
    wait "$run" || status=$?
    echo "status $status"
    cat run.err
    failed_alone # mpirun ended every rank, before the time limit
    # no fofkit program adds to mpirun's report of the killed rank
    [ "$(grep -c "^$prog: " run.err)" -le 1 ]
    rm -f "$fifo"
}

@test "a rank killed mid-run (SIGKILL): every rank ends, no hang, no output left, not even the killed rank's" {
    need_mpi tipsy2bin
    splitstream 3 whole.fof in.%r.fof
    # foflink: rank 1 has read part of its stream
    kill_rank1 in.1.fof whole.fof 5000 foflink -b 0.2 in.%r.fof -o link.%r.fof
    nothing_left link
    # groups and halostats: rank 1 reads its stream from a pipe and is killed inside it
    cp ref/link.* .
    kill_rank1 link.1.fof ref/link.1.fof 3000 groups -m 5 --format=stream link.%r.fof -o grp.%r.fof
    nothing_left grp
    cp ref/grp.* .
    rm link.*
    kill_rank1 grp.1.fof ref/grp.1.fof 3000 halostats grp.%r.fof -o halos.txt
    [ ! -e halos.txt ]
    nothing_left halos
    # tipsy2bin: rank 1's output is a FIFO it blocks on while the others finish theirs
    kill_rank1 part.1.fof "" 0 tipsy2bin u.std -o part.%r.fof
    nothing_left part
}

# Runs `mpirun -n 3 PROG ARGS...` (with -o OUT.%r.fof, or -o FULL when FULL is a path) with
# OUT.R.fof (or FULL) a full disk: it fails by itself, one line from PROG says "FILE: cannot
# write: ..." and nothing named OUT.* is left but the link. Usage:
#   full_disk OUT R PROG ARGS...     (rank R's stream OUT.R.fof links to /dev/full)
#   full_disk /dev/full - PROG ARGS... (the one output is /dev/full)
full_disk() {
    local out=$1 r=$2 prog=$3 file
    shift 2
    if [ "$r" = - ]; then
        file=$out
        run --separate-stderr timeout "$LIMIT" mpirun -n 3 "$@" -o "$out"
    else
        file=$out.$r.fof
        ln -s /dev/full "$file"
        run --separate-stderr timeout "$LIMIT" mpirun -n 3 "$@" -o "$out.%r.fof"
    fi
    echo "$stderr"
    failed_alone
    # one message, beside the note that ranks share a GPU (FOFKIT_DEVICE=gpu on a host of fewer GPUs than ranks)
    [ "$(grep -v ' share its [0-9]* GPUs* in turn' <<<"$stderr" | grep -c "^$prog: ")" -eq 1 ]
    grep -q "^$prog: $file: cannot write: " <<<"$stderr"
    if [ "$r" != - ]; then
        nothing_left "$out" "$file"
        rm "$file"
    fi
    [ -z "$(find . -name '*.tmp.*')" ]
}

@test "a full disk on one rank: one message naming its file, every rank fails, no output left" {
    need_mpi tipsy2bin
    [ -w /dev/full ] || skip "no /dev/full"
    rm -f part.* link.* grp.*
    full_disk part 1 tipsy2bin u.std
    grep -qx 'tipsy2bin: part.1.fof: cannot write: No space left on device' <<<"$stderr"
    full_disk link 1 foflink -b 0.2 ref/part.%r.fof
    grep -qx 'foflink: link.1.fof: cannot write: No space left on device' <<<"$stderr"
    full_disk grp 2 groups -m 5 --format=stream ref/link.%r.fof
    grep -qx 'groups: grp.2.fof: cannot write: No space left on device' <<<"$stderr"
    # one file from every rank (MPI-IO), and the catalogue rank 0 writes
    full_disk /dev/full - groups -m 5 --format=grp ref/link.%r.fof
    full_disk /dev/full - halostats ref/grp.%r.fof
    grep -qx 'halostats: /dev/full: cannot write: No space left on device' <<<"$stderr"
}
