#!/usr/bin/env bats
# correctness.bats - the toolchain's partition equals an independent brute-force FoF (fofref) exactly, on made-up and real snapshots.

bats_require_minimum_version 1.5.0
load ref_helpers

# The toolchain, tipsy2bin | kdbuild | foflink, on tipsy file IN, its groups compared with
# fofref's (the reference, computed once per input and options): the .grp files with -m 1
# and with -m 20 must be identical, and groups -v must report what the reference says.
#   agree IN "TIPSY2BIN OPTIONS" "KDBUILD OPTIONS" "FOFLINK OPTIONS" [MODE]
# The linking options (-l or -b, --no-periodic) are passed to fofref too, with the
# tipsy2bin options (types, --no-periodic). MODE: pipe (default), files (every stage reads a
# file and writes one with -o), or zpipe (every stage compresses its output, -z).
agree() {
    local in=$1 t=$2 k=$3 l=$4 mode=${5:-pipe} refopts=$2 key w skip=0
    for w in $l; do
        if [ $skip = 1 ]; then skip=0; continue; fi
        case $w in --method=*) ;; -j) skip=1 ;; *) refopts="$refopts $w" ;; esac
    done
    # fofref links every type together: so does foflink with --link-types=all (a stream with
    # dark matter and gas or stars is otherwise linked as a hydro run, foflink(1))
    [[ " $l " == *" --link-types="* ]] || l="$l --link-types=all"
    key=$(printf '%s|%s' "$in" "$refopts" | md5sum | cut -c1-12)
    if [ ! -f "ref-$key.m1" ]; then
        local refin=$in
        # foflink --no-periodic on a periodic stream: the positions are the wrapped ones
        # of the stream, so the reference reads those (fofref --no-periodic on a tipsy
        # file would not wrap them)
        if [[ " $l " == *" --no-periodic "* && " $t " != *" --no-periodic "* ]]; then
            tipsy2bin $t -o "ref-$key.bin" "$in"
            refin=ref-$key.bin
        fi
        fofref $refopts -m 1 -o "ref-$key.m1" "$refin"
        fofref $refopts -m 20 -o "ref-$key.m20" "$refin"
    fi
    echo "agree $in: tipsy2bin $t | kdbuild $k | foflink $l ($mode)"
    case $mode in
    pipe) tipsy2bin $t "$in" | kdbuild $k | foflink $l >linked.bin ;;
    zpipe) tipsy2bin -z $t "$in" | kdbuild --compress=1 $k | foflink --compress=9 $l >linked.bin
        [ "$(fofdump linked.bin | awk '$NF != "zlib"' | wc -l)" -eq 1 ] ;; # only the header line
    files) tipsy2bin $t -o stage1.bin "$in"
        kdbuild $k -o stage2.bin stage1.bin
        foflink $l -o linked.bin stage2.bin ;;
    esac
    groups -m 1 --format=grp -o tc.m1 linked.bin
    cmp tc.m1 "ref-$key.m1"
    groups -v -m 20 --format=grp linked.bin >tc.m20 2>summary.txt
    cmp tc.m20 "ref-$key.m20"
    # the summary line, from the reference alone
    local n want
    n=$(fofdump -c SNAP linked.bin | awk '$1 == "n" { print $2 }')
    want=$(awk -v n="$n" 'FNR == 1 { next } FILENAME ~ /m1$/ { if ($1 > nf) nf = $1; next }
        { if ($1 > k) k = $1; if ($1 == 1) big++; if ($1 > 0) g++ }
        END { printf "groups: %d groups found, %d kept (at least 20 members), largest %d, %.1f%% of %d particles grouped",
              nf, k, big, n ? 100 * g / n : 0, n }' "ref-$key.m1" "ref-$key.m20")
    echo "summary: $(cat summary.txt)"
    echo "wanted:  $want (...)"
    [[ "$(cat summary.txt)" =~ ^"$want"\ \([0-9]+\.[0-9]+\ s\)$ ]]
}

# The masses of a standard tipsy FILE in file order, one a line (%.9g: exact).
tipsy_masses() {
    perl -e '
        open(my $h, "<:raw", $ARGV[0]) or die; local $/; my $d = <$h>;
        my ($ng, $nd, $ns) = unpack("N3", substr($d, 16, 12));
        my $off = 32;
        for my $t ([$ng, 48], [$nd, 36], [$ns, 44]) {
            for (1 .. $t->[0]) { printf "%.9g\n", unpack("f>", substr($d, $off, 4)); $off += $t->[1] }
        }' "$1"
}

# halostats on a grouped stream: its n and mass columns against the counts and mass sums
# of the reference .grp REF with the masses of tipsy file IN (relative 1e-8: the printed
# %.9g and a different order of summation).
#   halostats_agree GROUPED.bin REF IN
halostats_agree() {
    # the columns by name, from the last '#' line (the names); level 0 only, if levels are given
    halostats "$1" | awk '/^#/ { names = $0; next }
        !cols { n = split(names, N, " "); for (k = 2; k <= n; k++) C[N[k]] = k - 1; cols = 1
                if (!("id" in C) || !("n" in C) || !("mass" in C)) { print "no id, n, mass columns"; exit 1 } }
        !("level" in C) || $C["level"] == 0 { print $C["id"], $C["n"], $C["mass"] }' >hs.txt
    tipsy_masses "$3" >masses.txt
    awk 'FNR == NR { m[FNR - 1] = $1; next } FNR == 1 { next }
         $1 > 0 { n[$1]++; s[$1] += m[FNR - 2]; if ($1 > ng) ng = $1 }
         END { for (g = 1; g <= ng; g++) printf "%d %d %.17g\n", g, n[g], s[g] }' masses.txt "$2" >want.txt
    [ "$(wc -l <want.txt)" -eq "$(wc -l <hs.txt)" ]
    paste -d ' ' hs.txt want.txt | awk '{
        d = $3 - $6; if (d < 0) d = -d
        if ($1 != $4 || $2 != $5 || d > 1e-8 * $6) { print "halostats: " $0; bad = 1 }
    } END { exit bad }'
}

# A clustered box: 45 clusters (sizes 2 to ~300, gaussian, some straddling the faces and a
# corner of the periodic box) in a uniform background, mixed types so the file order
# (gas, dark, star) shuffles the generation order, varied masses. ascii2tipsy text.
clustered() {
    awk -v seed="${1:-7}" "$RND_AWK"'function g() { return sqrt(-2 * log(1 - rnd())) * cos(6.283185307179586 * rnd()) }
        function w(x) { return x - int(x + 1.5) + 1 }
        BEGIN {
            S = mix(seed); split("g d s", T, " ")
            for (c = 0; c < 45; c++) {
                cx = rnd() - 0.5; cy = rnd() - 0.5; cz = rnd() - 0.5
                if (c == 0) cx = -0.5; if (c == 1) cy = 0.4999; if (c == 2) { cx = 0.5; cy = -0.5; cz = 0.5 }
                size = 2 + int(300 * rnd() ^ 3); s = 0.002 + 0.006 * rnd()
                for (k = 0; k < size; k++)
                    printf "%s %.9g %.9g %.9g %.6g %.6g %.6g %.6g\n", T[1 + int(3 * rnd())], w(cx + s * g()),
                        w(cy + s * g()), w(cz + s * g()), g(), g(), g(), 0.5 + rnd()
            }
            for (k = 0; k < 1500; k++)
                printf "%s %.9g %.9g %.9g 0 0 0 %.6g\n", T[1 + int(3 * rnd())], rnd() - 0.5, rnd() - 0.5, rnd() - 0.5, 1 + rnd()
        }'
}

@test "fofref itself: hand-checked groups, numbering, periodic wrap, types, stream input, grid = all pairs" {
    # a chain of three (0.05 apart) across the x boundary, a pair, two singles;
    # l = 0.06: types gas, dark, star interleave so IDs follow file order (gas, dark, star)
    ascii2tipsy -o hand.std <<'EOF'
d 0.47 0 0
s -0.48 0 0
d 0.2 0.2 0.2
g 0.42 0 0
d 0.2 0.25 0.2
s -0.3 -0.3 -0.3
EOF
    # file order: g(0.42) d(0.47) d(0.2,0.2) d(0.2,0.25) s(-0.48) s(-0.3)
    run fofref -l 0.06 -m 1 hand.std
    [ "$output" = "$(printf '%s\n' 6 1 1 2 2 1 3)" ]
    run fofref -l 0.06 -m 3 hand.std
    [ "$output" = "$(printf '%s\n' 6 1 1 0 0 1 0)" ]
    # not periodic: the chain breaks at the boundary; ties by lowest ID
    run fofref -l 0.06 -m 1 --no-periodic hand.std
    [ "$output" = "$(printf '%s\n' 6 1 1 2 2 3 4)" ]
    # a type selection: absent particles are 0, IDs stay the file's
    run fofref -l 0.06 -m 1 -t dark,star hand.std
    [ "$output" = "$(printf '%s\n' 6 0 1 2 2 1 3)" ]
    # -b: l = b / n^(1/3) = 0.06 for b = 0.06 * 6^(1/3)
    run fofref -b 0.10902723556992836 -m 1 hand.std
    [ "$output" = "$(printf '%s\n' 6 1 1 2 2 1 3)" ]
    # a stream (any order) gives the same as the tipsy file
    tipsy2bin -o hand.bin hand.std
    kdbuild -s 2 -o hand.tree hand.bin
    [ "$(fofref -l 0.06 -m 1 hand.tree)" = "$(fofref -l 0.06 -m 1 hand.std)" ]
    # both methods, on clustered data, periodic and not
    clustered 3 | ascii2tipsy -o c.std
    fofref --method=check -b 0.2 -m 1 -o check.grp c.std
    fofref --method=all -b 0.2 -m 1 -o all.grp c.std
    cmp check.grp all.grp
    [ "$(tail -n +2 all.grp | sort -n | tail -1)" -gt 100 ]
    fofref --method=check --no-periodic -l 0.02 -m 1 -j 1 -o check.grp c.std
    # usage errors
    run -2 fofref -l 0.6 -m 1 hand.std
    [ "$output" = "fofref: hand.std: linking length 0.6 is larger than half the box" ]
    run -2 fofref -l 0.1 -b 0.2 hand.std
}

@test "pairs one linking length apart are not friends, one ulp closer they are, across the boundary too" {
    # l = 0.078125 = 5/64. Each pair is far (> 0.15) from every other particle. Coordinates are
    # exact binary32 values; the differences the predicate takes are checked below.
    cat >edges.txt <<'EOF'
d 0.25 0.25 0.25            # 0  x: exactly l                         apart
d 0.328125 0.25 0.25        # 1
d 0.25 0 0.25               # 2  x: l - 2^-25                         friends
d 0.32812497 0 0.25         # 3
d 0 0.25 -0.25              # 4  y: exactly l                         apart
d 0 0.328125 -0.25          # 5
d -0.25 0.25 0              # 6  y: l - 2^-25                         friends
d -0.25 0.32812497 0        # 7
d -0.25 -0.25 0.25          # 8  z: exactly l                         apart
d -0.25 -0.25 0.328125      # 9
d 0.25 -0.25 0.25           # 10 z: l - 2^-25                         friends
d 0.25 -0.25 0.32812497     # 11
d 0.25 0.25 -0.25           # 12 (3/64, 4/64, 0): r2 = 25/4096 = l2  apart
d 0.296875 0.3125 -0.25     # 13
d -0.25 0.25 0.25           # 14 (3/64, 4/64 - 2^-25, 0)              friends
d -0.203125 0.31249997 0.25 # 15
d -0.5 0 0                  # 16 x across the boundary: exactly l     apart
d 0.421875 0 0              # 17
d -0.5 -0.25 0              # 18 x across: l - 2^-24                  friends
d 0.42187506 -0.25 0        # 19
d -0.5 0.25 -0.125          # 20 x across: x moved by 2^-25, but the difference rounds
d 0.42187503 0.25 -0.125    # 21    back to 0.921875: exactly l      apart
d -0.484375 -0.484375 -0.25 # 22 x and y across, (3/64, 4/64, 0)     apart
d 0.46875 0.453125 -0.25    # 23
d -0.484375 -0.484375 0.25  # 24 x and y across, (3/64, 4/64 - 2^-24) friends
d 0.46875 0.45312506 0.25   # 25
d 0 -0.25 -0.5              # 26 z across: exactly l                  apart
d 0 -0.25 0.421875          # 27
d 0.25 0 -0.5               # 28 z across: l - 2^-24                  friends
d 0.25 0 0.42187506         # 29
d -0.5 0.375 0.375          # 30 the two faces: x = -0.5 and the largest float below 0.5
d 0.49999997 0.375 0.375    # 31
d 0.5 -0.375 0.375          # 32 x = 0.5 wraps to -0.5
d 0.49999997 -0.375 0.375   # 33
d -0.375 -0.5 -0.375        # 34 y faces
d -0.375 0.49999997 -0.375  # 35
d -0.5 -0.5 -0.5            # 36 opposite corners
d 0.49999997 0.49999997 0.49999997 # 37
d 0.125 0.125 0.125         # 38 alone
EOF
    ascii2tipsy -o edges.std edges.txt
    # the coordinates are what they say (ascii2tipsy stores the nearest float; %.9g prints it)
    tipsy2bin -o edges.bin edges.std
    [ "$(fofdump -c POS edges.bin | sed -n '3p;20p;25p;31p;33p')" = "$(printf '%s\n' '0.25 0 0.25' \
        '0.42187506 -0.25 0' '-0.484375 -0.484375 0.25' '-0.5 0.375 0.375' '-0.5 -0.375 0.375')" ]
    # the differences the predicate forms, d = xj - xi in binary32, are exact except for
    # pair 20-21 (rounds back to 59/64) and the faces (round to 1)
    perl -e '
        sub f { unpack("f", pack("f", $_[0])) }
        my @p = map { [ split ] } grep { /\S/ } map { s/#.*//r } <STDIN>;
        sub d { my ($i, $j, $k) = @_; return f($p[$j][$k + 1]) - f($p[$i][$k + 1]) }
        for ([0,1,0], [2,3,0], [4,5,1], [6,7,1], [8,9,2], [10,11,2], [12,13,0], [12,13,1], [14,15,1], [16,17,0],
             [18,19,0], [22,23,0], [22,23,1], [24,25,1], [26,27,2], [28,29,2]) {
            my $d = d(@$_); f($d) == $d or die "pair @$_: $d is not a float\n";
        }
        f(d(20, 21, 0)) == 0.921875 or die "20-21 does not round to 0.921875\n";
        d(20, 21, 0) > 0.921875 or die "20-21 is not closer\n";
        f(d(30, 31, 0)) == 1 or die "30-31 does not round to 1\n";' <edges.txt
    # by hand (-m 2): the eleven friendly pairs, numbered by their lowest ID; the rest 0
    want=$(printf '%s\n' 39 0 0 1 1 0 0 2 2 0 0 3 3 0 0 4 4 0 0 5 5 0 0 0 0 6 6 0 0 7 7 8 8 9 9 10 10 11 11 0)
    [ "$(fofref -l 0.078125 -m 2 edges.std)" = "$want" ]
    for k in "-s 2" "-s 16" "-s 33"; do
        for m in tree brute; do
            run --separate-stderr bash -c "tipsy2bin edges.std | kdbuild $k | foflink -l 0.078125 --method=$m | groups -m 2 --format=grp"
            [ "$status" -eq 0 ]
            [ "$output" = "$want" ] || { echo "kdbuild $k, --method=$m: $output"; return 1; }
        done
    done
    agree edges.std "" "-s 2" "-l 0.078125"
    agree edges.std "" "" "-l 0.078125 -j 1"
    # not periodic: the pairs across the boundary are far apart, the faces too; 0.5 is not
    # wrapped, so 32 and 33 (0.49999997) are friends
    want=$(printf '%s\n' 39 0 0 1 1 0 0 2 2 0 0 3 3 0 0 4 4 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 5 5 0 0 0 0 0)
    [ "$(fofref --no-periodic -l 0.078125 -m 2 edges.std)" = "$want" ]
    agree edges.std "--no-periodic" "-s 2" "-l 0.078125"
    agree edges.std "" "-s 3" "-l 0.078125 --no-periodic"
}

@test "a lattice at exactly the linking length: no pair linked; at the next float up: one group" {
    # 16^3 particles at (i/16 - 1/2, ...): every neighbour separation, wrapped or not, is
    # exactly 1/16 in binary32
    awk 'BEGIN { for (i = 0; i < 16; i++) for (j = 0; j < 16; j++) for (k = 0; k < 16; k++)
        printf "d %.9g %.9g %.9g\n", i / 16 - 0.5, j / 16 - 0.5, k / 16 - 0.5 }' | ascii2tipsy -o lattice.std
    tipsy2bin lattice.std | kdbuild | foflink -l 0.0625 | groups -v -m 2 --format=grp >none.grp 2>sum.txt
    grep -q '^groups: 4096 groups found, 0 kept' sum.txt
    [ "$(sort -u none.grp | tr '\n' ' ')" = "0 4096 " ]
    # 0.0625000075 rounds to 1/16 + 2^-27, the next float
    tipsy2bin lattice.std | kdbuild -s 5 | foflink -l 0.0625000075 | groups -v -m 2 --format=grp >one.grp 2>sum.txt
    grep -q '^groups: 1 groups found, 1 kept (at least 2 members), largest 4096' sum.txt
    agree lattice.std "" "" "-l 0.0625"
    agree lattice.std "" "-s 33" "-l 0.0625000075"
    # b = 1: l = 1/16 as well (the mean spacing), both sides computing it the same way
    agree lattice.std "" "-s 2" "-b 1"
    # isolated: the faces do not link, still one group at the next float
    agree lattice.std "--no-periodic" "" "-l 0.0625000075"
}

@test "clustered data: every leaf size, brute force, one thread, compressed stages, files and pipes" {
    clustered 11 | ascii2tipsy -o c.std
    [ "$(stat -c %s c.std)" -gt 100000 ]
    agree c.std "" "" "-b 0.2"
    agree c.std "" "-s 2" "-b 0.2 -j 1"
    agree c.std "" "-s 33" "-b 0.2" files
    agree c.std "" "-s 16" "-b 0.2 --method=brute" zpipe
    agree c.std "" "-s 7" "-l 0.02"
    agree c.std "" "-s 2" "-l 0.003 -j 1"
    # isolated, and a type selection
    agree c.std "--no-periodic" "-s 33" "-b 0.2"
    agree c.std "" "" "-b 0.2 --no-periodic"
    agree c.std "-t dark,star" "-s 2" "-b 0.2"
    agree c.std "-t gas" "" "-l 0.01 --method=brute -j 1"
    # halostats: n and mass by group, from the reference
    tipsy2bin c.std | kdbuild | foflink -b 0.2 --link-types=all | groups -m 20 >grouped.bin
    fofref -b 0.2 -m 20 -o ref.grp c.std
    halostats_agree grouped.bin ref.grp c.std
    [ "$(awk '!/^#/' hs.txt | wc -l)" -gt 20 ]
}

@test "uniform data, duplicated positions, one big group" {
    awk "$RND_AWK"'BEGIN { S = mix(5); for (i = 0; i < 4000; i++) printf "d %.9g %.9g %.9g\n", rnd() - 0.5, rnd() - 0.5, rnd() - 0.5 }' |
        ascii2tipsy -o uniform.std
    agree uniform.std "" "" "-b 0.2"
    agree uniform.std "" "-s 2" "-b 0.9 -j 1"
    agree uniform.std "" "-s 33" "-b 0.9" files
    # 60 positions, each 1 to 9 times over (on faces and corners too), far apart
    awk "$RND_AWK"'BEGIN { S = mix(8); split("-0.5 0.49999997 -0.5|0.5 0.5 0.5|0 -0.5 0", E, "|")
        for (p = 0; p < 60; p++) {
            x = rnd() - 0.5; y = rnd() - 0.5; z = rnd() - 0.5
            if (p < 3) { split(E[p + 1], e, " "); x = e[1]; y = e[2]; z = e[3] }
            for (k = 0; k < 1 + p % 9; k++) printf "%s %.9g %.9g %.9g\n", (p + k) % 2 ? "d" : "s", x, y, z
        } }' | ascii2tipsy -o dup.std
    agree dup.std "" "" "-l 1e-7"
    agree dup.std "" "-s 2" "-l 0.05 --method=brute"
    agree dup.std "" "-s 33" "-l 0.05 -j 1"
    # 59 groups: (-0.5, 0.49999997, -0.5) and (0.5, 0.5, 0.5), which wraps to (-0.5, -0.5, -0.5),
    # are friends: 0.49999997 - -0.5 rounds to 1, which wraps to 0
    [ "$(fofref -l 1e-7 -m 1 dup.std | tail -n +2 | sort -n | tail -1)" -eq 59 ]
    # one group of 3000: a random walk of steps below l, wrapping around the box twice
    awk "$RND_AWK"'BEGIN { S = mix(2); x = -0.5; y = 0.3; z = 0
        for (i = 0; i < 3000; i++) {
            x += 0.0006 + 0.0004 * rnd(); y += 0.0008 * (rnd() - 0.5); z += 0.0008 * (rnd() - 0.5)
            printf "d %.9g %.9g %.9g\n", x - int(x + 1.5) + 1, y, z
        } }' | ascii2tipsy -o walk.std
    fofref -l 0.002 -m 20 -o walk.grp walk.std
    [ "$(sort -u walk.grp | tr '\n' ' ')" = "1 3000 " ]
    agree walk.std "" "" "-l 0.002"
    agree walk.std "" "-s 2" "-l 0.002 --method=brute -j 1"
    agree walk.std "" "-s 33" "-l 0.002 --no-periodic"
    # and one dense ball of 1500
    awk "$RND_AWK"'BEGIN { S = mix(4); for (i = 0; i < 1500; i++) printf "d %.9g %.9g %.9g\n", 0.49 + 0.02 * rnd(), 0.02 * rnd(), 0.02 * rnd() }' |
        ascii2tipsy -o ball.std
    agree ball.std "" "" "-l 0.1"
    agree ball.std "" "-s 2" "-l 0.1 --method=brute"
}

@test "a box of side 3.7 at -1.1, particles on a plane, far from the origin; leaves past the row kernel (65, 100)" {
    clustered 5 | awk '{ for (k = 2; k <= 4; k++) $k = sprintf("%.9g", ($k + 0.5) * 3.7 - 1.1); print }' |
        ascii2tipsy -o box.std
    agree box.std "--box=3.7 --origin=-1.1" "" "-b 0.2"
    agree box.std "--box=3.7 --origin=-1.1" "-s 65" "-b 0.2"
    agree box.std "--box=3.7 --origin=-1.1" "-s 100" "-l 0.1 -j 1"
    agree box.std "--box=3.7 --origin=-1.1" "-s 2" "-l 1.85"
    # every particle at z = 0.125: boxes of zero thickness
    clustered 6 | awk '{ $4 = 0.125; print }' | ascii2tipsy -o plane.std
    agree plane.std "" "" "-b 0.2"
    agree plane.std "" "-s 100" "-b 0.1"
    # isolated, a thousand units out: coordinates 6e-5 apart at best, many exact ties
    clustered 7 | awk '{ for (k = 2; k <= 4; k++) $k = sprintf("%.9g", 1000 + $k); print }' | ascii2tipsy -o far.std
    agree far.std "--no-periodic" "" "-l 0.0050001"
    agree far.std "--no-periodic" "-s 65" "-l 0.00006103515625"
    agree far.std "--no-periodic" "-s 2" "-l 0.01 --method=brute"
}

@test "no particle, one particle, a selection that keeps none" {
    : | ascii2tipsy -o zero.std
    [ "$(fofref -m 1 zero.std)" = 0 ]
    agree zero.std "" "" "-b 0.2"
    agree zero.std "" "-s 2" "-l 0.1 --method=brute" files
    printf 'd 0.49999997 -0.5 0\n' | ascii2tipsy -o one.std
    [ "$(fofref -m 1 one.std | tr '\n' ' ')" = "1 1 " ]
    agree one.std "" "" "-b 0.2"
    agree one.std "" "-s 33" "-l 0.5 -j 1" zpipe
    printf 'd 0.1 0.1 0.1\nd 0.1 0.1 0.1\ns 0 0 0\n' | ascii2tipsy -o three.std
    agree three.std "-t gas" "" "-b 0.2"
    [ "$(fofref -t gas -m 1 three.std | tr '\n' ' ')" = "3 0 0 0 " ]
}

# The real snapshots, at the linking lengths ../shared/data/README.md suggests.

@test "snapshot skid-dark at b = 0.2" {
    need_snapshot skid-dark
    agree "$DATA/skid-dark.std" "" "" "-b 0.2"
    agree "$DATA/skid-dark.std" "" "-s 2" "-b 0.2 -j 1" zpipe
    agree "$DATA/skid-dark.std" "" "-s 33" "-b 0.2" files
    [ "$(head -2 ref-*.m20 | tail -1)" -gt 0 ]
}

@test "snapshot lambs-30k at b = 0.2" {
    need_snapshot lambs-30k
    agree "$DATA/lambs-30k.std" "" "" "-b 0.2"
    agree "$DATA/lambs-30k.std" "" "-s 33" "-b 0.2 -j 1"
    tipsy2bin "$DATA/lambs-30k.std" | kdbuild -s 2 | foflink -b 0.2 | groups -m 20 >grouped.bin
    halostats_agree grouped.bin ref-*.m20 "$DATA/lambs-30k.std"
}

@test "snapshot test4-zoom at b = 0.2 (five particle masses)" {
    need_snapshot test4-zoom
    agree "$DATA/test4-zoom.std" "" "" "-b 0.2" files
    agree "$DATA/test4-zoom.std" "" "-s 2" "-b 0.2"
    agree "$DATA/test4-zoom.std" "" "-s 33" "-b 0.2 -j 1" zpipe
    # the 16K-particle halo
    [ "$(grep -cx 1 ref-*.m20)" -gt 10000 ]
    tipsy2bin "$DATA/test4-zoom.std" | kdbuild | foflink -b 0.2 | groups -m 20 >grouped.bin
    halostats_agree grouped.bin ref-*.m20 "$DATA/test4-zoom.std"
}

@test "snapshot cube300-ics at l = 0.02 (particles outside the box, wrapped)" {
    need_snapshot cube300-ics
    agree "$DATA/cube300-ics.std" "" "" "-l 0.02"
    agree "$DATA/cube300-ics.std" "" "-s 2" "-l 0.02 -j 1"
    agree "$DATA/cube300-ics.std" "" "-s 33" "-l 0.02" zpipe
}

@test "snapshots run581-dark-star and run99-gas-dark-star, isolated, at l = 0.1" {
    need_snapshot run581-dark-star
    need_snapshot run99-gas-dark-star
    for f in run581-dark-star run99-gas-dark-star; do
        agree "$DATA/$f.std" "--no-periodic" "" "-l 0.1"
        agree "$DATA/$f.std" "--no-periodic" "-s 2" "-l 0.1 --method=brute -j 1" files
        agree "$DATA/$f.std" "--no-periodic" "-s 33" "-l 0.1" zpipe
        agree "$DATA/$f.std" "--no-periodic -t star" "" "-l 0.1"
    done
    # the reference's own check on one of them: cell grid against all pairs
    fofref --method=check --no-periodic -l 0.1 -m 1 -o /dev/null "$DATA/run99-gas-dark-star.std"
    tipsy2bin --no-periodic "$DATA/run99-gas-dark-star.std" | kdbuild | foflink -l 0.1 --link-types=all | groups -m 20 >grouped.bin
    fofref --no-periodic -l 0.1 -m 20 -o ref.grp "$DATA/run99-gas-dark-star.std"
    halostats_agree grouped.bin ref.grp "$DATA/run99-gas-dark-star.std"
}

@test "snapshot onestar-pad1, isolated, at l = 0.05" {
    need_snapshot onestar-pad1
    agree "$DATA/onestar-pad1.std" "--no-periodic" "" "-l 0.05"
    agree "$DATA/onestar-pad1.std" "--no-periodic" "-s 2" "-l 0.05 --method=brute" zpipe
    agree "$DATA/onestar-pad1.std" "--no-periodic" "-s 33" "-l 0.05 -j 1" files
}

@test "a mock universe (mkuniverse -n 50000 --seed 5) at b = 0.2" {
    mkuniverse -n 50000 --seed 5 -o mock.std
    agree mock.std "" "" "-b 0.2"
    agree mock.std "" "-s 2" "-b 0.2 -j 1" files
    agree mock.std "" "-s 33" "-b 0.2" zpipe
    tipsy2bin mock.std | kdbuild | foflink -b 0.2 | groups -m 20 >grouped.bin
    halostats_agree grouped.bin ref-*.m20 mock.std
    [ "$(wc -l <hs.txt)" -gt 50 ]
}
