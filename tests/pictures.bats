#!/usr/bin/env bats
# pictures.bats - fofmap(1): the PNG decodes at the size asked, halos show where the catalogue puts them, bad input fails in one line (halomf.bats tests the mass function's picture).

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
}

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    F=$BATS_FILE_TMPDIR
    ln -s "$F"/h.txt "$F"/h.csv "$F"/h.fof "$F"/g.fof .
}

# Skips the test when this build writes no PNG (no libpng) or the probe cannot read one.
need_png() {
    run pngprobe
    [ "$status" -ne 77 ] || skip "built without libpng"
    run fofmap -o /dev/null "$F/h.fof"
    [[ "$output" != *"no PNG support"* ]] || skip "built without libpng"
}

# Prints "X Y RPX XR" for halo ID of h.txt: its pixel in a SIZE-pixel map of the whole box
# seen along z (x right, y up, box [-0.5, 0.5)), its radius in pixels, and the column where
# its ring crosses its row on the left.
halo_pixel() {
    awk -v want="$1" -v size="$2" '/^#/ { h = $0; next }
        !done { sub(/^# */, "", h); m = split(h, n, " "); for (k = 1; k <= m; k++) at[n[k]] = k; done = 1 }
        $(at["level"]) == 0 && $(at["id"]) == want {
            x = ($(at["xc"]) + 0.5) * size; r = $(at["rc_max"]) * size
            printf "%d %d %d %d\n", x, (0.5 - $(at["yc"])) * size, r, x - r }' "$F/h.txt"
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
    need_png
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
    need_png
    run -0 fofmap -a x -s 64 --slab 0.2 --cmap viridis "$F/h.fof" -o x.png
    run -0 pngprobe x.png
    [ "${lines[0]}" = "64 64" ]
    # stdin in, stdout out
    fofmap -a y -s 50 <"$F/h.fof" >y.png
    run -0 pngprobe y.png
    [ "${lines[0]}" = "50 50" ]
}

@test "fofmap: rings where the text and CSV catalogues put the largest halos, and only when asked" {
    need_png
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
    need_png
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
    need_png
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

@test "without libpng: fofmap says so in one line" {
    run pngprobe
    [ "$status" -eq 77 ] || skip "this build has libpng"
    one_line 1 "fofmap: this build has no PNG support (libpng was not found: install libpng-dev, then make config)" \
        fofmap h.fof
}
