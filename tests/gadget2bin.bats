#!/usr/bin/env bats
# gadget2bin.bats - Gadget-2 binary snapshots: format 1 and 2, both byte orders, many files, the ICs with --box, bad input.

bats_require_minimum_version 1.5.0
load snap_helpers

need_ics() {
    [ -f "$ICS" ] || skip "$ICS is missing"
}

@test "gadget2bin: format 1 and 2, either byte order, 8-byte IDs, doubles, a MASS block, many files: the stream hdf52bin writes" {
    need_hdf5
    hdf52bin -o ref.bin "$G4"
    hdf52bin --types=dark -o dm.bin "$G4"
    grp_of dm.bin >ref.grp
    local v n=0
    for v in "--format=1" "--format=2" "--format=1 --big" "--format=2 --big" "--format=1 --big --double --ids8 --masses" \
        "--format=2 --files=3" "--format=1 --big --files=2 --masses"; do
        n=$((n + 1))
        mkdir "c$n"
        snapcopy $v "$G4" "c$n/snap"
        local first=c$n/snap
        [ -f "$first" ] || first=c$n/snap.0
        echo "snapcopy $v: $first"
        gadget2bin -o "c$n.bin" "$first"
        same_stream ref.bin "c$n.bin" '^units?_' # Gadget-2 binary headers have no units
        gadget2bin --types=1 "$first" | kdbuild | foflink -b 0.2 | groups -m 1 --format=grp >"c$n.grp"
        cmp ref.grp "c$n.grp"
    done
    # -v says what it found
    gadget2bin -v -o x.bin c4/snap 2>err.txt
    grep -q 'Gadget-2 format 2, big-endian, 1 file, float positions, 4-byte IDs; 65536 particles' err.txt
    # a single file reads from stdin too
    gadget2bin <c1/snap >stdin.bin
    same_stream ref.bin stdin.bin '^units?_'
}

@test "gadget2bin: the initial conditions rewritten in format 2, big-endian, doubles, many files give the identical stream" {
    need_ics
    gadget2bin --box=50000 -o ref.bin "$ICS"
    local v n=0
    for v in "--format=2" "--format=1 --big --double --ids8" "--format=2 --big --masses --files=3"; do
        n=$((n + 1))
        mkdir "c$n"
        snapcopy $v "$ICS" "c$n/ics"
        local first=c$n/ics
        [ -f "$first" ] || first=c$n/ics.0
        echo "snapcopy $v: $first"
        gadget2bin --box=50000 -o "c$n.bin" "$first"
        same_stream ref.bin "c$n.bin"
    done
}

@test "gadget2bin: the Gadget-2 initial conditions (box 0 in the header) convert with --box" {
    need_ics
    fails_with 1 "gadget2bin: $ICS: header gives no box size (BoxSize 0): give --box, or --no-periodic" \
        gadget2bin -o ics.bin "$ICS"
    [ ! -e ics.bin ]
    gadget2bin -v --box=50000 -o ics.bin "$ICS" 2>err.txt
    grep -q 'Gadget-2 format 1, little-endian, 1 file, float positions, 4-byte IDs; 65536 particles, kept 65536' err.txt
    chunk ics.bin SNAP >snap.txt
    grep -qx 'n 65536' snap.txt
    grep -qx 'box 50000' snap.txt
    grep -qx 'periodic 1' snap.txt
    grep -qx 'time 0.090909090909090912' snap.txt # z = 10
    [ "$(chunk ics.bin POS | awk '{ for (i = 1; i <= 3; i++) if ($i < 0 || $i >= 50000) bad++ } END { print bad + 0 }')" = 0 ]
    # nearly uniform: a grid of spacing 1562.5 for each type; at l = 0.9 spacing groups appear
    gadget2bin --box=50000 --types=dark "$ICS" | kdbuild | foflink -l 1406.25 | groups -m 1 --format=grp >tc.grp
    gadget2bin --box=50000 --types=dark -o dm.bin "$ICS"
    fofref -l 1406.25 -m 1 -o ref.grp dm.bin
    cmp ref.grp tc.grp
    # isolated, no box needed
    gadget2bin --no-periodic -o iso.bin "$ICS"
    grep -qx 'periodic 0' <(chunk iso.bin SNAP)
}

# Writes FILE with the 4 bytes at OFFSET set to the little-endian integer V.
poke32() {
    perl -e 'my ($f, $off, $v) = @ARGV; open(my $h, "+<", $f) or die; binmode $h; seek($h, $off, 0);
        print $h pack("V", $v); close $h or die' "$@"
}

@test "gadget2bin: bad input gets one line naming the file, the block and the offset, and no output" {
    need_ics
    # a POS record (786432 bytes, from offset 264) whose trailing marker says otherwise
    cp "$ICS" marker.dat && chmod u+w marker.dat
    poke32 marker.dat 786700 786433
    fails_with 1 "gadget2bin: marker.dat: block POS: record markers disagree: 786432 bytes at offset 264, 786433 at offset 786700" \
        gadget2bin --box=50000 -o out.bin marker.dat
    # a leading marker that promises a different size
    cp "$ICS" size.dat && chmod u+w size.dat
    poke32 size.dat 786704 786436
    fails_with 1 "gadget2bin: size.dat: block VEL at offset 786704 holds 786436 bytes for 65536 particles (neither 4- nor 8-byte values)" \
        gadget2bin --box=50000 -o out.bin size.dat
    # truncated: a file too short for its header's counts is refused before anything is read;
    # from a pipe (its size unknown), where it ends
    head -c 1000000 "$ICS" >cut.dat
    fails_with 1 "gadget2bin: cut.dat: the header claims 65536 particles in this file, which needs at least 1835296 bytes; the file holds 1000000 (truncated, or not a Gadget-2 snapshot)" \
        gadget2bin --box=50000 -o out.bin cut.dat
    fails_with 1 "gadget2bin: stdin: block VEL: truncated: the file ends at byte 1000000, inside the record of 786432 bytes that starts at byte 786704" \
        bash -c 'cat cut.dat | gadget2bin --box=50000 -o out.bin' 
    head -c 100 "$ICS" >head.dat
    fails_with 1 "gadget2bin: head.dat: block HEAD: truncated: the file ends at byte 100, inside the record of 256 bytes that starts at byte 0" \
        gadget2bin --box=50000 -o out.bin head.dat
    # the file ends after the header: no POS block
    head -c 264 "$ICS" >nopos.dat
    fails_with 1 "gadget2bin: stdin: missing block POS" bash -c 'cat nopos.dat | gadget2bin --box=50000 -o out.bin' 
    # not Gadget-2 at all
    printf 'hello, world\n' >text.dat
    fails_with 1 "gadget2bin: text.dat: not a Gadget-2 snapshot (the first record marker is neither 256 nor 8 in either byte order)" \
        gadget2bin -o out.bin text.dat
    fails_with 1 "gadget2bin: none.dat: cannot open: No such file or directory" gadget2bin -o out.bin none.dat
    [ ! -e out.bin ]
    run -2 gadget2bin --types=gas,,dark "$ICS"
    run -2 gadget2bin --box=-1 "$ICS"
}

# Writes FILE: a format-1 little-endian header record whose npart (and npartTotal) are the
# six numbers given, masses 1 (no MASS block), box 1, padded with zeros to SIZE bytes.
#   claim_header FILE SIZE N0 N1 N2 N3 N4 N5
claim_header() {
    perl -e 'my ($f, $size, @n) = @ARGV; open(my $h, ">", $f) or die; binmode $h;
        my $hd = pack("V6", @n) . pack("d<6", (1) x 6) . pack("d<2V2", 1, 0, 0, 0) . pack("V6", @n)
            . pack("V2d<4V2", 0, 1, 1, 0.3, 0.7, 0.7, 0, 0) . pack("V6", 0, 0, 0, 0, 0, 0);
        $hd .= "\0" x (256 - length $hd);
        my $r = pack("V", 256) . $hd . pack("V", 256);
        print $h $r . ("\0" x ($size - length $r)); close $h or die' "$@"
}

@test "gadget2bin: a header that claims more particles than the file holds is refused before anything is allocated" {
    # 428 bytes claiming 10737418235 particles: exit 1 naming the mismatch, not out of memory,
    # able to allocate 512 MB at most (small_memory)
    claim_header big.dat 428 4294967295 4294967295 2147483645 0 0 0
    fails_with 1 "gadget2bin: big.dat: the header claims 10737418235 particles in this file, which needs at least 300647710868 bytes; the file holds 428 (truncated, or not a Gadget-2 snapshot)" \
        small_memory gadget2bin -o out.bin big.dat
    # a file one byte short of its claim (2 particles: 264 + 3 x 8 + 2 x 28 = 344 bytes)
    claim_header short.dat 343 0 2 0 0 0 0
    fails_with 1 "gadget2bin: short.dat: the header claims 2 particles in this file, which needs at least 344 bytes; the file holds 343 (truncated, or not a Gadget-2 snapshot)" \
        gadget2bin -o out.bin short.dat
    # through a pipe, whose size is unknown, the arrays grow as the particles arrive: the end
    # of the data is found without allocating for the claim
    run --separate-stderr small_memory bash -c 'cat big.dat | gadget2bin -o out.bin'
    echo "$stderr"
    [ "$status" -eq 1 ]
    [ "$stderr" = "gadget2bin: stdin: block POS: truncated: the file ends at byte 428, inside the record of 0 bytes that starts at byte 264" ] ||
        [[ "$stderr" == "gadget2bin: stdin: block POS at offset 264 holds 0 bytes for 10737418235 particles"* ]]
    [ ! -e out.bin ]
}

@test "gadget2bin: inconsistent counts and missing files of a split snapshot" {
    need_hdf5
    snapcopy --total-plus=1 "$G4" count.dat
    fails_with 1 "gadget2bin: count.dat: inconsistent counts: the files hold 32768 particles of type 1, the header's total says 32769" \
        gadget2bin -o out.bin count.dat
    # npartTotalHighWord counts: 2^32 + 32768, found from the headers before anything is read
    snapcopy --highword=1 --files=3 "$G4" high
    fails_with 1 "gadget2bin: high.0: inconsistent counts: the files hold 32768 particles of type 1, the header's total says 4295000064" \
        gadget2bin -o out.bin high.0
    snapcopy --files=2 "$G4" two
    cp two.0 first
    fails_with 1 "gadget2bin: first: the snapshot is split over 2 files (num_files): name its first file, NAME.0" \
        gadget2bin -o out.bin first
    rm two.1
    fails_with 1 "gadget2bin: two.1: cannot open: No such file or directory" gadget2bin -o out.bin two.0
    [ ! -e out.bin ]
}
