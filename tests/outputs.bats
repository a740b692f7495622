#!/usr/bin/env bats
# outputs.bats - where outputs go: a regular file appears only when complete, anything else is written in place.

bats_require_minimum_version 1.5.0

setup() {
    cd "$BATS_TEST_TMPDIR"
    mkuniverse -n 3000 -s 2 -o snap.std
}

@test "an output that is a FIFO is written in place and stays a FIFO" {
    tipsy2bin snap.std -o ref.bin
    mkfifo out.fifo
    cat out.fifo > got.bin &
    tipsy2bin snap.std -o out.fifo
    wait
    [ -p out.fifo ]
    cmp ref.bin got.bin
    [ -z "$(ls | grep '\.tmp\.')" ]
}

@test "an output that is a directory is refused with one line" {
    mkdir d
    run --separate-stderr tipsy2bin snap.std -o d
    [ "$status" -eq 1 ]
    [ "$stderr" = "tipsy2bin: d: cannot create: it is a directory (give a file name)" ]
    [ -d d ]
}

@test "a program killed with SIGKILL while it writes leaves no file, not even a temporary one" {
    tipsy2bin snap.std -o in.fof
    mkfifo in.fifo
    # kdbuild has written the SNAP chunk and waits for the rest of its input
    kdbuild -o out.fof in.fifo &
    local pid=$!
    exec 8>in.fifo
    head -c 1000 in.fof >&8
    sleep 0.5
    kill -9 "$pid"
    exec 8>&-
    wait "$pid" || true
    [ -z "$(ls | grep '^out\.fof')" ]
    # and, completed, the output has the permissions a plain creat() gives
    kdbuild -o out.fof in.fof
    [ "$(stat -c %a out.fof)" = "$(printf '%o' $((0666 & ~$(umask))))" ]
}
