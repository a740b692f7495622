#!/usr/bin/env bats
# python.bats - the fofkit Python package (python/): its stream reader's unittest suite against fofdump and the C programs, its bindings of libfofkit against the programs' groups and catalogue, and pip install, when numpy is installed.

bats_require_minimum_version 1.5.0

PY=$BATS_TEST_DIRNAME/../python
export PYTHONDONTWRITEBYTECODE=1

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    command -v python3 >/dev/null || skip "no python3"
    python3 -c 'import numpy' 2>/dev/null || skip "python3 has no numpy"
}

@test "python3 -m unittest: every test of the stream reader runs (none skipped) and passes" {
    run python3 -m unittest discover -s "$PY/tests" -t "$PY/tests" -p test_stream.py
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "OK" ]]
    [[ "$output" =~ Ran\ ([0-9]+)\ tests ]]
    [ "${BASH_REMATCH[1]}" -ge 19 ]
}

@test "python3 -m unittest: fofkit.read_tree on a tree written here and on halotree's (when built with HDF5)" {
    run python3 -m unittest discover -s "$PY/tests" -t "$PY/tests" -p test_tree.py -v
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "OK"* ]]
    [[ "$output" =~ Ran\ ([0-9]+)\ tests ]]
    [ "${BASH_REMATCH[1]}" -eq 4 ]
}

@test "the package reads a stream from a pipe and names it stdin" {
    run bash -c "mkuniverse -n 2000 | tipsy2bin | PYTHONPATH='$PY' python3 -c 'import fofkit; s = fofkit.open(\"-\"); print(s.name, [c.tag for c in s.chunks], s.snap[\"n\"])'"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = "stdin ['SNAP', 'POS', 'MASS', 'TYPE', 'ID', 'VEL'] 2000" ]
}

@test "a truncated stream from a pipe is a StreamError naming it" {
    run bash -c "mkuniverse -n 2000 | tipsy2bin | head -c 5000 | PYTHONPATH='$PY' python3 -c 'import fofkit; fofkit.open(\"-\")'"
    [ "$status" -eq 1 ]
    [ "${lines[-1]}" = "fofkit.stream.StreamError: stdin: truncated stream (ends inside chunk POS at byte 5000)" ]
}

# Runs python3 with the build's libfofkit: under ASan (make check-asan's build) with its runtimes
# preloaded and Python's own leaks left unreported (LSan would count the interpreter's).
py_lib() {
    local so=$FOFKIT_BUILD/libfofkit.so pre=""
    if ldd "$so" 2>/dev/null | grep -q libasan; then
        pre="$(${CC:-gcc} -print-file-name=libasan.so) $(${CC:-gcc} -print-file-name=libubsan.so)"
    fi
    FOFKIT_LIB=$so LD_PRELOAD="$pre" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" python3 "$@"
}

@test "fofkit.fof and fofkit.halos (libfofkit): the programs' groups and catalogue, every snapshot, bad arrays" {
    [ -n "$FOFKIT_BUILD" ] && [ -f "$FOFKIT_BUILD/libfofkit.so" ] || skip "no library build (FOFKIT_BUILD unset)"
    run py_lib -m unittest discover -s "$PY/tests" -t "$PY/tests" -p test_bindings.py -v
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" =~ Ran\ ([0-9]+)\ tests ]]
    [ "${BASH_REMATCH[1]}" -ge 8 ]
    # only the GPU arrays may skip (no CuPy or no GPU); real snapshots skip only without ../shared/data
    ! grep "skipped '" <<<"$output" | grep -v '^test_cupy ' | grep -v "^test_real_snapshots .*skipped 'no "
}

@test "pip install ./python puts libfofkit beside the package, which runs fofkit.fof from anywhere" {
    [ -n "$FOFKIT_BUILD" ] && [ -f "$FOFKIT_BUILD/libfofkit.so" ] || skip "no library build (FOFKIT_BUILD unset)"
    ! ldd "$FOFKIT_BUILD/libfofkit.so" | grep -q libasan || skip "an ASan build (the installed copy would need its runtime)"
    local iso=(--no-build-isolation)
    python3 -c 'import setuptools, wheel' 2>/dev/null || iso=() # pip fetches them into its build environment
    run env FOFKIT_LIB="$FOFKIT_BUILD/libfofkit.so" pip install -q --no-deps "${iso[@]}" --target "$PWD/site" "$PY"
    echo "$output"
    if [ "$status" -ne 0 ] && grep -q 'No matching distribution found for setuptools\|Could not find a version' <<<"$output"; then
        skip "pip cannot fetch setuptools and wheel here (no index)"
    fi
    [ "$status" -eq 0 ]
    [ -f site/fofkit/libfofkit.so.0 ]
    cd / && run env -u FOFKIT_LIB PYTHONPATH="$BATS_TEST_TMPDIR/site" python3 -c '
import fofkit, numpy as np
pos = np.array([[0.1, 0.1, 0.1], [0.11, 0.1, 0.1], [0.5, 0.5, 0.5]], dtype=np.float32)
print(fofkit.library.library()._name.endswith("site/fofkit/libfofkit.so.0"), fofkit.fof(pos, l=0.05, box=1.0, minsize=1).tolist())'
    echo "$output"
    [ "$output" = "True [1, 1, 2]" ]
}

@test "without libfofkit the stream reader works and fofkit.fof says what is missing" {
    run bash -c "mkuniverse -n 2000 | tipsy2bin | FOFKIT_LIB=/nonexistent/libfofkit.so PYTHONPATH='$PY' python3 -c '
import fofkit, numpy as np
s = fofkit.open(\"-\")
print(s.snap[\"n\"])
try:
    fofkit.fof(np.zeros((3, 3), np.float32), box=1.0)
except fofkit.LibraryError as e:
    print(e)'"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "2000" ]
    [[ "${lines[1]}" == "libfofkit not found (tried /nonexistent/libfofkit.so): build it with \`make lib\`"* ]]
}
