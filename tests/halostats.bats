#!/usr/bin/env bats
# halostats.bats - halostats(1): options, header, text/CSV/stream outputs, hand values, levels, units, awk references, every bad input.

bats_require_minimum_version 1.5.0
load groups_helpers

DATA=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}

# Runs halostats ARGS... expecting status 1, exactly MESSAGE on stderr and nothing
# on stdout (nothing is written before the whole input is read).
hs_fails() {
    fails halostats "$@"
    [ -z "$output" ]
}

# Runs halostats ARGS... expecting a usage error (status 2) whose first line is MESSAGE.
hs_usage() {
    local msg=$1
    shift
    run -2 halostats "$@"
    echo "$output"
    [ "${lines[0]}" = "$msg" ]
    [ "${lines[1]}" = "Try 'halostats --help' for more information." ]
}

# Prints the columns NAME... (by the names of the last '#' line) of the rows of a
# halostats text table on stdin, space-separated.
cols() {
    awk -v want="$*" 'BEGIN { n = split(want, w, " ") }
        /^#/ { h = $0; next }
        !done { sub(/^# */, "", h); m = split(h, names, " "); for (k = 1; k <= m; k++) at[names[k]] = k
                for (k = 1; k <= n; k++) if (!(w[k] in at)) { print "no column " w[k] > "/dev/stderr"; exit 1 }
                done = 1 }
        { line = ""; for (k = 1; k <= n; k++) line = line (k > 1 ? " " : "") $(at[w[k]]); print line }'
}

OLD="id n mass x y z vx vy vz sigma_v rmax"
CENTRE="mbp_id phi_mbp xc yc zc rc_max r_half vmax r_vmax lambda"

# The nine-particle stream with a LINK chunk, through groups -m 2.
nine_grouped() {
    nine | sed 's/^sink/text LINK l 0.1 b 0.2\nsink/' | mkstream | groups -m 2
}

# The nine particles with a GID (and the GRPS given) but no SINK, for halostats alone.
nine_gid() {
    nine | sed "s/^sink .*/gid $1/" | { cat; [ -z "$2" ] || echo "text GRPS $2"; } | mkstream "${@:3}"
}

# nine_grouped with a level 1 (as hierarchical groups writes it): the pairs {ID 2, ID 7}
# inside group 1 and {ID 1, ID 11} (group 2 itself) are groups 2 and 1 of level 1.
GID1="0 1 2 0 0 0 0 2 0 0 0 1 0"
nine_levels() {
    nine_grouped >base.fof
    addchunk "$@" base.fof "GID@1:u4:$GID1" 'GPAR@1:u4:0 2 1' 'GRPS@1:text:ngroups 2;minsize 2'
}

# By hand: group 1 = masses 1, 1, 2 at (1/8, 1/8, 1/8), (1/4, 1/8, 1/8), (1/8, 1/4, 1/8),
# all moving at (1, 0, 0): centre (5/32, 3/16, 1/8), farthest member (1/4, 1/8, 1/8) at
# sqrt(0.0126953125); groups 2 and 3: unit pairs 1/8 apart along z.
NINE_ROWS="1 3 4 0.15625 0.1875 0.125 1 0 0 0 0.112673477
2 2 2 0.75 0.25 0.5625 0 0 1 0 0.0625
3 2 2 0.5 0.5 0.5625 0 1 0 0 0.0625"
# With --softening=0.125: in group 1 the member at (1/8, 1/8, 1/8) (ID 7) has phi =
# -(1 + 2) / sqrt(2/64) = -16.97 against -14.90 and -10.28 for the others; radii 0, 1/8,
# 1/8: r_half 1/8 (mass 4 >= 2 there), vmax sqrt(4 / (1/8)), no spin (one velocity). A
# pair: phi -1 / sqrt(2/64) for both, the lower ID wins (IDs 1 and 3: the members are
# summed in ID order, whatever the stream's), r_half 0 (it holds half the mass), vmax
# sqrt(2 / (1/8)) = 4.
NINE_CENTRES="7 -16.9705627 0.125 0.125 0.125 0.125 0.125 5.65685425 0.125 0
1 -5.65685425 0.75 0.25 0.625 0.125 0 4 0.125 0
3 -5.65685425 0.5 0.5 0.5 0.125 0 4 0.125 0"

@test "--help (with every option), --version, an unknown option" {
    standard_options halostats
    run halostats --help
    for o in --centre=mbp --softening --theta --exact-max --device --length-unit --mass-unit --velocity-unit \
        --length-name --mass-name --velocity-name --G= --format --csv --compress; do
        [[ "$output" == *"$o"* ]] || { echo "no $o"; return 1; }
    done
}

@test "usage errors: one message, a pointer to --help, status 2" {
    hs_usage "halostats: option -z applies to --format=stream only" -z
    hs_usage "halostats: unknown option '-q'" -q
    hs_usage "halostats: too many input files (one at most, or '-' for stdin)" a b
    hs_usage "halostats: option --centre needs 'mbp' or 'com', not 'middle'" --centre=middle
    hs_usage "halostats: option --format needs 'text', 'csv', 'stream', 'hdf5' or 'grp', not 'json'" --format=json
    hs_usage "halostats: option --theta: 0 is out of range (it must be above 0)" --theta=0
    hs_usage "halostats: option --theta: 1.5 is out of range (0, 1]" --theta=1.5
    hs_usage "halostats: option --softening: 0 is out of range (it must be above 0)" --softening=0
    hs_usage "halostats: option --softening: -1 is out of range (it must be above 0)" --softening=-1
    hs_usage "halostats: option --softening needs a number, not 'small'" --softening=small
    hs_usage "halostats: option --exact-max: -1 is out of range [0, 9223372036854775807]" --exact-max=-1
    hs_usage "halostats: option --length-unit: 0 is out of range (it must be above 0)" --length-unit=0
    hs_usage "halostats: option --mass-unit needs a number, not '1e10Msun'" --mass-unit=1e10Msun
    hs_usage "halostats: option --velocity-unit: -0 is out of range (it must be above 0)" --velocity-unit=-0
    hs_usage "halostats: option --G: 0 is out of range (it must be above 0)" --G=0
    hs_usage "halostats: option --length-name needs a name without spaces or control characters, not 'k pc'" \
        --length-name="k pc"
    hs_usage "halostats: option --mass-name needs a name of 1 to 32 characters, not ''" --mass-name=
    hs_usage "halostats: option '--theta' needs a value" --theta
    hs_usage "halostats: option --device takes auto, cpu, gpu or gpu:N (the N-th GPU), not 'tpu'" --device=tpu
}

@test "one line per group with the hand-computed values, sorted by id" {
    nine_grouped >in.fof
    run --separate-stderr halostats --softening=0.125 --G=1 in.fof
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    [ "$(cols level host <<<"$output" | sort -u)" = "0 0" ]
    [ "$(cols $OLD <<<"$output")" = "$NINE_ROWS" ]
    [ "$(cols $CENTRE <<<"$output")" = "$NINE_CENTRES" ]
}

@test "a group of one member: its potential phi_mbp is 0, never -0 (text and CSV)" {
    nine | sed 's/^sink/text LINK l 0.1 b 0.2\nsink/' | mkstream | groups -m 1 >one.fof
    halostats --G=1 one.fof >halos.txt
    local col
    col=$(grep '^#' halos.txt | tail -n 1 | tr ' ' '\n' | grep -n '^phi_mbp$' | cut -d: -f1)
    col=$((col - 1)) # the '#' of the column line
    # groups 4 and 5 have one member each; every phi_mbp is a number, none "-0"
    [ "$(grep -v '^#' halos.txt | awk -v c="$col" '$4 == 1 { print $c }' | sort -u)" = 0 ]
    [ -z "$(grep -v '^#' halos.txt | awk -v c="$col" '$c == "-0"')" ]
    [ -z "$(halostats --G=1 --format=csv one.fof | grep -e ',-0,' -e ',-0$')" ]
}

@test "the header names every column with its unit and definition, and the run's parameters" {
    nine_grouped | halostats -o halos.txt
    grep -qx "# box 1 origin 0 periodic 1 (the stream's length unit)" halos.txt
    grep -qx "# levels 1" halos.txt
    grep -qx "# level 0: linking length l 0.1 (b 0.2, psi 0; psi 0 is 3D linking), 3 groups, min size 2" halos.txt
    grep -q "^# input stdin: source 'mkstream -', 9 particles of 13, time 1$" halos.txt
    grep -qx "# units: length length, mass mass, velocity velocity; one stream unit is 1, 1, 1 of them" halos.txt
    # a stream without units and no --G: no G, the columns that need one nan (G = 1 is not assumed)
    grep -qx "# G: none, the stream has no units: phi_mbp, vmax and lambda are nan (give --G=VALUE)" halos.txt
    [ "$(grep -v '^#' halos.txt | awk '{ print $18, $21, $23 }' | sort -u)" = "nan nan nan" ]
    grep -qx "# physical stream (no comoving key): lengths and velocities as stored, no Hubble flow" halos.txt
    grep -Eq "^#  6 x +length +physical: centre of mass x" halos.txt
    grep -Eq "^#  4 n +1 +member particles" halos.txt
    nine_grouped | halostats --G=1 | grep -qx "# G = 1 length velocity^2 / mass (given)"
    # default softening: 0.05 box / n^(1/3) for the 9 particles
    eps=$(awk 'BEGIN { printf "%.10g", 0.05 / 9 ^ (1 / 3) }')
    grep -q "^#   eps $eps length (0.05 box / n^(1/3)); exact sums for groups of up to 2000 members" halos.txt
    grep -q "Barnes-Hut tree (theta 0.7, quadrupoles)" halos.txt
    grep -q "within 0.0048 |phi| of its least" halos.txt
    grep -q "less than$" halos.txt # the periodic assumption
    for c in "level 1" "host 1" "id 1" "n 1" "mass mass" "x length" "y length" "z length" "vx velocity" \
        "vy velocity" "vz velocity" "sigma_v velocity" "rmax length" "xc length" "yc length" "zc length" \
        "mbp_id 1" "phi_mbp velocity^2" "rc_max length" "r_half length" "vmax velocity" "r_vmax length" "lambda 1"; do
        awk -v n="${c% *}" -v u="${c#* }" '$1 == "#" && $3 == n && $4 == u && NF > 4 { found = 1 } END { exit !found }' \
            halos.txt || { echo "no line for $c"; return 1; }
    done
    grep -q "^# *12 sigma_v .*3D" halos.txt
    grep -q "^# *23 lambda .*Bullock" halos.txt
    [ "$(grep '^#' halos.txt | tail -n 1)" = "# level host id n mass x y z vx vy vz sigma_v rmax xc yc zc mbp_id phi_mbp rc_max r_half vmax r_vmax lambda n_gas n_dark n_star m_gas m_dark m_star n_contam m_contam" ]
    [ "$(grep -v '^#' halos.txt | awk 'NF == 31' | wc -l)" -eq 3 ]
}

@test "--csv and --format=csv: one header row of column names and units, then the same rows comma-separated" {
    nine_grouped >in.fof
    run --separate-stderr halostats --csv in.fof
    [ "$status" -eq 0 ]
    # every column's unit in its name, as the text header gives it
    [ "${lines[0]}" = "level,host,id,n,mass[mass],x[length],y[length],z[length],vx[velocity],vy[velocity],vz[velocity],sigma_v[velocity],rmax[length],xc[length],yc[length],zc[length],mbp_id,phi_mbp[velocity^2],rc_max[length],r_half[length],vmax[velocity],r_vmax[length],lambda,n_gas,n_dark,n_star,m_gas[mass],m_dark[mass],m_star[mass],n_contam,m_contam[mass]" ]
    [ "$(tail -n +2 <<<"$output")" = "$(halostats in.fof | grep -v '^#' | tr ' ' ',')" ]
    [ "$(halostats --format=csv in.fof)" = "$output" ]
}

@test "--centre=com: centred on the centre of mass; the potential columns stay in place, -1 and nan" {
    nine_grouped >in.fof
    halostats --centre=com --G=1 in.fof >com.txt
    grep -qx "# centre: the centre of mass (no potentials: --centre=com)" com.txt
    ! grep -q "Barnes" com.txt
    # the same columns as --centre=mbp, so that every column keeps its number
    [ "$(grep '^#' com.txt | tail -n 1)" = "$(halostats in.fof | grep '^#' | tail -n 1)" ]
    [ "$(cols mbp_id phi_mbp <com.txt | sort -u)" = "-1 nan" ]
    grep -q "^# 17 mbp_id .*-1 with --centre=com" com.txt
    [ "$(cols x y z <com.txt)" = "$(cols xc yc zc <com.txt)" ]
    [ "$(cols rmax <com.txt)" = "$(cols rc_max <com.txt)" ]
    [ "$(cols $OLD <com.txt)" = "$NINE_ROWS" ]
    # group 1 about (5/32, 3/16, 1/8): radii sqrt(5)/32 (mass 1), sqrt(13)/32 (mass 1), sqrt(5)/32
    # (mass 2): r_half sqrt(5)/32 (mass 3 there), vmax = sqrt(3 / (sqrt(5)/32))
    want=$(awk 'BEGIN { r = sqrt(5) / 32; printf "%.9g %.9g %.9g", r, sqrt(3 / r), r }')
    [ "$(cols r_half vmax r_vmax <com.txt | head -n 1)" = "$want" ]
    [ "$(halostats --center=com --G=1 in.fof)" = "$(cat com.txt)" ]
}

@test "-v: a summary per level, the potentials' methods, timings" {
    nine_grouped >in.fof
    run --separate-stderr halostats -v --device=cpu -o out.txt in.fof
    [ "$status" -eq 0 ]
    echo "$stderr"
    [ "${stderr_lines[0]}" = "halostats: device: CPU (as asked)" ]
    [ "${stderr_lines[1]}" = "halostats: level 0: 3 groups holding 7 of 9 particles, largest 3" ]
    [ "${stderr_lines[2]}" = "halostats: level 0: potentials: 3 groups by exact sums, 0 by the tree (0 candidates summed exactly)" ]
    [[ "${stderr_lines[3]}" =~ ^halostats:\ level\ 0:\ [0-9.]+\ s:\ gather\ [0-9.]+\ s,\ potentials\ [0-9.]+\ s\ \(CPU\),\ profiles\ [0-9.]+\ s$ ]]
    [[ "${stderr_lines[4]}" =~ ^halostats:\ 1\ level,\ read\ in\ [0-9.]+\ s,\ [0-9.]+\ s\ in\ all$ ]]
    [ "${#stderr_lines[@]}" -eq 5 ]
    run --separate-stderr halostats -v --device=cpu --exact-max=2 -o out.txt in.fof
    [ "${stderr_lines[2]}" = "halostats: level 0: potentials: 2 groups by exact sums, 1 by the tree (1 candidates summed exactly)" ]
    # without potentials no device is looked for
    run --separate-stderr halostats -v --centre=com --device=gpu -o out.txt in.fof
    [ "$status" -eq 0 ]
    [ "${stderr_lines[0]}" = "halostats: level 0: 3 groups holding 7 of 9 particles, largest 3" ]
}

@test "no groups: the header alone" {
    nine | mkstream | groups -m 4 | halostats >halos.txt
    grep -qx "# level 0: linking length unknown (no LINK chunk), 0 groups, min size 4" halos.txt
    [ "$(grep -cv '^#' halos.txt)" -eq 0 ]
}

@test "without GRPS the groups are 1 to the largest GID, min size unknown" {
    nine_gid "$NINE_GID" "" -o in.fof
    halostats in.fof >halos.txt
    grep -qx "# level 0: linking length unknown (no LINK chunk), 3 groups, min size unknown (no GRPS chunk)" halos.txt
    [ "$(cols $OLD <halos.txt)" = "$NINE_ROWS" ]
}

@test "a group across the periodic boundary: centres wrapped into the box" {
    # box 2 from -1: masses 1 and 3 at x = 0.875 and -0.875 (0.25 apart across the
    # boundary): centre of mass 0.1875 beyond 0.875, wrapped to -0.9375; the light one
    # is the most bound (phi -3 / sqrt(1/16 + 1/16), it feels the heavy one); radii 0
    # and 1/4: r_half 1/4 (mass 1 at 0 is short of 2), vmax sqrt(4 / (1/4));
    # not periodic: 1.75 apart
    printf '%s\n' "box 2" "origin -1" "p 0.875 0 0 0 0 0 1 1 0" "p -0.875 0 0 0 0 0 3 1 1" "sink 0 0" |
        mkstream | groups -m 2 | halostats --softening=0.25 --G=1 >halos.txt
    [ "$(cols n mass x y z rmax <halos.txt)" = "2 4 -0.9375 0 0 0.1875" ]
    [ "$(cols mbp_id xc yc zc rc_max r_half vmax <halos.txt)" = "0 0.875 0 0 0.25 0.25 4" ]
    [ "$(cols phi_mbp <halos.txt)" = "$(awk 'BEGIN { printf "%.9g", -3 / sqrt(0.125) }')" ]
    printf '%s\n' "box 2" "origin -1" "periodic 0" "p 0.875 0 0 0 0 0 1 1 0" "p -0.875 0 0 0 0 0 3 1 1" "sink 0 0" |
        mkstream | groups -m 2 | halostats --softening=0.25 --G=1 >halos.txt
    [ "$(cols n mass x y z rmax <halos.txt)" = "2 4 -0.4375 0 0 1.3125" ]
    [ "$(cols mbp_id xc rc_max phi_mbp <halos.txt)" = "0 0.875 1.75 $(awk 'BEGIN { printf "%.9g", -3 / sqrt(1.75 ^ 2 + 0.0625) }')" ]
}

# An octahedron about (X, Y, Z) in a box of 8: a unit mass at the centre, six on the axes
# at distance 1/4, the four in the xy plane turning at 3/2 about z: the centre is the
# most bound; J = 4 a u, M = 7, R = a: lambda = 4 u / (7 sqrt 2 sqrt(7 G / a)).
octahedron() {
    awk -v X="$1" -v Y="$2" -v Z="$3" -v id="$4" 'BEGIN {
        a = 0.25; u = 1.5
        split("0 0 0 0 0 0|1 0 0 0 1 0|0 1 0 -1 0 0|-1 0 0 0 -1 0|0 -1 0 1 0 0|0 0 1 0 0 0|0 0 -1 0 0 0", p, "|")
        for (k = 1; k <= 7; k++) {
            split(p[k], f, " ")
            x = X + a * f[1]; y = Y + a * f[2]; z = Z + a * f[3]
            if (x >= 8) x -= 8; if (y >= 8) y -= 8; if (z >= 8) z -= 8
            printf "p %s %s %s %s %s 0 1 1 %d\n", x, y, z, u * f[4], u * f[5], id + k - 1
        }
    }'
}

@test "spin: a turning octahedron, whole and across two faces of the box" {
    { echo "box 8"; octahedron 4 4 4 0; octahedron 7.875 0.0625 4 7; echo "sink 0 0 0 0 0 0 0 7 7 7 7 7 7 7"; } |
        mkstream | groups -m 2 >oct.fof
    halostats --softening=0.125 --G=2 oct.fof >halos.txt
    want=$(awk 'BEGIN { printf "%.9g", 4 * 1.5 / (7 * sqrt(2) * sqrt(7 * 2 / 0.25)) }')
    [ "$(cols lambda <halos.txt)" = "$want
$want" ]
    [ "$(cols mbp_id xc yc zc rc_max r_half r_vmax <halos.txt)" = "0 4 4 4 0.25 0.25 0.25
7 7.875 0.0625 4 0.25 0.25 0.25" ]
    # G 2: vmax sqrt(2 * 7 / 0.25), phi -6 * 2 / sqrt(1/16 + 1/64)
    [ "$(cols vmax phi_mbp <halos.txt | sort -u)" = "$(awk 'BEGIN { printf "%.9g %.9g", sqrt(56), -12 / sqrt(0.078125) }')" ]
}

@test "units: factors and names scale every column by its dimension, G follows" {
    nine_grouped >in.fof
    halostats --softening=0.125 --G=1 in.fof >base.txt
    # G = 1 in the stream's units is 1000 * 100^2 / 1e10 in the output's (the stream has no units: G given)
    halostats --softening=0.125 --length-unit=1000 --length-name=kpc/h --mass-unit=1e10 --mass-name=Msun/h \
        --velocity-unit=100 --velocity-name=km/s --G=0.001 in.fof >units.txt
    grep -qx "# units: length kpc/h, mass Msun/h, velocity km/s; one stream unit is 1000, 1e+10, 100 of them" units.txt
    grep -qx "# G = 0.001 kpc/h (km/s)^2 / Msun/h (given)" units.txt
    grep -Eq "^# +18 phi_mbp +\(km/s\)\^2 " units.txt
    grep -Eq "^# +5 mass +Msun/h " units.txt
    grep -q "eps 125 kpc/h (given)" units.txt
    # every column against the base table times its factor (ids and counts and the spin alone)
    paste -d ' ' <(cols $OLD $CENTRE level host <base.txt) <(cols $OLD $CENTRE level host <units.txt) | awk '
        BEGIN { split("1 1 1e10 1000 1000 1000 100 100 100 100 1000 1 1e4 1000 1000 1000 1000 1000 100 1000 1 1 1", f, " ") }
        { n = NF / 2; for (k = 1; k <= n; k++) { want = $k * f[k]; d = $(k + n) - want; if (d < 0) d = -d
              if (d > 1e-8 * (want < 0 ? -want : want) + 1e-12) { print "line " NR " column " k ": " $(k + n) " not " want; bad = 1 } } }
        END { exit bad }'
    # the same G in the stream's units (1, the output's factors 1): the base table; another G: potentials
    # and vmax scale, spin goes as 1/sqrt(G)
    [ "$(halostats --softening=0.125 --length-unit=1 --mass-unit=1 --G=1 in.fof)" = "$(cat base.txt)" ]
    halostats --softening=0.125 --G=4 in.fof >g4.txt
    grep -qx "# G = 4 length velocity^2 / mass (given)" g4.txt
    paste -d ' ' <(cols phi_mbp vmax <base.txt) <(cols phi_mbp vmax <g4.txt) |
        awk 'function off(a, b) { return (a - b) / b > 1e-8 || (b - a) / b > 1e-8 }
             { if (off($3, 4 * $1) || off($4, 2 * $2)) { print; bad = 1 } } END { exit bad }'
    [ "$(cols $OLD mbp_id rc_max r_half r_vmax <g4.txt)" = "$(cols $OLD mbp_id rc_max r_half r_vmax <base.txt)" ]
}

@test "levels: every level's groups, level by level, hosts from GPAR; subhalos of a halo with awk" {
    nine_levels -o lv.fof
    halostats --softening=0.125 lv.fof >halos.txt
    grep -qx "# levels 2: a group of level k lies inside group host of level k-1" halos.txt
    grep -qx "# level 1: linking length unknown (no LINK chunk), 2 groups, min size 2" halos.txt
    [ "$(cols level host id n mass <halos.txt)" = "0 0 1 3 4
0 0 2 2 2
0 0 3 2 2
1 2 1 2 2
1 1 2 2 2" ]
    # level 1's group 1 is level 0's group 2 again: the same properties; group 2 the pair
    # (1/8, 1/8, 1/8) (ID 7) and (1/4, 1/8, 1/8) (ID 2) inside group 1: equal potentials, the lower ID the centre
    [ "$(cols $OLD $CENTRE <halos.txt | sed -n 4p | cut -d ' ' -f 2-)" = "$(cols $OLD $CENTRE <halos.txt | sed -n 2p | cut -d ' ' -f 2-)" ]
    [ "$(cols mbp_id xc yc zc rc_max <halos.txt | sed -n 5p)" = "2 0.25 0.125 0.125 0.125" ]
    # the subhalos of group 1 of level 0
    [ "$(awk '!/^#/ && $1 == 1 && $2 == 1 { print $3 }' halos.txt)" = "2" ]
    # without GPAR, the hosts come from the members: the same table
    addchunk --drop=GPAR lv.fof >nogpar.fof
    halostats --softening=0.125 nogpar.fof >derived.txt
    grep -q "^# level 1: .*, hosts from the members (no GPAR chunk)$" derived.txt
    [ "$(grep -v '^#' derived.txt)" = "$(grep -v '^#' halos.txt)" ]
    # a level of one GID chunk alone (no GRPS): groups 1 to its largest id
    addchunk --drop=GRPS@1 lv.fof >nogrps.fof
    [ "$(halostats --softening=0.125 nogrps.fof | grep -v '^#')" = "$(grep -v '^#' halos.txt)" ]
}

@test "levels: bad GPAR and missing levels are errors" {
    nine_grouped >base.fof
    addchunk base.fof "GID@1:u4:$GID1" 'GPAR@1:u4:0 2' >bad.fof
    hs_fails "halostats: bad.fof: chunk GPAR of level 1 has 2 rows for 2 groups (expected 3)" bad.fof
    addchunk base.fof "GID@1:u4:$GID1" 'GPAR@1:u4:0 4 1' >bad.fof
    hs_fails "halostats: bad.fof: chunk GPAR of level 1 gives group 1 the host 4, beyond the 3 groups of level 0" bad.fof
    addchunk base.fof "GID@2:u4:$GID1" >bad.fof
    hs_fails "halostats: bad.fof: stream has no GID chunk of level 1 (but one of level 2)" bad.fof
    addchunk base.fof 'GPAR@0:u4:0 1 1 1' >bad.fof
    hs_fails "halostats: bad.fof: chunk GPAR has level 0 (parents start at level 1)" bad.fof
    addchunk base.fof "GID@1:u4:$GID1" "GID@1:u4:$GID1" >bad.fof
    hs_fails "halostats: bad.fof: stream has two GID chunks of level 1" bad.fof
    addchunk base.fof 'GID@1:u4:0 1 2' >bad.fof
    hs_fails "halostats: bad.fof: chunk GID has 3 rows for the 13 particles of the source" bad.fof
    addchunk base.fof "GID@1:f8:$GID1" >bad.fof
    hs_fails "halostats: bad.fof: chunk GID holds <f8 x 1, expected <u4 x 1" bad.fof
    addchunk base.fof "GID@64:u4:$GID1" >bad.fof
    hs_fails "halostats: bad.fof: chunk GID has level 64: at most 64 levels (0 to 63) are read" bad.fof
}

# The payload of the HALO chunk of level K (default 0) of FILE, a row a line, %.9g.
halo_rows() {
    perl -e '
        my ($f, $want) = @ARGV;
        open(my $fh, "<:raw", $f) or die; local $/; my $d = <$fh>;
        for (my $off = 64; $off < length $d;) {
            my ($tag, $dtype, $flags, $rows, $cols, $level, $stored) = unpack("Z8 Z4 V Q< V V Q<", substr($d, $off, 40));
            if ($tag eq "HALO" && $level == $want) {
                die "compressed\n" if $flags & 1;
                die "not <f8\n" if $dtype ne "<f8";
                my @v = unpack("d<*", substr($d, $off + 64, $stored));
                print join(" ", map { sprintf("%.9g", $_) } splice(@v, 0, $cols)), "\n" while @v;
                exit 0;
            }
            $off += 64 + int(($stored + 63) / 64) * 64;
        }
        exit 1' "$1" "${2:-0}"
}

@test "--format=stream: the input passed through, a HALO chunk per level and an HCOL record" {
    nine_levels -o lv.fof
    halostats --format=stream --softening=0.125 --G=1 -o out.fof lv.fof
    # every chunk of the input, in order, then HCOL and the HALO levels, and each level's members
    # most bound first (MORDER, MRANK: member_order.bats checks them)
    [ "$(chunks out.fof | awk '{ print $2, $6 }')" = "$(chunks lv.fof | awk '$2 != "END" { print $2, $6 }')
HCOL 0
HALO 0
HALO 1
MORDER 0
MRANK 0
MRANK 1
END 0" ]
    cmp <(u32_payload lv.fof GID) <(u32_payload out.fof GID)
    chunks out.fof | awk '$2 == "HALO" { if ($3 != "<f8") exit 1 }'
    # the rows are the text table's, level by level
    halostats --softening=0.125 --G=1 lv.fof | grep -v '^#' >text.txt
    [ "$(halo_rows out.fof 0)" = "$(head -n 3 text.txt)" ]
    [ "$(halo_rows out.fof 1)" = "$(tail -n 2 text.txt)" ]
    # HCOL names the columns in order, with their units and definitions, and the run
    hcol=$(text_payload out.fof HCOL)
    grep -qx "columns 31" <<<"$hcol"
    grep -qx "levels 2" <<<"$hcol"
    grep -qx "centre mbp" <<<"$hcol"
    grep -qx "softening 0.125" <<<"$hcol"
    grep -qx "length_name length" <<<"$hcol"
    grep -qx "column_1 level 1 level of the hierarchy: 0 for the longest linking length" <<<"$hcol"
    grep -q "^column_18 phi_mbp velocity^2 its potential" <<<"$hcol"
    [ "$(grep '^column_' <<<"$hcol" | cut -d ' ' -f 2 | tr '\n' ' ')" = "level host id n mass x y z vx vy vz sigma_v rmax xc yc zc mbp_id phi_mbp rc_max r_half vmax r_vmax lambda n_gas n_dark n_star m_gas m_dark m_star n_contam m_contam " ]
    # halostats reads its own output; a second pass replaces HALO and HCOL, -z compresses
    [ "$(halostats --softening=0.125 --G=1 out.fof | grep -v '^#')" = "$(cat text.txt)" ]
    run --separate-stderr halostats -v --format=stream --centre=com -z -o again.fof out.fof
    [[ "${stderr_lines[-1]}" == *"; the input's HALO and HCOL replaced" ]]
    [ "$(chunks again.fof | awk '$2 == "HALO" || $2 == "HCOL"' | wc -l)" -eq 3 ]
    chunks again.fof | awk '$2 == "HALO" { if ($4 % 2 != 1) exit 1 }'
    fofdump -c HCOL again.fof | grep -qx "columns 31"
}

@test "--format=stream refuses a terminal, and a failure leaves no output" {
    nine | mkstream -o nogid.fof
    run -1 halostats --format=stream -o new.fof nogid.fof
    [ ! -e new.fof ]
    echo old >old.txt
    run -1 halostats --csv -o old.txt nogid.fof
    [ "$(cat old.txt)" = old ]
    [ "$(ls | sort | tr '\n' ' ')" = "nogid.fof old.txt " ]
    command -v script >/dev/null || skip "no script(1) for a terminal"
    nine_grouped >in.fof
    run script -qec "halostats --format=stream in.fof" /dev/null
    [[ "$output" == *"halostats: "*"terminal"* ]]
}

@test "missing chunks: GID, POS, VEL, MASS, ID, SNAP" {
    nine | mkstream -o nogid.fof
    hs_fails "halostats: nogid.fof: stream has no GID chunk (run groups first, or halostats -m N on foflink's stream)" nogid.fof
    for tag in POS VEL MASS ID; do
        nine_gid "$NINE_GID" "" --omit=$tag -o no.fof
        hs_fails "halostats: no.fof: stream has no $tag chunk (run tipsy2bin first)" no.fof
    done
    nine_gid "$NINE_GID" "" --omit=SNAP -o no.fof
    hs_fails "halostats: no.fof: stream does not start with a SNAP chunk" no.fof
}

@test "a GID that does not fit: wrong length, groups beyond GRPS, empty groups" {
    nine_gid "0 2 1 3 0" "" -o bad.fof
    hs_fails "halostats: bad.fof: chunk GID has 5 rows for the 13 particles of the source" bad.fof
    nine_gid "$NINE_GID" "ngroups 2 minsize 2" -o bad.fof
    hs_fails "halostats: bad.fof: particle 1 is in group 3, beyond the 2 groups" bad.fof
    nine_gid "$NINE_GID" "ngroups 4 minsize 2" -o bad.fof
    hs_fails "halostats: bad.fof: group 4 has no member" bad.fof
    nine_gid "$NINE_GID" "minsize 2" -o bad.fof
    hs_fails "halostats: bad.fof: GRPS chunk lacks the key 'ngroups'" bad.fof
    nine | sed "s/^sink .*/gid $NINE_GID/; s/ 1 1 12$/ 1 1 7/" | mkstream -o bad.fof
    hs_fails "halostats: bad.fof: ID chunk: particle 8 repeats original index 7 (IDs must be distinct)" bad.fof
}

@test "damaged input: empty, wrong magic, truncated, CRC mismatch" {
    : >empty.fof
    hs_fails "halostats: empty.fof: empty input" empty.fof
    hs_fails "halostats: stdin: empty input" </dev/null
    printf 'not a stream at all' >magic.fof
    hs_fails "halostats: magic.fof: not a fofkit stream (bad magic)" magic.fof
    head -c 100 /dev/zero >magic.fof
    hs_fails "halostats: magic.fof: not a fofkit stream (bad magic)" magic.fof
    nine_grouped >in.fof
    size=$(stat -c %s in.fof)
    head -c $((size - 64)) in.fof >cut.fof
    hs_fails "halostats: cut.fof: truncated stream (no END chunk)" cut.fof
    gid=$(chunks in.fof | awk '$2 == "GID" { print $1 }')
    cp in.fof crc.fof
    flip_byte crc.fof $((gid + 64 + 3))
    hs_fails "halostats: crc.fof: chunk GID: payload CRC mismatch (damaged data)" crc.fof
}

# The centre columns by their definitions, from a .grp file and the mkstream description
# (p lines with all ten fields), every pair summed (no tree, no sorting): mbp_id phi_mbp xc
# yc zc rc_max r_half vmax r_vmax lambda per group, with G = 1 and softening EPS.
#   awk_centres EPS GRP DESCRIPTION
awk_centres() {
    local eps=$1
    shift
    awk -v eps="$eps" 'function nint(x) { return x >= 0 ? int(x + 0.5) : -int(-x + 0.5) }
        function img(d) { return per ? d - box * nint(d / box) : d }
        BEGIN { CONVFMT = "%.17g" }
        NR == FNR { if (FNR > 1) G[FNR - 2] = $1; next }
        $1 == "box" { box = $2 }
        $1 == "periodic" { per = $2 }
        $1 == "p" {
            g = G[$10]; if (g == 0) next
            k = C[g]++; M[g, k] = $8; I[g, k] = $10
            for (a = 1; a <= 3; a++) { X[g, k, a] = $(a + 1); V[g, k, a] = $(a + 4) }
            if (g > ng) ng = g
        }
        END {
            for (g = 1; g <= ng; g++) {
                ref = 0; W = 0
                for (k = 1; k < C[g]; k++) if (I[g, k] < I[g, ref]) ref = k
                for (a = 1; a <= 3; a++) U[a] = 0
                for (k = 0; k < C[g]; k++) {
                    W += M[g, k]
                    for (a = 1; a <= 3; a++) { D[k, a] = img(X[g, k, a] - X[g, ref, a]); U[a] += M[g, k] * V[g, k, a] }
                }
                for (a = 1; a <= 3; a++) U[a] /= W
                best = 0
                for (i = 0; i < C[g]; i++) {
                    phi = 0
                    for (j = 0; j < C[g]; j++) if (j != i) {
                        r2 = 0; for (a = 1; a <= 3; a++) r2 += (D[i, a] - D[j, a]) ^ 2
                        phi -= M[g, j] / sqrt(r2 + eps * eps)
                    }
                    if (i == 0 || phi < bphi) { bphi = phi; best = i }
                }
                rcmax = 0; rhalf = -1; vmax = 0; rv = 0; J1 = J2 = J3 = 0
                for (i = 0; i < C[g]; i++) {
                    for (a = 1; a <= 3; a++) { x[a] = D[i, a] - D[best, a]; u[a] = V[g, i, a] - U[a] }
                    J1 += M[g, i] * (x[2] * u[3] - x[3] * u[2]); J2 += M[g, i] * (x[3] * u[1] - x[1] * u[3])
                    J3 += M[g, i] * (x[1] * u[2] - x[2] * u[1])
                    R[i] = sqrt(x[1] ^ 2 + x[2] ^ 2 + x[3] ^ 2)
                }
                for (i = 0; i < C[g]; i++) {
                    enc = 0; for (j = 0; j < C[g]; j++) if (R[j] <= R[i]) enc += M[g, j]
                    if (R[i] > rcmax) rcmax = R[i]
                    if (enc >= W / 2 && (rhalf < 0 || R[i] < rhalf)) rhalf = R[i]
                    if (R[i] > 0) { v = sqrt(enc / R[i]); if (v > vmax || (v == vmax && R[i] < rv)) { vmax = v; rv = R[i] } }
                }
                line = I[g, best] " " bphi
                for (a = 1; a <= 3; a++) line = line " " X[g, best, a]
                print line " " rcmax " " rhalf " " vmax " " rv " " sqrt(J1 ^ 2 + J2 ^ 2 + J3 ^ 2) / (sqrt(2) * W * sqrt(W * rcmax))
            }
        }' "$@"
}

@test "end to end: clustered particles, some across the boundary, against awk computations" {
    command -v kdbuild && command -v foflink || skip "kdbuild and foflink not built"
    clusters >cl.txt
    awk_fof 0.03 3 <cl.txt >want.grp
    awk_halostats want.grp cl.txt >want.txt
    awk_centres 0.001 want.grp cl.txt >want_c.txt
    [ "$(wc -l <want.txt)" -eq 5 ]
    mkstream cl.txt | kdbuild | foflink -l 0.03 | groups -m 3 >cl.fof
    halostats --softening=0.001 cl.fof >halos.txt
    cols $OLD <halos.txt >got.txt
    same_numbers want.txt got.txt
    cols $CENTRE <halos.txt >got_c.txt
    same_numbers want_c.txt got_c.txt
    # the most bound member is a member, and the centre is its position, in the box
    awk '!/^#/ { for (k = 14; k <= 16; k++) if ($k < -0.5 || $k >= 0.5) exit 1 }' halos.txt
    # the tree (every group above --exact-max=0) finds the same centres
    [ "$(halostats --softening=0.001 --exact-max=0 cl.fof)" != "$(cat halos.txt)" ] # the header says so
    [ "$(halostats --softening=0.001 --exact-max=0 cl.fof | grep -v '^#')" = "$(grep -v '^#' halos.txt)" ]
}

@test "end to end: a real snapshot: rows and sizes agree with GRPS, most bound members are members" {
    [ -f "$DATA/skid-dark.std" ] || skip "no $DATA/skid-dark.std"
    command -v tipsy2bin && command -v kdbuild && command -v foflink || skip "upstream programs not built"
    tipsy2bin "$DATA/skid-dark.std" | kdbuild | foflink -b 0.2 | groups -m 20 -o skid.grps
    halostats --G=1 skid.grps >halos.txt
    grps=$(text_payload skid.grps GRPS)
    ngroups=$(awk '$1 == "ngroups" { print $2 }' <<<"$grps")
    ngrouped=$(awk '$1 == "ngrouped" { print $2 }' <<<"$grps")
    cols $OLD <halos.txt >rows.txt
    [ "$(wc -l <rows.txt)" -eq "$ngroups" ]
    # ids 1..ng in order, sizes not growing, at least 20 members, the sizes add up
    awk '$1 != NR || $2 < 20 || (NR > 1 && $2 > last) { exit 1 } { last = $2 }' rows.txt
    [ "$(awk '{ s += $2 } END { print s }' rows.txt)" -eq "$ngrouped" ]
    grep -q "^# level 0: linking length l 0.00625" halos.txt
    # GID (original order) puts every group's most bound member in that group
    u32_payload skid.grps GID >gid.txt
    cols id mbp_id <halos.txt | awk 'NR == FNR { g[FNR - 1] = $1; next } g[$2] != $1 { print; bad = 1 } END { exit bad }' \
        gid.txt -
    # radii in order, positive vmax and potentials below 0 for groups of 20 and more
    cols r_half rc_max vmax r_vmax phi_mbp <halos.txt |
        awk '!($1 <= $2 && $4 <= $2 && $3 > 0 && $5 < 0) { print; bad = 1 } END { exit bad }'
    [ "$(halostats --G=1 --csv skid.grps | tail -n +2 | tr ',' ' ')" = "$(grep -v '^#' halos.txt)" ]
}

@test "the output does not depend on the number of threads" {
    [ -f "$DATA/test4-zoom.std" ] || skip "no $DATA/test4-zoom.std"
    command -v tipsy2bin && command -v kdbuild && command -v foflink || skip "upstream programs not built"
    tipsy2bin "$DATA/test4-zoom.std" | kdbuild | foflink -b 0.2 | groups -m 20 -o zoom.grps
    OMP_NUM_THREADS=1 halostats --exact-max=500 zoom.grps >one.txt
    OMP_NUM_THREADS=2 halostats --exact-max=500 zoom.grps >two.txt
    OMP_NUM_THREADS=3 halostats --exact-max=500 zoom.grps >three.txt
    cmp one.txt two.txt
    cmp one.txt three.txt
    # its 16K-member halo takes the tree
    [ "$(cols n <one.txt | head -n 1)" -gt 10000 ]
}

@test "a hierarchy from foflink and groups: hosts from GPAR are the members' hosts, centres inside them" {
    command -v kdbuild && command -v foflink && command -v mkuniverse || skip "upstream programs not built"
    mkuniverse -n 30000 -o u.std
    tipsy2bin u.std | kdbuild | foflink -b 0.2,0.12 | groups -m 20 -o u.grps
    chunks u.grps | awk '$2 == "GPAR" && $6 == 1 { found = 1 } END { exit !found }' || skip "groups writes no GPAR"
    halostats --centre=com u.grps >com.txt
    halostats u.grps >halos.txt
    grep -q "^# level 1: linking length l .* (b 0.12, psi 0; psi 0 is 3D linking), [0-9]* groups, min size 20$" halos.txt
    [ "$(cols level <halos.txt | sort -u | tr '\n' ' ')" = "0 1 " ]
    # the same hosts without GPAR (from the members)
    addchunk --drop=GPAR u.grps >nogpar.grps
    [ "$(halostats nogpar.grps | cols level host id)" = "$(cols level host id <halos.txt)" ]
    # every level-1 group's most bound member is in its host at level 0, and is no heavier a halo
    u32_payload u.grps GID >gid0.txt
    cols level host mbp_id <halos.txt | awk 'NR == FNR { g[FNR - 1] = $1; next }
        $1 == 1 && g[$3] != $2 { print; bad = 1 } END { exit bad }' gid0.txt -
    cols level host n <halos.txt | awk '$1 == 0 { n[NR] = $3; id++; size[id] = $3 } $1 == 1 && $3 > size[$2] { print; bad = 1 }
        END { exit bad }'
    # the centre-of-mass run differs only in the centre columns
    [ "$(cols level host $OLD <com.txt)" = "$(cols level host $OLD <halos.txt)" ]
}

@test "-m N on foflink's stream: the catalogue of groups -m N | halostats, byte for byte, in every format" {
    command -v kdbuild && command -v foflink && command -v mkuniverse || skip "upstream programs not built"
    mkuniverse -n 30000 -o u.std
    # units (G = 1 in them), so that --unbind, --so and HDF5 are taken; two levels
    tipsy2bin --kpc-unit=100000 --msol-unit=2.2e17 u.std | kdbuild | foflink -b 0.2,0.12 >u.link
    local formats=("" "--so --omega-m=0.3 --unbind" "--unbind --format=grp" "--csv --centre=com")
    halostats --help | grep -q hdf5 && hdf52bin --help >/dev/null 2>&1 && formats+=("--format=hdf5 --unbind")
    for opts in "${formats[@]}"; do
        # shellcheck disable=SC2086
        groups -m 20 <u.link | halostats $opts >two.out
        # shellcheck disable=SC2086
        halostats -m 20 $opts <u.link >one.out
        [ -s two.out ]
        cmp two.out one.out
    done
    grep -q "^# level 1: .* min size 20$" two.out || [[ "${formats[-1]}" == *hdf5* ]]
    # the second level's hosts came from the parents, as groups' GPAR gives them
    halostats --min-size=20 <u.link >one.txt
    groups -m 20 <u.link | addchunk --drop=GPAR - | halostats >nogpar.txt
    ! grep -q "no GPAR" one.txt
    grep -q "no GPAR" nogpar.txt
    # what -m does not take: a grouped stream, a stream without SINK, --format=stream, mpirun
    groups -m 20 u.link >u.grps
    fails halostats "halostats: u.grps: the stream has groups already (a GRPS chunk): -m takes foflink's stream; drop -m" -m 20 u.grps
    tipsy2bin u.std | kdbuild >u.kd
    fails halostats "halostats: u.kd: stream has no SINK chunk (halostats -m takes foflink's stream)" -m 20 u.kd
    hs_usage "halostats: option -m does not go with --format=stream (a stream catalogue carries groups' GID: run groups -m N before halostats)" -m 20 --format=stream u.link
    hs_usage "halostats: option -m: 0 is out of range [1, 4294967295]" -m 0 u.link
}

@test "--device and FOFKIT_DEVICE: cpu is the CPU's catalogue; gpu without a GPU fails with status 3 and the reason" {
    nine_levels -o lv.fof
    halostats --device=cpu -o cpu.txt lv.fof
    FOFKIT_DEVICE=cpu halostats -o env.txt lv.fof
    cmp cpu.txt env.txt
    grep -q "on the CPU$" cpu.txt
    halostats --device=cpu --format=stream lv.fof | fofdump -c HCOL - | grep -qx "device cpu"
    printf 'p 0.1 0.1 0.1\n' | mkstream -o gpuprobe.bin
    if kdbuild --device=gpu gpuprobe.bin >/dev/null 2>&1; then skip "a GPU is present"; fi
    [ "$(FOFKIT_DEVICE=auto halostats lv.fof)" = "$(cat cpu.txt)" ] # auto: the CPU
    for how in "halostats --device=gpu" "env FOFKIT_DEVICE=gpu halostats"; do
        run --separate-stderr $how -o gpu.txt lv.fof
        [ "$status" -eq 3 ]
        [[ "$stderr" =~ ^halostats:\ --device=gpu:\ [^$'\n']+$ ]]
        [ ! -e gpu.txt ]
    done
}

@test "a stream linked with foflink --no-periodic: the header says the groups were linked and measured isolated" {
    command -v mkuniverse && command -v foflink || skip "upstream programs not built"
    mkuniverse -n 5000 -s 11 -o u.std
    tipsy2bin u.std | kdbuild -o t.fof
    foflink --no-periodic -b 0.2 t.fof | groups -m 10 | halostats --centre=com >iso.txt
    grep -qx "# box 1 origin -0.5 periodic 0 (the stream's length unit): the snapshot's box is periodic, but foflink --no-periodic linked it with isolated boundaries, and so are the groups measured" iso.txt
    foflink -b 0.2 t.fof | groups -m 10 | halostats --centre=com >per.txt
    grep -qx "# box 1 origin -0.5 periodic 1 (the stream's length unit)" per.txt
}
