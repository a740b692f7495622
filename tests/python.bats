#!/usr/bin/env bats
# python.bats - the fofkit Python package (python/): its stream reader's unittest suite against fofdump and the C programs, its bindings of libfofkit against the programs' groups and catalogue, and pip install, when numpy is installed.

bats_require_minimum_version 1.5.0

PY=$BATS_TEST_DIRNAME/../python
export PYTHONDONTWRITEBYTECODE=1

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    command -v python3 >/dev/null || skip "no python3"
    # tried once a file (numpy.ok or numpy.no in $BATS_FILE_TMPDIR)
    local f=$BATS_FILE_TMPDIR/numpy
    [ -e "$f.ok" ] || [ -e "$f.no" ] || { python3 -c 'import numpy' 2>/dev/null && touch "$f.ok" || touch "$f.no"; }
    [ -e "$f.ok" ] || skip "python3 has no numpy"
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

@test "pip wheel ./python: a py3-none-PLATFORM wheel holding libfofkit, which a venv installs and runs fofkit.fof from anywhere" {
    [ -n "$FOFKIT_BUILD" ] && [ -f "$FOFKIT_BUILD/libfofkit.so" ] || skip "no library build (FOFKIT_BUILD unset)"
    ! ldd "$FOFKIT_BUILD/libfofkit.so" | grep -q libasan || skip "an ASan build (the installed copy would need its runtime)"
    python3 -c 'import setuptools.command.bdist_wheel' 2>/dev/null || python3 -c 'import wheel.bdist_wheel' 2>/dev/null ||
        skip "python3 has neither setuptools 70.1 nor wheel (scripts/deps optional installs wheel)"
    python3 -m venv -h >/dev/null 2>&1 || skip "python3 has no venv module"
    # the build's library reused (FOFKIT_BUILD), no build environment fetched: seconds; from a copy of the
    # package, so that no earlier build's files (python/build) reach the wheel and nothing is written there
    cp -r "$PY" pkg && rm -rf pkg/build pkg/*.egg-info
    run env FOFKIT_BUILD="$FOFKIT_BUILD" python3 -m pip wheel -q --no-deps --no-build-isolation -w dist ./pkg
    echo "$output"
    [ "$status" -eq 0 ]
    local plat whl
    plat=$(python3 -c 'import sysconfig; print(sysconfig.get_platform().replace("-", "_").replace(".", "_"))')
    whl=dist/fofkit-$(sed -n 's/^version = "\(.*\)"/\1/p' "$PY/pyproject.toml")-py3-none-$plat.whl
    ls dist
    [ -f "$whl" ] && [ "$(ls dist | wc -l)" -eq 1 ]
    python3 - "$whl" "$plat" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
wheel = dict(l.split(": ", 1) for l in z.read("fofkit-%s.dist-info/WHEEL" % sys.argv[1].split("-")[1]).decode().splitlines() if ": " in l)
assert wheel["Tag"] == "py3-none-" + sys.argv[2], wheel
assert wheel["Root-Is-Purelib"] == "false", wheel
names = z.namelist()
assert "fofkit/libfofkit.so.0" in names and "fofkit/membership.py" in names, names
assert not any(".data/" in n for n in names), names  # platlib, at the root
PY
    # the library in the wheel loads no MPI, HDF5, libpng or cairo
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("fofkit/libfofkit.so.0", "lib")' "$whl"
    ! readelf -d lib/fofkit/libfofkit.so.0 | grep NEEDED | grep -E 'libmpi|libhdf5|libpng|libcairo'
    # no pip of its own (ensurepip takes seconds): the system's pip, run by the venv's python,
    # installs into the venv
    python3 -m venv --system-site-packages --without-pip venv
    run venv/bin/python -m pip install -q --no-deps --no-index "$whl"
    echo "$output"
    [ "$status" -eq 0 ]
    cd / && run env -u FOFKIT_LIB -u PYTHONPATH "$BATS_TEST_TMPDIR/venv/bin/python" -c '
import fofkit, numpy as np
pos = np.array([[0.1, 0.1, 0.1], [0.11, 0.1, 0.1], [0.5, 0.5, 0.5]], dtype=np.float32)
lib = fofkit.library.library()._name
print(lib.startswith("'"$BATS_TEST_TMPDIR"'/venv/") and lib.endswith("/site-packages/fofkit/libfofkit.so.0"), fofkit.fof(pos, l=0.05, box=1.0, minsize=1).tolist())'
    echo "$output"
    [ "$output" = "True [1, 1, 2]" ]
}

@test "python3 -m build --wheel makes the same wheel (when build is installed)" {
    [ -n "$FOFKIT_BUILD" ] && [ -f "$FOFKIT_BUILD/libfofkit.so" ] || skip "no library build (FOFKIT_BUILD unset)"
    python3 -c 'import build.__main__' 2>/dev/null || skip "python3 has no build (pip install build)"
    python3 -c 'import setuptools.command.bdist_wheel' 2>/dev/null || python3 -c 'import wheel.bdist_wheel' 2>/dev/null ||
        skip "python3 has neither setuptools 70.1 nor wheel"
    cp -r "$PY" pkg && rm -rf pkg/build pkg/*.egg-info
    run env FOFKIT_BUILD="$FOFKIT_BUILD" python3 -m build -q --wheel --no-isolation -o dist pkg
    echo "$output"
    [ "$status" -eq 0 ]
    ls dist
    [ "$(ls dist)" = "$(basename dist/fofkit-*-py3-none-*.whl)" ]
    python3 -c 'import sys, zipfile; assert "fofkit/libfofkit.so.0" in zipfile.ZipFile(sys.argv[1]).namelist()' dist/*.whl
}

@test "import fofkit and fofkit.fof load no MPI, HDF5, libpng or cairo (libfofkit.so needs none)" {
    [ -n "$FOFKIT_BUILD" ] && [ -f "$FOFKIT_BUILD/libfofkit.so" ] || skip "no library build (FOFKIT_BUILD unset)"
    run py_lib -c '
import re, sys
sys.path.insert(0, "'"$PY"'")
def loaded():
    with open("/proc/self/maps") as f:
        return sorted(set(re.findall(r"/(lib(?:mpi|hdf5|png|cairo)[^/\s]*\.so[^/\s]*)", f.read())))
import numpy as np, fofkit
print("import", loaded())
gid = fofkit.fof(np.random.default_rng(1).random((5000, 3), dtype=np.float32), box=1.0)
cat = fofkit.halos(np.random.default_rng(1).random((5000, 3), dtype=np.float32), np.zeros((5000, 3), np.float32), gid, box=1.0)
print("fof", loaded(), fofkit.library.library()._name)'
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "import []" ]
    [ "${lines[1]}" = "fof [] $FOFKIT_BUILD/libfofkit.so" ]
}

@test "fofkit's integer columns are halostats' integer_columns, with every option" {
    command -v halostats >/dev/null || skip "halostats is not built"
    mkuniverse -n 5000 -s 3 | tipsy2bin | kdbuild | foflink | groups -m 20 | halostats --G=1 --so --omega-m=0.3 --unbind --format=stream -o cat.fof
    run python3 -c '
import sys
sys.path.insert(0, "'"$PY"'")
import fofkit
s = fofkit.open("cat.fof")
ints = s.text("HCOL")["integer_columns"].split()
print(ints == [c for c in fofkit.stream.INTEGER_COLUMNS if c in ints], sorted(ints) == sorted(fofkit.stream.INTEGER_COLUMNS))
print(sorted(n for n in s.catalogue().dtype.names if s.catalogue().dtype[n].kind == "i") == sorted(ints))'
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = "True True
True" ]
}

@test "python3 -m unittest in python/ finds the build's programs itself, and names them when there is none" {
    [ -n "$FOFKIT_BUILD" ] && [ -x "$FOFKIT_BUILD/bin/mkuniverse" ] || skip "no build (FOFKIT_BUILD unset)"
    # PATH without any directory holding the programs: buildenv.py puts $FOFKIT_BUILD/bin on it
    local path="" d py
    py=$(python3 -c 'import sys; print(sys.executable)')
    while IFS= read -r -d : d; do
        [ -n "$d" ] && [ ! -e "$d/mkuniverse" ] && path=${path:+$path:}$d
    done <<<"$PATH:"
    cd "$PY" && run env PATH="$path" FOFKIT_BUILD="$FOFKIT_BUILD" "$py" -m unittest tests.test_stream -v
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" =~ Ran\ ([0-9]+)\ tests ]] && [ "${BASH_REMATCH[1]}" -ge 19 ]
    ! grep -q "skipped" <<<"$output"
    # no build: skipped, saying which programs are missing and where they were looked for
    run env PATH="$path" FOFKIT_BUILD="$BATS_TEST_TMPDIR/none" "$py" -m unittest tests.test_stream -v
    echo "$output"
    [ "$status" -eq 0 ]
    grep -q "skipped 'no mkuniverse, tipsy2bin, kdbuild, foflink, groups, halostats, fofdump on the PATH nor in $BATS_TEST_TMPDIR/none/bin (build them with make, or set FOFKIT_BUILD to a build directory)'" <<<"$output"
}

@test "fofkit.members: halos from the user's own Gadget-4 snapshot by ID, with h5py and pynbody (skips without ../shared/data)" {
    [ -n "$FOFKIT_BUILD" ] && [ -f "$FOFKIT_BUILD/libfofkit.so" ] || skip "no library build (FOFKIT_BUILD unset)"
    run py_lib -m unittest discover -s "$PY/tests" -t "$PY/tests" -p test_members.py -v
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" =~ Ran\ ([0-9]+)\ tests ]] && [ "${BASH_REMATCH[1]}" -ge 7 ]
    # skips only without the data, h5py, pynbody or HDF5
    ! grep "skipped '" <<<"$output" | grep -v "skipped '\(no \|halostats is built without HDF5\)"
}
