#!/usr/bin/env bats
# halostats_masses.bats - halostats --so and --unbind: options, hand values, the mock's r200, BGID and .grp outputs, real snapshots' sanity.

bats_require_minimum_version 1.5.0
load groups_helpers

DATA=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}

# Runs halostats ARGS... expecting a usage error (status 2) whose first line is MESSAGE.
hs_usage() {
    local msg=$1
    shift
    run -2 halostats "$@"
    echo "$output"
    [ "${lines[0]}" = "$msg" ]
}

# The columns NAME... of a halostats text table on stdin (by the last '#' line's names).
cols() {
    awk -v want="$*" 'BEGIN { n = split(want, w, " ") }
        /^#/ { h = $0; next }
        !done { sub(/^# */, "", h); m = split(h, names, " "); for (k = 1; k <= m; k++) at[names[k]] = k
                for (k = 1; k <= n; k++) if (!(w[k] in at)) { print "no column " w[k] > "/dev/stderr"; exit 1 }
                done = 1 }
        { line = ""; for (k = 1; k <= n; k++) line = line (k > 1 ? " " : "") $(at[w[k]]); print line }'
}

# The nine particles of groups_helpers through groups -m 2; with an argument, ID 1's
# velocity is (0, 0, that) instead of (0, 0, 1).
nine_grouped() {
    nine | sed "s/^sink/text LINK l 0.1 b 0.2\nsink/; s/^p 0.75  0.25  0.625  0 0 1 /p 0.75 0.25 0.625 0 0 ${1:-1} /" |
        mkstream | groups -m 2
}

# A mock universe of 2^16 particles (the fixed seed), its catalogue and its groups at b = 0.2.
mock_groups() {
    mkuniverse -n 65536 --catalog=cat.txt -o mock.std
    tipsy2bin mock.std | kdbuild | foflink -b 0.2 | groups -m 20 -o mock.fof
}

# Copies stream IN to OUT with TEXT ("key value" lines) appended to its SNAP record, the
# chunk's rows, length and CRCs set again (the layout of stream.h, by perl).
snap_append() {
    perl -MCompress::Zlib -e '
        my ($in, $out, $add) = @ARGV;
        open(my $h, "<:raw", $in) or die; local $/; my $d = <$h>;
        my $off = 64;
        my $hd = substr($d, $off, 64);
        die "no SNAP first\n" unless unpack("Z8", $hd) eq "SNAP";
        my $len = unpack("Q<", substr($hd, 32, 8));
        my $p = substr($d, $off + 64, $len) . $add;
        my $rest = substr($d, $off + 64 + int(($len + 63) / 64) * 64);
        substr($hd, 16, 8) = pack("Q<", length $p);
        substr($hd, 32, 8) = pack("Q<", length $p);
        substr($hd, 40, 4) = pack("V", crc32($p));
        substr($hd, 60, 4) = pack("V", crc32(substr($hd, 0, 60)));
        open(my $o, ">:raw", $out) or die;
        print $o substr($d, 0, 64), $hd, $p, "\0" x ((64 - length($p) % 64) % 64), $rest;
        close($o) or die;' "$@"
}

@test "--help lists the options; usage errors" {
    run halostats --help
    for o in --so --so-min --so-from --omega-m --omega-l --scale-factor --redshift --rho-crit --hubble --unbind --bound-min --level; do
        [[ "$output" == *"$o"* ]] || { echo "no $o"; return 1; }
    done
    hs_usage "halostats: options --omega-m, --omega-l, --scale-factor, --redshift, --rho-crit, --hubble, --so-min and --so-from apply to --so only" --omega-m=0.3
    hs_usage "halostats: options --omega-m, --omega-l, --scale-factor, --redshift, --rho-crit, --hubble, --so-min and --so-from apply to --so only" --so-min=3
    hs_usage "halostats: options --scale-factor and --redshift exclude each other" --so --scale-factor=1 --redshift=0
    hs_usage "halostats: options --rho-crit and --hubble exclude each other" --so --rho-crit=1 --hubble=100
    hs_usage "halostats: option --format=grp needs --unbind (it writes the bound members)" --format=grp
    hs_usage "halostats: option --level applies to --format=grp only" --unbind --level=1
    hs_usage "halostats: option --bound-min: 0 is out of range [1, 9223372036854775807]" --unbind --bound-min=0
    hs_usage "halostats: option --omega-m: 0 is out of range (it must be above 0)" --so --omega-m=0
    hs_usage "halostats: option --redshift: -2 is out of range (it must be from 0 to 1e+06)" --so --redshift=-2
    # what the stream must give
    nine_grouped >in.fof
    hs_usage "halostats: option --so needs --omega-m (the stream's SNAP gives no omega_m)" --so in.fof
    hs_usage "halostats: option --so needs --rho-crit or --hubble: the stream holds 9 of the 13 particles, so its mean density is not the box's" \
        --so --omega-m=0.3 in.fof
    # an isolated box has no mean density to take
    nine | sed 's/^periodic 1/periodic 0/; s/^nsource 13/nsource 9/; s/ 1 1 12$/ 1 1 4/; s/ 1 1 11$/ 1 1 6/' |
        sed 's/^sink .*/gid 1 0 0 0 0 0 0 1 0/' >iso.txt
    mkstream iso.txt >iso.fof
    hs_usage "halostats: option --so needs --rho-crit or --hubble for a box that is not periodic" --so --omega-m=1 iso.fof
    # massless particles: no mean density either
    awk '$1 == "p" { $8 = 0 } $1 == "periodic" { $2 = 1 } { print }' iso.txt | mkstream >zero.fof
    run -1 halostats --so --omega-m=1 zero.fof
    [ "$output" = "halostats: zero.fof: the stream's particles have no mass, so no mean density: give --rho-crit or --hubble" ]
}

@test "without --so and --unbind the catalogue is unchanged; with them, their columns and header lines" {
    nine_grouped >in.fof
    halostats --G=1 in.fof >plain.txt
    ! grep -q "r200c\|n_bound\|^# SO\|^# unbinding" plain.txt
    halostats --G=1 --so --omega-m=0.3 --rho-crit=0.001 --unbind in.fof >all.txt
    [ "$(grep '^#' all.txt | tail -n 1)" = "$(grep '^#' plain.txt | tail -n 1) r200c m200c r500c m500c r200m m200m rvir mvir n_bound mass_bound" ]
    grep -q "^# SO: about the centre, every particle counted; comoving radii at a = 1 (SNAP.s time);" all.txt
    # which particles the sums count: the stream holds 9 of the source's 13
    grep -q "^# SO sums: the stream's 9 particles (gas 0 of 0, dark 9 of 13, star 0 of 0 in the snapshot);$" all.txt
    grep -q "^#   the snapshot's other particles are not counted (--so-from=STREAM counts those of a stream that has them)$" all.txt
    grep -q "Omega_m 0.3 (given), Omega_L 0.7 (1 - Omega_m: flat), rho_crit,0 0.001 mass length^-3 comoving (given)" all.txt
    grep -q "^# unbinding: every group at every level" all.txt
    grep -q "^# *32 r200c  *length .*nan: not reached" all.txt
    grep -q "^# *40 n_bound  *1 .*0: the group is not bound" all.txt
    # the cosmology from SNAP keys (as snapshots that carry it write them), options first
    snap_append in.fof keys.fof $'omega_m 0.25\nomega_l 0.6\nredshift 3\n'
    halostats --so --rho-crit=0.001 keys.fof >k.txt
    grep -q "comoving radii at a = 0.25 (SNAP's redshift)" k.txt
    grep -q "Omega_m 0.25 (from SNAP), Omega_L 0.6 (from SNAP)" k.txt
    halostats --so --omega-m=0.3 --scale-factor=0.5 --rho-crit=0.001 keys.fof | grep -q "a = 0.5 (given);"
    # the plain columns are the same
    [ "$(grep -v '^#' all.txt | cut -d ' ' -f 1-31)" = "$(grep -v '^#' plain.txt)" ]
    # --hubble: rho_crit,0 = 3 H0^2 / (8 pi G); --redshift 1: a = 1/2; Omega_L given
    halostats --G=1 --so --omega-m=0.3 --omega-l=0.6 --hubble=1 --redshift=1 in.fof >z.txt
    grep -q "comoving radii at a = 0.5 (given)" z.txt
    want=$(awk 'BEGIN { printf "%.10g", 3 / (8 * atan2(0, -1)) }')
    grep -q "Omega_L 0.6 (given), rho_crit,0 $want mass length^-3 comoving (3 H0^2 / (8 pi G))" z.txt
    halostats --csv --so --omega-m=0.3 --rho-crit=0.001 in.fof | head -n 1 | grep -q ',m_contam\[mass\],r200c\[length\],m200c\[mass\],r500c\[length\],m500c\[mass\],r200m\[length\],m200m\[mass\],rvir\[length\],mvir\[mass\]$'
}

@test "SO by hand: the nine particles, unit density thresholds" {
    # Group 1 (IDs 7, 2, 8: masses 1, 1, 2) centred on ID 7 at (1/8, 1/8, 1/8), its other
    # members at 1/8; the next particles of the box are far. With rho_crit,0 = 1 and
    # Omega_m = 1 at a = 1, the 200c threshold is 200: the sphere through the members at
    # r = 1/8 holds 4, mean density 4 / (4/3 pi / 512) = 489 > 200; the next particle, ID 12
    # at (3/8, 7/8, 1/8), is sqrt(2) / 4 away through the boundary: 5 / (4/3 pi 0.3536^3) =
    # 27 < 200, so r200c is interpolated in log rho against log r between those two spheres.
    # The profile from the sphere of 3 particles (--so-min=3): the default, 10, leaves
    # every radius of groups this small not reached.
    nine_grouped >in.fof
    [ "$(halostats --so --omega-m=1 --rho-crit=1 in.fof | cols r200c r500c r200m rvir | sort -u)" = "nan nan nan nan" ]
    halostats --so --so-min=3 --omega-m=1 --rho-crit=1 --softening=0.125 in.fof >h.txt
    want=$(awk 'BEGIN { pi = atan2(0, -1); v = 4 / 3 * pi
        r0 = 0.125; rho0 = 4 / (v * r0^3); r1 = sqrt(2) / 4; rho1 = 5 / (v * r1^3)
        lr = log(r0) + (log(200) - log(rho0)) * (log(r1) - log(r0)) / (log(rho1) - log(rho0))
        R = exp(lr); printf "%.9g %.9g\n", R, v * R^3 * 200 }')
    [ "$(cols id r200c m200c <h.txt | head -n 1)" = "1 $want" ]
    # 500c: 489 < 500 already at the first sphere: not reached
    [ "$(cols r500c m500c <h.txt | head -n 1)" = "nan nan" ]
    # Delta_vir is 18 pi^2 = 177.7 for Omega_m = 1: between, the same two spheres
    [ "$(cols rvir <h.txt | head -n 1)" != "nan" ]
}

@test "SO on the mock universe: r200c is the catalogue's r200 (its halos are truncated there)" {
    # mkuniverse's halos have mean density 200 inside r200 and none of their particles
    # outside, so with rho_crit = 1 (the box's mean density, Omega_m = 1) the crossing is at
    # r200 up to the thin background (0.45 of 200) and the gap to the next particle: 1%.
    mock_groups
    halostats --so --omega-m=1 --scale-factor=1 mock.fof >h.txt
    grep -q "rho_crit,0 1 mass length^-3 comoving (the box's mean density / Omega_m)" h.txt
    cols n mbp_id r200c m200c <h.txt | awk '$1 >= 300' >rows.txt
    [ "$(wc -l <rows.txt)" -ge 15 ]
    # each row's halo: the catalogue's halo holding its most bound particle
    awk 'NR == FNR { if ($1 !~ /^#/) { first[$1] = $2; np[$1] = $3; r200[$1] = $5; m[$1] = $4 }; next }
         { h = -1; for (k in first) if ($2 >= first[k] && $2 < first[k] + np[k]) h = k
           if (h < 0) { print "no halo for " $0; bad++; next }
           if ($3 / r200[h] - 1 > 0.01 || $3 / r200[h] - 1 < -0.01) { print "r200c", $3, "r200", r200[h]; bad++ }
           if ($4 / m[h] - 1 > 0.03 || $4 / m[h] - 1 < -0.03) { print "m200c", $4, "mass", m[h]; bad++ } }
         END { exit bad > 0 }' cat.txt rows.txt
}

@test "unbinding by hand: bound groups, a pair flying apart, --bound-min" {
    nine_grouped >in.fof
    # every group moves as one (no kinetic energy): all bound, with --bound-min=2
    halostats --G=1 --unbind --bound-min=2 --softening=0.125 in.fof >h.txt
    [ "$(cols id n n_bound mass mass_bound <h.txt)" = "1 3 3 4 4
2 2 2 2 2
3 2 2 2 2" ]
    grep -q "fewer than$" h.txt
    grep -q "^#   2 bound members: not bound (n_bound 0)" h.txt
    # the default --bound-min (10): groups this small are not bound
    [ "$(halostats --G=1 --unbind in.fof | cols n_bound mass_bound | sort -u)" = "0 0" ]
    # ID 1 at 100 along z: the pair (IDs 11 and 1) flies apart (each has
    # |v - v_S|^2 / 2 = 49.5^2 / 2 against phi = -1 / sqrt(1/64 + eps^2))
    nine_grouped 100 >fast.fof
    [ "$(halostats --G=1 --unbind --bound-min=2 --softening=0.125 fast.fof | cols id n_bound)" = "1 3
2 0
3 2" ]
}

@test "--format=stream: a BGID chunk per level; --format=grp: the bound members" {
    nine_grouped 100 >fast.fof
    halostats --G=1 --unbind --bound-min=2 --format=stream -o out.fof fast.fof
    chunks out.fof | awk '$2 == "BGID" { n++; if ($3 != "<u4" || $5 != 13 || $6 != 0) exit 1 } END { exit n != 1 }'
    # by ID: group 1 = IDs 2, 7, 8; group 3 = IDs 3, 5; the pair of group 2 unbound
    [ "$(u32_payload out.fof BGID | tr '\n' ' ')" = "0 0 1 3 0 3 0 1 1 0 0 0 0 " ]
    text_payload out.fof HCOL | grep -qx "unbind 1"
    text_payload out.fof HCOL | grep -qx "bound_min 2"
    halostats --G=1 --unbind --bound-min=2 --format=grp -o b.grp fast.fof
    [ "$(tr '\n' ' ' <b.grp)" = "13 0 0 1 3 0 3 0 1 1 0 0 0 0 " ]
    run -1 halostats --G=1 --unbind --format=grp --level=1 -o c.grp fast.fof
    [ "$output" = "halostats: fast.fof: option --level=1: the stream has 1 level" ]
    [ ! -e c.grp ]
}

@test "--so and --unbind on the mock: mass orderings, bound members, levels, any thread count" {
    mock_groups
    foflink -b 0.2,0.1 <(tipsy2bin mock.std | kdbuild) | groups -m 20 -o lv.fof
    OMP_NUM_THREADS=1 halostats --G=1 --so --omega-m=0.3 --scale-factor=1 --unbind lv.fof >one.txt
    OMP_NUM_THREADS=2 halostats --G=1 --so --omega-m=0.3 --scale-factor=1 --unbind lv.fof >two.txt
    cmp one.txt two.txt
    # M500c < M200c < Mvir < M200m where all are reached (the thresholds 500, 200, 101 and 60
    # times rho_crit are crossed from inside in that order); bound mass within the group's
    cols level n mass m500c m200c mvir m200m n_bound mass_bound <one.txt >c.txt
    awk '$4 != "nan" && $7 != "nan" { n++; if (!($4 < $5 && $5 < $6 && $6 < $7)) { print; bad++ } }
         { if ($8 > $2 || $9 > $3 * (1 + 1e-6)) { print "bound", $0; bad++ } }
         $1 == 0 && $2 >= 200 { big++; if ($8 >= 0.8 * $2) mostly++ }
         $1 == 1 { sub1++; if ($8 > 0) bound1++ }
         END { print n, big, mostly, sub1, bound1; exit bad > 0 || n < 20 || mostly < 0.9 * big || sub1 == 0 || bound1 == 0 }' c.txt
    # the .grp of level 1 holds n_bound members of each subgroup
    halostats --G=1 --unbind --format=grp --level=1 lv.fof >b1.grp
    [ "$(tail -n +2 b1.grp | awk '$1 > 0 { c[$1]++ } END { for (g in c) print g, c[g] }' | sort -n)" = \
      "$(cols level id n_bound <one.txt | awk '$1 == 1 && $3 > 0 { print $2, $3 }' | sort -n)" ]
}

@test "real snapshots: the checks a cosmologist makes (M200c < M200m ~ FoF mass, R200c inside the group)" {
    [ -f "$DATA/lambs-30k.std" ] || skip "no $DATA/lambs-30k.std"
    # LCDM at z = 0 (SNAP's time 1); Omega_m 0.3 assumed (the file does not say). For halos of
    # 100 or more members at b = 0.2: M200c < M200m and R200c below the group's extent about
    # the centre for every one; M200m within 25% of the FoF mass at the median (FoF at b = 0.2
    # encloses about 200 times the mean density: measured medians 1.01 here and 0.99 on
    # skid-dark); most of each group bound.
    for f in lambs-30k skid-dark; do
        tipsy2bin "$DATA/$f.std" | kdbuild | foflink -b 0.2 | groups -m 20 |
            halostats --G=1 --so --omega-m=0.3 --unbind | cols n mass m200c m200m r200c rc_max n_bound >h.txt
        awk '$1 >= 100 { n++; if (!($3 < $4 && $5 < $6)) { print; bad++ }; if ($7 >= 0.9 * $1) b++ }
             END { print n, b; exit bad > 0 || n < 15 || b < 0.9 * n }' h.txt
        med=$(awk '$1 >= 100 { print $4 / $2 }' h.txt | sort -g | awk '{ r[NR] = $1 } END { print r[int((NR + 1) / 2)] }')
        echo "$f: median M200m / FoF mass $med"
        awk -v m="$med" 'BEGIN { exit !(m > 0.8 && m < 1.25) }'
    done
}

# Each SO grid cell holds its particles by ID and the box's mass is an exact sum: the radii
# and masses (every HALO double) do not depend on the order of the particles, whether the
# grouped stream's own (kd-tree order) or --so-from's (file order, tree order). Masses over
# 9 decades, so that sums in another order would round otherwise.
@test "--so and --so-from: the SO doubles are the same bits in any stream order (cells by ID, the box's mass exact)" {
    mkuniverse -n 20000 -s 5 -o m.std
    tipsy2bin m.std -o m.fof
    paste -d ' ' <(fofdump -c POS m.fof) <(fofdump -c VEL m.fof) |
        awk 'BEGIN { srand(3) } { print "d", $0, exp(20 * rand()) / 1e9 }' | ascii2tipsy -o w.std
    tipsy2bin w.std -o file.fof
    kdbuild file.fof -o tree.fof
    foflink -b 0.2 --spacing=all tree.fof | groups -m 20 -o g.fof
    halostats --G=1 --so --omega-m=0.3 --format=stream g.fof -o own.fof
    halostats --G=1 --so --omega-m=0.3 --so-from=file.fof --format=stream g.fof -o from-file.fof
    halostats --G=1 --so --omega-m=0.3 --so-from=tree.fof --format=stream g.fof -o from-tree.fof
    [ "$(fofdump -c HALO own.fof | wc -l)" -gt 50 ] && [ "$(fofdump -c HALO own.fof | grep -cv nan)" -gt 20 ]
    cmp <(fofdump -c HALO own.fof) <(fofdump -c HALO from-file.fof)
    cmp <(fofdump -c HALO own.fof) <(fofdump -c HALO from-tree.fof)
}
