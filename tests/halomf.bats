#!/usr/bin/env bats
# halomf.bats - halomf(1): options, the bins of a hand catalogue, text and CSV input, levels, volumes, the mock against awk, bad input.

bats_require_minimum_version 1.5.0
load groups_helpers

# A hand catalogue in halostats' text layout: box 2 (stream units), lengths x 10 in the
# output units, so the volume is 20^3 = 8000; levels 0 and 1.
hand() {
    cat <<'EOF2'
# halostats (fofkit 0.1.0): one line per friends-of-friends group, level by level, by group id
# box 2 origin 0 periodic 1 (the stream's length unit)
# units: length kpc, mass Msun, velocity km/s; one stream unit is 10, 1, 1 of them
#  1 level    1          level of the hierarchy
#  4 n        1          member particles
#  5 mass     Msun       sum of member masses
# level host id n mass m200c
0 0 1 5 1000 900
0 0 2 4 150 nan
0 0 3 3 20 15
0 0 4 3 10 8
0 0 5 2 10 0
1 1 1 3 500 400
EOF2
}

@test "--help, --version, usage errors" {
    run halomf --help
    [ "${lines[0]}" = "Usage: halomf [OPTION]... [CATALOGUE]" ]
    for o in --column --level --bins-per-dex --min --max --volume; do [[ "$output" == *"$o"* ]] || return 1; done
    run halomf --version
    [[ "$output" =~ ^halomf\ \(fofkit\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
    run -2 halomf --bins-per-dex=0
    [ "${lines[0]}" = "halomf: option --bins-per-dex: 0 is out of range [0.01, 1000]" ]
    run -2 halomf --min=10 --max=1
    [ "${lines[0]}" = "halomf: option --max (1) is below --min (10)" ]
    run -2 halomf -z
    [ "${lines[0]}" = "halomf: option -z does not apply: halomf writes text" ]
    run -2 halomf --bogus
    [ "${lines[0]}" = "halomf: unknown option '--bogus'" ]
}

@test "a hand catalogue: bins, densities, cumulative counts, units and volume from the header" {
    hand >cat.txt
    halomf --bins-per-dex=1 cat.txt >mf.txt
    grep -qx "# halomf (fofkit [0-9.]*): the mass function of column mass (unit Msun) of cat.txt, level 0" mf.txt
    grep -qx "# 5 of 5 rows in the bins; 0 below, 0 above; 0 skipped (nan or not positive)" mf.txt
    grep -q "^# volume 8000 kpc^3 (the box of the header); 1 bins per dex from 10$" mf.txt
    # masses 10, 10, 20 in [10, 100); 150 in [100, 1000); 1000 at the top edge, in the last
    [ "$(grep -v '^#' mf.txt)" = "1.000000 2.000000 31.6228 3 0.000375 0.000625
2.000000 3.000000 316.228 2 0.00025 0.00025" ]
    # m200c: nan and 0 skipped; level 1 alone; a given volume and range
    halomf -c m200c --bins-per-dex=1 cat.txt | grep -qx "# 3 of 5 rows in the bins; 0 below, 0 above; 2 skipped (nan or not positive)"
    [ "$(halomf --level=1 --volume=2 --min=100 --max=1000 cat.txt | grep -v '^#')" = "2.000000 2.200000 125.893 0 0 0.5
2.200000 2.400000 199.526 0 0 0.5
2.400000 2.600000 316.228 0 0 0.5
2.600000 2.800000 501.187 1 2.5 0.5
2.800000 3.000000 794.328 0 0 0" ]
    # below and above a given range (the bins reach 15 x 10^2: 1000 is inside; 2000 is not)
    halomf --min=15 --max=200 --bins-per-dex=1 cat.txt | grep -qx "# 3 of 5 rows in the bins; 2 below, 0 above; 0 skipped (nan or not positive)"
    sed 's/^0 0 1 5 1000 900$/0 0 1 5 2000 900/' cat.txt | halomf --min=15 --max=200 --bins-per-dex=1 |
        grep -qx "# 2 of 5 rows in the bins; 2 below, 1 above; 0 skipped (nan or not positive)"
}

@test "CSV: the same counts, with --volume" {
    hand | awk '!/^#/ { gsub(/ /, ","); print } /^# level/ { sub(/^# /, ""); gsub(/ /, ","); print }' >cat.csv
    head -n 1 cat.csv | grep -qx "level,host,id,n,mass,m200c"
    run -1 halomf cat.csv
    [ "$output" = "halomf: cat.csv: the catalogue gives no box (CSV has no header): give --volume" ]
    hand >cat.txt
    [ "$(halomf --volume=8000 --bins-per-dex=1 cat.csv | grep -v '^#')" = "$(halomf --bins-per-dex=1 cat.txt | grep -v '^#')" ]
}

@test "the mock's halostats catalogue against awk's counts, from a pipe" {
    mkuniverse -n 65536 -o m.std
    tipsy2bin m.std | kdbuild | foflink -b 0.2 | groups -m 20 | halostats --centre=com >h.txt
    halomf --bins-per-dex=4 <h.txt >mf.txt
    grep -q "^# volume 1 length^3 (the box of the header)" mf.txt
    # awk: the same edges (taken from halomf's output), counted independently
    awk 'NR == FNR { if ($1 !~ /^#/) { lo[++nb] = $1; hi[nb] = $2 }; next }
         !/^#/ { l = log($5) / log(10); for (b = 1; b <= nb; b++) if (l >= lo[b] - 1e-9 && (l < hi[b] - 1e-9 || b == nb)) { c[b]++; break } }
         END { for (b = 1; b <= nb; b++) print c[b] + 0 }' mf.txt h.txt >awk.txt
    [ "$(grep -v '^#' mf.txt | cut -d ' ' -f 4)" = "$(cat awk.txt)" ]
    [ "$(grep -v '^#' mf.txt | awk '{ s += $4 } END { print s }')" = "$(grep -vc '^#' h.txt)" ]
}

@test "bad input: no column, ragged rows, not numbers, no catalogue, a missing level column" {
    hand >cat.txt
    run -1 halomf -c m500c cat.txt
    [ "$output" = "halomf: cat.txt: no column 'm500c' in the catalogue" ]
    { hand; echo "0 0 6 2 10"; } >ragged.txt
    run -1 halomf ragged.txt
    [ "$output" = "halomf: ragged.txt: line 14 has 5 fields, the header 6" ]
    hand | sed 's/^0 0 3 3 20 15$/0 0 3 3 twenty 15/' >word.txt
    run -1 halomf word.txt
    [ "$output" = "halomf: word.txt: line 10: mass 'twenty' is not a number" ]
    : >empty.txt
    run -1 halomf empty.txt
    [ "$output" = "halomf: empty.txt: no catalogue (no column names)" ]
    printf 'n,mass\n3,1\n' >nolevel.csv
    run -1 halomf --level=1 --volume=1 nolevel.csv
    [ "$output" = "halomf: nolevel.csv: no level column, so no level 1" ]
    run -1 halomf missing.txt
    [[ "$output" == "halomf: "*"missing.txt"* ]]
}
