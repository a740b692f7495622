#!/usr/bin/env bats
# python.bats - the fofkit Python package (python/): its unittest suite against fofdump and the C programs, when numpy is installed.

bats_require_minimum_version 1.5.0

PY=$BATS_TEST_DIRNAME/../python
export PYTHONDONTWRITEBYTECODE=1

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    command -v python3 >/dev/null || skip "no python3"
    python3 -c 'import numpy' 2>/dev/null || skip "python3 has no numpy"
}

@test "python3 -m unittest: every test runs (none skipped) and passes" {
    run python3 -m unittest discover -s "$PY/tests" -t "$PY/tests"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "OK" ]]
    [[ "$output" =~ Ran\ ([0-9]+)\ tests ]]
    [ "${BASH_REMATCH[1]}" -ge 19 ]
}

@test "the package reads a stream from a pipe and names it stdin" {
    run bash -c "mkuniverse -n 2000 | tipsy2bin | PYTHONPATH='$PY' python3 -c 'import fofkit; s = fofkit.open(\"-\"); print(s.name, [c.tag for c in s.chunks], s.snap[\"n\"])'"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = "stdin ['SNAP', 'POS', 'VEL', 'MASS', 'TYPE', 'ID'] 2000" ]
}

@test "a truncated stream from a pipe is a StreamError naming it" {
    run bash -c "mkuniverse -n 2000 | tipsy2bin | head -c 5000 | PYTHONPATH='$PY' python3 -c 'import fofkit; fofkit.open(\"-\")'"
    [ "$status" -eq 1 ]
    [ "${lines[-1]}" = "fofkit.stream.StreamError: stdin: truncated stream (ends inside chunk POS at byte 5000)" ]
}
