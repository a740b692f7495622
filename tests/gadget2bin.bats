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
        same_stream ref.bin "c$n.bin" '^omega_baryon' # Gadget-2 binary headers have no Omega_b
        gadget2bin --types=1 "$first" | kdbuild | foflink -b 0.2 | groups -m 1 --format=grp >"c$n.grp"
        cmp ref.grp "c$n.grp"
    done
    # -v says what it found
    gadget2bin -v -o x.bin c4/snap 2>err.txt
    grep -q 'Gadget-2 format 2, big-endian, 1 file, float positions, 4-byte IDs; 65536 particles' err.txt
    # a single file reads from stdin too
    gadget2bin <c1/snap >stdin.bin
    same_stream ref.bin stdin.bin '^omega_baryon'
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

# The SNAP text of a stream, without the line naming the source.
snap_of() {
    fofdump -c SNAP "$1" | grep -v '^source '
}

@test "gadget2bin: SNAP records Gadget's default units, the header's cosmology, comoving and v_pec / sqrt(a)" {
    local S=$DATA/g4-lcdm-series/snapshot_001.hdf5
    [ -r "$S" ] || skip "$S is missing"
    python3 "$BATS_TEST_DIRNAME/py/gadget2_write.py" "$S" z3.dat >/dev/null
    gadget2bin -o z3.bin z3.dat
    snap_of z3.bin >snap.txt
    for kv in 'unit_length_cm 3.0856779999999998e+21' 'unit_mass_g 1.9890000000000001e+43' 'unit_velocity_cm_s 100000' \
        'units_per_h 1' 'hubble 0.69999999999999996' 'omega0 0.29999999999999999' 'omega_lambda 0.69999999999999996' \
        'comoving 1' 'vel_a_scaling 0.5'; do
        grep -qx "$kv" snap.txt || { echo "missing: $kv"; return 1; }
    done
    # the header's z = 1/a - 1 (a = 0.25)
    awk '/^time/ {a = $2} /^redshift/ {z = $2} END {print a, z; exit !(a > 0.2499 && a < 0.2501 && z > 2.999 && z < 3.001)}' snap.txt
    # no Omega_b in a Gadget-2 header: only from the option
    run ! grep -q '^omega_baryon' snap.txt
    gadget2bin -v -o /dev/null z3.dat 2>err.txt
    grep -q '; units yes, comoving; ' err.txt
    # the initial conditions' header has no cosmology (HubbleParam, Omega0 0): units, but not comoving
    if [ -f "$ICS" ]; then
        gadget2bin --box=50000 -o ics.bin "$ICS"
        grep -qx 'units_per_h 1' <(snap_of ics.bin)
        run ! grep -Eq '^(comoving|hubble)' <(snap_of ics.bin)
    fi
}

@test "gadget2bin: the options override the units, the comoving flag and Omega_b, also under --slice" {
    need_ics
    gadget2bin --box=50000 --unit-length-cm=3.085678e24 --unit-mass-g=1.989e33 --unit-velocity-cm-s=1e5 \
        --units-per-h=0 --no-comoving --omega-baryon=0.045 -o o.bin "$ICS"
    snap_of o.bin >o.txt
    for kv in 'unit_length_cm 3.085678e+24' 'unit_mass_g 1.9890000000000001e+33' 'units_per_h 0' \
        'omega_baryon 0.044999999999999998'; do
        grep -qx "$kv" o.txt || { echo "missing: $kv"; return 1; }
    done
    run ! grep -Eq '^(comoving|vel_a_scaling)' o.txt
    # units per h by default when given by hand
    gadget2bin --box=50000 --unit-length-cm=3.085678e24 --unit-mass-g=1.989e43 --unit-velocity-cm-s=1e5 -o p.bin "$ICS"
    grep -qx 'units_per_h 1' <(snap_of p.bin)
    # --no-units: no unit keys at all; the particles are the same
    gadget2bin --box=50000 --no-units --no-comoving -o n.bin "$ICS"
    [ -z "$(snap_of n.bin | grep -E '^units?_')" ]
    gadget2bin --box=50000 -o d.bin "$ICS"
    same_stream d.bin n.bin '^(units?_|comoving|vel_a_scaling)'
    # a slice writes the same SNAP record, the counts aside
    gadget2bin --box=50000 --unit-length-cm=3.085678e24 --unit-mass-g=1.989e33 --unit-velocity-cm-s=1e5 \
        --units-per-h=0 --no-comoving --omega-baryon=0.045 --slice=1/3 -o s.bin "$ICS"
    diff <(grep -Ev '^n(gas|dark|star)? ' o.txt) <(snap_of s.bin | grep -Ev '^n(gas|dark|star)? ')
}

@test "gadget2bin: comoving when HubbleParam > 0, Omega0 > 0, 0 < Time <= 1 and Redshift = 1/Time - 1; --comoving needs them" {
    need_ics
    local S=$DATA/g4-lcdm-series/snapshot_001.hdf5
    [ -r "$S" ] || skip "$S is missing"
    python3 "$BATS_TEST_DIRNAME/py/gadget2_write.py" "$S" z3.dat >/dev/null
    grep -qx 'comoving 1' <(snap_of <(gadget2bin z3.dat))
    # the same header with Redshift 0 (at offset 80: what Gadget-2 writes without ComovingIntegrationOn)
    python3 -c 'import sys, struct; b = bytearray(open(sys.argv[1], "rb").read()); b[84:92] = struct.pack("<d", 0.0)
open(sys.argv[2], "wb").write(b)' z3.dat noncomoving.dat
    gadget2bin -o nc.bin noncomoving.dat
    run ! grep -Eq '^(comoving|vel_a_scaling)' <(snap_of nc.bin)
    gadget2bin --comoving -o c.bin noncomoving.dat
    grep -qx 'comoving 1' <(snap_of c.bin)
    grep -qx 'vel_a_scaling 0.5' <(snap_of c.bin)
    # HubbleParam 0 (offset 4 + 152): no cosmology, so --comoving is refused
    python3 -c 'import sys, struct; b = bytearray(open(sys.argv[1], "rb").read()); b[156:164] = struct.pack("<d", 0.0)
open(sys.argv[2], "wb").write(b)' z3.dat nohubble.dat
    run ! grep -q '^comoving' <(snap_of <(gadget2bin nohubble.dat))
    fails_with 1 "gadget2bin: nohubble.dat: --comoving, but the header gives no cosmology (HubbleParam 0): a comoving stream needs h, Omega0 and OmegaLambda" \
        gadget2bin --comoving -o x.bin nohubble.dat
    [ ! -e x.bin ]
    # an Omega_b above the header's Omega0
    fails_with 1 "gadget2bin: z3.dat: --omega-baryon=0.5 is not a baryon density in [0, Omega0 = 0.3]" \
        gadget2bin --omega-baryon=0.5 -o x.bin z3.dat
}

@test "gadget2bin and hdf52bin: a partial or contradictory set of unit options is a usage error with one line, status 2" {
    local p c
    local -a cases=(
        "--unit-length-cm=1|--unit-length-cm, --unit-mass-g and --unit-velocity-cm-s go together: give all three"
        "--unit-length-cm=1 --unit-mass-g=1|--unit-length-cm, --unit-mass-g and --unit-velocity-cm-s go together: give all three"
        "--units-per-h=0|--units-per-h goes with --unit-length-cm, --unit-mass-g and --unit-velocity-cm-s"
        "--no-units --unit-length-cm=1 --unit-mass-g=1 --unit-velocity-cm-s=1|--no-units contradicts --unit-length-cm, --unit-mass-g and --unit-velocity-cm-s"
        "--comoving --no-comoving|--comoving contradicts --no-comoving: give one"
        "--comoving --no-units|--comoving needs units for the physical frame: drop --no-units"
        "--units-per-h=2 --unit-length-cm=1 --unit-mass-g=1 --unit-velocity-cm-s=1|option --units-per-h: 2 is out of range [0, 1]"
        "--unit-mass-g=-1|option --unit-mass-g: -1 is out of range (it must be above 0 and at most 1e+300)"
        "--omega-baryon=2|option --omega-baryon: 2 is out of range (it must be from 0 to 1)"
    )
    for p in gadget2bin hdf52bin; do
        for c in "${cases[@]}"; do
            run -2 --separate-stderr $p ${c%%|*} -o x.bin snap.hdf5
            echo "$p $c: $stderr"
            [ "${stderr%%$'\n'*}" = "$p: ${c#*|}" ]
            [ ! -e x.bin ]
        done
    done
}

@test "gadget2bin: the z = 0 snapshot written as Gadget-2 by numpy gives hdf52bin's halo catalogue, text and HDF5" {
    local S=$DATA/g4-lcdm-series/snapshot_004.hdf5
    [ -r "$S" ] || skip "$S is missing"
    need_hdf5
    local ob
    ob=$(python3 "$BATS_TEST_DIRNAME/py/gadget2_write.py" "$S" snap_004)
    [ "$ob" = 0.04 ]
    # Omega_b is not in a Gadget-2 header: the option gives what hdf52bin reads from Parameters
    gadget2bin --omega-baryon="$ob" -o g.bin snap_004
    hdf52bin -o h.bin "$S"
    same_stream h.bin g.bin
    hdf52bin -t dark "$S" | kdbuild | foflink -b 0.2 | groups -m 20 >h.grp
    gadget2bin -t dark --omega-baryon="$ob" snap_004 | kdbuild | foflink -b 0.2 | groups -m 20 >g.grp
    halostats --unbind h.grp >h.txt
    halostats --unbind g.grp >g.txt
    # the same catalogue, the line naming the source aside; physical: halo 1 keeps bound members
    diff <(grep -v '^# input ' h.txt) <(grep -v '^# input ' g.txt)
    grep -q "source 'snap_004'" g.txt
    awk '!/^#/ && $1 == 0 && $3 == 1 {print "halo 1: n", $4, "n_bound", $32; exit !($32 > 0.5 * $4)}' g.txt
    halostats --unbind --format=hdf5 -o h.hdf5 h.grp
    halostats --unbind --format=hdf5 -o g.hdf5 g.grp
    python3 "$BATS_TEST_DIRNAME/py/h5_equal.py" h.hdf5 g.hdf5
}
