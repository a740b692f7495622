#!/usr/bin/env bats
# messages.bats - every program's failure paths end in one line of one shape, "PROG: FILE: what went wrong", and a file of another format names the program that reads it.

bats_require_minimum_version 1.5.0
load ref_helpers

# Inputs made once: a mock snapshot and every stage's stream, a catalogue, a Gadget-2 file
# (a header of no particles, perl) and, with HDF5, the same as HDF5 (snapcopy).
setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    mkuniverse -n 3000 -s 4 -o u.std
    tipsy2bin -o s.fof u.std
    kdbuild -o t.fof s.fof
    foflink -b 0.2 -o l.fof t.fof
    groups -m 5 -o g.fof l.fof
    halostats -o h.txt g.fof
    : >empty
    mkdir dir
    printf 'hello, world\n' >text
    head -c 3000 t.fof >cut.fof
    # a Gadget-2 header record of no particles, box 1
    perl -e 'my $hd = pack("V6", (0) x 6) . pack("d<6", (1) x 6) . pack("d<2V2", 1, 0, 0, 0) . pack("V6", (0) x 6)
        . pack("V2d<4V2", 0, 1, 1, 0.3, 0.7, 0.7, 0, 0); $hd .= "\0" x (256 - length $hd);
        print pack("V", 256) . $hd . pack("V", 256)' >g2.dat
    if snapcopy --to=hdf5 g2.dat h5 2>/dev/null; then mv h5.0.hdf5 h5.hdf5; fi
}

setup() {
    cd "$BATS_FILE_TMPDIR" || return 1
}

# Runs PROG ARGS... (stdout into a file): exit status STATUS and exactly one line on stderr,
# "PROG: FILE: " and a reason. Usage: shaped STATUS FILE PROG ARGS... (AS=PROG when the
# command runs PROG through another, as bash -c)
shaped() {
    local want=$1 file=$2 prog=${AS:-$3}
    shift 2
    run --separate-stderr stdout_to out.stdout "$@"
    echo "$*: status $status, stderr: $stderr"
    [ "$status" -eq "$want" ]
    [ "${#stderr_lines[@]}" -eq 1 ]
    [[ "$stderr" == "$prog: $file: "?* ]]
    rm -f out.stdout
}

# A usage error: status 2, "PROG: " and the reason, then the pointer to --help.
usage_shaped() {
    local prog=$1
    run --separate-stderr "$@"
    echo "$*: status $status, stderr: $stderr"
    [ "$status" -eq 2 ]
    [ "${#stderr_lines[@]}" -eq 2 ]
    [[ "${stderr_lines[0]}" == "$prog: "?* ]]
    [ "${stderr_lines[1]}" = "Try '$prog --help' for more information." ]
}

# The failures every reader of FILE meets: missing, a directory, empty, text, cut short.
# Usage: unreadable PROG [ARGS...]
unreadable() {
    local prog=$1
    shaped 1 missing "$@" missing
    shaped 1 dir "$@" dir
    shaped 1 empty "$@" empty
    shaped 1 text "$@" text
}

# The failures of writing: a full disk through stdout and through -o, a missing directory.
# Usage: unwritable PROG [ARGS...] (the input last)
unwritable() {
    local prog=$1
    [ -w /dev/full ] || skip "no /dev/full"
    run --separate-stderr bash -c '"$@" >/dev/full' _ "$@"
    echo "$* >/dev/full: status $status, stderr: $stderr"
    [ "$status" -eq 1 ]
    [ "$stderr" = "$prog: stdout: cannot write: No space left on device" ]
    shaped 1 /dev/full "$@" -o /dev/full
    shaped 1 nodir/out "$@" -o nodir/out
    [[ "$stderr" == *"no directory nodir" ]]
}

@test "the converters: unreadable, wrong format, cut short, unwritable: one line naming the file" {
    unreadable tipsy2bin
    unreadable gadget2bin
    shaped 1 cut.fof tipsy2bin cut.fof
    shaped 1 u.std gadget2bin u.std
    head -c 100 u.std >cut.std
    shaped 1 cut.std tipsy2bin cut.std
    head -c 200 g2.dat >cut.dat
    shaped 1 cut.dat gadget2bin cut.dat
    unwritable tipsy2bin u.std
    unwritable gadget2bin g2.dat
    if [ -f h5.hdf5 ]; then
        unreadable hdf52bin
        shaped 1 u.std hdf52bin u.std
        unwritable hdf52bin h5.hdf5
    fi
}

@test "the stages: unreadable, wrong format, cut short, damaged, the wrong stage's stream, unwritable" {
    local p
    for p in kdbuild "foflink -b 0.2" "groups -m 5" halostats fofdump; do
        unreadable $p
        shaped 1 u.std $p u.std
        shaped 1 g2.dat $p g2.dat
        shaped 1 cut.fof $p cut.fof
        # cut short in a pipe: one line from the last stage, none from a stage writing a pipe
        run --separate-stderr bash -c "cat cut.fof | $p >out.x"
        [ "$status" -eq 1 ]
        [ "${#stderr_lines[@]}" -eq 1 ]
        [[ "$stderr" == "${p%% *}: stdin: the stream stops "* ]]
        run --separate-stderr bash -c "cat cut.fof | $p | cat >/dev/null; exit \${PIPESTATUS[1]}"
        [ "$status" -eq 1 ]
        [ -z "$stderr" ]
    done
    shaped 1 t.fof kdbuild t.fof
    shaped 1 s.fof foflink -b 0.2 s.fof
    shaped 1 t.fof groups -m 5 t.fof
    shaped 1 l.fof halostats l.fof
    cp g.fof crc.fof
    printf 'X' | dd of=crc.fof bs=1 seek=400 conv=notrunc status=none
    shaped 1 crc.fof halostats crc.fof
    unwritable kdbuild s.fof
    unwritable foflink -b 0.2 t.fof
    unwritable groups -m 5 l.fof
    unwritable groups -m 5 --format=grp l.fof
    unwritable halostats g.fof
    unwritable fofdump g.fof
}

@test "the catalogue and picture programs, and mkuniverse: one line naming the file" {
    unreadable halomf
    unwritable halomf h.txt
    unwritable mkuniverse -n 100
    run pngprobe
    if [ "$status" -ne 77 ]; then
        unreadable fofmap
        shaped 1 u.std fofmap u.std
        unwritable fofmap s.fof
        unwritable halomf --plot h.txt
    fi
    # out of memory: status 3, one line (a SNAP record whose source snapshot has 2^40 particles:
    # groups numbers every one of them)
    printf 'box 1\norigin 0\nperiodic 1\nnsource 1099511627776\np 0.5 0.5 0.5 0 0 0 1 1 3\nsink 0\n' | mkstream -o huge.fof
    AS=groups shaped 3 huge.fof small_memory groups -m 1 -o out.fof huge.fof
    [ ! -e out.fof ]
}

@test "precise reasons: an empty file, a truncated HDF5 file, a truncated pipe in particles, a directory that takes no files" {
    # empty: every converter says so
    for p in tipsy2bin gadget2bin; do
        shaped 1 empty $p empty
        [[ "$stderr" == "$p: empty: empty input"* ]]
    done
    run --separate-stderr bash -c 'gadget2bin <empty'
    [ "$stderr" = "gadget2bin: stdin: empty input (no Gadget header)" ]
    # a tipsy snapshot cut short in a pipe: how many particles came (32-byte header, 36 bytes a
    # dark particle)
    run --separate-stderr bash -c 'head -c 14000 u.std | tipsy2bin >/dev/null'
    [ "$status" -eq 1 ]
    [[ "$stderr" == "tipsy2bin: stdin: truncated: the header promises 3000 particles ("*"), the input ends after 388 particles" ]]
    # a directory that exists but takes no new files: not "no directory"
    if [ -d /proc ] && [ ! -e /proc/fofkit-x ]; then
        shaped 1 /proc/fofkit-x tipsy2bin -o /proc/fofkit-x u.std
        [ "$stderr" = "tipsy2bin: /proc/fofkit-x: cannot create: directory /proc takes no new files" ]
    fi
    [ -f h5.hdf5 ] || skip "no HDF5"
    size=$(stat -c %s h5.hdf5)
    head -c $((size / 2)) h5.hdf5 >trunc.hdf5
    shaped 1 trunc.hdf5 hdf52bin trunc.hdf5
    [ "$stderr" = "hdf52bin: trunc.hdf5: truncated: the file holds $((size / 2)) of the $size bytes its HDF5 superblock gives" ]
}

@test "every program makes its output before it reads its input: a bad -o fails at once, not after the work" {
    local p want
    # stdin a pipe that stays open for 30 s: a program that read it first would wait (timeout: 124)
    for p in tipsy2bin gadget2bin kdbuild "foflink -b 0.2" "groups -m 5" "groups -m 5 --format=grp" halostats \
        "halostats --format=csv" "halostats --format=stream" fofdump halomf; do
        run --separate-stderr timeout 10 bash -c 'exec 3>&-; $0 -o nodir/out < <(exec sleep 30 2>/dev/null)' "$p"
        echo "$p: status $status, stderr: $stderr"
        [ "$status" -eq 1 ]
        [ "$stderr" = "${p%% *}: nodir/out: cannot create: no directory nodir" ]
    done
    if [ -f h5.hdf5 ]; then
        run --separate-stderr timeout 10 bash -c 'exec 3>&-; halostats --format=hdf5 -o ok.hdf5 --snapshot=nodir/s.hdf5 < <(exec sleep 30 2>/dev/null)'
        [ "$status" -eq 1 ]
        [ "$stderr" = "halostats: nodir/s.hdf5: cannot create: no directory nodir" ]
        [ ! -e ok.hdf5 ]
    fi
    run pngprobe
    if [ "$status" -ne 77 ]; then
        run --separate-stderr timeout 10 bash -c 'exec 3>&-; fofmap -o nodir/m.png < <(exec sleep 30 2>/dev/null)'
        [ "$status" -eq 1 ]
        [ "$stderr" = "fofmap: nodir/m.png: cannot create: no directory nodir" ]
    fi
}

@test "a snapshot given to the wrong program names the program that reads it" {
    local p
    for p in kdbuild "foflink -b 0.2" "groups -m 5" halostats fofdump; do
        fails "${p%% *}: u.std: not a fofkit stream but a tipsy snapshot (convert it with tipsy2bin)" $p u.std
        fails "${p%% *}: g2.dat: not a fofkit stream but a Gadget-2 snapshot (convert it with gadget2bin)" $p g2.dat
    done
    fails "gadget2bin: u.std: not a Gadget-2 snapshot but a tipsy snapshot (convert it with tipsy2bin)" gadget2bin u.std
    # the catalogue readers
    fails "halomf: u.std: not a catalogue but a tipsy snapshot (convert it with tipsy2bin)" halomf u.std
    fails "halomf: g2.dat: not a catalogue but a Gadget-2 snapshot (convert it with gadget2bin)" halomf g2.dat
    fails "tipsy2bin: g2.dat: not a tipsy file but a Gadget-2 snapshot (convert it with gadget2bin)" tipsy2bin g2.dat
    fails "tipsy2bin: s.fof: not a tipsy file but a fofkit stream (it needs no conversion: give it to kdbuild, foflink, groups or halostats)" tipsy2bin s.fof
    fails "gadget2bin: t.fof: not a Gadget-2 snapshot but a fofkit stream (it needs no conversion: give it to kdbuild, foflink, groups or halostats)" gadget2bin t.fof
    gzip -c u.std >u.std.gz
    fails "kdbuild: u.std.gz: not a fofkit stream but a gzip-compressed file (tipsy2bin reads gzip-compressed tipsy; gunzip anything else first)" kdbuild u.std.gz
    [ -f h5.hdf5 ] || skip "built without HDF5"
    for p in kdbuild "foflink -b 0.2" "groups -m 5" halostats fofdump; do
        fails "${p%% *}: h5.hdf5: not a fofkit stream but an HDF5 file (convert a snapshot with hdf52bin)" $p h5.hdf5
    done
    fails "tipsy2bin: h5.hdf5: not a tipsy file but an HDF5 file (convert a snapshot with hdf52bin)" tipsy2bin h5.hdf5
    fails "gadget2bin: h5.hdf5: not a Gadget-2 snapshot but an HDF5 file (convert a snapshot with hdf52bin)" gadget2bin h5.hdf5
    fails "hdf52bin: u.std: not an HDF5 file but a tipsy snapshot (convert it with tipsy2bin)" hdf52bin u.std
    fails "hdf52bin: g2.dat: not an HDF5 file but a Gadget-2 snapshot (convert it with gadget2bin)" hdf52bin g2.dat
    fails "hdf52bin: s.fof: not an HDF5 file but a fofkit stream (it needs no conversion: give it to kdbuild, foflink, groups or halostats)" hdf52bin s.fof
}

@test "usage errors: the reason, then the pointer to --help, for every program" {
    local p
    for p in tipsy2bin gadget2bin hdf52bin kdbuild foflink groups halostats halomf halotree fofdump fofmap mkuniverse; do
        usage_shaped $p --no-such-option
    done
    # a range in a message is the range checked
    usage_shaped halostats --softening=0 g.fof
    [ "${stderr_lines[0]}" = "halostats: option --softening: 0 is out of range (it must be above 0)" ]
    usage_shaped tipsy2bin --box=0 u.std
    [ "${stderr_lines[0]}" = "tipsy2bin: option --box: 0 is out of range (it must be above 0 and at most 8.50706e+37)" ]
    usage_shaped halomf --bins-per-dex=1e4 h.txt
    [ "${stderr_lines[0]}" = "halomf: option --bins-per-dex: 1e4 is out of range (it must be from 0.01 to 1000)" ]
}

@test "--device=gpu without a usable GPU: one line that says so plainly, status 3" {
    need_no_gpu
    local p
    rm -f out.x
    for p in kdbuild "foflink -b 0.2" halostats; do
        run --separate-stderr $p --device=gpu -o out.x $([ "$p" = halostats ] && echo g.fof || echo t.fof)
        echo "$p: $stderr"
        [ "$status" -eq 3 ]
        [ "${#stderr_lines[@]}" -eq 1 ]
        [[ "$stderr" =~ ^${p%% *}:\ --device=gpu:\ (no\ NVIDIA\ driver\ found|no\ NVIDIA\ GPU\ found|no\ usable\ NVIDIA|this\ build\ has\ no\ CUDA) ]]
        [[ "$stderr" != *"insufficient for CUDA runtime"* ]] || [[ "$stderr" == *"no usable NVIDIA"* ]]
        [ ! -e out.x ]
    done
}
