#!/usr/bin/env bats
# fuzz_replay.bats - every fuzz harness replays its committed corpus and past crash inputs (tests/fuzz).

# The harnesses abort on a broken promise and crash on a memory error; the
# replay drivers (fuzz_NAME, built by make) run each input once.

setup() {
    cd "$BATS_TEST_DIRNAME/fuzz"
}

replay() {
    local name=$1 dirs=()
    [ -d "corpus/fuzz_$name" ] && dirs+=("corpus/fuzz_$name")
    [ -d "regress/fuzz_$name" ] && dirs+=("regress/fuzz_$name")
    [ ${#dirs[@]} -gt 0 ] || { echo "no corpus for $name"; return 1; }
    run "fuzz_$name" "${dirs[@]}"
    echo "$output"
    [ "$status" -eq 0 ]
    # every file was run
    local n
    n=$(find "${dirs[@]}" -type f | wc -l)
    [ "${lines[${#lines[@]}-1]}" = "$n inputs replayed" ]
}

@test "fuzz_tipsy replays its corpus" { replay tipsy; }
@test "fuzz_stream replays its corpus" { replay stream; }
@test "fuzz_kv replays its corpus" { replay kv; }
@test "fuzz_tree replays its corpus" { replay tree; }
@test "fuzz_groups replays its corpus" { replay groups; }
@test "fuzz_gadget replays its corpus" { replay gadget; }
@test "fuzz_catalog replays its corpus" { replay catalog; }
@test "fuzz_treematch replays its corpus" { replay treematch; }
@test "fuzz_hdf5 replays its corpus (skipped without HDF5)" {
    hdf52bin -o /dev/null /nonexistent.hdf5 2>&1 | grep -q 'no HDF5 support' && skip "built without HDF5 (libhdf5-dev)"
    replay hdf5
}

@test "the replay driver fails on an input it cannot read" {
    run fuzz_tipsy /nonexistent/input
    [ "$status" -ne 0 ]
}
