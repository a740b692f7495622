#!/usr/bin/env bats
# hdf52bin.bats - HDF5 snapshots: the Gadget-4 example's partition equals the reference, split copies, units, bad input.

bats_require_minimum_version 1.5.0
load snap_helpers

@test "hdf52bin: the Gadget-4 snapshot converts: counts, box, units and cosmology in SNAP" {
    need_hdf5
    hdf52bin -o all.bin "$G4"
    chunk all.bin SNAP >snap.txt
    cat snap.txt
    grep -qx 'n 65536' snap.txt
    grep -qx 'ngas 32768' snap.txt
    grep -qx 'ndark 32768' snap.txt
    grep -qx 'box 50000' snap.txt
    grep -qx 'origin 0' snap.txt
    grep -qx 'periodic 1' snap.txt
    grep -qx 'time 1' snap.txt
    grep -qx 'unit_mass_g 1.9890000000000001e+43' snap.txt
    grep -qx 'unit_velocity_cm_s 100000' snap.txt
    grep -qx 'units_per_h 1' snap.txt
    grep -qx 'hubble 0.69999999999999996' snap.txt
    grep -qx 'omega0 0.29999999999999999' snap.txt
    grep -qx 'redshift 0' snap.txt
    # masses from MassTable: 4.23508 for the gas, 27.528 for the dark matter (as floats)
    [ "$(chunk all.bin MASS | sort -u | wc -l)" -eq 2 ]
    # types: gas first, then dark; every position inside [0, 50000)
    [ "$(chunk all.bin TYPE | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')" = "0:32768 1:32768 " ]
    [ "$(chunk all.bin POS | awk '{ for (i = 1; i <= 3; i++) if ($i < 0 || $i >= 50000) bad++ } END { print bad + 0 }')" = 0 ]
    # --types by number and by name
    hdf52bin --types=1 -o d1.bin "$G4"
    hdf52bin --types=dark -o d2.bin "$G4"
    cmp d1.bin d2.bin
    grep -qx 'n 32768' <(chunk d1.bin SNAP)
    [ "$(chunk d1.bin ID | head -1)" = 32768 ] # IDs count every type: the dark matter follows the gas
    # PID: the snapshot's own ParticleIDs, in the stream's order (PartType0's first three are 2375 295 294,
    # PartType1's first 34119); every one of 1 to 65536 once
    [ "$(chunk all.bin PID | head -3 | tr '\n' ' ')" = "2375 295 294 " ]
    [ "$(chunk d1.bin PID | head -1)" = 34119 ]
    [ "$(chunk all.bin PID | sort -n | uniq | sed -n '1p;$p' | tr '\n' ' ')" = "1 65536 " ]
    [ "$(chunk all.bin PID | sort -u | wc -l)" -eq 65536 ]
}

@test "hdf52bin: the dark matter's partition at b = 0.2 equals the brute-force reference, particle for particle" {
    need_hdf5
    hdf52bin --types=dark -o dm.bin "$G4"
    fofref -b 0.2 -m 1 -o ref.grp dm.bin
    hdf52bin --types=dark "$G4" | kdbuild | foflink -b 0.2 | groups -m 1 --format=grp >tc.grp
    cmp ref.grp tc.grp
    # not a trivial partition: l = 0.2 x 50000/32 = 312.5 makes 106 groups of 20 or more
    [ "$(awk 'NR > 1 && $1 > 0 { n[$1]++ } END { for (g in n) if (n[g] >= 20) k++; print k }' ref.grp)" -eq 106 ]
}

@test "hdf52bin: a copy split over files, with double coordinates, or with a Masses dataset gives the identical stream" {
    need_hdf5
    hdf52bin -o ref.bin "$G4"
    snapcopy --to=hdf5 --files=4 --double "$G4" split
    [ -f split.3.hdf5 ] && [ ! -f split.4.hdf5 ]
    hdf52bin -v -o split.bin split.0.hdf5 2>err.txt
    grep -q '4 files, double coordinates; 65536 particles' err.txt
    same_stream ref.bin split.bin
    # 32-bit totals with a high word of 0
    snapcopy --to=hdf5 --highword=0 "$G4" hw
    hdf52bin -o hw.bin hw.0.hdf5
    same_stream ref.bin hw.bin
    snapcopy --to=hdf5 --masses "$G4" masses
    hdf52bin -o masses.bin masses.0.hdf5
    same_stream ref.bin masses.bin
    # and the same partition
    hdf52bin --types=dark split.0.hdf5 | kdbuild | foflink -b 0.2 | groups -m 1 --format=grp >split.grp
    hdf52bin --types=dark "$G4" | kdbuild | foflink -b 0.2 | groups -m 1 --format=grp >ref.grp
    cmp ref.grp split.grp
}

@test "hdf52bin: SWIFT's layout (Units, Cosmology, a BoxSize of 3 sides, Masses) gives the same particles, units not per h" {
    need_hdf5
    hdf52bin -o ref.bin "$G4"
    snapcopy --to=hdf5 --swift "$G4" swift
    hdf52bin -v -o swift.bin swift.0.hdf5 2>err.txt
    grep -q 'HDF5 (SWIFT layout), 1 file' err.txt
    same_stream ref.bin swift.bin '^units_per_h|^unit_velocity'
    grep -qx 'units_per_h 0' <(chunk swift.bin SNAP)
    # the velocity unit is U_L / U_t
    [ "$(chunk swift.bin SNAP | awk '$1 == "unit_velocity_cm_s" { print ($2 > 99999.999 && $2 < 100000.001) }')" = 1 ]
    # a box that is not a cube needs --box
    snapcopy --to=hdf5 --swift=50000,50000,40000 "$G4" brick
    fails_with 1 "hdf52bin: brick.0.hdf5: the box (BoxSize) is not cubic: give --box" hdf52bin -o out.bin brick.0.hdf5
    hdf52bin --box=50000 -o brick.bin brick.0.hdf5
    same_stream swift.bin brick.bin
}

@test "hdf52bin: box and periodicity options override the header" {
    need_hdf5
    hdf52bin --no-periodic -o iso.bin "$G4"
    grep -qx 'periodic 0' <(chunk iso.bin SNAP)
    # a box of 40000 wraps the particles beyond it
    hdf52bin -v --box=40000 -o small.bin "$G4" 2>err.txt
    grep -qx 'box 40000' <(chunk small.bin SNAP)
    grep -q 'wrapped [1-9]' err.txt
    [ "$(chunk small.bin POS | awk '{ for (i = 1; i <= 3; i++) if ($i < 0 || $i >= 40000) bad++ } END { print bad + 0 }')" = 0 ]
    # an origin that leaves particles more than a box away is an error naming --no-periodic
    run -1 --separate-stderr hdf52bin --box=1000 -o far.bin "$G4"
    [[ "$stderr" == "hdf52bin: $G4: particle "*" lies more than one box length outside [0, 1000) (wrong --box or --origin? or --no-periodic for an isolated snapshot)" ]]
    [ ! -e far.bin ]
}

@test "halostats takes its default units and G from a stream that carries them" {
    need_hdf5
    hdf52bin --types=dark "$G4" | kdbuild | foflink -b 0.2 | groups -m 20 >g.bin
    halostats --centre=com g.bin >own.txt
    grep -qx '# units: length kpc/h, mass Msun/h, velocity km/s; one stream unit is 1, 1e+10, 1 of them' own.txt
    # G = 6.6743e-8 cm^3 g^-1 s^-2 in kpc (km/s)^2 / Msun: 4.3022e-6 (the h cancels)
    grep -q '^# G = 4.30219[0-9]*e-06 kpc/h (km/s)^2 / Msun/h (from the stream.s units)$' own.txt
    # the same numbers as the units given by hand (G given to 10 digits: agreement to 1e-8)
    halostats --centre=com --length-name=kpc/h --mass-unit=1e10 --mass-name=Msun/h --velocity-name=km/s \
        --G=4.302193132e-06 g.bin >given.txt
    [ "$(grep -vc '^#' own.txt)" -eq 106 ]
    paste -d '\n' <(grep -v '^#' own.txt) <(grep -v '^#' given.txt) | awk '
        NR % 2 { n = split($0, a); next }
        { if (NF != n) bad++; for (i = 1; i <= NF; i++) { d = a[i] - $i; if (d < 0) d = -d; s = a[i] < 0 ? -a[i] : a[i]
          if (d > 1e-8 * s) bad++ } }
        END { print NR / 2 " rows, " bad + 0 " differ"; exit bad > 0 }'
    # a unit given by hand wins for its dimension only
    halostats --centre=com --mass-unit=1 --mass-name=code g.bin >mixed.txt
    grep -qx '# units: length kpc/h, mass code, velocity km/s; one stream unit is 1, 1, 1 of them' mixed.txt
    # a stream without units (tipsy2bin) keeps the stream's units and has no G (not G = 1: halostats(1))
    mkuniverse -n 2000 -s 3 | tipsy2bin | kdbuild | foflink -b 0.2 | groups -m 5 | halostats --centre=com >plain.txt
    grep -qx '# units: length length, mass mass, velocity velocity; one stream unit is 1, 1, 1 of them' plain.txt
    grep -q "^# G: none, the stream has no units" plain.txt
}

@test "halostats --so on the Gadget-4 stream: rho_crit from its units and h; the header says which particles count; --so-from counts every type" {
    need_hdf5
    hdf52bin --types=dark "$G4" | kdbuild | foflink -b 0.2 | groups -m 20 >dm.bin
    hdf52bin -o all.bin "$G4"
    halostats --so --centre=com dm.bin >dm.txt
    # rho_crit,0 = 3 H0^2 / (8 pi G) with H0 = 0.1 km/s per kpc/h and G in kpc/h (km/s)^2 per 1e10 Msun/h,
    # in Msun/h (kpc/h)^-3: 277.45 (2.7745e11 h^2 Msun/Mpc^3); the stream's 32768 dark particles counted
    want=$(awk 'BEGIN { G = 6.6743e-8 * 1.989e43 / (3.085678e21 * 1e10); printf "%.6g", 3 * 0.01 / (8 * atan2(0, -1) * G) * 1e10 }')
    [ "$want" = 277.454 ]
    grep -q "rho_crit,0 ${want}[0-9]* Msun/h (kpc/h)^-3 comoving (3 H0^2 / (8 pi G), H0 100 h km/s/Mpc, from the stream's units)" dm.txt
    grep -qx "# SO sums: the stream's 32768 particles (gas 0 of 32768, dark 32768 of 32768, star 0 of 0 in the snapshot);" dm.txt
    grep -q "the snapshot's other particles are not counted" dm.txt
    # --so-from: the same groups, their spheres summed over the gas too
    halostats --so --centre=com --so-from=all.bin dm.bin >all.txt
    grep -qx "# SO sums: the --so-from stream's 65536 particles (gas 32768 of 32768, dark 32768 of 32768, star 0 of 0 in the snapshot): every particle of the snapshot" all.txt
    [ "$(grep -v '^#' dm.txt | cut -d ' ' -f 1-23)" = "$(grep -v '^#' all.txt | cut -d ' ' -f 1-23)" ]
    # the largest group's m200c grows with the gas (Omega_b / Omega_m = 0.13 of the matter, and r200c with it)
    paste <(grep -v '^#' dm.txt | head -1 | cut -d ' ' -f 33) <(grep -v '^#' all.txt | head -1 | cut -d ' ' -f 33) |
        awk '{ r = $2 / $1; print "m200c ratio " r; exit !(r > 1.1 && r < 1.4) }'
    # another snapshot's stream is refused
    hdf52bin --box=60000 -o other.bin "$G4"
    run -1 halostats --so --so-from=other.bin dm.bin
    [[ "$output" == "halostats: --so-from=other.bin: its box (60000 from 0, periodic 1, 65536 particles in the source) is not the stream's (50000 from 0, periodic 1, 65536): not the same snapshot" ]]
}

@test "hdf52bin: bad input gets one line naming the file and the problem, and no output" {
    need_hdf5
    snapcopy --to=hdf5 --omit=Velocities "$G4" novel
    fails_with 1 "hdf52bin: novel.0.hdf5: missing dataset PartType1/Velocities (32768 particles of type 1 in this file)" \
        hdf52bin -o out.bin novel.0.hdf5
    snapcopy --to=hdf5 --masses --omit=Masses "$G4" nomass
    fails_with 1 "hdf52bin: nomass.0.hdf5: missing dataset PartType1/Masses (MassTable is 0 for type 1)" \
        hdf52bin -o out.bin nomass.0.hdf5
    snapcopy --to=hdf5 --total-plus=1 "$G4" count
    fails_with 1 "hdf52bin: count.0.hdf5: inconsistent counts: the files hold 32768 particles of type 1, NumPart_Total says 32769" \
        hdf52bin -o out.bin count.0.hdf5
    # the high word counts: 2^32 + 32768
    snapcopy --to=hdf5 --highword=1 --files=2 "$G4" high
    fails_with 1 "hdf52bin: high.0.hdf5: inconsistent counts: the files hold 32768 particles of type 1, NumPart_Total says 4295000064" \
        hdf52bin -o out.bin high.0.hdf5
    snapcopy --to=hdf5 --files=2 "$G4" two
    rm two.1.hdf5
    fails_with 1 "hdf52bin: two.1.hdf5: cannot open: No such file or directory" hdf52bin -o out.bin two.0.hdf5
    cp two.0.hdf5 first.hdf5
    fails_with 1 "hdf52bin: first.hdf5: the snapshot is split over 2 files (NumFilesPerSnapshot): name its first file, NAME.0.hdf5" \
        hdf52bin -o out.bin first.hdf5
    echo 'not hdf5' >text.hdf5
    fails_with 1 "hdf52bin: text.hdf5: not an HDF5 file" hdf52bin -o out.bin text.hdf5
    fails_with 1 "hdf52bin: none.hdf5: cannot open: No such file or directory" hdf52bin -o out.bin none.hdf5
    [ ! -e out.bin ]
    run -2 hdf52bin -o out.bin </dev/null
    [[ "$output" == "hdf52bin: HDF5 cannot be read from stdin: name the snapshot's file"* ]]
    run -2 hdf52bin --types=7 "$G4"
    run -2 hdf52bin --box=0 "$G4"
}

@test "hdf52bin: a header that claims more particles than the datasets hold is refused before anything is allocated" {
    need_hdf5
    # NumPart 2^31 - 1 over datasets of 32768 rows: exit 1 naming the mismatch, not out of memory,
    # able to allocate 512 MB at most (small_memory)
    snapcopy --to=hdf5 --claim=2147483647 "$G4" claim
    fails_with 1 "hdf52bin: claim.0.hdf5: dataset PartType1/Coordinates has shape 32768 x 3, but NumPart_ThisFile claims 2147483647 x 3" \
        small_memory hdf52bin -o out.bin claim.0.hdf5
    # datasets that declare the claimed rows but hold none (chunked, never written)
    snapcopy --to=hdf5 --claim=2147483647 --unwritten "$G4" empty
    fails_with 1 "hdf52bin: empty.0.hdf5: dataset PartType1/Coordinates declares 2147483647 rows but none was written" \
        small_memory hdf52bin -o out.bin empty.0.hdf5
    # a type left out is not read, and its claims do not matter
    hdf52bin --types=gas -o gas.bin claim.0.hdf5
    [ ! -e out.bin ]
}

@test "hdf52bin without HDF5 support says so" {
    if ! hdf52bin -o /dev/null /nonexistent.hdf5 2>&1 | grep -q 'no HDF5 support'; then
        skip "this build reads HDF5"
    fi
    fails_with 1 "hdf52bin: x.hdf5: this build of fofkit has no HDF5 support (build it with libhdf5-dev installed)" \
        hdf52bin -o out.bin x.hdf5
}

@test "hdf52bin: --no-units, --unit-*, --no-comoving and --omega-baryon override the header's; the particles stay" {
    need_hdf5
    hdf52bin -o h.bin "$G4"
    grep -qx 'comoving 1' <(chunk h.bin SNAP)
    grep -qx 'omega_baryon 0.040000000000000001' <(chunk h.bin SNAP)
    hdf52bin --no-units --no-comoving --omega-baryon=0.05 -o o.bin "$G4"
    chunk o.bin SNAP >o.txt
    [ -z "$(grep -E '^(units?_|comoving|vel_a_scaling)' o.txt)" ]
    grep -qx 'omega_baryon 0.050000000000000003' o.txt
    grep -qx 'hubble 0.69999999999999996' o.txt # the cosmology stays
    same_stream h.bin o.bin '^(units?_|comoving|vel_a_scaling|omega_baryon)'
    # other units, not per h
    hdf52bin --unit-length-cm=3.085678e24 --unit-mass-g=1.989e33 --unit-velocity-cm-s=1e5 --units-per-h=0 -o u.bin "$G4"
    grep -qx 'unit_length_cm 3.085678e+24' <(chunk u.bin SNAP)
    grep -qx 'units_per_h 0' <(chunk u.bin SNAP)
    grep -qx 'comoving 1' <(chunk u.bin SNAP)
    # --comoving on a stream without units is refused by the options already
    run -2 --separate-stderr hdf52bin --comoving --no-units -o x.bin "$G4"
    [ "${stderr%%$'\n'*}" = "hdf52bin: --comoving needs units for the physical frame: drop --no-units" ]
}
