#!/usr/bin/env bats
# tipsy2bin.bats - tipsy2bin(1): exact conversion, detection, selection, wrapping, gzip, every bad input, the real snapshots.

bats_require_minimum_version 1.5.0
load tipsy_helpers

# Runs tipsy2bin ARGS... expecting status 1, exactly MESSAGE on stderr, nothing on stdout.
fails() {
    local msg=$1
    shift
    run -1 --separate-stderr tipsy2bin "$@"
    echo "stderr: $stderr"
    [ "$stderr" = "tipsy2bin: $msg" ]
    [ -z "$output" ]
}

# Four particles: one gas, two dark (one on the upper edge of the box), one star.
four() {
    ascii2tipsy --time=0.5 "$@" <<'EOF'
# type x y z vx vy vz mass
d 0.1 0.2 0.3 1 2 3 0.25
g -0.5 0.49999997 0 -1 -2 -3 0.125
s 0.25 -0.25 0.125 0 0 0 0.5
d 0.5 -0.50000006 1.4999999 0.5 0.5 0.5 0.25
EOF
}

@test "--help prints the usage with every option on stdout" {
    run --separate-stderr tipsy2bin --help
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "Usage: tipsy2bin [OPTION]... [FILE]" ]
    for o in --types=LIST --format=FORMAT --box=L --origin=X --no-periodic --output=FILE --compress --force --verbose \
        --help --version; do
        [[ "$output" == *"$o"* ]] || { echo "missing $o"; return 1; }
    done
    [ -z "$stderr" ]
}

@test "--version names the program and the release" {
    run tipsy2bin --version
    [ "$status" -eq 0 ]
    [[ "$output" =~ ^tipsy2bin\ \(fofkit\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "usage errors: one message, a pointer to --help, status 2" {
    run -2 tipsy2bin --bogus
    [ "${lines[0]}" = "tipsy2bin: unknown option '--bogus'" ]
    [ "${lines[1]}" = "Try 'tipsy2bin --help' for more information." ]
    [ "${#lines[@]}" -eq 2 ]
    run -2 tipsy2bin -x
    [ "${lines[0]}" = "tipsy2bin: unknown option '-x'" ]
    run -2 tipsy2bin --box
    [ "${lines[0]}" = "tipsy2bin: option '--box' needs a value" ]
    run -2 tipsy2bin -t
    [ "${lines[0]}" = "tipsy2bin: option '-t' needs a value" ]
    run -2 tipsy2bin --box=0
    [ "${lines[0]}" = "tipsy2bin: option --box: 0 is out of range (it must be above 0 and at most 8.50706e+37)" ]
    run -2 tipsy2bin --box=-1
    [ "${lines[0]}" = "tipsy2bin: option --box: -1 is out of range (it must be above 0 and at most 8.50706e+37)" ]
    run -2 tipsy2bin --box=1x
    [ "${lines[0]}" = "tipsy2bin: option --box needs a number, not '1x'" ]
    run -2 tipsy2bin --origin=nan
    [ "${lines[0]}" = "tipsy2bin: option --origin needs a number, not 'nan'" ]
    run -2 tipsy2bin --format=xdr
    [ "${lines[0]}" = "tipsy2bin: option --format needs auto, standard or native, not 'xdr'" ]
    run -2 tipsy2bin -t gas,dust
    [ "${lines[0]}" = "tipsy2bin: option --types: unknown particle type 'dust' (gas, dark, star or all)" ]
    run -2 tipsy2bin -t gas,,dark
    [ "${lines[0]}" = "tipsy2bin: option --types needs a comma-separated list of gas, dark, star, not 'gas,,dark'" ]
    run -2 tipsy2bin -o -v
    [ "${lines[0]}" = "tipsy2bin: option -o needs a file name, not '-v'" ]
    run -2 tipsy2bin a.std b.std
    [ "${lines[0]}" = "tipsy2bin: too many input files (one at most, or '-' for stdin)" ]
}

@test "refuses to write binary data to a terminal, or to read it from one" {
    command -v script >/dev/null || skip "no script(1) to make a terminal"
    four >in.std
    run script -qec "tipsy2bin in.std" /dev/null
    [ "$status" -eq 1 ] || skip "no pseudo-terminal here (script failed: $output)"
    [ "$(printf '%s' "$output" | tr -d '\r')" = "tipsy2bin: stdout: refusing to write binary data to a terminal (use -o FILE or redirect)" ]
    run script -qec "tipsy2bin -o out.bin" /dev/null </dev/null
    [ "$status" -eq 1 ]
    [ "$(printf '%s' "$output" | tr -d '\r')" = "tipsy2bin: stdin: refusing to read binary data from a terminal (give a file, or pipe one in)" ]
    [ ! -e out.bin ]
    # -f forces it
    run script -qec "tipsy2bin -f in.std" /dev/null
    [ "$status" -eq 0 ]
}

@test "the stream holds SNAP, POS, MASS, TYPE, ID, VEL with the exact values, in file order" {
    four >in.std
    tipsy2bin -o out.bin in.std
    run chunk_list out.bin
    [[ "${lines[0]}" =~ ^SNAP\ \|u1\ 4\ [0-9]+\ 1$ ]]
    # POS first (kdbuild builds on it while the rest comes), VEL last (foflink links in 3D before it)
    [ "$(printf '%s\n' "${lines[@]:1}")" = "$(printf '%s\n' 'POS <f4 2 4 3' 'MASS <f4 2 4 1' 'TYPE |u1 2 4 1' \
        'ID <u4 2 4 1' 'VEL <f4 2 4 3' 'END |u1 0 0 1')" ]
    run chunk out.bin SNAP
    [ "$output" = "$(printf '%s\n' 'n 4' 'ngas 1' 'ndark 2' 'nstar 1' 'nsource 4' 'nsource_gas 1' 'nsource_dark 2' \
        'nsource_star 1' 'time 0.5' 'box 1' 'origin -0.5' 'periodic 1' 'source in.std')" ]
    # gas first, then dark in input order, then the star; 0.5 wraps to -0.5, -0.50000006 to
    # 0.49999994, 1.4999999 (1.49999988) to 0.49999988
    run chunk out.bin POS
    [ "$output" = "$(printf '%s\n' '-0.5 0.49999997 0' '0.100000001 0.200000003 0.300000012' \
        '-0.5 0.49999994 0.499999881' '0.25 -0.25 0.125')" ]
    run chunk out.bin VEL
    [ "$output" = "$(printf '%s\n' '-1 -2 -3' '1 2 3' '0.5 0.5 0.5' '0 0 0')" ]
    run chunk out.bin MASS
    [ "$output" = "$(printf '%s\n' 0.125 0.25 0.25 0.5)" ]
    run chunk out.bin TYPE
    [ "$output" = "$(printf '%s\n' 0 1 1 2)" ]
    run chunk out.bin ID
    [ "$output" = "$(printf '%s\n' 0 1 2 3)" ]
}

@test "-v reports the format, the counts and the time taken on stderr" {
    four >in.std
    run --separate-stderr tipsy2bin -v -o out.bin in.std
    [ "$status" -eq 0 ]
    [[ "$stderr" =~ ^tipsy2bin:\ in.std:\ standard\ tipsy,\ 4\ particles\ \(1\ gas,\ 2\ dark,\ 1\ star\),\ time\ 0.5\;\ kept\ 4,\ wrapped\ 1\;\ units\ none,\ not\ comoving\;\ read\ [0-9.]+\ s\ \([0-9]+\ MB/s\),\ wrote\ [0-9.]+\ s$ ]]
    four --native | tipsy2bin -v -o out.bin 2>err.txt
    grep -q '^tipsy2bin: stdin: native tipsy, 4 particles' err.txt
    # quiet without -v
    run --separate-stderr tipsy2bin -o out.bin in.std
    [ -z "$stderr" ]
}

@test "type selection keeps the chosen types with their original IDs" {
    four >in.std
    tipsy2bin -t dark,star -o out.bin in.std
    [ "$(snap_key out.bin n)" = 3 ]
    [ "$(snap_key out.bin ngas)" = 0 ]
    [ "$(snap_key out.bin nsource)" = 4 ]
    [ "$(snap_key out.bin nsource_gas)" = 1 ]
    [ "$(chunk out.bin ID | tr '\n' ' ')" = "1 2 3 " ]
    [ "$(chunk out.bin TYPE | tr '\n' ' ')" = "1 1 2 " ]
    tipsy2bin --types=gas -o gas.bin in.std
    [ "$(chunk gas.bin ID)" = 0 ]
    [ "$(chunk gas.bin POS)" = "-0.5 0.49999997 0" ]
    tipsy2bin -t all -o all.bin in.std
    [ "$(snap_key all.bin n)" = 4 ]
    # a selection with no particle is an empty stream, not an error
    tipsy2bin -t gas -o none.bin "$(printf 'd 0 0 0\n' | ascii2tipsy -o d.std && echo d.std)"
    [ "$(snap_key none.bin n)" = 0 ]
}

@test "--box and --origin set the periodic box; --no-periodic keeps positions as they are" {
    printf 'd 1.5 -0.25 2.75\nd 3 0 -1\n' | ascii2tipsy -o in.std
    tipsy2bin --box=2 --origin=0 -o out.bin in.std
    [ "$(chunk out.bin POS)" = "$(printf '%s\n' '1.5 1.75 0.75' '1 0 1')" ]
    [ "$(snap_key out.bin box)" = 2 ]
    [ "$(snap_key out.bin origin)" = 0 ]
    # the origin defaults to -L/2
    tipsy2bin --box=4 -o out.bin in.std
    [ "$(snap_key out.bin origin)" = -2 ]
    [ "$(chunk out.bin POS)" = "$(printf '%s\n' '1.5 -0.25 -1.25' '-1 0 -1')" ]
    tipsy2bin --no-periodic -o iso.bin in.std
    [ "$(snap_key iso.bin periodic)" = 0 ]
    [ "$(chunk iso.bin POS)" = "$(printf '%s\n' '1.5 -0.25 2.75' '3 0 -1')" ]
    # more than one box length outside is an error naming the particle
    fails "in.std: particle 0 (dark) at (1.5 -0.25 2.75) lies more than one box length outside [-0.5, 0.5) (wrong --box? or --no-periodic for an isolated snapshot)" \
        -o out.bin in.std
}

@test "a native file, its standard twin and gzip-compressed copies give the same stream" {
    four >in.std
    four --native >nat.std
    swap_tipsy in.std swapped.std
    cmp nat.std swapped.std
    tipsy2bin <in.std >a.bin
    tipsy2bin <nat.std >b.bin
    cmp a.bin b.bin
    tipsy2bin --format=native <nat.std >c.bin
    cmp a.bin c.bin
    gzip -c in.std | tipsy2bin >d.bin
    cmp a.bin d.bin
    gzip -c nat.std >nat.std.gz
    tipsy2bin -o e.bin - <nat.std.gz
    cmp a.bin e.bin
    gzip -c in.std >in.std.gz
    tipsy2bin -v -o f.bin in.std.gz 2>err.txt
    grep -q 'standard tipsy (gzip), 4 particles' err.txt
    [ "$(chunk f.bin POS)" = "$(chunk a.bin POS)" ]
}

@test "-z compresses every chunk and the stream still ends in END" {
    four >in.std
    tipsy2bin -z -o out.bin in.std
    run chunk_list out.bin
    [ "${lines[1]}" = "POS <f4 3 4 3" ]
    [ "${lines[6]}" = "END |u1 0 0 1" ]
}

@test "the header's pad field may hold anything; ndim is only checked when detecting" {
    four --pad=1 >pad1.std
    four >pad0.std
    tipsy2bin <pad1.std >a.bin
    tipsy2bin <pad0.std >b.bin
    cmp a.bin b.bin
    four --pad=-123456 | tipsy2bin >c.bin
    cmp a.bin c.bin
    four --ndim=2 >nd2.std
    fails "nd2.std: not a tipsy file: ndim reads 2 (big-endian) or 33554432 (little-endian), not 3" nd2.std
    tipsy2bin --format=standard <nd2.std >d.bin
    cmp a.bin d.bin
}

@test "bad inputs: each with its one-line message and status 1" {
    four >in.std
    : >empty.std
    fails "empty.std: empty input (no tipsy header)" empty.std
    head -c 20 in.std >short.std
    fails "short.std: only 20 bytes, too short for a tipsy header (32 bytes)" short.std
    head -c 150 in.std >trunc.std
    fails "trunc.std: truncated: the header promises 4 particles (1 gas, 2 dark, 1 star) in 196 bytes, the file has 150" \
        trunc.std
    # through a pipe the size is unknown: how far it got
    head -c 150 in.std | fails "stdin: truncated: the header promises 4 particles (1 gas, 2 dark, 1 star), the input ends after 2 particles"
    { cat in.std; printf 'extra'; } >trail.std
    fails "trail.std: trailing data: the header promises 4 particles (1 gas, 2 dark, 1 star) in 196 bytes, the file has 201" \
        trail.std
    { cat in.std; printf 'extra'; } | fails "stdin: trailing data after the 4 particles the header promises"
    four --nbodies=5 >nb.std
    fails "nb.std: inconsistent standard tipsy header: nbodies 5 but nsph + ndark + nstar = 4" nb.std
    four --ndim=0 >ndim.std
    fails "ndim.std: not a tipsy file: ndim reads 0 (big-endian) or 0 (little-endian), not 3" ndim.std
    # header counts that do not match the file: one dark particle fewer than the file holds
    printf 'd 0 0 0\nd 0.1 0.1 0.1\nd 0.2 0.2 0.2\n' | ascii2tipsy --nbodies=2 >counts.std
    printf '\0\0\0\2' | dd of=counts.std bs=1 seek=20 conv=notrunc status=none
    fails "counts.std: trailing data: the header promises 2 particles (0 gas, 2 dark, 0 star) in 104 bytes, the file has 140" \
        counts.std
    # a format forced on the wrong file fails its checks
    fails "in.std: truncated: the header promises 67108864 particles (16777216 gas, 33554432 dark, 16777216 star) in 2751463456 bytes, the file has 196" \
        --format=native in.std
    printf 'd 0.1 nan 0.3\n' | ascii2tipsy >nan.std
    fails "nan.std: particle 0 (dark) has a non-finite position (0.1 nan 0.3)" nan.std
    printf 'g 0 0 0\ns 0.1 0.2 -inf\n' | ascii2tipsy >inf.std
    fails "inf.std: particle 1 (star) has a non-finite position (0.1 0.2 -inf)" inf.std
    printf 'd 0 0 0 0 inf 0\n' | ascii2tipsy >vinf.std
    fails "vinf.std: particle 0 (dark) has a non-finite velocity (0 inf 0)" vinf.std
    printf 'd 0 0 0 0 0 0 nan\n' | ascii2tipsy >mnan.std
    fails "mnan.std: particle 0 (dark) has a non-finite mass (nan)" mnan.std
    # only kept particles are checked
    tipsy2bin -t gas -o ok.bin inf.std
    printf 'd 0 0 0\nd 0.3 -2.5 0\n' | ascii2tipsy >far.std
    fails "far.std: particle 1 (dark) at (0.3 -2.5 0) lies more than one box length outside [-0.5, 0.5) (wrong --box? or --no-periodic for an isolated snapshot)" far.std
    fails "missing.std: cannot open: No such file or directory" missing.std
}

@test "a corrupt or cut gzip file is an error" {
    four >in.std
    gzip -c in.std >in.std.gz
    size=$(stat -c %s in.std.gz)
    # damage the CRC-32 in the gzip trailer
    cp in.std.gz crc.gz
    printf 'XXXX' | dd of=crc.gz bs=1 seek=$((size - 8)) conv=notrunc status=none
    fails "crc.gz: corrupt gzip data (incorrect data check)" crc.gz
    # a gzip header (no name) followed by garbage
    { printf '\037\213\010\000\000\000\000\000\000\003'; printf '\377\377\377\377\377\377\377\377'; } >garbage.gz
    fails "garbage.gz: corrupt gzip data (invalid block type)" garbage.gz
    # cut short: a truncated snapshot
    head -c $((size / 2)) in.std.gz >cut.gz
    run -1 --separate-stderr tipsy2bin cut.gz
    [[ "$stderr" =~ ^tipsy2bin:\ cut.gz:\ truncated:\ the\ header\ promises\ 4\ particles\ \(1\ gas,\ 2\ dark,\ 1\ star\),\ the\ input\ ends\ after\ [0-3]\ particles\ \(gzip\ data\ cut\ short\)$ ]]
    head -c 20 in.std.gz >cut2.gz
    fails "cut2.gz: gzip data cut short inside the tipsy header" cut2.gz
}

@test "a failure leaves no output file behind, and does not touch an existing one" {
    four >in.std
    head -c 150 in.std >trunc.std
    run -1 tipsy2bin -o out.bin trunc.std
    [ ! -e out.bin ]
    [ -z "$(ls | grep 'out\.bin\.tmp')" ]
    echo keep >out.bin
    run -1 tipsy2bin -o out.bin trunc.std
    [ "$(cat out.bin)" = keep ]
    [ -z "$(ls | grep 'out\.bin\.tmp')" ]
    # and a success replaces it
    tipsy2bin -o out.bin in.std
    [ "$(snap_key out.bin n)" = 4 ]
}

@test "the real snapshots convert: counts, types, wrapping, pad, native twin" {
    [ -d "$DATA" ] || skip "no snapshots in $DATA"
    for f in skid-dark lambs-30k test4-zoom cube300-ics onestar-pad1 run581-dark-star run99-gas-dark-star; do
        [ -f "$DATA/$f.std" ] || skip "$DATA/$f.std is missing"
        # the isolated galaxies (and the gas sphere) are not periodic
        case $f in onestar-pad1 | run*) opt=--no-periodic ;; *) opt= ;; esac
        tipsy2bin $opt -o "$f.bin" "$DATA/$f.std"
        read -r _ nbodies _ nsph ndark nstar pad <<<"$(tipsy_header "$DATA/$f.std")"
        echo "$f: $nbodies = $nsph + $ndark + $nstar, pad $pad"
        [ "$(snap_key "$f.bin" n)" = "$nbodies" ]
        [ "$(snap_key "$f.bin" nsource)" = "$nbodies" ]
        [ "$(snap_key "$f.bin" ngas)" = "$nsph" ]
        [ "$(snap_key "$f.bin" ndark)" = "$ndark" ]
        [ "$(snap_key "$f.bin" nstar)" = "$nstar" ]
        [ "$(snap_key "$f.bin" source)" = "$f.std" ]
        # TYPE: nsph zeros, then ndark ones, then nstar twos
        [ "$(chunk "$f.bin" TYPE | uniq -c | awk '{printf "%s:%s ", $2, $1}')" = \
            "$( ( [ "$nsph" -gt 0 ] && printf '0:%s ' "$nsph"; [ "$ndark" -gt 0 ] && printf '1:%s ' "$ndark"
                [ "$nstar" -gt 0 ] && printf '2:%s ' "$nstar"; true))" ]
        [ "$(chunk "$f.bin" ID | awk '$1 != NR - 1' | wc -l)" -eq 0 ]
    done
    [ "$(tipsy_header "$DATA/onestar-pad1.std" | awk '{print $7}')" = 1 ]
    # the known layouts
    [ "$(snap_key skid-dark.bin ndark)" = 32768 ]
    [ "$(snap_key run99-gas-dark-star.bin ngas) $(snap_key run99-gas-dark-star.bin nstar)" = "1049 6509" ]
    # cube300: 3775 particles outside [-0.5, 0.5) are wrapped into it
    tipsy2bin -v -o cube.bin "$DATA/cube300-ics.std" 2>err.txt
    grep -q 'kept 110592, wrapped 3775;' err.txt
    [ "$(chunk cube.bin POS | awk '{ for (i = 1; i <= 3; i++) if ($i < -0.5 || $i >= 0.5) bad++ } END { print bad + 0 }')" = 0 ]
    # the isolated galaxy is not a periodic box of side 1
    run -1 --separate-stderr tipsy2bin -o x.bin "$DATA/run581-dark-star.std"
    [[ "$stderr" == *"lies more than one box length outside [-0.5, 0.5) (wrong --box? or --no-periodic for an isolated snapshot)" ]]
    # a byte-swapped native twin gives the identical stream
    mkdir twin
    swap_tipsy "$DATA/cube300-ics.std" twin/cube300-ics.std
    tipsy2bin -o twin.bin twin/cube300-ics.std
    tipsy2bin -o std.bin "$DATA/cube300-ics.std"
    cmp std.bin twin.bin
    swap_tipsy "$DATA/run99-gas-dark-star.std" twin/run99-gas-dark-star.std
    tipsy2bin --no-periodic -o twin99.bin twin/run99-gas-dark-star.std
    cmp run99-gas-dark-star.bin twin99.bin
}

@test "units and cosmology: --kpc-unit/--msol-unit give units in which G = 1; the cosmology makes the stream comoving" {
    four -o four.std
    # without options the stream has no units, as before
    tipsy2bin -o plain.bin four.std
    [ -z "$(fofdump -c SNAP plain.bin | grep -E '^(unit_|units_per_h|hubble|omega|comoving|vel_a_scaling|redshift)')" ]
    # units alone: ChaNGa's dKpcUnit and dMsolUnit, the velocity unit that makes G = 1, not per h
    tipsy2bin --kpc-unit=50000 --msol-unit=1.5e16 -o u.bin four.std
    fofdump -c SNAP u.bin >u.txt
    grep -qx 'units_per_h 0' u.txt
    run ! grep -Eq '^(comoving|hubble|redshift)' u.txt
    awk '/^unit_length_cm/ {l = $2} /^unit_mass_g/ {m = $2} /^unit_velocity_cm_s/ {v = $2}
         END {g = v * v * l / m; print l, m, v, g; exit !(l == 50000 * 3.085678e21 && m == 1.5e16 * 1.989e33 &&
              g > 6.6743e-8 * (1 - 1e-12) && g < 6.6743e-8 * (1 + 1e-12))}' u.txt
    # the particles are untouched
    for t in POS VEL MASS TYPE ID; do cmp <(fofdump -c $t plain.bin) <(fofdump -c $t u.bin); done
    # a cosmological run: time = a (0.5 here), z = 1/a - 1, comoving with velocities comoving dx/dt (a^1)
    tipsy2bin --kpc-unit=50000 --msol-unit=1.5e16 --hubble=0.7 --omega-m=0.3 --omega-l=0.7 --omega-b=0.04 -o c.bin four.std
    fofdump -c SNAP c.bin >c.txt
    for kv in 'time 0.5' 'hubble 0.69999999999999996' 'omega0 0.29999999999999999' 'omega_lambda 0.69999999999999996' \
        'redshift 1' 'omega_baryon 0.040000000000000001' 'comoving 1' 'vel_a_scaling 1' 'units_per_h 0'; do
        grep -qx "$kv" c.txt || { echo "missing: $kv"; return 1; }
    done
    # --comoving says the same
    tipsy2bin --comoving --kpc-unit=50000 --msol-unit=1.5e16 --hubble=0.7 --omega-m=0.3 --omega-l=0.7 \
        --omega-baryon=0.04 -o c2.bin four.std
    diff <(fofdump -c SNAP c.bin) <(fofdump -c SNAP c2.bin)
    tipsy2bin -v --kpc-unit=50000 --msol-unit=1.5e16 --hubble=0.7 --omega-m=0.3 --omega-l=0.7 -o /dev/null four.std 2>err.txt
    grep -q '; units yes, comoving; ' err.txt
    # a time that is no expansion factor cannot be a cosmological run's
    ascii2tipsy --time=13.7 -o late.std <<<'d 0.1 0.2 0.3 1 2 3 0.25'
    fails "late.std: time 13.7 is not an expansion factor in (0, 1.01], as a cosmological run's must be (drop --comoving, --hubble, --omega-m and --omega-l for a run that is not one)" \
        --kpc-unit=1 --msol-unit=1 --hubble=0.7 --omega-m=0.3 --omega-l=0.7 -o late.bin late.std
    [ ! -e late.bin ]
}

@test "units and cosmology: a partial or contradictory set is a usage error with one line, status 2" {
    four -o four.std
    local -a cases=(
        "--kpc-unit=1|--kpc-unit and --msol-unit go together: give both (dKpcUnit, dMsolUnit)"
        "--msol-unit=1|--kpc-unit and --msol-unit go together: give both (dKpcUnit, dMsolUnit)"
        "--kpc-unit=1 --msol-unit=1 --hubble=0.7|--hubble, --omega-m and --omega-l go together: give all three (a cosmological run)"
        "--kpc-unit=1 --msol-unit=1 --comoving|--comoving needs the cosmology: give --hubble, --omega-m and --omega-l"
        "--hubble=0.7 --omega-m=0.3 --omega-l=0.7|a cosmological run needs its units: give --kpc-unit and --msol-unit (dKpcUnit, dMsolUnit)"
        "--kpc-unit=1 --msol-unit=1 --omega-baryon=0.04|--omega-baryon goes with --hubble, --omega-m and --omega-l"
        "--kpc-unit=1 --msol-unit=1 --hubble=0.7 --omega-m=0.03 --omega-l=0.7 --omega-b=0.04|--omega-baryon=0.04 is above --omega-m=0.03: Omega_b is a part of Omega_m"
        "--kpc-unit=0|option --kpc-unit: 0 is out of range (it must be above 0 and at most 1e+30)"
        "--hubble=x|option --hubble needs a number, not 'x'"
    )
    local c
    for c in "${cases[@]}"; do
        run -2 --separate-stderr tipsy2bin ${c%%|*} -o x.bin four.std
        echo "$c: $stderr"
        [ "${stderr%%$'\n'*}" = "tipsy2bin: ${c#*|}" ]
        [ ! -e x.bin ]
    done
}

@test "units and cosmology: the z = 3 Gadget-4 snapshot as ChaNGa tipsy gives hdf52bin's physical halos (velocities a^1 vs a^0.5)" {
    local S=$DATA/g4-lcdm-series/snapshot_001.hdf5
    [ -r "$S" ] || skip "$S is missing"
    hdf52bin -o /dev/null /nonexistent.hdf5 2>&1 | grep -q 'no HDF5 support' && skip "built without HDF5"
    # comoving box units, dKpcUnit = 50000 kpc/h / h, velocities dx/dt comoving (tests/py/tipsy_write.py)
    local opts
    opts=$(python3 "$BATS_TEST_DIRNAME/py/tipsy_write.py" "$S" z3.std 1e16)
    echo "$opts"
    # shellcheck disable=SC2086 # the options, one word each
    tipsy2bin -t dark $opts z3.std | kdbuild | foflink -b 0.2 | groups -m 20 | halostats --unbind >t.txt
    hdf52bin -t dark "$S" | kdbuild | foflink -b 0.2 | groups -m 20 | halostats --unbind >h.txt
    # the same halos: counts and bound members exactly; km/s and the spin to float rounding; masses
    # and comoving lengths h times larger in Msun and kpc than in Msun/h and kpc/h
    python3 - h.txt t.txt <<'PY'
import sys
import numpy as np
h, t = (np.loadtxt(f, comments="#", ndmin=2) for f in sys.argv[1:])
print(h.shape, t.shape)
assert h.shape == t.shape and len(h) >= 3
hub = 0.7
for col, scale in ((4, 1), (32, 1), (17, 1)):             # n, n_bound, mbp_id
    assert (h[:, col - 1] == t[:, col - 1]).all(), col
assert (h[:, 31] > 0).any()                               # some halo is bound at z = 3
for col, scale in ((9, 1), (10, 1), (11, 1), (12, 1), (18, 1), (21, 1), (23, 1),  # km/s, (km/s)^2, lambda
                   (5, 1 / hub), (33, 1 / hub), (13, 1 / hub), (20, 1 / hub), (22, 1 / hub)):
    a, b = h[:, col - 1] * scale, t[:, col - 1]
    err = np.abs(a - b) / np.maximum(np.abs(a), 1e-30)
    print(col, err.max())
    assert err.max() < 2e-5, (col, err.max())
PY
}
