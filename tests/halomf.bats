#!/usr/bin/env bats
# halomf.bats - halomf(1): options, the bins of a hand catalogue, text, CSV and stream input, levels, volumes, the mock against awk, the pictures (PNG, SVG, PDF; several catalogues and levels, a legend, a reference curve), bad input.

bats_require_minimum_version 1.5.0
load groups_helpers

# A mock universe of 20000 particles with one heavy halo of 4000 (and the usual smaller
# ones), through the whole pipeline once: its catalogue as a stream (particles and HALO
# chunks), as text and as CSV.
setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    mkuniverse -n 20000 -s 11 --big-halo=4000 -o u.std
    tipsy2bin u.std | kdbuild | foflink -b 0.2 | groups -m 20 >g.fof
    halostats --format=stream <g.fof >h.fof
    halostats <g.fof >h.txt
    halostats --csv <g.fof >h.csv
    # two levels, and a catalogue of other units (the same halos in a unit of 1e5 kpc: kpc, Msun)
    tipsy2bin u.std | kdbuild | foflink -b 0.2,0.1 | groups -m 20 | halostats >h2.txt
    tipsy2bin --kpc-unit=1e5 --msol-unit=1e15 u.std | kdbuild | foflink -b 0.2 | groups -m 20 | halostats >hu.txt
}

CHECK=$BATS_TEST_DIRNAME/py/picture_check.py

# Skips the test when this build draws no pictures (no cairo) or the probe cannot read them.
need_cairo() {
    run pngprobe
    [ "$status" -ne 77 ] || skip "built without cairo"
    run halomf --plot -o /dev/null "$BATS_FILE_TMPDIR/h.txt"
    [[ "$output" != *"draws no pictures"* ]] || skip "built without cairo"
}

# Runs PROG ARGS... expecting status S and exactly the one line MESSAGE on stderr, no output file.
one_line() {
    local s=$1 msg=$2
    shift 2
    run "-$s" --separate-stderr "$@" -o out.txt
    echo "stderr: $stderr"
    [ "$stderr" = "$msg" ]
    [ ! -e out.txt ]
}

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
    [ "${lines[0]}" = "Usage: halomf [OPTION]... [CATALOGUE]..." ]
    for o in --column --level --bins-per-dex --min --max --min-n --volume --plot --format --size --label --reference --reference-label --mass-unit --length-unit; do [[ "$output" == *"$o"* ]] || return 1; done
    run halomf --version
    [[ "$output" =~ ^halomf\ \(fofkit\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
    run -2 halomf --bins-per-dex=0
    [ "${lines[0]}" = "halomf: option --bins-per-dex: 0 is out of range (it must be from 0.01 to 1000)" ]
    run -2 halomf --min=10 --max=1
    [ "${lines[0]}" = "halomf: option --max (1) is below --min (10)" ]
    run -2 halomf -z
    [ "${lines[0]}" = "halomf: option -z does not apply: halomf writes text or pictures" ]
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
    [ "$output" = "halomf: cat.csv: the catalogue gives no box: give --volume" ]
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
    [ "$output" = "halomf: ragged.txt: line 14: 5 columns, the header names 6" ]
    hand | sed 's/^0 0 3 3 20 15$/0 0 3 3 twenty 15/' >word.txt
    run -1 halomf word.txt
    [ "$output" = "halomf: word.txt: line 10: mass 'twenty' is not a number" ]
    : >empty.txt
    run -1 halomf empty.txt
    [ "$output" = "halomf: empty.txt: empty input" ]
    printf '\n\n' >blank.txt
    run -1 halomf blank.txt
    [ "$output" = "halomf: blank.txt: no header naming the columns (not a catalogue?)" ]
    printf 'n,mass\n3,1\n' >nolevel.csv
    run -1 halomf --level=1 --volume=1 nolevel.csv
    [ "$output" = "halomf: nolevel.csv: no level column, so no level 1" ]
    run -1 halomf missing.txt
    [[ "$output" == "halomf: "*"missing.txt"* ]]
}

@test "the mock's level-0 halos from text, CSV and stream: every mass in the bin that holds its log10, dn = n / (V dex)" {
    F=$BATS_FILE_TMPDIR
    awk '/^#/ { h = $0; next }
        !done { sub(/^# */, "", h); m = split(h, n, " "); for (k = 1; k <= m; k++) at[n[k]] = k; done = 1 }
        $(at["level"]) == 0 { print log($(at["mass"])) / log(10) }' "$F/h.txt" >logm.txt
    for cat in h.txt h.csv h.fof; do
        # CSV says nothing of the box: --volume 1, the mock's.
        run -0 halomf --volume 1 "$F/$cat"
        printf '%s\n' "$output" | grep -v '^#' >"bins.$cat"
        # Every mass counted once, in the bin whose edges hold its log10, by an awk recount (the
        # edges are printed to 6 decimals, and the lowest is the least mass: 1e-6 of slack).
        awk 'NR == FNR { lo[FNR] = $1; hi[FNR] = $2; c[FNR] = $4; dn[FNR] = $5; nb = FNR; next }
            { for (k = 1; k <= nb; k++) if ($1 >= lo[k] - 1e-6 && ($1 < hi[k] - 1e-6 || k == nb)) { got[k]++; break } }
            END {
                for (k = 1; k <= nb; k++) {
                    if (got[k] + 0 != c[k]) { print "bin " k ": " c[k] " counted, awk finds " got[k] + 0; bad = 1 }
                    if (c[k] > 0 && (dn[k] / (c[k] / (hi[k] - lo[k])) - 1)^2 > 1e-10) { print "bin " k ": dn " dn[k]; bad = 1 }
                }
                exit bad
            }' "bins.$cat" logm.txt
    done
    # The three forms of one catalogue give the same bins; the stream and the text the box too.
    cmp bins.h.txt bins.h.csv
    cmp bins.h.txt bins.h.fof
    [ "$(halomf "$F/h.fof" | grep -v '^#')" = "$(halomf "$F/h.txt" | grep -v '^#')" ]
    halomf "$F/h.fof" | grep -q "^# volume 1 length^3 (the box of the header)"
}

@test "levels of a stream catalogue: the same bins as the text's, level by level" {
    mkuniverse -n 20000 -s 5 -o m.std
    tipsy2bin m.std | kdbuild | foflink -b 0.2,0.1 | groups -m 10 >g.fof
    halostats --centre=com --format=stream <g.fof >h.fof
    halostats --centre=com <g.fof >h.txt
    for k in 0 1; do
        [ "$(halomf --level=$k h.fof | grep -v '^#')" = "$(halomf --level=$k h.txt | grep -v '^#')" ]
        # every row of level k counted once
        want=$(awk -v k=$k '!/^#/ && $1 == k { s++ } END { print s + 0 }' h.txt)
        [ "$(halomf --level=$k h.fof | awk '!/^#/ { s += $4 } END { print s }')" -eq "$want" ]
        [ "$want" -gt 0 ]
    done
    run -0 halomf --level=2 --min=1 --max=10 h.fof
    printf '%s\n' "$output" | grep -qx "# 0 of 0 rows in the bins; 0 below, 0 above; 0 skipped (nan or not positive)"
}

@test "--volume scales dn by 1/V, --min-n drops small halos, --length-unit names the volume's unit" {
    F=$BATS_FILE_TMPDIR
    run -0 halomf --volume 8 "$F/h.txt"
    a=$(printf '%s\n' "$output" | awk '!/^#/ && $4 > 0 { print $5 * 8 / $4 * ($2 - $1); exit }')
    [ "$a" = "1" ]
    total=$(grep -vc '^#' "$F/h.txt")
    run -0 halomf --min-n 100 "$F/h.txt"
    big=$(printf '%s\n' "$output" | awk '!/^#/ { s += $4 } END { print s }')
    want=$(awk '/^#/ { next } $4 >= 100 { s++ } END { print s }' "$F/h.txt")
    [ "$big" -eq "$want" ]
    [ "$big" -lt "$total" ]
    halomf --length-unit=Mpc "$F/h.txt" | grep -q "^# volume 1 Mpc^3 (the box of the header)"
}

@test "--plot: the PNG decodes at the size asked, points drawn, from text and stream, any column" {
    need_cairo
    F=$BATS_FILE_TMPDIR
    run -0 halomf --plot -s 640x480 "$F/h.txt" -o mf.png
    run -0 pngprobe mf.png
    [ "${lines[0]}" = "640 480" ]
    # A white plot with dark axes and blue points: mostly white.
    [ "${lines[1]}" = "median 255" ]
    halomf -p -c n --mass-unit=particles <"$F/h.fof" >n.png
    run -0 pngprobe n.png
    [ "${lines[0]}" = "800 600" ]
    # the picture differs from the text's, whose mass column is not n
    ! cmp -s n.png mf.png
}

@test "--plot and the mock: bad options and bad input, one line each, no output left" {
    F=$BATS_FILE_TMPDIR
    ln -s "$F"/h.txt "$F"/h.fof "$F"/g.fof .
    run -2 halomf --plot --size 100x100 h.txt -o out.png
    [[ "${lines[0]}" == "halomf: option --size"* ]]
    run -2 halomf --size big h.txt
    [ "${lines[0]}" = "halomf: option --size needs WxH, not 'big'" ]
    run -2 halomf --bins-per-dex 0 h.txt
    [[ "${lines[0]}" == "halomf: option --bins-per-dex"* ]]
    one_line 1 "halomf: h.txt: no halos to count (none of --min-n particles or more)" halomf --min-n 1000000000 h.txt
    grep '^#' h.txt >none.txt
    one_line 1 "halomf: none.txt: no halos to count" halomf none.txt
    awk '!/^#/ { $5 = 0 } { print }' h.txt >massless.txt
    one_line 1 "halomf: massless.txt: no positive finite mass at level 0: give --min and --max" halomf massless.txt
    grep -v '^# box' h.txt >nobox.txt
    one_line 1 "halomf: nobox.txt: the catalogue gives no box: give --volume" halomf nobox.txt
    : >empty.txt
    one_line 1 "halomf: empty.txt: empty input" halomf empty.txt
    printf '# id n mass x y z\n1 2 3\n' >short.txt
    one_line 1 "halomf: short.txt: line 2: 3 columns, the header names 6" halomf --volume 1 short.txt
    one_line 1 "halomf: g.fof: no HCOL chunk (write it with halostats --format=stream)" halomf g.fof
    one_line 1 "halomf: h.fof: no column 'm200c' in the catalogue" halomf -c m200c h.fof
    run pngprobe
    [ "$status" -eq 77 ] && return 0
    # no bin holds a halo: no picture, and no file left
    one_line 1 "halomf: h.txt: mass function: no bin holds a halo" halomf --plot --min=1e10 --max=1e11 h.txt
}

@test "--plot: PNG, SVG and PDF by the output's name or --format; text is text" {
    need_cairo
    F=$BATS_FILE_TMPDIR
    # a name of a picture format draws without --plot
    run -0 halomf -s 500x400 "$F/h.txt" -o mf.png
    python3 "$CHECK" png mf.png 500 400
    run -0 halomf "$F/h.txt" -o mf.svg
    python3 "$CHECK" svg mf.svg "Halo mass function: 48 halos" "dn/dlog10 M [length⁻³]" "M [mass]" "10⁻"
    run -0 halomf "$F/h.txt" -o mf.pdf
    python3 "$CHECK" pdf mf.pdf
    if command -v pdftotext >/dev/null; then pdftotext mf.pdf - | grep -q 'dn/dlog10 M'; fi
    halomf --format=svg "$F/h.txt" >out.svg
    python3 "$CHECK" svg out.svg "Halo mass function: 48 halos"
    # the units of the catalogue on the axes: kpc becomes Mpc for the density
    run -0 halomf "$F/hu.txt" -o mfu.svg
    python3 "$CHECK" svg mfu.svg "M [Msun]" "dn/dlog10 M [Mpc⁻³]"
    run -2 halomf --format=pdf "$F/h.txt" -o mf2.svg
    [ "${lines[0]}" = "halomf: option --format=pdf, but the output mf2.svg is named for svg" ]
    [ ! -e mf2.svg ]
}

@test "--plot: several catalogues and levels on one plot, the legend names each" {
    need_cairo
    F=$BATS_FILE_TMPDIR
    ln -s "$F"/h.txt "$F"/h.fof "$F"/h2.txt .
    run -0 halomf h.txt h.fof -o two.svg
    run -0 python3 "$CHECK" texts two.svg
    echo "$output"
    [ "${lines[0]}" = "Halo mass function" ]
    printf '%s\n' "${lines[@]}" | grep -qx 'h.txt'
    printf '%s\n' "${lines[@]}" | grep -qx 'h.fof'
    run -0 halomf --level=0,1 h2.txt --label="run A" -o levels.svg
    python3 "$CHECK" svg levels.svg "run A, level 0" "run A, level 1"
    run -0 halomf --label=first --label=second h.txt h2.txt -o labels.png
    run -0 pngprobe labels.png
    [ "${lines[0]}" = "800 600" ]
    # the tables of several: one after another, two blank lines apart, each its own header
    run -0 halomf --level=0,1 h2.txt
    [ "$(printf '%s\n' "$output" | grep -c '^# halomf ')" -eq 2 ]
    [[ "$output" == *"of h2.txt, level 1"* ]]
    run -2 halomf --label=one h.txt h2.txt
    [ "${lines[0]}" = "halomf: 1 --label for 2 catalogues: give one a catalogue, or none" ]
    run -2 halomf - - <h.txt
    [ "${lines[0]}" = "halomf: stdin can be read once: give '-' once" ]
    # one plot takes one unit
    one_line 1 "halomf: $F/hu.txt: mass is in Msun, but h.txt's in mass: one plot takes one mass unit" \
        halomf --plot h.txt "$F/hu.txt"
}

@test "--plot --reference: the curve is drawn and named in the legend; a bad one leaves no picture" {
    need_cairo
    F=$BATS_FILE_TMPDIR
    # a power law through the mock's mass function (masses 0.0015 to 0.2, dn/dlog10 M 5 to 75 in the box)
    awk 'BEGIN { print "# mass dn/dlog10M"; for (l = -4; l <= 0; l += 0.1) printf "%g %g\n", 10^l, 20 * 10^(-0.6 * (l + 2)) }' >ref.txt
    awk 'BEGIN { for (l = -4; l <= 0; l += 0.1) printf "%g %g\n", 10^l, 1e30 }' >far.txt
    run -0 halomf --reference ref.txt --reference-label "a power law" "$F/h.txt" -o ref.svg
    python3 "$CHECK" svg ref.svg "a power law" "h.txt"
    # the line: many more dark pixels than the same legend with a curve far above the plot
    run -0 halomf --reference ref.txt --reference-label "a power law" "$F/h.txt" -o ref.png
    run -0 pngprobe ref.png
    near=${lines[2]#dark }
    run -0 halomf --reference far.txt --reference-label "a power law" "$F/h.txt" -o far.png
    run -0 pngprobe far.png
    far=${lines[2]#dark }
    echo "dark pixels: curve $near, none $far"
    [ "$near" -gt $((far + 300)) ]
    # its file's name by default
    run -0 halomf --reference ref.txt "$F/h.txt" -o ref2.svg
    python3 "$CHECK" svg ref2.svg "ref.txt"
    # a bad line: one line naming it, no picture left
    printf '1e12 1e-5\n1e11 2e-5\n' >down.txt
    one_line 1 "halomf: down.txt: line 2: mass 1e+11 after 1e+12 (masses must increase)" \
        halomf --plot --reference down.txt "$F/h.txt"
    run -2 halomf --reference ref.txt "$F/h.txt"
    [ "${lines[0]}" = "halomf: option --reference draws on the picture: give --plot too" ]
}

@test "--plot: no half-written picture when writing fails" {
    need_cairo
    run -1 --separate-stderr bash -c 'trap "" XFSZ; ulimit -f 4; exec halomf --level=0,1 "$1" -o big.pdf' _ "$BATS_FILE_TMPDIR/h2.txt"
    [ "$stderr" = "halomf: big.pdf: cannot write: File too large" ]
    [ -z "$(ls -A | grep big)" ]
}

@test "without cairo: --plot says so in one line, the table still works" {
    run pngprobe
    [ "$status" -eq 77 ] || skip "this build has cairo"
    ln -s "$BATS_FILE_TMPDIR/h.txt" .
    one_line 1 "halomf: this build draws no pictures (cairo was not found: install libcairo2-dev, then make config); without --plot halomf prints the bins" \
        halomf --plot h.txt
    run -0 halomf h.txt
}
