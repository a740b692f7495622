#!/usr/bin/env bats
# fofdump.bats - fofdump(1): the chunk list, every element type printed exactly, levels, compressed streams, every bad input.

bats_require_minimum_version 1.5.0
load ref_helpers

# Three particles with known values, as a mkstream description.
three() {
    cat <<'EOF'
box 2
origin -1
periodic 1
time 0.25
nsource 5
p 0.1 -0.5 0.99999994  1 2 3  0.5 0 4
p -1 0 0.5             -1.5 0 1e-7  2 1 0
p 0.25 0.125 -0.0625   0 0 0  0.25 2 2
EOF
}

@test "--help, --version" {
    help_and_version fofdump --chunk=TAG --level=K --output=FILE --force
    run fofdump --help
    [[ "$output" == *"print chunk TAG: text chunks as they are, arrays one row"* ]]
}

@test "usage errors: one message, a pointer to --help, status 2" {
    usage_fails "unknown option '--bogus'" fofdump --bogus
    usage_fails "unknown option '-x'" fofdump -x
    usage_fails "option '-c' needs a value" fofdump -c
    usage_fails "option '--chunk' needs a value" fofdump --chunk
    usage_fails "option '-l' needs a value" fofdump -l
    usage_fails "option --level needs a whole number, not 'x'" fofdump -l x
    usage_fails "option --level: -1 is out of range [0, 4294967295]" fofdump --level=-1
    usage_fails "option --level: 4294967296 is out of range [0, 4294967295]" fofdump -l 4294967296
    usage_fails "option -o needs a file name, not '-c'" fofdump -o -c
    usage_fails "too many input files (one at most, or '-' for stdin)" fofdump a.bin b.bin
}

@test "refuses to read binary data from a terminal; writes text to one" {
    three | mkstream -o in.bin
    terminal_refusals fofdump reads-only in.bin
    run script -qec "fofdump -c TYPE in.bin" /dev/null
    [ "$status" -eq 0 ]
    [ "$(printf '%s' "$output" | tr -d '\r' | tr '\n' ' ')" = "0 1 2" ]
    # -f reads from the terminal (here: one that has nothing to say)
    run script -qec "fofdump -f" /dev/null </dev/null
    [ "$(printf '%s' "$output" | tr -d '\r')" = "fofdump: stdin: empty input" ]
}

@test "the list: one line per chunk, END left out, flags spelled out" {
    three | mkstream -o in.bin
    run --separate-stderr fofdump in.bin
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    [ "${#lines[@]}" -eq 7 ]
    [ "${lines[0]}" = "tag      type  level         rows   cols         stored flags" ]
    [ "$(printf '%s\n' "${lines[@]:1}" | awk '{ $1 = $1; print }')" = "$(printf '%s\n' \
        "SNAP |u1 0 $(fofdump -c SNAP in.bin | wc -c) 1 $(fofdump -c SNAP in.bin | wc -c) text" \
        'POS <f4 0 3 3 36 particle' 'VEL <f4 0 3 3 36 particle' 'MASS <f4 0 3 1 12 particle' \
        'TYPE |u1 0 3 1 3 particle' 'ID <u4 0 3 1 12 particle')" ]
    # the columns line up with the header
    [ "$(printf '%s\n' "${lines[@]}" | awk '{ print index($0, $2) }' | sort -u)" = 10 ]
    # stdin, '-' and -o give the same
    [ "$(fofdump <in.bin)" = "$output" ]
    [ "$(fofdump - <in.bin)" = "$output" ]
    fofdump -o list.txt in.bin
    [ "$(cat list.txt)" = "$output" ]
    # compressed: the stored size is the compressed one
    three | mkstream -z -o z.bin
    fofdump z.bin >zlist.txt
    [ "$(awk 'NR > 1 { print $NF }' zlist.txt | sort -u)" = zlib ]
    [ "$(awk '$1 == "POS" { print $7, $8 }' zlist.txt)" = "particle zlib" ]
    [ "$(awk '$1 == "POS" { print $6 }' zlist.txt)" -ne 36 ]
}

@test "-c prints text chunks as they are and arrays one row a line, exactly" {
    three | mkstream -o in.bin
    [ "$(fofdump -c SNAP in.bin)" = "$(printf '%s\n' 'n 3' 'ngas 1' 'ndark 1' 'nstar 1' 'nsource 5' 'nsource_gas 1' \
        'nsource_dark 3' 'nsource_star 1' 'time 0.25' 'box 2' 'origin -1' 'periodic 1' 'source mkstream -')" ]
    # binary32 with 9 significant digits: every value reads back exactly
    [ "$(fofdump -c POS in.bin)" = "$(printf '%s\n' '0.100000001 -0.5 0.99999994' '-1 0 0.5' '0.25 0.125 -0.0625')" ]
    [ "$(fofdump -c VEL in.bin)" = "$(printf '%s\n' '1 2 3' '-1.5 0 1.00000001e-07' '0 0 0')" ]
    [ "$(fofdump --chunk=MASS in.bin | tr '\n' ' ')" = "0.5 2 0.25 " ]
    [ "$(fofdump -c TYPE in.bin | tr '\n' ' ')" = "0 1 2 " ]
    [ "$(fofdump -c ID in.bin | tr '\n' ' ')" = "4 0 2 " ]
    three | mkstream --id-u8 -o in8.bin
    [ "$(fofdump -c ID in8.bin | tr '\n' ' ')" = "4 0 2 " ]
    # every other element type, and the extremes of the integer ones
    streamtool in.bin types.bin \
        --add F8 "<f8" 0 2 2 "d<*" "1.5,-2.25,1e300,0.1" \
        --add I4 "<i4" 0 1 3 "l<*" "-1,2,-2147483648" \
        --add I8 "<i8" 0 1 2 "q<*" "-9223372036854775808,5" \
        --add U4 "<u4" 0 2 1 "V*" "4294967295,0" \
        --add U8 "<u8" 0 1 1 "Q<*" "18446744073709551615" \
        --add U1 "|u1" 0 1 3 "C*" "0,255,7" \
        --add NOTE "|u1" 4 8 1 "a*" "a 1"$'\n'"b 2"$'\n' \
        --add EMPTY "<f4" 0 0 3 "f<*" ""
    [ "$(fofdump -c F8 types.bin)" = "$(printf '%s\n' '1.5 -2.25' '1.0000000000000001e+300 0.10000000000000001')" ]
    [ "$(fofdump -c I4 types.bin)" = "-1 2 -2147483648" ]
    [ "$(fofdump -c I8 types.bin)" = "-9223372036854775808 5" ]
    [ "$(fofdump -c U4 types.bin | tr '\n' ' ')" = "4294967295 0 " ]
    [ "$(fofdump -c U8 types.bin)" = "18446744073709551615" ]
    [ "$(fofdump -c U1 types.bin)" = "0 255 7" ]
    [ "$(fofdump -c NOTE types.bin)" = "$(printf 'a 1\nb 2')" ]
    [ "$(fofdump -c NOTE types.bin | wc -c)" -eq 8 ]
    run --separate-stderr fofdump -c EMPTY types.bin
    [ "$status" -eq 0 ]
    [ -z "$output" ]
    fofdump types.bin | awk '$1 == "EMPTY" { print $2, $3, $4, $5, $6 }' | grep -qx '<f4 0 0 3 0'
    # compressed chunks print the same
    three | mkstream -z -o z.bin
    for tag in SNAP POS VEL MASS TYPE ID; do
        [ "$(fofdump -c $tag z.bin)" = "$(fofdump -c $tag in.bin)" ]
    done
}

@test "-l picks the level; the first chunk of a tag and level is printed" {
    three | sed '$a sink 0 0 2' | mkstream --level=SINK=2 --level=POS=1 -o lv.bin
    [ "$(fofdump lv.bin | awk '$1 == "SINK" || $1 == "POS" { print $1, $3 }' | tr '\n' ' ')" = "POS 1 SINK 2 " ]
    [ "$(fofdump -c SINK -l 2 lv.bin | tr '\n' ' ')" = "0 0 2 " ]
    [ "$(fofdump -c POS --level=1 lv.bin | head -1)" = "0.100000001 -0.5 0.99999994" ]
    fails "fofdump: lv.bin: no chunk SINK at level 0" fofdump -c SINK lv.bin
    fails "fofdump: lv.bin: no chunk POS at level 0" fofdump -c POS lv.bin
    fails "fofdump: lv.bin: no chunk SINK at level 1" fofdump -c SINK -l 1 lv.bin
    fails "fofdump: lv.bin: no chunk NOPE at level 0" fofdump -c NOPE lv.bin
    # two chunks of one tag and level: the first
    three | mkstream -o in.bin
    streamtool in.bin twice.bin --add MASS "<f4" 2 3 1 "f<*" "7,8,9"
    [ "$(fofdump -c MASS twice.bin | tr '\n' ' ')" = "0.5 2 0.25 " ]
    # a pipeline's chunks
    # (every type linked: a hydro run's foflink reads TYPE and ID before it writes LINK, foflink(1))
    three | mkstream | kdbuild -s 2 | foflink -l 0.3 --link-types=all >linked.bin
    [ "$(fofdump linked.bin | awk 'NR > 1 { printf "%s ", $1 }')" = "SNAP POS TREE TBOX LINK SINK VEL MASS TYPE ID " ]
    [ "$(fofdump -c TREE linked.bin | awk '{ print $1 }' | tr '\n' ' ')" = "n leafsize unit depth nodes builder " ]
    [ "$(fofdump -c SINK linked.bin | wc -l)" -eq 3 ]
}

@test "bad inputs: each with its one-line message and status 1; the stream is read to its end" {
    three | mkstream -o in.bin
    unreadable_inputs fofdump
    unreadable_inputs fofdump -c POS
    # cut short: the list goes as far as the stream does
    pos=$(chunk_offset in.bin POS)
    size=$(stat -c %s in.bin)
    head -c 10 in.bin >cut.bin
    fails "fofdump: cut.bin: truncated stream (ends inside the stream header at byte 10)" fofdump cut.bin
    head -c $((pos + 64 + 20)) in.bin >cut.bin
    fails "fofdump: cut.bin: truncated stream: chunk POS at byte $pos claims $(stored in.bin "$pos") bytes of payload, the file holds 20 more" fofdump cut.bin
    [ "$(awk 'NR > 1 { print $1 }' stdout.out | tr '\n' ' ')" = "SNAP " ]
    # from a pipe, whose size is unknown, the list shows the chunk it could not read
    cat cut.bin | fails "fofdump: stdin: the stream stops inside a chunk payload at byte $((pos + 64 + 20)) (the program writing the pipe stopped)" fofdump
    [ "$(awk 'NR > 1 { print $1 }' stdout.out | tr '\n' ' ')" = "SNAP POS " ]
    head -c $((size - 64)) in.bin >cut.bin
    fails "fofdump: cut.bin: truncated stream (no END chunk)" fofdump cut.bin
    # -c reads the rest of the stream too
    fails "fofdump: cut.bin: truncated stream (no END chunk)" fofdump -c SNAP cut.bin
    head -c $((size - 30)) in.bin | fails "fofdump: stdin: the stream stops inside a chunk header at byte $((size - 30)) (the program writing the pipe stopped)" fofdump -c POS
    # damage: a payload is verified when it is read; --check reads every one
    cp in.bin crc.bin
    flip_byte crc.bin $(($(chunk_offset in.bin TYPE) + 64))
    fails "fofdump: crc.bin: chunk TYPE: payload CRC mismatch (damaged data)" fofdump --check crc.bin
    fails "fofdump: crc.bin: chunk TYPE: payload CRC mismatch (damaged data)" fofdump -C -c POS crc.bin
    fails "fofdump: crc.bin: chunk TYPE: payload CRC mismatch (damaged data)" fofdump -c TYPE crc.bin
    run -0 fofdump crc.bin
    [ "$(awk 'NR > 1 { printf "%s ", $1 }' <<<"$output")" = "SNAP POS VEL MASS TYPE ID " ]
    run -0 fofdump -c MASS crc.bin
    [ "$(tr '\n' ' ' <<<"$output")" = "0.5 2 0.25 " ]
    cp in.bin pad.bin
    flip_byte pad.bin $(($(chunk_offset in.bin TYPE) + 64 + 3))
    fails "fofdump: pad.bin: chunk TYPE: nonzero padding (damaged data)" fofdump --check pad.bin
    run -0 fofdump --check -v in.bin
    [ "${lines[-1]}" = "fofdump: in.bin: 6 chunks and $size bytes, every header and payload checked" ]
    cp in.bin hdr.bin
    flip_byte hdr.bin $((pos + 50))
    fails "fofdump: hdr.bin: damaged chunk header at byte $pos (CRC mismatch)" fofdump hdr.bin
    cp in.bin shdr.bin
    flip_byte shdr.bin 12
    fails "fofdump: shdr.bin: damaged stream header (CRC mismatch)" fofdump shdr.bin
    cp in.bin magic.bin
    flip_byte magic.bin 7
    fails "fofdump: magic.bin: not a fofkit stream (bad magic)" fofdump magic.bin
    streamtool in.bin v0.bin --version 0
    fails "fofdump: v0.bin: unsupported stream version 0 (this program reads version 1)" fofdump v0.bin
    # damaged compressed data behind a good CRC
    three | mkstream -z -o z.bin
    streamtool z.bin zbad.bin --payload POS in.bin
    fails "fofdump: zbad.bin: chunk POS: corrupt zlib data" fofdump -c POS zbad.bin
    fails "fofdump: zbad.bin: chunk POS: corrupt zlib data" fofdump --check zbad.bin
    # trailing bytes after END
    { cat in.bin; printf 'x'; } >trail.bin
    fails "fofdump: trail.bin: data after the END chunk" fofdump trail.bin
}

@test "a failure leaves no output file behind, and does not touch an existing one; write errors are reported" {
    three | mkstream -o in.bin
    cp in.bin crc.bin
    flip_byte crc.bin $(($(chunk_offset in.bin ID) + 64))
    no_partial_output 1 fofdump --check crc.bin
    no_partial_output 1 fofdump --check -c SNAP crc.bin
    no_partial_output 1 fofdump -c ID crc.bin
    no_partial_output 1 fofdump -c NOPE in.bin
    no_partial_output 2 fofdump -l x in.bin
    fofdump -c MASS -o out.bin in.bin
    [ "$(cat out.bin | tr '\n' ' ')" = "0.5 2 0.25 " ]
    [ -z "$(ls -A | grep '\.tmp\.')" ]
    [ -w /dev/full ] || skip "no /dev/full"
    fails "fofdump: stdout: cannot write: No space left on device" stdout_to /dev/full fofdump in.bin
    fails "fofdump: stdout: cannot write: No space left on device" stdout_to /dev/full fofdump -c POS in.bin
}
