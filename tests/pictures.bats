#!/usr/bin/env bats
# pictures.bats - fofmap(1): PNG, SVG and PDF pictures, the PNG at the size asked, halos where the catalogue puts them (in its units), the slab in the title, text as text, bad input in one line and no file left (halomf.bats tests the mass function's picture).

bats_require_minimum_version 1.5.0

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
    # the same particles in a unit of 1e5 kpc (a box of 100 Mpc), catalogues in kpc
    tipsy2bin --kpc-unit=1e5 --msol-unit=1e15 u.std | kdbuild | foflink -b 0.2 | groups -m 20 >gu.fof
    halostats --format=stream <gu.fof >hu.fof
    halostats <gu.fof >hu.txt
    halostats --csv <gu.fof >hu.csv
}

CHECK=$BATS_TEST_DIRNAME/py/picture_check.py

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    F=$BATS_FILE_TMPDIR
    ln -s "$F"/h.txt "$F"/h.csv "$F"/h.fof "$F"/g.fof "$F"/hu.fof "$F"/hu.txt "$F"/hu.csv .
}

# Skips the test when this build draws no pictures (no cairo) or the probe cannot read them.
need_cairo() {
    run pngprobe
    [ "$status" -ne 77 ] || skip "built without cairo"
    run fofmap -o /dev/null "$F/h.fof"
    [[ "$output" != *"draws no pictures"* ]] || skip "built without cairo"
}

# Prints "X Y RPX XR" for halo ID of h.txt (or CAT, its lengths UNIT stream units): its pixel in
# a SIZE-pixel map of the whole box seen along z (x right, y up, box [-0.5, 0.5)), its radius in
# pixels, and the column where its ring crosses its row on the left.
halo_pixel() {
    awk -v want="$1" -v size="$2" -v u="${4:-1}" '/^#/ { h = $0; next }
        !done { sub(/^# */, "", h); m = split(h, n, " "); for (k = 1; k <= m; k++) at[n[k]] = k; done = 1 }
        $(at["level"]) == 0 && $(at["id"]) == want {
            x = ($(at["xc"]) / u + 0.5) * size; r = $(at["rc_max"]) / u * size
            printf "%d %d %d %d\n", x, (0.5 - $(at["yc"]) / u) * size, r, x - r }' "${3:-$F/h.txt}"
}

# Runs PROG ARGS... expecting status S and exactly the one line MESSAGE on stderr, no output file.
one_line() {
    local s=$1 msg=$2
    shift 2
    run "-$s" --separate-stderr "$@" -o out.png
    echo "stderr: $stderr"
    [ "$stderr" = "$msg" ]
    [ ! -e out.png ]
}

@test "fofmap: --help, --version, unknown options" {
    for p in fofmap; do
        run -0 --separate-stderr "$p" --help
        [[ "${lines[0]}" == "Usage: $p [OPTION]..."* ]]
        run -0 "$p" --version
        [[ "$output" =~ ^$p\ \(fofkit\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
        run -2 "$p" --bogus
        [ "${lines[0]}" = "$p: unknown option '--bogus'" ]
    done
}

@test "fofmap: the PNG decodes at the size asked, the heaviest halo far above the background" {
    need_cairo
    run -0 fofmap -n 0 -s 300 "$F/h.fof" -o map.png
    read -r x y r < <(halo_pixel 1 300)
    run -0 pngprobe map.png "$x" "$y" 2
    echo "$output"
    [ "${lines[0]}" = "300 300" ]
    centre=${lines[1]}
    median=${lines[2]#median }
    # magma: the densest pixel is near white (brightness ~ 250), the background dark.
    awk -v c="$centre" -v m="$median" 'BEGIN { exit !(c > 180 && c > m + 100) }'
}

@test "fofmap: the other axes, a slab and viridis give pictures of the size asked" {
    need_cairo
    run -0 fofmap -a x -s 64 --slab 0.2 --cmap viridis "$F/h.fof" -o x.png
    run -0 pngprobe x.png
    [ "${lines[0]}" = "64 64" ]
    # stdin in, stdout out
    fofmap -a y -s 50 <"$F/h.fof" >y.png
    run -0 pngprobe y.png
    [ "${lines[0]}" = "50 50" ]
}

@test "fofmap: rings where the text and CSV catalogues put the largest halos, and only when asked" {
    need_cairo
    read -r x y r xr < <(halo_pixel 1 400)
    [ "$r" -ge 4 ]
    for cat in h.txt h.csv; do
        run -0 fofmap -n 1 --smooth 0 -s 400 --halos "$F/$cat" "$F/h.fof" -o ring.png
        run -0 fofmap -n 0 --smooth 0 -s 400 --halos "$F/$cat" "$F/h.fof" -o plain.png
        # The ring, to the left of the centre where the density is lower: the brightest of the
        # three pixels about where it crosses the halo's row (it is antialiased).
        run -0 pngprobe ring.png $((xr - 1)) "$y" 0 "$xr" "$y" 0 $((xr + 1)) "$y" 0
        with=$(printf '%s\n' "${lines[@]:1:3}" | sort -n | tail -1)
        run -0 pngprobe plain.png $((xr - 1)) "$y" 0 "$xr" "$y" 0 $((xr + 1)) "$y" 0
        without=$(printf '%s\n' "${lines[@]:1:3}" | sort -n | tail -1)
        echo "$cat: ring $with, no ring $without"
        awk -v a="$with" -v b="$without" 'BEGIN { exit !(a > 200 && a > b + 40) }'
    done
}

@test "fofmap --halo: the zoom is centred on the halo" {
    need_cairo
    run -0 fofmap --halo 1 -n 0 -s 200 "$F/h.fof" -o zoom.png
    run -0 pngprobe zoom.png 100 100 2 5 5 2
    echo "$output"
    [ "${lines[0]}" = "200 200" ]
    awk -v c="${lines[1]}" -v e="${lines[2]}" 'BEGIN { exit !(c > 200 && c > e + 100) }'
    # The same field by centre and width (the halo's xc yc zc, six times its rc_max; the caption
    # differs): the halo at the centre again.
    read -r cw < <(awk '/^#/ { h = $0; next }
        !done { sub(/^# */, "", h); m = split(h, n, " "); for (k = 1; k <= m; k++) at[n[k]] = k; done = 1 }
        $(at["level"]) == 0 && $(at["id"]) == 1 { print $(at["xc"]) "," $(at["yc"]) "," $(at["zc"]), 6 * $(at["rc_max"]) }' h.txt)
    run -0 fofmap -c "${cw% *}" -w "${cw#* }" -d "${cw#* }" -n 0 -s 200 h.fof -o cw.png
    run -0 pngprobe cw.png 100 100 2 5 5 2
    awk -v c="${lines[1]}" -v e="${lines[2]}" 'BEGIN { exit !(c > 200 && c > e + 100) }'
}

@test "fofmap: bad options and bad input, one line each, no picture left" {
    need_cairo
    run -2 fofmap --axis w "$F/h.fof" -o out.png
    [ "${lines[0]}" = "fofmap: option --axis needs x, y or z, not 'w'" ]
    run -2 fofmap --size 8 "$F/h.fof" -o out.png
    [[ "${lines[0]}" == "fofmap: option --size"* ]]
    run -2 fofmap --cmap jet "$F/h.fof" -o out.png
    [ "${lines[0]}" = "fofmap: option --cmap needs magma or viridis, not 'jet'" ]
    run -2 fofmap --width 2 "$F/h.fof" -o out.png
    [ "${lines[0]}" = "fofmap: --width 2 is wider than the periodic box (1)" ]
    [ ! -e out.png ]
    one_line 1 "fofmap: $F/h.fof: no halo 99999 at level 0 of the catalogue (it has $(grep -vc '^#' "$F/h.txt"))" \
        fofmap --halo 99999 "$F/h.fof"
    one_line 1 "fofmap: $F/h.txt: no halo 99999 at level 0 of the catalogue (it has $(grep -vc '^#' "$F/h.txt"))" \
        fofmap --halo 99999 --halos="$F/h.txt" "$F/g.fof"
    one_line 1 "fofmap: $F/g.fof: --halo needs a catalogue: --halos=FILE or halostats --format=stream" \
        fofmap --halo 1 "$F/g.fof"
    printf 'not a stream\n' >bad.fof
    run -1 --separate-stderr fofmap bad.fof -o out.png
    [[ "$stderr" == "fofmap: bad.fof: "* ]]
    [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
    [ ! -e out.png ]
    head -c 3000 "$F/h.fof" >cut.fof
    run -1 --separate-stderr fofmap cut.fof -o out.png
    [[ "$stderr" == "fofmap: cut.fof: "* ]]
    [ ! -e out.png ]
    sed '50s/^0 0 /0 0 x/' "$F/h.txt" >badcat.txt
    run -1 --separate-stderr fofmap --halos badcat.txt "$F/h.fof" -o out.png
    [[ "$stderr" == "fofmap: badcat.txt: line 50: "* ]]
    [ ! -e out.png ]
    printf 'a b c\n1 2 3\n' >noheader.txt
    one_line 1 "fofmap: noheader.txt: line 1: no header naming the columns" fofmap --halos noheader.txt h.fof
    # a catalogue of no halos is valid: nothing circled
    grep '^#' "$F/h.txt" >none.txt
    run -0 fofmap --halos none.txt -s 32 h.fof -o none.png
    printf '# a b c\n1 2 3\n' >nocols.txt
    one_line 1 "fofmap: nocols.txt: no column 'id' (not a halostats catalogue?)" fofmap --halos nocols.txt h.fof
}

@test "fofmap: PNG, SVG and PDF by the output's name or --format, each a valid file of its kind" {
    need_cairo
    run -0 fofmap -n 3 -l -s 300 h.fof -o m.png
    python3 "$CHECK" png m.png 300 300
    run -0 fofmap -n 3 -l -s 300 h.fof -o m.svg
    python3 "$CHECK" svg m.svg "20000 particles, seen along z" "slab at z = "
    run -0 fofmap -n 3 -l -s 300 h.fof -o m.PDF
    python3 "$CHECK" pdf m.PDF
    # its text is text, in an embedded font (where poppler's tools are installed to read it)
    if command -v pdftotext >/dev/null; then pdftotext m.PDF - | grep -q '^slab at z = 0, 1 thick'; fi
    # --format: a name without an extension, and stdout (SVG is text: a pipe or not)
    run -0 fofmap --format=svg -s 300 h.fof -o plain
    python3 "$CHECK" svg plain "slab at z = "
    fofmap --format=pdf -s 300 h.fof >out.pdf
    python3 "$CHECK" pdf out.pdf
    fofmap -s 300 h.fof | head -c 8 | od -An -c | grep -q 'P   N   G'
    # a name and a --format that disagree, a format fofkit does not draw: usage errors, nothing written
    run -2 fofmap --format=svg h.fof -o m2.png
    [ "${lines[0]}" = "fofmap: option --format=svg, but the output m2.png is named for png" ]
    run -2 fofmap --format=gif h.fof -o m2.gif
    [ "${lines[0]}" = "fofmap: option --format needs png, svg or pdf, not 'gif'" ]
    run -2 fofmap h.fof -o m2.jpg
    [ "${lines[0]}" = "fofmap: m2.jpg: fofkit draws png, svg or pdf pictures, not jpg: name it .png, .svg or .pdf" ]
    [ ! -e m2.png ] && [ ! -e m2.gif ] && [ ! -e m2.jpg ]
}

@test "fofmap: a PNG or PDF goes to a terminal only with -f; an SVG is text and goes" {
    need_cairo
    command -v script >/dev/null || skip "no script(1) to stand for a terminal"
    run script -qc "fofmap -s 200 h.fof" /dev/null
    [[ "$output" == *"fofmap: stdout: refusing to write binary data to a terminal"* ]]
    run script -qc "fofmap --format=pdf -s 200 h.fof" /dev/null
    [[ "$output" == *"refusing to write binary data to a terminal"* ]]
    run script -qc "fofmap --format=svg -s 200 h.fof" /dev/null
    [[ "$output" == *"<svg"* ]]
}

@test "fofmap: text is text: the SVG's title, the slab, the scale bar and the labels are text elements" {
    need_cairo
    run -0 fofmap -n 3 -l -s 400 h.fof -o t.svg
    run -0 python3 "$CHECK" texts t.svg
    echo "$output"
    [ "${lines[0]}" = "20000 particles, seen along z; slab at z = 0, 1 thick (the whole box; box side 1)" ]
    printf '%s\n' "${lines[@]}" | grep -qx '20000 particles, seen along z'
    printf '%s\n' "${lines[@]}" | grep -qx '0.2 (box side 1)'
    # the three largest halos' ids as labels
    for id in $(awk '!/^#/ && $1 == 0 { print $5, $3 }' h.txt | sort -gr | head -3 | cut -d' ' -f2); do
        printf '%s\n' "${lines[@]}" | grep -qx "$id"
    done
    # tiny pictures have no text
    run -0 fofmap -s 100 h.fof -o tiny.svg
    run -0 python3 "$CHECK" texts tiny.svg
    [ "${#lines[@]}" -eq 1 ]
}

@test "fofmap: the title states the slab, its centre along the line of sight and its thickness, in the stream's units" {
    need_cairo
    run -0 fofmap -a y -c 0,0.15,0 -d 0.1 -s 200 h.fof -o s.svg
    python3 "$CHECK" svg s.svg "slab at y = 0.15, 0.1 thick (box side 1)"
    # a stream in units of 1e5 kpc: kpc or Mpc, per the field's width
    run -0 fofmap -d 0.02 -s 200 hu.fof -o su.svg
    python3 "$CHECK" svg su.svg "slab at z = 0 Mpc, 2 Mpc thick" "20 Mpc"
    # halo 1 in a field of 2 Mpc: kpc; its zc, to four digits
    zc=$(awk '/^# level host/ { for (k = 1; k <= NF; k++) if ($k == "zc") c = k - 1; next }
        !/^#/ && $3 == 1 && $1 == 0 { printf "%.4g", $c }' hu.txt)
    run -0 fofmap --halo 1 -w 0.02 -d 0.005 -s 200 hu.fof -o sk.svg
    python3 "$CHECK" svg sk.svg "slab at z = $(printf '%.10g' "$zc") kpc, 500 kpc thick" "200 kpc"
    run -0 fofmap --halo 1 -s 200 hu.fof -o sh.svg
    python3 "$CHECK" svg sh.svg "halo 1: " " thick"
    run -0 fofmap --length-name=furlong -d 0.5 -s 200 h.fof -o sf.svg
    python3 "$CHECK" svg sf.svg "slab at z = 0 furlong, 0.5 furlong thick" "0.2 furlong"
}

@test "fofmap: a stream in kpc units (tipsy2bin --kpc-unit): rings where its catalogues in kpc put the halos" {
    need_cairo
    read -r x y r xr < <(halo_pixel 1 400 "$F/hu.txt" 1e5)
    [ "$r" -ge 4 ]
    run -0 fofmap -n 0 --smooth 0 -s 400 hu.fof -o plain.png
    run -0 pngprobe plain.png $((xr - 1)) "$y" 0 "$xr" "$y" 0 $((xr + 1)) "$y" 0
    without=$(printf '%s\n' "${lines[@]:1:3}" | sort -n | tail -1)
    for cat in "" "--halos=hu.txt" "--halos=hu.csv"; do
        run -0 fofmap -n 1 --smooth 0 -s 400 $cat hu.fof -o ring.png
        run -0 pngprobe ring.png $((xr - 1)) "$y" 0 "$xr" "$y" 0 $((xr + 1)) "$y" 0
        with=$(printf '%s\n' "${lines[@]:1:3}" | sort -n | tail -1)
        echo "${cat:-stream}: ring $with, no ring $without"
        awk -v a="$with" -v b="$without" 'BEGIN { exit !(a > 200 && a > b + 40) }'
    done
    # --halo zooms on it there too: its centre bright
    run -0 fofmap --halo 1 -n 0 -s 200 hu.fof -o zoom.png
    run -0 pngprobe zoom.png 100 100 2 5 5 2
    awk -v c="${lines[1]}" -v e="${lines[2]}" 'BEGIN { exit !(c > 200 && c > e + 100) }'
    # a CSV in kpc/h over a stream not per h: said, not drawn wrong
    sed '1s/\[kpc\]/[kpc\/h]/g' hu.csv >huh.csv
    one_line 1 "fofmap: huh.csv: lengths in kpc/h, which the stream's units do not convert to: give the text catalogue (its header says the factor)" \
        fofmap --halos huh.csv hu.fof
}

@test "fofmap: no half-written picture when writing fails" {
    need_cairo
    # a file size limit: the write fails with EFBIG, the temporary is removed
    run -1 --separate-stderr bash -c 'trap "" XFSZ; ulimit -f 4; exec fofmap -s 400 h.fof -o big.png'
    echo "$stderr"
    [ "$stderr" = "fofmap: big.png: cannot write: File too large" ]
    [ -z "$(ls -A | grep big)" ] # nor a temporary beside it
    run -1 --separate-stderr fofmap -s 400 h.fof -o /dev/full
    [ "$stderr" = "fofmap: /dev/full: cannot write: No space left on device" ]
}

@test "without cairo: fofmap says so in one line" {
    run pngprobe
    [ "$status" -eq 77 ] || skip "this build has cairo"
    one_line 1 "fofmap: this build draws no pictures (cairo was not found: install libcairo2-dev, then make config)" \
        fofmap h.fof
}
