#!/usr/bin/env bats
# foflink.bats - foflink(1): options, the LINK and SINK chunks, pass-through, every bad input with its message and status.

bats_require_minimum_version 1.5.0
load ref_helpers

# A tree-ordered stream (kdbuild -s 4) of hand-placed particles in the unit box [0, 1):
# with l = 0.1, a chain of four across the x = 0 / x = 1 faces (IDs 0, 3, 5, 6), a pair
# (IDs 1, 4), two singles (IDs 2, 7). Written to FILE.
eight() {
    mkstream <<'EOF' | kdbuild -s 4 -o "$1"
box 1
origin 0
periodic 1
p 0.02 0.5 0.5    0 0 0 1 1 0
p 0.5 0.5 0.5     0 0 0 1 1 1
p 0.25 0.25 0.25  0 0 0 1 1 2
p 0.09 0.5 0.5    0 0 0 1 1 3
p 0.5 0.56 0.5    0 0 0 1 1 4
p 0.95 0.5 0.5    0 0 0 1 1 5
p 0.88 0.5 0.5    0 0 0 1 1 6
p 0.75 0.75 0.1   0 0 0 1 1 7
EOF
}

# The SINK a linked stream FILE should hold for the groups given as sets of IDs
# ("0,3,5,6 1,4"; the others alone): for each row, the lowest row of its group.
expected_sink() {
    local f=$1
    shift
    fofdump -c ID "$f" | awk -v groups="$*" '
        BEGIN { ng = split(groups, G, " "); for (g = 1; g <= ng; g++) { m = split(G[g], M, ","); for (k = 1; k <= m; k++) grp[M[k]] = g } }
        { id[NR - 1] = $1; key = ($1 in grp) ? "g" grp[$1] : "i" $1; if (!(key in first)) first[key] = NR - 1; print first[key] }'
}

@test "--help, --version" {
    help_and_version foflink --b=B --link-length=L --no-periodic --method=M --device=D --threads=N --output=FILE \
        --compress --force --verbose
    run foflink --help
    [[ "$output" == *"(dx*dx + dy*dy) + dz*dz, is strictly below l*l"* ]]
}

@test "usage errors: one message, a pointer to --help, status 2" {
    usage_fails "unknown option '--bogus'" foflink --bogus
    usage_fails "unknown option '-x'" foflink -x
    usage_fails "option '-l' needs a value" foflink -l
    usage_fails "option '-b' needs a value" foflink -b
    usage_fails "option '--link-length' needs a value" foflink --link-length
    usage_fails "option '-j' needs a value" foflink -j
    usage_fails "option '--method' needs a value" foflink --method
    usage_fails "option '--device' needs a value" foflink --device
    usage_fails "option -l: the linking length must be positive, not -1" foflink -l -1
    usage_fails "option -l: the linking length must be positive, not 0" foflink -l 0
    usage_fails "option -b: the linking length must be positive, not 0" foflink -b 0
    usage_fails "option -b: the linking length must be positive, not -0.2" foflink --b=-0.2
    usage_fails "option -l needs a number, not 'nan'" foflink -l nan
    usage_fails "option -l needs a number, not 'inf'" foflink -l inf
    usage_fails "option -l needs a number, not '0.1x'" foflink -l 0.1x
    usage_fails "options -l and -b are exclusive" foflink -l 0.1 -b 0.2
    usage_fails "options -l and -b are exclusive" foflink -b 0.2 --link-length=0.1
    usage_fails "option --method takes tree or brute, not 'fast'" foflink --method=fast
    usage_fails "option --threads: 0 is out of range [1, 4096]" foflink -j 0
    usage_fails "option --threads needs a whole number, not 'x'" foflink --threads=x
    usage_fails "option --device takes auto, cpu, gpu or gpu:N (the N-th GPU), not 'tpu'" foflink --device=tpu
    usage_fails "too many input files (one at most, or '-' for stdin)" foflink a.bin b.bin
    FOFKIT_DEVICE=bogus usage_fails "FOFKIT_DEVICE must be auto, cpu, gpu or gpu:N, not 'bogus'" foflink
    usage_fails "option --device takes auto, cpu, gpu or gpu:N (the N-th GPU), not 'gpu:x'" foflink --device=gpu:x
    usage_fails "option --device takes auto, cpu, gpu or gpu:N (the N-th GPU), not 'gpu:'" foflink --device=gpu:
}

@test "linking lengths the box or binary32 cannot take: status 2, one line" {
    eight t.bin
    fails_with 2 "foflink: t.bin: linking length 0.6 is larger than half the box (0.5)" foflink -l 0.6 t.bin
    # b = 2.5: l = 2.5 / 8^(1/3) = 1.25
    fails_with 2 "foflink: t.bin: linking length 1.25 is larger than half the box (0.5)" foflink -b 2.5 t.bin
    fails_with 2 "foflink: t.bin: linking length 1e+20 is out of binary32 range" foflink --no-periodic -l 1e20 t.bin
    fails_with 2 "foflink: t.bin: linking length 1e-30 is out of binary32 range" foflink -l 1e-30 t.bin
    # half the box itself is allowed, and without periodic wrapping any length
    foflink -l 0.5 t.bin >/dev/null
    foflink --no-periodic -l 7 t.bin | fofdump -c SINK >s.txt
    [ "$(sort -u s.txt)" = 0 ]
}

@test "a linking length whose binary32 value is 0 or infinite is out of binary32 range" {
    eight t.bin
    fails_with 2 "foflink: t.bin: linking length 1e+40 is out of binary32 range" foflink --no-periodic -l 1e40 t.bin
    fails_with 2 "foflink: t.bin: linking length 1e-50 is out of binary32 range" foflink -l 1e-50 t.bin
}

@test "a linking length just above half the box is printed with the digits that matter" {
    eight t.bin
    fails_with 2 "foflink: t.bin: linking length 0.50000001 is larger than half the box (0.5)" foflink -l 0.50000001 t.bin
}

@test "refuses to write binary data to a terminal, or to read it from one" {
    eight t.bin
    terminal_refusals foflink writes t.bin
}

@test "SINK holds the lowest stream index of each group; LINK the parameters; the input passes through" {
    eight t.bin
    foflink -l 0.1 -o out.bin t.bin
    fofdump -c SINK out.bin >sink.txt
    expected_sink out.bin "0,3,5,6 1,4" >want.txt
    cmp sink.txt want.txt
    # the chunks: the input's, byte for byte, with LINK and SINK as soon as what foflink reads has
    # come (POS, TREE, TBOX): before the chunks after them
    [ "$(fofdump out.bin | awk 'NR > 1 { printf "%s ", $1 }')" = "SNAP POS TREE TBOX LINK SINK VEL MASS TYPE ID " ]
    streamtool out.bin bare.bin --drop LINK --drop SINK
    cmp bare.bin t.bin
    # a stream whose TREE comes last (kdbuild before it wrote TREE after POS): linked at its end
    streamtool t.bin last.bin --move TREE END --move TBOX END
    foflink -l 0.1 -o out2.bin last.bin
    [ "$(fofdump out2.bin | awk 'NR > 1 { printf "%s ", $1 }')" = "SNAP POS VEL MASS TYPE ID TREE TBOX LINK SINK " ]
    cmp <(fofdump -c SINK out2.bin) sink.txt
    [ "$(fofdump out.bin | awk '$1 == "SINK" { print $2, $3, $4, $5, $7 }')" = "<u4 0 8 1 particle" ]
    fofdump -c LINK out.bin >link.txt
    for kv in "l 0.10000000149011612" "psi 0" "periodic 1" "box 1" "method tree" "device \(cpu\|gpu\)" "groups 4"; do
        grep -qx "$kv" link.txt || { echo "LINK lacks '$kv'"; cat link.txt; return 1; }
    done
    ! grep -q '^b ' link.txt
    # -b: l = b box / n^(1/3) = 0.0625 for b = 0.125 and 8 particles: the pair (0.06 apart)
    # stays, the chain (0.07 between neighbours) falls apart
    foflink -b 0.125 t.bin >outb.bin
    fofdump -c LINK outb.bin >link.txt
    grep -qx "l 0.0625" link.txt
    grep -qx "b 0.125" link.txt
    cmp <(fofdump -c SINK outb.bin) <(expected_sink outb.bin "1,4")
    [ "$(fofdump -c SINK outb.bin | sort -u | wc -l)" -eq 7 ]
    # the default is b = 0.2: l = 0.1
    foflink t.bin | fofdump -c LINK | grep -qx "l 0.10000000149011612"
    # isolated: the chain breaks at the faces
    foflink -l 0.1 --no-periodic t.bin >outn.bin
    fofdump -c LINK outn.bin | grep -qx "periodic 0"
    cmp <(fofdump -c SINK outn.bin) <(expected_sink outn.bin "0,3 5,6 1,4")
}

@test "the same SINK for any thread count, brute force, leaf size, compression, pipe or file" {
    awk "$RND_AWK"'BEGIN { S = mix(9); print "box 1"; print "origin 0"
        for (i = 0; i < 3000; i++) { c = int(rnd() * 30); S = mix(c * 7 + 1); x = rnd(); y = rnd(); z = rnd(); S = mix(i + 100)
            printf "p %.9g %.9g %.9g\n", (x + 0.01 * rnd()) % 1, (y + 0.01 * rnd()) % 1, (z + 0.01 * rnd()) % 1 } }' |
        mkstream -o in.bin
    kdbuild -s 8 -o t.bin in.bin
    foflink -l 0.004 -o a.bin t.bin
    foflink -l 0.004 -j 1 t.bin >b.bin
    cmp a.bin b.bin
    OMP_NUM_THREADS=2 foflink -l 0.004 <t.bin >c.bin
    cmp a.bin c.bin
    foflink -l 0.004 --method=brute t.bin >d.bin
    cmp <(fofdump -c SINK a.bin) <(fofdump -c SINK d.bin)
    fofdump -c LINK d.bin | grep -qx "method brute"
    kdbuild -z -s 8 in.bin | foflink -l 0.004 -z >z.bin
    [ "$(fofdump z.bin | awk 'NR > 1 && $NF != "zlib"' | wc -l)" -eq 0 ]
    cmp <(fofdump -c SINK a.bin) <(fofdump -c SINK z.bin)
    cmp <(fofdump -c LINK a.bin) <(fofdump -c LINK z.bin)
    # groups of several members
    [ "$(fofdump -c SINK a.bin | sort | uniq -c | awk '$1 > 5' | wc -l)" -gt 10 ]
    # other leaf sizes: other stream orders, the same partition
    for S in 2 33; do
        kdbuild -s "$S" in.bin | foflink -l 0.004 | groups -m 1 --format=grp >"g$S.grp"
    done
    groups -m 1 --format=grp a.bin >g8.grp
    cmp g8.grp g2.grp
    cmp g8.grp g33.grp
}

@test "no particle and one particle" {
    printf 'nsource 2\n' | mkstream | kdbuild >t0.bin
    foflink -o out0.bin t0.bin
    [ "$(fofdump out0.bin | awk '$1 == "SINK" { print $4 }')" = 0 ]
    fofdump -c LINK out0.bin | grep -qx "groups 0"
    # -b with no particle: n is taken as 1
    fofdump -c LINK out0.bin | grep -qx "l 0.20000000298023224"
    printf 'p 0.999 0 0.5\n' | mkstream | kdbuild >t1.bin
    foflink -l 0.5 -o out1.bin t1.bin
    [ "$(fofdump -c SINK out1.bin)" = 0 ]
    fofdump -c LINK out1.bin | grep -qx "groups 1"
}

@test "-v reports the length, the device and the work on stderr; quiet otherwise" {
    eight t.bin
    run --separate-stderr foflink -v --device=cpu -l 0.1 -o out.bin t.bin
    [ "$status" -eq 0 ]
    [ "${stderr_lines[0]}" = "foflink: device: CPU (as asked)" ]
    [ "${stderr_lines[1]}" = "foflink: linking 8 particles with l = 0.1 (periodic box 1)" ]
    [[ "${stderr_lines[2]}" =~ ^foflink:\ linked\ on\ the\ CPU\ \(tree\)\ in\ [0-9.]+\ s\ \(.*\):\ 4\ groups,\ [0-9]+\ pair\ tests,\ [0-9]+\ box\ tests$ ]]
    run --separate-stderr foflink -l 0.1 -o out.bin t.bin
    [ -z "$stderr" ]
}

@test "bad inputs: each with its one-line message and status 1" {
    eight t.bin
    unreadable_inputs foflink
    unreadable_inputs foflink -l 0.1 --method=brute
    # cut short
    tree=$(chunk_offset t.bin TREE)
    size=$(stat -c %s t.bin)
    head -c 40 t.bin >cut.bin
    fails "foflink: cut.bin: truncated stream (ends inside the stream header at byte 40)" foflink cut.bin
    head -c "$tree" t.bin >cut.bin
    fails "foflink: cut.bin: truncated stream (no END chunk)" foflink cut.bin
    head -c $((tree + 64 + 10)) t.bin >cut.bin
    fails "foflink: cut.bin: truncated stream: chunk TREE at byte $tree claims $(stored t.bin "$tree") bytes of payload, the file holds 10 more" foflink cut.bin
    head -c $((size - 10)) t.bin | fails "foflink: stdin: the stream stops inside a chunk header at byte $((size - 10)) (the program writing the pipe stopped)" foflink
    # damage
    pos=$(chunk_offset t.bin POS)
    cp t.bin crc.bin
    flip_byte crc.bin $((pos + 64 + 3))
    fails "foflink: crc.bin: chunk POS: payload CRC mismatch (damaged data)" foflink crc.bin
    cp t.bin crc.bin
    flip_byte crc.bin $(($(chunk_offset t.bin TBOX) + 64 + 3))
    fails "foflink: crc.bin: chunk TBOX: payload CRC mismatch (damaged data)" foflink crc.bin
    cp t.bin hdr.bin
    flip_byte hdr.bin $((tree + 3))
    fails "foflink: hdr.bin: damaged chunk header at byte $tree (CRC mismatch)" foflink hdr.bin
    cp t.bin shdr.bin
    flip_byte shdr.bin 60
    fails "foflink: shdr.bin: damaged stream header (CRC mismatch)" foflink shdr.bin
    cp t.bin magic.bin
    flip_byte magic.bin 0
    fails "foflink: magic.bin: not a fofkit stream (bad magic)" foflink magic.bin
    streamtool t.bin v9.bin --version 9
    fails "foflink: v9.bin: unsupported stream version 9 (this program reads version 1)" foflink v9.bin
    # missing or misplaced chunks
    streamtool t.bin nosnap.bin --drop SNAP
    fails "foflink: nosnap.bin: stream does not start with a SNAP chunk" foflink nosnap.bin
    streamtool t.bin nopos.bin --drop POS
    fails "foflink: nopos.bin: stream has no POS chunk" foflink nopos.bin
    printf 'p 0.5 0.5 0.5\n' | mkstream -o flat.bin
    fails "foflink: flat.bin: stream has no kd-tree (run kdbuild first)" foflink flat.bin
    streamtool t.bin nobox.bin --drop TBOX
    fails "foflink: nobox.bin: stream has a TREE chunk but no TBOX chunk" foflink nobox.bin
    streamtool t.bin boxfirst.bin --move TBOX TREE
    fails "foflink: boxfirst.bin: TBOX chunk without a TREE chunk before it" foflink boxfirst.bin
    streamtool t.bin twotree.bin --add TREE "|u1" 4 0 1 "a*" ""
    fails "foflink: twotree.bin: stream has two TREE chunks" foflink twotree.bin
    streamtool t.bin twopos.bin --add POS "<f4" 2 8 3 "f<*" "$(seq -s, 1 24 | sed 's/[0-9]*/0.5/g')"
    fails "foflink: twopos.bin: stream has two POS chunks" foflink twopos.bin
    # a TREE or TBOX that does not fit the stream
    printf 'p 0.1 0.1 0.1\np 0.2 0.2 0.2\n' | mkstream | kdbuild -s 4 >two.bin
    streamtool t.bin ntree.bin --chunk TREE two.bin --chunk TBOX two.bin
    fails "foflink: ntree.bin: the tree holds 2 particles, the stream 8" foflink ntree.bin
    streamtool t.bin nbox.bin --payload TBOX two.bin
    fails "foflink: nbox.bin: chunk TBOX: payload size 24 does not match 3 rows x 6 columns of <f4" foflink nbox.bin
    streamtool t.bin tree1.bin --payload TREE two.bin
    fails "foflink: tree1.bin: TBOX chunk does not hold 1 boxes of 6 <f4" foflink tree1.bin
    # already linked
    foflink t.bin >linked.bin
    fails "foflink: linked.bin: stream is linked already (it has a LINK chunk)" foflink linked.bin
    foflink t.bin | fails "foflink: stdin: stream is linked already (it has a LINK chunk)" foflink
    streamtool linked.bin sinkonly.bin --drop LINK
    fails "foflink: sinkonly.bin: stream is linked already (it has a SINK chunk)" foflink sinkonly.bin
}

@test "bad coordinates and a tree that does not contain its particles" {
    eight t.bin
    # the same particles with one coordinate replaced, written by mkstream: POS swapped in
    fofdump -c POS t.bin >pos.txt
    with_pos() { # LINE X Y Z -> stream with particle LINE (1-based) moved
        awk -v r="$1" -v p="$2 $3 $4" 'BEGIN { print "box 1"; print "origin 0" } { print "p", (NR == r ? p : $0) }' pos.txt |
            mkstream -o donor.bin
        streamtool t.bin "$5" --payload POS donor.bin
    }
    with_pos 3 0.5 nan 0.5 nan.bin
    fails "foflink: nan.bin: particle 2 has a non-finite coordinate (0.5 nan 0.5)" foflink nan.bin
    with_pos 1 inf 0.5 0.5 inf.bin
    fails "foflink: inf.bin: particle 0 has a non-finite coordinate (inf 0.5 0.5)" foflink inf.bin
    with_pos 8 0.5 0.5 -inf ninf.bin
    fails "foflink: ninf.bin: particle 7 has a non-finite coordinate (0.5 0.5 -inf)" foflink --no-periodic ninf.bin
    with_pos 2 0.5 1 0.5 out.bin
    fails "foflink: out.bin: particle 1 at (0.5 1 0.5) lies outside the periodic box [0, 1)" foflink out.bin
    with_pos 2 -0.001 0.5 0.5 out.bin
    fails "foflink: out.bin: particle 1 at (-0.001 0.5 0.5) lies outside the periodic box [0, 1)" foflink out.bin
    # a tree whose boxes do not contain the particles: the POS of another snapshot of 8
    awk 'BEGIN { print "box 1"; print "origin 0"; for (i = 0; i < 8; i++) printf "p %g %g %g\n", 0.9 - 0.1 * i, 0.1 * i, 0.5 }' |
        mkstream | kdbuild -s 4 >other.bin
    streamtool t.bin swapped.bin --payload POS other.bin
    run --separate-stderr foflink swapped.bin
    [ "$status" -eq 1 ]
    [[ "$stderr" =~ ^foflink:\ swapped.bin:\ tree\ node\ [0-9]+\ does\ not\ contain\ its\ particles\ \(the\ stream\ is\ not\ in\ this\ tree\'s\ order\)$ ]]
    # the boxes swapped instead: a parent that does not contain its children
    streamtool t.bin boxes.bin --payload TBOX other.bin
    run --separate-stderr foflink boxes.bin
    [ "$status" -eq 1 ]
    [[ "$stderr" =~ ^foflink:\ boxes.bin:\ tree\ node\ [0-9]+\ does\ not\ contain\ its\ (particles|children) ]]
    # a tree that claims another depth
    streamtool t.bin depth.bin --drop TREE --drop TBOX --add TREE "|u1" 4 40 1 "a*" \
        "$(printf 'n 8\nleafsize 4\ndepth 2\nnodes 7\nbuilder x\n')" --add TBOX "<f4" 0 7 6 "f<*" "$(seq -s, 1 42 | sed 's/[0-9]*/0/g')"
    fails "foflink: depth.bin: TREE chunk is inconsistent (n 8, leaf size 4, unit 1, depth 2, 7 nodes)" foflink depth.bin
}

@test "a failure leaves no output file behind, and does not touch an existing one" {
    eight t.bin
    cp t.bin late.bin
    flip_byte late.bin $(($(chunk_offset t.bin TBOX) + 64)) # the last chunk before END
    no_partial_output 1 foflink late.bin
    no_partial_output 1 foflink --method=brute late.bin
    head -c 700 t.bin >cut.bin
    no_partial_output 1 foflink cut.bin
    no_partial_output 2 foflink -l 0.7 t.bin
    foflink t.bin >linked.bin
    no_partial_output 1 foflink linked.bin
    foflink -l 0.1 -o out.bin t.bin
    [ "$(fofdump -c SINK out.bin | sort -u | wc -l)" -eq 4 ]
    [ -z "$(ls -A | grep '\.tmp\.')" ]
}

@test "--device and FOFKIT_DEVICE: cpu works, gpu without a GPU fails with status 3 and the reason" {
    eight t.bin
    device_choices foflink t.bin --method=brute
}

@test "a zoom-in snapshot (test4-zoom.std): -b takes the lightest particles' spacing; -v, LINK and a hint say so; --spacing" {
    local data=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}
    [ -f "$data/test4-zoom.std" ] || skip "no $data/test4-zoom.std"
    tipsy2bin "$data/test4-zoom.std" | kdbuild -o z.bin
    # five masses a factor 4096 apart; 43984 of the 67495 particles are the lightest, 3.349e-7 of a total 1:
    # n_eff = 1 / 3.349e-7 = 2985984 (144^3), the spacing 1/144
    run --separate-stderr foflink -b 0.2 -o lightest.bin z.bin
    [ "$status" -eq 0 ]
    [ "$stderr" = "foflink: hint: the dark particles' masses span a factor of 4096 (a zoom-in snapshot?): -b 0.2 is a fraction of the mean spacing of the lightest particles, 0.00694444 (l = 0.00138889), not of every particle's, 0.0245608 (l = 0.00491216 with --spacing=all); see foflink(1), THE MEAN SPACING" ]
    fofdump -c LINK lightest.bin >link.txt
    grep -qx "l 0.0013888889225199819" link.txt
    grep -qx "spacing_of lightest" link.txt
    grep -q "^neff 2985983\.[0-9]*$" link.txt
    grep -q "^spacing 0.006944444[0-9]*$" link.txt
    # -v says it too
    run --separate-stderr foflink -v --device=cpu -b 0.2 -o /dev/null z.bin
    [ "${stderr_lines[1]}" = "foflink: -b: the mean spacing box / n_eff^(1/3) = 0.0069444447 of the lightest particles (n_eff 2985983.66; 67495 particles in the stream)" ]
    # the cluster the snapshot was made for, 16242 particles; every particle's spacing links the whole
    # high-resolution region, 44626
    [ "$(groups -m 20 --format=grp lightest.bin | tail -n +2 | grep -cx 1)" -eq 16242 ]
    run --separate-stderr foflink -b 0.2 --spacing=all -o all.bin z.bin
    [ -z "$stderr" ] # asked for: no hint
    grep -qx "l 0.0049121631309390068" <(fofdump -c LINK all.bin)
    grep -qx "spacing_of all" <(fofdump -c LINK all.bin)
    [ "$(groups -m 20 --format=grp all.bin | tail -n +2 | grep -cx 1)" -eq 44626 ]
    # the types (all dark here) and the high-resolution mass name the same spacing
    foflink -b 0.2 --spacing=dark -o dark.bin z.bin
    cmp <(fofdump -c SINK lightest.bin) <(fofdump -c SINK dark.bin)
    grep -qx "spacing_of types dark" <(fofdump -c LINK dark.bin)
    foflink -b 0.2 --spacing=3.34898004e-07 -o mass.bin z.bin
    grep -qx "spacing_of mass 3.34898004e-07" <(fofdump -c LINK mass.bin)
    cmp <(fofdump -c SINK lightest.bin) <(fofdump -c SINK mass.bin)
    # the independent reference links at the same length
    fofref -b 0.2 -m 20 -o ref.grp z.bin
    cmp ref.grp <(groups -m 20 --format=grp lightest.bin)
    # usage
    run -2 foflink -l 0.001 --spacing=all z.bin
    [ "${lines[0]}" = "foflink: option --spacing applies to -b, not -l" ]
    run -2 foflink --spacing=heavy z.bin
    [ "${lines[0]}" = "foflink: option --spacing needs lightest, all, types (gas, dark, star) or a mass, not 'heavy'" ]
    fails_with 1 "foflink: z.bin: -b: the stream has no particles to take the mean spacing of (--spacing=types gas)" foflink --spacing=gas -o none.bin z.bin
    [ ! -e none.bin ]
}
