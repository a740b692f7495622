#!/usr/bin/env bats
# man_examples.bats - the runnable examples of every man page ("$ " lines in .EX/.EE) run in order and succeed; the numpy recipe of fofstream(5) reads a real stream.

bats_require_minimum_version 1.5.0

MAN=$BATS_TEST_DIRNAME/../man

# Every test runs in its own scratch directory.
setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
}

# The commands of man page PAGE: every line that starts with "$ " inside an .EX/.EE block, in
# order, without the "$ ", roff escapes undone. An escape other than \- \e \\ \& \(aq \(dq \(ti
# \(ha \(ga \(rs is an error: it would reach the shell as the page's reader could not type it.
man_commands() {
    perl -e '
        my %esc = ("-" => "-", "e" => "\\", "\\" => "\\", "&" => "", "(aq" => "\x27", "(dq" => "\"",
                   "(ti" => "~", "(ha" => "^", "(ga" => "`", "(rs" => "\\");
        sub bad { print STDERR "$ARGV:$.: roff escape \\$_[0] in an example\n"; exit 1 }
        my $ex = 0;
        while (<>) {
            if (/^\.EX\b/) { $ex = 1; next }
            if (/^\.EE\b/) { $ex = 0; next }
            next unless $ex && s/^\$ //;
            chomp;
            s{\\(\(..|.)}{ exists $esc{$1} ? $esc{$1} : bad($1) }ge;
            print "$_\n";
        }' "$1"
}

# Runs the examples of man page PAGE (a path under man/) in order in the current directory,
# which first gets snap.std, a periodic mock universe of 20000 particles; fails at the first
# command that fails (or takes more than two minutes), naming it.
run_examples() {
    local page=$MAN/$1 cmds cmd count=0 p
    [ -f "$page" ] || { echo "no $page"; return 1; }
    for p in mkuniverse tipsy2bin kdbuild foflink groups halostats fofdump; do
        command -v "$p" >/dev/null || skip "$p is not built"
    done
    mkuniverse -n 20000 -s 20240611 -o snap.std
    cmds=$(man_commands "$page") || return 1
    while IFS= read -r cmd; do
        echo "\$ $cmd"
        # stdin from /dev/null: a command must not read the list of commands, nor wait for a terminal.
        timeout 120 bash -o pipefail -c "$cmd" </dev/null || {
            echo "failed with status $?: $cmd"
            return 1
        }
        count=$((count + 1))
    done <<<"$cmds"
    [ "$count" -gt 0 ] || { echo "$page has no runnable example"; return 1; }
}

@test "every man page has its test here" {
    local page name missing=0
    for page in "$MAN"/man1/*.1 "$MAN"/man3/*.3 "$MAN"/man5/*.5; do
        name=$(basename "$page")
        name="${name%.*}(${name##*.})"
        grep -qF "@test \"$name examples run\"" "$BATS_TEST_FILENAME" || { echo "no test for $name"; missing=1; }
    done
    [ "$missing" -eq 0 ]
}

@test "the extraction undoes roff escapes and refuses others" {
    cat >page.1 <<'EOF'
.TH X 1
.SH EXAMPLES
$ not in a block
.EX
$ echo \-v \e \(aqa\(aq \(dqb\(dq \(ti \&. done
text that is not a command
$ true
.EE
.EX
$ false \f(CWbold\fR
.EE
EOF
    run -1 --separate-stderr man_commands page.1
    [ "${lines[0]}" = "echo -v \\ 'a' \"b\" ~ . done" ]
    [ "${lines[1]}" = "true" ]
    [ "${#lines[@]}" -eq 2 ]
    [ "$stderr" = "page.1:10: roff escape \\f in an example" ]
}

@test "kdbuild(1) examples run" {
    run_examples man1/kdbuild.1
    [ -s tree.fof ] && cmp s8.grp s32.grp
}

@test "foflink(1) examples run" {
    local data=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}
    [ -f "$data/test4-zoom.std" ] || skip "no $data/test4-zoom.std"
    cp "$data/test4-zoom.std" zoom.std
    [ -f "$data/run99-gas-dark-star.std" ] || skip "no $data/run99-gas-dark-star.std"
    cp "$data/run99-gas-dark-star.std" gas.std
    run_examples man1/foflink.1
    [ -s linked.fof ] && [ -s isolated.txt ] && [ -s brute.txt ] && [ -s cpu.txt ]
    # the zoom example's numbers, as its prose says
    [ "$(grep -v '^#' zoom.txt | head -n 1 | cut -d ' ' -f 4)" = 16242 ]
    [ "$(grep -v '^#' zoom-all.txt | head -n 1 | cut -d ' ' -f 4)" = 44626 ]
    # the hydro example: other groups than every particle linked together
    [ -s hydro.grp ] && ! cmp -s hydro.grp alltypes.grp
}

@test "fofdump(1) examples run" {
    run_examples man1/fofdump.1
    [ -s grouped.fof ]
}

@test "groups(1) examples run" {
    run_examples man1/groups.1
    [ -s snap.grps ] && [ -s snap.grp ] && [ -s dark.grp ] && [ -s halos-fof.txt ]
}

@test "halostats(1) examples run" {
    run_examples man1/halostats.1
    [ -s halos.txt ] && [ -s halos.csv ] && [ -s masses.txt ] && [ -s bound1.grp ]
}


@test "tipsy2bin(1) examples run" {
    run_examples man1/tipsy2bin.1
    [ -s snap.fof ] && [ -s halos.txt ] && [ -s dark.fof ]
}

@test "hdf52bin(1) examples run" {
    local data=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}
    [ -f "$data/g4-lcdm-gas-z0.hdf5" ] || skip "no $data/g4-lcdm-gas-z0.hdf5"
    ! hdf52bin -o /dev/null /nonexistent.hdf5 2>&1 | grep -q 'no HDF5 support' || skip "built without HDF5"
    cp "$data/g4-lcdm-gas-z0.hdf5" snap.hdf5
    run_examples man1/hdf52bin.1
    [ -s snap.fof ] && [ -s halos.txt ]
}

@test "gadget2bin(1) examples run" {
    local data=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}
    [ -f "$data/gadget2-lcdm-gas-ics.dat" ] || skip "no $data/gadget2-lcdm-gas-ics.dat"
    cp "$data/gadget2-lcdm-gas-ics.dat" ics.dat
    run_examples man1/gadget2bin.1
    [ -s ics.fof ] && [ -s ics-groups.fof ]
}

@test "halotree(1) examples run" {
    local data=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}/g4-lcdm-series k
    [ -f "$data/snapshot_004.hdf5" ] || skip "no $data/snapshot_004.hdf5"
    ! halotree /nonexistent_0.hdf5 /nonexistent_1.hdf5 2>&1 | grep -q 'no HDF5' || skip "built without HDF5"
    for k in 0 1 2 3 4; do ln -s "$data/snapshot_00$k.hdf5" .; done
    run_examples man1/halotree.1
    [ -s tree_0_0_0.dat ] && [ -s links.txt ]
}

@test "mkuniverse(1) examples run" {
    run_examples man1/mkuniverse.1
    [ -s halos.cat ] && [ -s small.std ] && [ -s found.txt ] && [ -s other.nat ] && [ -s big.fof ]
}

@test "fofstream(5) examples run" {
    run_examples man5/fofstream.5
    [ -s grouped.fof ]
}

# The lines of the .EX block that follows the comment ".\" recipe: NAME" in fofstream(5) (or KIND
# NAME in page PAGE: recipe NAME example man3/fofkit.3).
recipe() {
    awk -v name="$1" -v kind="${2:-recipe}" '$0 ~ "^\\.\\\\\" " kind ": " name { on = 1; next }
                       on && /^\.EX/ { ex = 1; next } ex && /^\.EE/ { exit } ex' "$MAN/${3:-man5/fofstream.5}" |
        perl -pe 's/\\-/-/g; s/\\e/\\/g'
}

# The blocks of man page PAGE that are run neither as "$ " lines nor saved as a program (after
# `.\" example: NAME`), one line each: what a reader would see and no test runs.
unrun_blocks() {
    awk '/^\.\\" example: / { named = 1; next }
         /^\.EX/ { ex = 1; cmd = 0; first = ""; n++; next }
         ex && /^\.EE/ { if (!named && !cmd) print "block " n ": " first; ex = 0; named = 0; next }
         ex && /^\$ / { cmd = 1 } ex && first == "" { first = $0 }
         !ex && !/^\.PP/ { named = 0 }' "$1"
}

@test "fofkit(3) examples run" {
    # every program of the page (the blocks after `.\" example: NAME`), saved as its reader saves it and
    # run by the page's "$ " lines: the C one compiled against the build's library with pkg-config, the
    # Python ones with the sources' package and the build's library, members.py on the Gadget-4 snapshot
    [ -n "$FOFKIT_BUILD" ] && [ -f "$FOFKIT_BUILD/fofkit.pc" ] || skip "no library build (FOFKIT_BUILD unset)"
    command -v pkg-config >/dev/null && command -v cc >/dev/null || skip "no pkg-config or cc"
    python3 -c 'import numpy, h5py' 2>/dev/null || skip "python3 has no numpy or h5py (the Python examples use them)"
    local data=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data} name names=() pre
    [ -f "$data/g4-lcdm-gas-z0.hdf5" ] || skip "no $data/g4-lcdm-gas-z0.hdf5"
    ! halostats --format=hdf5 /dev/null 2>&1 | grep -q 'no HDF5' || skip "built without HDF5"
    cp "$data/g4-lcdm-gas-z0.hdf5" snapshot_000.hdf5
    run unrun_blocks "$MAN/man3/fofkit.3"
    [ "$status" -eq 0 ] && [ -z "$output" ] || { echo "examples no test runs: $output"; return 1; }
    mapfile -t names < <(sed -n 's/^\.\\" example: //p' "$MAN/man3/fofkit.3")
    [ "${names[*]}" = "fofkit-example.c fofkit-example.py members.py" ]
    for name in "${names[@]}"; do
        recipe "$name" example man3/fofkit.3 >"$name"
        [ -s "$name" ]
        man_commands "$MAN/man3/fofkit.3" | grep -qF "$name" || { echo "no command runs $name"; return 1; }
    done
    grep -q 'fofkit_fof(&p' fofkit-example.c
    export PKG_CONFIG_PATH=$FOFKIT_BUILD LD_LIBRARY_PATH=$FOFKIT_BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export PYTHONPATH=$BATS_TEST_DIRNAME/../python FOFKIT_LIB=$FOFKIT_BUILD/libfofkit.so PYTHONDONTWRITEBYTECODE=1
    if ldd "$FOFKIT_BUILD/libfofkit.so" | grep -q libasan; then
        # make check-asan's library in python3: its runtimes preloaded, the interpreter's leaks unreported
        pre="$(${CC:-gcc} -print-file-name=libasan.so) $(${CC:-gcc} -print-file-name=libubsan.so)"
        mkdir bin && printf '#!/bin/sh\nLD_PRELOAD="%s" ASAN_OPTIONS="%s" exec %s "$@"\n' "$pre" \
            "${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$(command -v python3)" >bin/python3 && chmod +x bin/python3
        PATH=$PWD/bin:$PATH
    fi
    run_examples man3/fofkit.3
    cat example.txt example-py.txt members.txt
    grep -q '^l = 0.00736' example.txt
    [ "$(grep -c '^group [0-9]*: [0-9]* members' example.txt)" -ge 2 ]
    grep -q '^group 1: mass [0-9]' example.txt
    # Python: the two clumps of 5000 (and a background particle or two), ids and counts printed as integers
    [ "$(grep -c '^group [12]: 500[0-9] members, mass 500[0-9]$' example-py.txt)" -eq 2 ]
    # members.py: group 1 from the snapshot's own arrays by ID, its centre of mass the catalogue's
    [[ "$(cat members.txt)" =~ ^group\ 1:\ [1-9][0-9]*\ members,\ centre\ of\ mass\ .*,\ GroupCM\'s:\ True$ ]]
}

@test "fofstream(5): the numpy recipe reads a plain and a compressed stream as fofdump does" {
    recipe fofread.py >fofread.py
    [ -s fofread.py ]
    python3 -c 'import numpy' 2>/dev/null || skip "numpy is not installed (the recipe needs it)"
    mkuniverse -n 20000 -s 5 | tipsy2bin | kdbuild | foflink | groups -m 20 -o plain.fof
    mkuniverse -n 20000 -s 5 | tipsy2bin -z | kdbuild -z | foflink -z | groups -z -m 20 -o packed.fof
    fofdump packed.fof | grep -q ' zlib$'
    local n ng largest
    n=$(fofdump -c SNAP plain.fof | awk '$1 == "n" { print $2 }')
    ng=$(fofdump -c GRPS plain.fof | awk '$1 == "ngroups" { print $2 }')
    largest=$(fofdump -c GRPS plain.fof | awk '$1 == "largest" { print $2 }')
    [ "$ng" -gt 1 ]
    for f in plain.fof packed.fof; do
        run python3 fofread.py "$f"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = "$n particles, $ng groups" ]
        [[ "${lines[1]}" == "group 1: $largest particles, mass "* ]]
    done
    # The mass of group 1 is halostats' (which prints 9 digits; its column found by name, mass[unit]).
    local mass
    mass=$(halostats --csv plain.fof | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /^mass\[/) c = i; next }
                                               { print $c; exit }')
    [ -n "$mass" ]
    python3 fofread.py packed.fof | awk -v m="$mass" 'NR == 2 { d = $NF - m; exit !(d < 1e-8 && d > -1e-8) }'
    mkuniverse -n 100 -o snap.std
    run python3 fofread.py snap.std
    [ "$status" -ne 0 ]
    [[ "$output" == *"snap.std: not a fofkit stream"* ]]
}

# Skips a test of pictures when this build draws none (built without cairo).
need_cairo() {
    command -v pngprobe >/dev/null || skip "pngprobe is not built"
    run pngprobe
    [ "$status" -ne 77 ] || skip "built without cairo"
}

@test "fofmap(1) examples run" {
    need_cairo
    run_examples man1/fofmap.1
    [ -s map.png ] && [ -s slab.png ] && [ -s zoom.png ] && [ -s map20.png ]
    head -c 5 slab.pdf | grep -q '^%PDF-' && grep -q '<text' slab.svg
}

@test "halomf(1) examples run" {
    # its examples draw pictures too; halomf.bats tests the table without cairo
    need_cairo
    run_examples man1/halomf.1
    [ "$(grep -vc '^#' mf200c.txt)" -gt 3 ]
    [ -s mf.png ] && [ -s mf100.png ] && [ -s mfstream.png ]
    head -c 5 levels.pdf | grep -q '^%PDF-'
    grep -q '>halos.txt</text>' compare.svg && grep -q '>levels.txt</text>' compare.svg
}
