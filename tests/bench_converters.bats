#!/usr/bin/env bats
# bench_converters.bats - bench/converters: it runs on a small mock and prints a row per converter (numbers, not timed).

bats_require_minimum_version 1.5.0
load ref_helpers

@test "bench/converters: a row per converter, every stream holding every particle; bad arguments refused" {
    python3 -c 'import numpy' 2>/dev/null || skip "python3 without numpy"
    cd "$BATS_TEST_DIRNAME/.."
    B=${FOFKIT_BUILD:-build}
    run --separate-stderr env B="$B" bench/converters --size 5000 --dir "$BATS_TEST_TMPDIR/c"
    [ "$status" -eq 0 ]
    [[ "$output" == *"command: bench/converters --size 5000"* ]]
    [ "$(grep -cE '^\| (tipsy2bin|gadget2bin) +\| +[0-9.]+ \| +[0-9.]+ \| +[0-9.]+ \|' <<<"$output")" -eq 2 ]
    grep -qE '^\| hdf52bin ' <<<"$output"
    [ ! -e "$BATS_TEST_TMPDIR/c" ] # removed without --keep
    run --separate-stderr bench/converters --size 12x
    [ "$status" -eq 2 ]
    [ "$stderr" = "bench/converters: --size takes a positive whole number, not '12x'" ]
}
