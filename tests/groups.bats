#!/usr/bin/env bats
# groups.bats - groups(1): numbering, the GID and GRPS chunks, .grp files, every bad input with its message and status.

bats_require_minimum_version 1.5.0
load groups_helpers

DATA=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}

# The nine-particle stream with its SINK replaced by the given values.
nine_with_sink() {
    nine | sed "s/^sink .*/sink $*/" | mkstream
}

@test "--help (with the default minimum size), --version, an unknown option" {
    standard_options groups
    run groups --help
    [[ "$output" == *"-m, --min-size=N      keep groups of at least N members (default 8)"* ]]
    [[ "$output" == *"--format=FORMAT"* ]]
}

@test "usage errors: one message, a pointer to --help, status 2" {
    run -2 groups -m 0
    [ "${lines[0]}" = "groups: option -m: 0 is out of range [1, 4294967295]" ]
    run -2 groups -m 3x
    [ "${lines[0]}" = "groups: option -m needs a whole number, not '3x'" ]
    run -2 groups -m
    [ "${lines[0]}" = "groups: option '-m' needs a value" ]
    run -2 groups --format=xml
    [ "${lines[0]}" = "groups: option --format needs 'stream' or 'grp', not 'xml'" ]
    run -2 groups --format=grp -z
    [ "${lines[0]}" = "groups: option -z applies to --format=stream only" ]
    run -2 groups a.fof b.fof
    [ "${lines[0]}" = "groups: too many input files (one at most, or '-' for stdin)" ]
}

@test "GID holds the groups in original order; GRPS the counts; every other chunk passes through" {
    nine | sed 's/^sink/text FOO answer 42\nsink/' | mkstream -o in.fof
    groups -m 2 -o out.fof in.fof
    [ "$(u32_payload out.fof GID | tr '\n' ' ')" = "$NINE_GID " ]
    [ "$(chunks out.fof | awk '{ printf "%s ", $2 }')" = "SNAP POS VEL MASS TYPE ID FOO SINK GRPS GID END " ]
    # GID: <u4, flags 0 (not per particle), nsource rows, level 0
    [ "$(chunks out.fof | awk '$2 == "GID" { print $3, $4, $5, $6 }')" = "<u4 0 13 0" ]
    grps=$(text_payload out.fof GRPS)
    for kv in "level 0" "ngroups 3" "minsize 2" "ngrouped 7" "nfound 5" "largest 3" "n 9" "nsource 13"; do
        grep -qx "$kv" <<<"$grps"
    done
    # everything before GRPS is the input, byte for byte, up to its END chunk
    at=$(chunks out.fof | awk '$2 == "GRPS" { print $1 }')
    cmp <(head -c "$at" out.fof) <(head -c "$at" in.fof)
    [ "$(chunks in.fof | awk '$2 == "END" { print $1 }')" -eq "$at" ]
}

@test "--format=grp: nsource, then one group id a line in original order" {
    nine | mkstream -o in.fof
    run --separate-stderr groups -m 2 --format=grp in.fof
    [ "$status" -eq 0 ]
    [ "$output" = "$(echo 13; printf '%s\n' $NINE_GID)" ]
    [ -z "$stderr" ]
    # from stdin, to a file
    groups -m 2 --format=grp -o out.grp <in.fof
    [ "$(cat out.grp)" = "$output" ]
}

@test "the default minimum size is 8 members" {
    {
        for i in $(seq 0 15); do echo "p 0.$i 0.5 0.5"; done
        echo "sink 0 0 0 0 0 0 0 0 0 9 9 9 9 9 9 9" # 9 and 7 members
    } | mkstream -o in.fof
    [ "$(groups --format=grp in.fof | tr '\n' ' ')" = "16 1 1 1 1 1 1 1 1 1 0 0 0 0 0 0 0 " ]
    [ "$(groups -m 7 --format=grp in.fof | tail -n 1)" = 2 ]
}

@test "-m 1 numbers every particle: equal sizes by lowest original index" {
    nine | mkstream -o in.fof
    # the singletons: original index 0 (group 4) before 12 (group 5)
    [ "$(groups -m 1 --format=grp in.fof | tail -n +2 | tr '\n' ' ')" = "4 2 1 3 0 3 0 1 1 0 0 2 5 " ]
    [ "$(groups -m 4 --format=grp in.fof | sort -u | tr '\n' ' ')" = "0 13 " ]
}

@test "canonical, upward and downward chains give the same groups" {
    for s in "0 1 2 0 0 1 6 2 8" "4 1 2 0 4 1 6 2 8" "3 5 7 4 4 5 6 7 8" "4 5 7 0 4 5 6 7 8"; do
        nine_with_sink "$s" >in.fof
        [ "$(groups -m 2 --format=grp in.fof | tail -n +2 | tr '\n' ' ')" = "$NINE_GID " ]
    done
}

@test "-v prints one summary line on stderr" {
    nine | mkstream -o in.fof
    run --separate-stderr groups -v -m 2 -o out.fof in.fof
    [ "$status" -eq 0 ]
    [ -z "$output" ]
    [[ "$stderr" =~ ^groups:\ 5\ groups\ found,\ 3\ kept\ \(at\ least\ 2\ members\),\ largest\ 3,\ 77\.8%\ of\ 9\ particles\ grouped\ \([0-9.]+\ s\)$ ]]
}

@test "a linked stream: the levels written once the IDs and the levels LINK names have come" {
    mkuniverse -n 3000 -s 5 | tipsy2bin | kdbuild | foflink -b 0.2,0.1 >l.fof
    [ "$(chunks l.fof | awk '{ printf "%s ", $2 }')" = "SNAP POS TREE TBOX MASS TYPE LINK SINK SINK ID VEL END " ]
    groups -m 8 -o g.fof l.fof
    # GRPS, GID and GPAR before the velocities, which pass on after them
    [ "$(chunks g.fof | awk '{ printf "%s ", $2 }')" = \
        "SNAP POS TREE TBOX MASS TYPE LINK SINK SINK ID GRPS GID GRPS GID GPAR VEL END " ]
    # the same numbers as from the stream with LINK and the levels last, read to its end
    eval "$(sed -n '/^streamtool() {/,/^}/p' "$BATS_TEST_DIRNAME/ref_helpers.bash")"
    streamtool l.fof last.fof --move LINK END --move SINK END --move SINK END
    [ "$(chunks last.fof | awk '{ printf "%s ", $2 }')" = "SNAP POS TREE TBOX MASS TYPE ID VEL LINK SINK SINK END " ]
    groups -m 8 -o g2.fof last.fof
    for l in 0 1; do cmp <(fofdump -c GID -l $l g.fof) <(fofdump -c GID -l $l g2.fof); done
    cmp <(fofdump -c GPAR -l 1 g.fof) <(fofdump -c GPAR -l 1 g2.fof)
    for l in 0 1; do cmp <(groups --format=grp --level=$l l.fof) <(groups --format=grp --level=$l last.fof); done
    # LINK names one level, the stream has two
    mkuniverse -n 3000 -s 5 | tipsy2bin | kdbuild | foflink -b 0.2 >l1.fof
    streamtool l.fof one.fof --chunk LINK l1.fof
    fails groups "groups: one.fof: SINK level 1 found, but the LINK chunk names 1 level" one.fof
    fails groups "groups: one.fof: SINK level 1 found, but the LINK chunk names 1 level" --format=grp one.fof
    # the stream cut in the velocities that come after the levels: an error, and no .grp
    head -c $(($(stat -c %s l.fof) - 2000)) l.fof >cut.fof
    run groups --format=grp -o cut.grp cut.fof
    [ "$status" -eq 1 ]
    [ ! -e cut.grp ]
}

@test "--format=grp -o: the .grp written while the rest is read, the same bytes; none when the rest fails" {
    mkuniverse -n 3000 -s 5 | tipsy2bin | kdbuild | foflink -b 0.2,0.1 >l.fof
    addchunk --last=LINK --last=SINK l.fof -o last.fof
    [ "$(chunks last.fof | awk '{ printf "%s ", $2 }')" = "SNAP POS TREE TBOX MASS TYPE ID VEL LINK SINK SINK END " ]
    # stdout: written after the whole input (the order before), the reference
    for l in 0 1; do
        groups -m 8 --format=grp --level=$l l.fof >want$l.grp
        for t in 1 2 16; do
            OMP_NUM_THREADS=$t groups -m 8 --format=grp --level=$l -o got.grp l.fof
            cmp got.grp want$l.grp
            OMP_NUM_THREADS=$t groups -m 8 --format=grp --level=$l -o got.grp last.fof
            cmp got.grp want$l.grp
        done
    done
    # through a slow pipe, the velocities coming after the .grp is written: -v says both times
    run -0 --separate-stderr bash -c \
        "python3 '$BATS_TEST_DIRNAME/py/trickle.py' 4096 0.002 <l.fof | groups -v -m 8 --format=grp -o slow.grp"
    cmp slow.grp want0.grp
    [[ "$stderr" =~ \ \(waited\ [0-9.]+\ s\)\)$ ]]
    [[ "$stderr" =~ the\ .grp\ written\ in\ [0-9.]+\ s\ beside\ the\ rest\ read\ in ]]
    # cut in the velocities, damaged after the IDs: the message and status of stdout's order, no .grp
    vel=$(chunks l.fof | awk '$2 == "VEL" { print $1 }')
    end=$(chunks l.fof | awk '$2 == "END" { print $1 }')
    head -c $((vel + 64 + 1000)) l.fof >cut.fof
    cp l.fof hdr.fof
    flip_byte hdr.fof $((vel + 20))
    cp l.fof endcrc.fof
    flip_byte endcrc.fof $((end + 20))
    for f in cut hdr endcrc; do
        run -1 --separate-stderr groups --format=grp $f.fof
        want=$stderr
        [ -n "$want" ]
        fails groups "$want" --format=grp -o $f.grp $f.fof
        [ ! -e $f.grp ]
    done
    [ "$want" = "groups: endcrc.fof: damaged chunk header at byte $end (CRC mismatch)" ]
    run -1 --separate-stderr bash -c "head -c $((vel + 64 + 1000)) l.fof | groups --format=grp -o pipe.grp"
    [ "$stderr" = "groups: stdin: the stream stops inside a chunk payload at byte $((vel + 64 + 1000)) (the program writing the pipe stopped)" ]
    [ ! -e pipe.grp ]
    # nothing else left behind: no temporary
    [ "$(ls -A | grep -v -e '\.fof$' -e '^separate-stderr-' | sort | tr '\n' ' ')" = "got.grp slow.grp want0.grp want1.grp " ]
}

@test "groups on its own output replaces GID and GRPS" {
    nine | mkstream | groups -m 2 | groups -m 1 >twice.fof
    [ "$(chunks twice.fof | awk '$2 == "GID" || $2 == "GRPS"' | wc -l)" -eq 2 ]
    [ "$(u32_payload twice.fof GID | tr '\n' ' ')" = "4 2 1 3 0 3 0 1 1 0 0 2 5 " ]
    grep -qx "minsize 1" <(text_payload twice.fof GRPS)
    nine | mkstream | groups -m 2 >once.fof
    run --separate-stderr groups -v -m 1 -o again.fof once.fof
    [[ "$stderr" == *", the input's GID and GRPS replaced ("* ]]
}

@test "compressed streams in and out" {
    nine | mkstream -z >in.fof
    groups --compress=9 -m 2 in.fof >out.fof
    # every chunk but END carries the zlib flag (bit 0)
    [ "$(chunks out.fof | awk '$2 != "END" && $4 % 2 == 0' | wc -l)" -eq 0 ]
    [ "$(groups -m 2 --format=grp out.fof | tail -n +2 | tr '\n' ' ')" = "$NINE_GID " ]
}

@test "missing chunks: SINK, ID, SNAP" {
    nine | grep -v '^sink' | mkstream -o nosink.fof
    fails groups "groups: nosink.fof: stream has no SINK chunk (run foflink first)" nosink.fof
    nine | mkstream --omit=ID -o noid.fof
    fails groups "groups: noid.fof: stream has no ID chunk (run tipsy2bin first)" noid.fof
    nine | mkstream --omit=SNAP -o nosnap.fof
    fails groups "groups: nosnap.fof: stream does not start with a SNAP chunk" nosnap.fof
}

@test "bad SINK chunks: a link out of range, cycles, wrong size, another level" {
    nine_with_sink 0 1 9 0 0 1 6 2 8 >bad.fof
    fails groups "groups: bad.fof: SINK chunk: particle 2 links to 9, beyond the last particle (8)" bad.fof
    nine_with_sink 3 5 7 4 0 5 6 7 8 >bad.fof # 0 -> 3 -> 4 -> 0
    fails groups "groups: bad.fof: SINK chunk: particle 0 lies on a cycle of links (no sink ends its chain)" bad.fof
    nine_with_sink 0 5 7 0 0 1 6 7 8 >bad.fof # 1 -> 5 -> 1
    fails groups "groups: bad.fof: SINK chunk: particle 1 lies on a cycle of links (no sink ends its chain)" -m 1 --format=grp bad.fof
    nine_with_sink 1 2 3 4 5 6 7 8 0 >bad.fof # one cycle through all
    fails groups "groups: bad.fof: SINK chunk: particle 0 lies on a cycle of links (no sink ends its chain)" bad.fof
    nine_with_sink 0 1 2 >bad.fof
    fails groups "groups: bad.fof: chunk SINK has 3 rows for 9 particles" bad.fof
    nine | mkstream --level=SINK=1 -o bad.fof
    fails groups "groups: bad.fof: stream has SINK level 1 but no SINK level 0 (the levels run 0, 1, 2, ...)" bad.fof
}

@test "bad ID chunks: an index beyond nsource, a repeated index" {
    nine | sed 's/^nsource 13/nsource 12/' | mkstream -o bad.fof
    fails groups "groups: bad.fof: ID chunk: particle 8 has original index 12, beyond the 12 particles of the source" bad.fof
    nine | sed 's/ 1 1 12$/ 1 1 7/' | mkstream -o bad.fof
    fails groups "groups: bad.fof: ID chunk: particle 8 repeats original index 7 (IDs must be distinct)" bad.fof
}

@test "damaged input: empty, wrong magic, truncated, CRC mismatch" {
    : >empty.fof
    fails groups "groups: empty.fof: empty input" empty.fof
    fails groups "groups: stdin: empty input" - </dev/null
    fails fofgroups "fofgroups: stdin: empty input" </dev/null
    head -c 200 /dev/zero >magic.fof
    fails groups "groups: magic.fof: not a fofkit stream (bad magic)" magic.fof
    nine | mkstream -o in.fof
    size=$(stat -c %s in.fof)
    head -c $((size - 64)) in.fof >cut.fof
    fails groups "groups: cut.fof: truncated stream (no END chunk)" cut.fof
    sink=$(chunks in.fof | awk '$2 == "SINK" { print $1 }')
    head -c $((sink + 64 + 10)) in.fof >cut.fof
    fails groups "groups: cut.fof: truncated stream: chunk SINK at byte $sink claims $(od -An -tu8 -j $((sink + 32)) -N8 in.fof | tr -d " ") bytes of payload, the file holds 10 more" cut.fof
    # from a pipe: one line when the output is not a pipe too (in a pipeline, the last stage's)
    run -1 --separate-stderr bash -c 'cat cut.fof | groups - >out.fof'
    [ "$stderr" = "groups: stdin: the stream stops inside a chunk payload at byte $((sink + 64 + 10)) (the program writing the pipe stopped)" ]
    cp in.fof crc.fof
    flip_byte crc.fof $((sink + 64 + 5))
    fails groups "groups: crc.fof: chunk SINK: payload CRC mismatch (damaged data)" crc.fof
    cp in.fof hdr.fof
    flip_byte hdr.fof $((sink + 20))
    fails groups "groups: hdr.fof: damaged chunk header at byte $sink (CRC mismatch)" hdr.fof
}

@test "a bare groups is coreutils' unless a file holding a stream is on stdin; an option or fofgroups is the stage" {
    [ -x /usr/bin/groups ] || skip "no /usr/bin/groups"
    want=$(/usr/bin/groups)
    # no terminal, as in cron, ssh and scripts: nothing, an empty pipe, a line, a file of text
    run -0 bash -c 'groups </dev/null'
    [ "$output" = "$want" ]
    run -0 bash -c 'echo | groups'
    [ "$output" = "$want" ]
    run -0 bash -c 'true | groups'
    [ "$output" = "$want" ]
    echo text >text
    run -0 bash -c 'groups <text'
    [ "$output" = "$want" ]
    # a file holding a stream on stdin (read where stdin stands, nothing consumed): the stage
    nine | mkstream -o in.fof
    groups -m 1 --format=grp in.fof >want.grp
    groups in.fof >opt.fof
    groups <in.fof >bare.fof
    cmp bare.fof opt.fof
    # a pipe is never taken for the stage without an option: the stage needs one, or its other name
    nine | mkstream | groups -m 1 --format=grp >a.grp
    nine | mkstream | fofgroups -m 1 --format=grp >b.grp
    cmp a.grp want.grp
    cmp b.grp want.grp
    run -0 bash -c 'cat in.fof | groups'
    [ "$output" = "$want" ]
}

@test "a failure leaves no output: neither a new file nor a temporary, an old file untouched" {
    nine_with_sink 3 5 7 4 0 5 6 7 8 >cycle.fof
    run -1 groups -o new.fof cycle.fof
    [ ! -e new.fof ]
    run -1 groups --format=grp -o new.grp cycle.fof
    [ ! -e new.grp ]
    echo old >old.fof
    run -1 groups -o old.fof cycle.fof
    [ "$(cat old.fof)" = old ]
    [ "$(ls | sort | tr '\n' ' ')" = "cycle.fof old.fof " ]
}

@test "end to end: groups of clustered particles match a brute-force awk friends-of-friends" {
    command -v kdbuild && command -v foflink || skip "kdbuild and foflink not built"
    clusters >cl.txt
    awk_fof 0.03 3 <cl.txt >want.grp
    # the reference itself: 34 particles, groups 1..5 of 9, 7, 5, 5, 3 members
    [ "$(tail -n +2 want.grp | sort -n | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')" = "0:5 1:9 2:7 3:5 4:5 5:3 " ]
    mkstream cl.txt | kdbuild | foflink -l 0.03 | groups -m 3 --format=grp >got.grp
    diff want.grp got.grp
    # a linking length that joins nothing: every particle alone, so nothing kept at -m 2
    mkstream cl.txt | kdbuild | foflink -l 0.0001 | groups -m 2 --format=grp >none.grp
    [ "$(sort -u none.grp | tr '\n' ' ')" = "0 34 " ]
}

@test "end to end: a real snapshot's .grp has nsource + 1 lines and agrees with GRPS" {
    [ -f "$DATA/skid-dark.std" ] || skip "no $DATA/skid-dark.std"
    command -v tipsy2bin && command -v kdbuild && command -v foflink || skip "upstream programs not built"
    tipsy2bin "$DATA/skid-dark.std" | kdbuild | foflink -b 0.2 | groups -m 20 -o skid.grps
    groups -m 20 --format=grp skid.grps >skid.grp
    [ "$(wc -l <skid.grp)" -eq 32769 ]
    [ "$(head -n 1 skid.grp)" = 32768 ]
    grps=$(text_payload skid.grps GRPS)
    ngroups=$(awk '$1 == "ngroups" { print $2 }' <<<"$grps")
    ngrouped=$(awk '$1 == "ngrouped" { print $2 }' <<<"$grps")
    [ "$ngroups" -gt 10 ]
    [ "$(tail -n +2 skid.grp | sort -n | tail -n 1)" -eq "$ngroups" ]
    [ "$(tail -n +2 skid.grp | grep -cv '^0$')" -eq "$ngrouped" ]
    # sizes never grow with the group id
    tail -n +2 skid.grp | grep -v '^0$' | sort -n | uniq -c | awk 'NR > 1 && $1 > last { exit 1 } { last = $1 }'
}

@test "end to end: particles left out by tipsy2bin -t get group 0 in the .grp" {
    [ -f "$DATA/run99-gas-dark-star.std" ] || skip "no $DATA/run99-gas-dark-star.std"
    command -v tipsy2bin && command -v kdbuild && command -v foflink || skip "upstream programs not built"
    tipsy2bin -t star --no-periodic "$DATA/run99-gas-dark-star.std" | kdbuild | foflink -l 0.01 |
        groups -m 8 --format=grp >star.grp
    [ "$(wc -l <star.grp)" -eq 8580 ]
    [ "$(head -n 1 star.grp)" = 8579 ]
    # gas (1049) and dark (1021) come first in the source: all 0; some stars are grouped
    [ "$(sed -n '2,2071p' star.grp | sort -u)" = 0 ]
    [ "$(tail -n +2072 star.grp | grep -cv '^0$')" -gt 0 ]
}
