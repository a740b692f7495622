#!/usr/bin/env bats
# bench_floor.bats - bench/floor, bench/run's I/O floor: it moves every byte it reports and refuses bad arguments.

bats_require_minimum_version 1.5.0

setup() {
    # floor is built beside the programs: $(B)/bench/floor next to $(B)/bin
    FLOOR=$(dirname "$(command -v tipsy2bin)")/../bench/floor
    [ -x "$FLOOR" ] || skip "bench/floor is not built"
    cd "$BATS_TEST_TMPDIR"
    # 3 MiB + 5 bytes: several blocks and a short last one
    head -c $((3 * 1048576 + 5)) /dev/urandom >in.bin
}

# reported BYTES SECONDS: bytes as given, seconds a non-negative number
reports() {
    [[ "$output" =~ ^$1\ [0-9]+\.[0-9]{6}$ ]] || { echo "got '$output', want '$1 SECONDS'"; return 1; }
}

@test "floor read reads the whole file" {
    run -0 "$FLOOR" read in.bin
    reports $((3 * 1048576 + 5))
}

@test "floor readall reads the whole file on every core, and on one" {
    run -0 "$FLOOR" readall in.bin
    reports $((3 * 1048576 + 5))
    OMP_NUM_THREADS=3 run -0 "$FLOOR" readall in.bin
    reports $((3 * 1048576 + 5))
    OMP_NUM_THREADS=1 run -0 "$FLOOR" readall in.bin
    reports $((3 * 1048576 + 5))
    : >empty.bin
    run -0 "$FLOOR" readall empty.bin
    reports 0
}

@test "floor pipe copies the whole file through a pipe" {
    run -0 "$FLOOR" pipe in.bin
    reports $((3 * 1048576 + 5))
}

@test "floor gift hands the whole file to a pipe (vmsplice), every byte read at the other end" {
    run -0 "$FLOOR" gift in.bin
    reports $((3 * 1048576 + 5))
    : >empty.bin
    run -0 "$FLOOR" gift empty.bin
    reports 0
}

@test "floor write writes the bytes asked for and removes its file" {
    run -0 "$FLOOR" write 2097153 out.tmp
    reports 2097153
    [ ! -e out.tmp ]
    run -0 "$FLOOR" write 0 out.tmp
    reports 0
}

@test "floor writeall writes the bytes asked for on every core and on one, and removes its file" {
    run -0 "$FLOOR" writeall $((70 * 1048576 + 3)) out.tmp
    reports $((70 * 1048576 + 3))
    [ ! -e out.tmp ]
    OMP_NUM_THREADS=1 run -0 "$FLOOR" writeall 4097 out.tmp
    reports 4097
    run -0 "$FLOOR" writeall 0 out.tmp
    reports 0
    run -1 "$FLOOR" writeall 10 no/such/dir/out.tmp
    [ "$output" = "floor: no/such/dir/out.tmp: open: No such file or directory" ]
}

@test "floor touch faults in the bytes asked for twice, a line each, on every core and on one" {
    run -0 "$FLOOR" touch 20000005
    [ "${#lines[@]}" -eq 2 ]
    for l in "${lines[@]}"; do output=$l reports 20000005; done
    OMP_NUM_THREADS=1 run -0 "$FLOOR" touch 0
    [ "${#lines[@]}" -eq 2 ] && output=${lines[1]} reports 0
    run -2 "$FLOOR" touch
    run -2 "$FLOOR" touch 1x
}

@test "floor refuses bad arguments and missing files" {
    run -2 "$FLOOR"
    [[ "$output" == usage:* ]]
    run -2 "$FLOOR" write 12x out.tmp
    run -2 "$FLOOR" write -1 out.tmp
    run -2 "$FLOOR" copy in.bin
    run -1 "$FLOOR" read missing.bin
    [ "$output" = "floor: missing.bin: open: No such file or directory" ]
    run -1 "$FLOOR" pipe missing.bin
    run -1 "$FLOOR" readall missing.bin
    run -1 "$FLOOR" write 10 no/such/dir/out.tmp
    [ "$output" = "floor: no/such/dir/out.tmp: open: No such file or directory" ]
    run -0 "$FLOOR" --help
    [[ "$output" == usage:* ]]
}
