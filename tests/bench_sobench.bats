#!/usr/bin/env bats
# bench_sobench.bats - bench/sobench, the SO search timer: it reads a stream and a halostats catalogue, times every method and finds no radius differing from the full sort.

bats_require_minimum_version 1.5.0

setup() {
    SOBENCH=$(dirname "$(command -v tipsy2bin)")/../bench/sobench
    [ -x "$SOBENCH" ] || skip "bench/sobench is not built"
    cd "$BATS_TEST_TMPDIR"
}

@test "sobench: a line per part, every method's radii equal the full sort's" {
    mkuniverse -n 60000 -s 3 -o u.std
    tipsy2bin u.std | kdbuild | foflink -b 0.2 | groups -m 20 -o u.fof
    halostats u.fof >cat.txt
    run -0 "$SOBENCH" --repeat=1 u.fof cat.txt
    echo "$output"
    ng=$(grep -vc '^#' cat.txt)
    [ "$ng" -gt 10 ]
    [[ "$output" == *"60000 particles, $ng centres"* ]]
    [[ "$output" =~ grid\ +[0-9.]+\ +[0-9.]+ ]]
    for m in sort bins auto; do
        [[ "$output" =~ $m\ +[0-9.]+\ +[0-9.]+\ +0\ of\ $((3 * ng))\ +0 ]]
    done
}

@test "sobench: usage errors" {
    run -2 "$SOBENCH" only-one
    [[ "$output" == "sobench: needs a stream and a catalogue (--help)" ]]
    run -2 "$SOBENCH" --repeat=0 a b
    run -0 "$SOBENCH" --help
    [[ "$output" == Usage:* ]]
}
