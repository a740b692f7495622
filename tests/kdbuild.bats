#!/usr/bin/env bats
# kdbuild.bats - kdbuild(1): options, tree order, the documented tree layout (TREE, TBOX), every bad input with its message and status.

bats_require_minimum_version 1.5.0
load ref_helpers

# A mkstream description of N particles (default 300): clumps and a background in the
# unit box [0, 1), random velocities, masses and types, shuffled original indices among
# N + 5 source particles; a few duplicated positions and particles on the box faces.
particles() {
    awk -v n="${1:-300}" -v seed="${2:-3}" "$RND_AWK"'BEGIN {
        S = mix(seed)
        print "box 1"; print "origin 0"; print "periodic 1"; print "nsource", n + 5
        for (i = 0; i < n; i++) P[i] = i + 5
        for (i = n - 1; i > 0; i--) { j = int(rnd() * (i + 1)); t = P[i]; P[i] = P[j]; P[j] = t }
        for (i = 0; i < n; i++) {
            if (i % 3 == 0) { x = 0.3 + 0.02 * rnd(); y = 0.7 + 0.02 * rnd(); z = 0.1 * rnd() }
            else { x = rnd(); y = rnd(); z = rnd() }
            if (i % 50 == 7) { x = 0; y = 0.99999994 }
            if (i % 40 == 1 && i > 1) { x = X; y = Y; z = Z }   # a duplicate of the previous one
            X = x; Y = y; Z = z
            printf "p %.9g %.9g %.9g %.6g %.6g %.6g %.6g %d %d\n", x, y, z, rnd() - 0.5, rnd() - 0.5, rnd() - 0.5,
                rnd(), int(3 * rnd()), P[i]
        }
    }'
}

# Checks that tree-ordered stream OUT is stream IN rearranged: ID a permutation of IN's,
# and every per-particle chunk's row i equal to IN's row for the particle with that ID.
same_particles() {
    local in=$1 out=$2 tag
    for tag in ID POS VEL MASS TYPE; do
        fofdump -c "$tag" "$in" >"in.$tag"
        fofdump -c "$tag" "$out" >"out.$tag"
    done
    [ "$(wc -l <out.ID)" -eq "$(wc -l <in.ID)" ]
    [ "$(sort -n out.ID)" = "$(sort -n in.ID)" ]
    [ "$(sort -n out.ID | uniq -d | wc -l)" -eq 0 ]
    # rows keyed by ID must match
    cmp <(paste -d '|' in.ID in.POS in.VEL in.MASS in.TYPE | sort -t '|' -k1,1n) \
        <(paste -d '|' out.ID out.POS out.VEL out.MASS out.TYPE | sort -t '|' -k1,1n)
}

# Checks the tree of stream FILE against the layout documented in kdtree.h: TREE's keys,
# the depth, node count, node ranges (packed: units of S), every particle inside its nodes'
# boxes (tight boxes for the CPU builder, whose children are split along their parent's
# widest axis), the empty box of an empty leaf, leaves of S but the last and empty ones.
tree_layout() {
    local f=$1 S=$2 n
    fofdump -c TREE "$f" >tree.txt
    n=$(fofdump -c SNAP "$f" | awk '$1 == "n" { print $2 }')
    [ "$(awk '{ print $1 }' tree.txt | tr '\n' ' ')" = "n leafsize unit depth nodes builder " ]
    [ "$(awk '$1 == "unit" { print $2 }' tree.txt)" = "$S" ]
    [ "$(awk '$1 == "n" { print $2 }' tree.txt)" = "$n" ]
    [ "$(awk '$1 == "leafsize" { print $2 }' tree.txt)" = "$S" ]
    fofdump -c TBOX "$f" >tbox.txt
    fofdump -c POS "$f" >pos.txt
    awk -v n="$n" -v S="$S" '
        FILENAME == "tree.txt" { T[$1] = $2; next }
        FILENAME == "tbox.txt" { for (k = 1; k <= 6; k++) B[FNR - 1, k] = $k; nb = FNR; next }
        { for (k = 1; k <= 3; k++) X[FNR - 1, k] = $k }
        function fail(m) { print "tree: " m; bad = 1; exit 1 }
        END {
            if (bad) exit 1
            D = 0; while (int((n + 2 ^ D - 1) / 2 ^ D) > S) D++
            U = int((n + S - 1) / S)
            if (n == 0) { if (T["nodes"] != 0 || nb != 0) fail("nodes for no particle"); exit 0 }
            if (T["depth"] != D) fail("depth " T["depth"] " instead of " D)
            if (T["nodes"] != 2 ^ (D + 1) - 1 || nb != T["nodes"]) fail("nodes " T["nodes"] ", boxes " nb)
            for (i = 0; i < nb; i++) {
                d = 0; while (2 ^ (d + 1) <= i + 1) d++
                k = i + 1 - 2 ^ d; s = S * int(k * U / 2 ^ d); e = S * int((k + 1) * U / 2 ^ d)
                if (s > n) s = n; if (e > n) e = n
                if (d == D && e - s != S && e != n && e > s) fail("leaf " i " holds " e - s)
                if (d < D && e == s) fail("node " i " is empty")
                if (e == s && (B[i, 1] != "inf" || B[i, 4] != "-inf")) fail("empty leaf " i " box " B[i, 1] " " B[i, 4])
                for (a = 1; a <= 3; a++) { lo[a] = 1e300; hi[a] = -1e300 }
                for (j = s; j < e; j++) for (a = 1; a <= 3; a++) {
                    if (X[j, a] < B[i, a] || X[j, a] > B[i, a + 3]) fail("node " i " misses particle " j)
                    if (X[j, a] < lo[a]) lo[a] = X[j, a]; if (X[j, a] > hi[a]) hi[a] = X[j, a]
                }
                if (T["builder"] == "cpu-median" && e > s) {
                    for (a = 1; a <= 3; a++) if (lo[a] != B[i, a] || hi[a] != B[i, a + 3]) fail("box " i " is not tight")
                    if (d < D) {
                        L = 2 * i + 1; R = L + 1; w = 0
                        for (a = 1; a <= 3; a++) if (hi[a] - lo[a] > w) w = hi[a] - lo[a]
                        ok = 0
                        for (a = 1; a <= 3; a++) if (hi[a] - lo[a] >= w * (1 - 1e-6) && B[L, a + 3] <= B[R, a]) ok = 1
                        if (B[L, 1] == "inf" || B[R, 1] == "inf") ok = 1 # one child an empty leaf
                        if (!ok) fail("node " i ": children not split along the widest axis")
                    }
                }
            }
        }' tree.txt tbox.txt pos.txt
}

# The partition of a linked stream as "ID lowest-ID-of-its-group" lines, sorted by ID.
partition() {
    fofdump -c ID "$1" >p.id
    fofdump -c SINK "$1" >p.sink
    awk 'FNR == NR { id[FNR - 1] = $1; next } { s[FNR - 1] = $1 }
        END { for (i in s) if (!(s[i] in m) || id[i] < m[s[i]]) m[s[i]] = id[i]
              for (i in s) print id[i], m[s[i]] }' p.id p.sink | sort -n
}

@test "--help, --version" {
    help_and_version kdbuild --leaf-size=N --device=D --output=FILE --compress --force --verbose
    run kdbuild --help
    [[ "$output" == *"most particles in a leaf (default 16, at least 2; 32 when"* ]]
}

@test "usage errors: one message, a pointer to --help, status 2" {
    usage_fails "unknown option '--bogus'" kdbuild --bogus
    usage_fails "unknown option '-x'" kdbuild -x
    usage_fails "option '-s' needs a value" kdbuild -s
    usage_fails "option '--leaf-size' needs a value" kdbuild --leaf-size
    usage_fails "option '-o' needs a value" kdbuild -o
    usage_fails "option --leaf-size: 1 is out of range [2, 1048576]" kdbuild -s 1
    usage_fails "option --leaf-size: 1048577 is out of range [2, 1048576]" kdbuild --leaf-size=1048577
    usage_fails "option --leaf-size needs a whole number, not '16x'" kdbuild -s 16x
    usage_fails "option --device takes auto, cpu, gpu or gpu:N (the N-th GPU), not 'tpu'" kdbuild --device=tpu
    usage_fails "option --compress: 10 is out of range [1, 9]" kdbuild --compress=10
    usage_fails "option -o needs a file name, not '-v'" kdbuild -o -v
    usage_fails "too many input files (one at most, or '-' for stdin)" kdbuild a.bin b.bin
    FOFKIT_DEVICE=bogus usage_fails "FOFKIT_DEVICE must be auto, cpu, gpu or gpu:N, not 'bogus'" kdbuild
}

@test "refuses to write binary data to a terminal, or to read it from one" {
    particles 10 | mkstream -o in.bin
    terminal_refusals kdbuild writes in.bin
}

@test "the output is the input in tree order, with TREE and TBOX after POS, for any leaf size" {
    particles 300 | mkstream -o in.bin
    for S in 2 3 16 33 299 300 1000; do
        kdbuild -s "$S" -o "t$S.bin" in.bin
        same_particles in.bin "t$S.bin"
        tree_layout "t$S.bin" "$S"
        [ "$(fofdump "t$S.bin" | awk 'NR > 1 { printf "%s ", $1 }')" = "SNAP POS TREE TBOX VEL MASS TYPE ID " ]
        [ "$(fofdump -c SNAP "t$S.bin")" = "$(fofdump -c SNAP in.bin)" ]
    done
    # the default leaf size is 16; the CPU builder names itself
    kdbuild --device=cpu in.bin >t.bin
    kdbuild --device=cpu -s 16 in.bin >t16cpu.bin
    cmp t.bin t16cpu.bin
    [ "$(fofdump -c TREE t.bin)" = "$(printf '%s\n' 'n 300' 'leafsize 16' 'unit 16' 'depth 5' 'nodes 63' 'builder cpu-median')" ]
    [ "$(fofdump t.bin | awk '$1 == "TBOX" { print $2, $4, $5 }')" = "<f4 63 6" ]
}

@test "stdin to stdout, files, -z, compressed input, and any thread count give the same stream" {
    particles 500 >in.txt
    mkstream -o in.bin in.txt
    kdbuild <in.bin >a.bin
    kdbuild -o b.bin in.bin
    cmp a.bin b.bin
    kdbuild - <in.bin >c.bin
    cmp a.bin c.bin
    OMP_NUM_THREADS=1 kdbuild in.bin >d.bin
    cmp a.bin d.bin
    # compressed in, plain out: the same bytes
    mkstream -z -o inz.bin in.txt
    kdbuild inz.bin >e.bin
    cmp a.bin e.bin
    # compressed out: every chunk zlib, the same content
    kdbuild -z in.bin >z.bin
    [ "$(fofdump z.bin | awk 'NR > 1 && $NF != "zlib"' | wc -l)" -eq 0 ]
    for tag in SNAP POS VEL MASS TYPE ID TREE TBOX; do
        [ "$(fofdump -c $tag z.bin)" = "$(fofdump -c $tag a.bin)" ]
    done
    kdbuild --compress=1 in.bin | fofdump -c TBOX >tbox1.txt
    cmp tbox1.txt <(fofdump -c TBOX a.bin)
}

@test "particle chunks before POS, unknown chunks and 8-byte IDs are carried along" {
    particles 100 >in.txt
    mkstream -o in.bin in.txt
    # MASS and ID before POS are held until the order is known, then rearranged
    streamtool in.bin moved.bin --move MASS POS --move ID POS --add NOTE "|u1" 4 5 1 "a*" "k 42"$'\n' \
        --add PERP "<f4" 2 100 1 "f<*" "$(seq -s, 0 99)"
    [ "$(fofdump moved.bin | awk 'NR > 1 { printf "%s ", $1 }')" = "SNAP MASS ID POS VEL TYPE NOTE PERP " ]
    kdbuild -s 4 -o t.bin moved.bin
    [ "$(fofdump t.bin | awk 'NR > 1 { printf "%s ", $1 }')" = "SNAP POS TREE TBOX MASS ID VEL TYPE NOTE PERP " ]
    same_particles in.bin t.bin
    [ "$(fofdump -c NOTE t.bin)" = "k 42" ]
    # the extra per-particle chunk follows the particles: its row is the stream index of
    # the particle in the input, so it must agree with the input's IDs mapped along
    paste <(fofdump -c ID in.bin) <(seq 0 99) | sort -n >want.txt
    paste <(fofdump -c ID t.bin) <(fofdump -c PERP t.bin) | sort -n >got.txt
    cmp want.txt got.txt
    # 8-byte IDs
    mkstream --id-u8 -o in8.bin in.txt
    kdbuild -s 4 -o t8.bin in8.bin
    [ "$(fofdump t8.bin | awk '$1 == "ID" { print $2 }')" = "<u8" ]
    [ "$(fofdump -c ID t8.bin)" = "$(fofdump -c ID t.bin)" ]
}

@test "no particle, one particle, all on one point" {
    printf 'nsource 3\n' | mkstream -o zero.bin
    kdbuild --device=cpu -o t0.bin zero.bin
    [ "$(fofdump -c TREE t0.bin)" = "$(printf '%s\n' 'n 0' 'leafsize 16' 'unit 16' 'depth 0' 'nodes 0' 'builder cpu-median')" ]
    [ "$(fofdump t0.bin | awk '$1 == "TBOX" { print $4 }')" = 0 ]
    printf 'p 0.5 0.25 0\n' | mkstream -o one.bin
    kdbuild -s 2 -o t1.bin one.bin
    [ "$(fofdump -c TREE t1.bin | sed -n 4,5p | tr '\n' ' ')" = "depth 0 nodes 1 " ]
    [ "$(fofdump -c TBOX t1.bin)" = "0.5 0.25 0 0.5 0.25 0" ]
    for i in $(seq 1 200); do echo "p 0.25 0.5 0.75 0 0 0 1 1 $((200 - i))"; done | mkstream -o same.bin
    kdbuild -s 2 -o ts.bin same.bin
    same_particles same.bin ts.bin
    tree_layout ts.bin 2
}

@test "the sink array is canonical, the same partition for every leaf size and method" {
    particles 400 7 | mkstream -o in.bin
    for S in 2 16 33; do
        kdbuild -s "$S" in.bin | foflink -l 0.03 -o "l$S.bin"
        fofdump -c SINK "l$S.bin" >sink.txt
        [ "$(wc -l <sink.txt)" -eq 400 ]
        # sink[i] <= i and sink[sink[i]] == sink[i]
        awk '{ s[NR - 1] = $1 } END { for (i = 0; i < NR; i++) if (s[i] > i || s[s[i]] != s[i]) { print "bad sink", i; exit 1 } }' sink.txt
        partition "l$S.bin" >"part$S.txt"
    done
    cmp part2.txt part16.txt
    cmp part2.txt part33.txt
    kdbuild -s 5 in.bin | foflink -l 0.03 --method=brute >lb.bin
    partition lb.bin >partb.txt
    cmp part2.txt partb.txt
    # something to compare: groups of several members, and singles
    [ "$(awk '$1 != $2' part2.txt | wc -l)" -gt 50 ]
    [ "$(awk '{ print $2 }' part2.txt | sort -u | wc -l)" -gt 20 ]
}

@test "a stream built before the unit key (halved leaves) is read so, and links to the same partition" {
    # tests/fixtures/halves-300.fof: particles 300, kdbuild -s 16 before trees were packed
    local old="$BATS_TEST_DIRNAME/fixtures/halves-300.fof"
    [ "$(fofdump -c TREE "$old" | awk '{ print $1 }' | tr '\n' ' ')" = "n leafsize depth nodes builder " ]
    # its leaves hold 9 or 10 (300 / 32), no leaf empty; packed, 13 of the 32 leaves are
    [ "$(fofdump -c TBOX "$old" | grep -c inf)" -eq 0 ]
    particles 300 | mkstream | kdbuild -s 16 -o new.bin
    [ "$(fofdump -c TBOX new.bin | grep -c inf)" -eq 13 ]
    foflink -l 0.03 -o old.bin "$old"
    foflink -l 0.03 -o new.bin.linked new.bin
    partition old.bin >old.txt
    partition new.bin.linked >new.txt
    cmp old.txt new.txt
    [ "$(awk '$1 != $2' old.txt | wc -l)" -gt 30 ]
    # a layout bent by hand is refused: a unit other than 1 and the leaf size, an empty leaf's box not empty
    streamtool new.bin unit.bin --drop TREE --add TREE "|u1" 4 51 1 "a*" \
        "$(printf 'n 300\nleafsize 16\nunit 3\ndepth 5\nnodes 63\nbuilder x\n')" --move TREE TBOX
    fails "foflink: unit.bin: TREE chunk: unit 3 is neither 1 nor the leaf size 16" foflink unit.bin
    # the first empty leaf (node i) given its sibling's box, which its parent contains
    fofdump -c TBOX new.bin | awk '{ r[NR - 1] = $0 } /inf/ && e == "" { e = NR - 1 }
        END { s = e % 2 ? e + 1 : e - 1; r[e] = r[s]; for (i = 0; i < NR; i++) print r[i]; print e >"empty.txt" }' |
        tr ' \n' ',,' | sed 's/,$//' >boxes.txt
    streamtool new.bin box.bin --drop TBOX --add TBOX "<f4" 0 63 6 "f<*" "$(cat boxes.txt)"
    fails "foflink: box.bin: tree node $(cat empty.txt) is an empty leaf without the empty box" foflink box.bin
}

@test "bad inputs: each with its one-line message and status 1" {
    particles 20 | mkstream -o in.bin
    unreadable_inputs kdbuild
    unreadable_inputs kdbuild -s 2 --device=cpu
    # cut short at several places
    pos=$(chunk_offset in.bin POS)
    size=$(stat -c %s in.bin)
    head -c 1 in.bin >cut.bin
    fails "kdbuild: cut.bin: truncated stream (ends inside the stream header at byte 1)" kdbuild cut.bin
    head -c 64 in.bin >cut.bin
    fails "kdbuild: cut.bin: truncated stream (no END chunk)" kdbuild cut.bin
    head -c $((pos + 30)) in.bin >cut.bin
    fails "kdbuild: cut.bin: truncated stream (ends inside a chunk header)" kdbuild cut.bin
    head -c $((pos + 64 + 100)) in.bin >cut.bin
    fails "kdbuild: cut.bin: truncated stream: chunk POS at byte $pos claims $(stored in.bin "$pos") bytes of payload, the file holds 100 more" kdbuild cut.bin
    cat cut.bin | fails "kdbuild: stdin: the stream stops inside a chunk payload at byte $((pos + 64 + 100)) (the program writing the pipe stopped)" kdbuild
    head -c $((pos + 64 + 250)) in.bin >cut.bin
    fails "kdbuild: cut.bin: truncated stream (ends inside chunk padding at byte $((pos + 64 + 250)))" kdbuild cut.bin
    head -c $((size - 64)) in.bin >cut.bin
    fails "kdbuild: cut.bin: truncated stream (no END chunk)" kdbuild cut.bin
    head -c $((size - 1)) in.bin | fails "kdbuild: stdin: the stream stops inside a chunk header at byte $((size - 1)) (the program writing the pipe stopped)" kdbuild
    # damage
    cp in.bin crc.bin
    flip_byte crc.bin $((pos + 64 + 7))
    fails "kdbuild: crc.bin: chunk POS: payload CRC mismatch (damaged data)" kdbuild crc.bin
    cp in.bin crc.bin
    flip_byte crc.bin $(($(chunk_offset in.bin ID) + 64))
    fails "kdbuild: crc.bin: chunk ID: payload CRC mismatch (damaged data)" kdbuild crc.bin
    cp in.bin hdr.bin
    flip_byte hdr.bin $((pos + 16))
    fails "kdbuild: hdr.bin: damaged chunk header at byte $pos (CRC mismatch)" kdbuild hdr.bin
    cp in.bin shdr.bin
    flip_byte shdr.bin 30
    fails "kdbuild: shdr.bin: damaged stream header (CRC mismatch)" kdbuild shdr.bin
    cp in.bin magic.bin
    flip_byte magic.bin 1
    fails "kdbuild: magic.bin: not a fofkit stream (bad magic)" kdbuild magic.bin
    printf 'not a stream at all, but long enough to hold a stream header of sixty-four bytes' >text.bin
    fails "kdbuild: text.bin: not a fofkit stream (bad magic)" kdbuild text.bin
    streamtool in.bin v2.bin --version 2
    fails "kdbuild: v2.bin: unsupported stream version 2 (this program reads version 1)" kdbuild v2.bin
    # missing chunks, chunks that do not fit
    particles 20 | mkstream --omit=SNAP -o nosnap.bin
    fails "kdbuild: nosnap.bin: stream does not start with a SNAP chunk" kdbuild nosnap.bin
    particles 20 | mkstream --omit=POS -o nopos.bin
    fails "kdbuild: nopos.bin: stream has no POS chunk" kdbuild nopos.bin
    streamtool in.bin two.bin --add POS "<f4" 2 20 3 "f<*" "$(seq -s, 1 60 | sed 's/[0-9]*/0.5/g')"
    fails "kdbuild: two.bin: stream has two POS chunks" kdbuild two.bin
    streamtool in.bin rows.bin --add EXTRA "<f4" 2 19 1 "f<*" "$(seq -s, 1 19)"
    fails "kdbuild: rows.bin: chunk EXTRA has 19 rows for 20 particles" kdbuild rows.bin
    streamtool in.bin pos2.bin --drop POS --add POS "<f4" 2 20 2 "f<*" "$(seq -s, 1 40 | sed 's/[0-9]*/0.5/g')"
    fails "kdbuild: pos2.bin: chunk POS holds <f4 x 2, expected <f4 x 3" kdbuild pos2.bin
    # a stream in tree order already, or linked
    kdbuild in.bin >tree.bin
    fails "kdbuild: tree.bin: stream already has a TREE chunk (it is in tree order already)" kdbuild tree.bin
    foflink tree.bin >linked.bin
    fails "kdbuild: stdin: stream already has a TREE chunk (it is in tree order already)" kdbuild <linked.bin
    particles 20 | sed '$a sink 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19' | mkstream -o sink.bin
    fails "kdbuild: sink.bin: stream already has a SINK chunk (it is in tree order already)" kdbuild sink.bin
    # coordinates
    printf 'p 0.5 0.5 0.5\np 0.1 nan 0.2\n' | mkstream -o nan.bin
    fails "kdbuild: nan.bin: particle 1 has a non-finite coordinate (0.1 nan 0.2)" kdbuild nan.bin
    printf 'p inf 0.5 0.5\n' | mkstream -o inf.bin
    fails "kdbuild: inf.bin: particle 0 has a non-finite coordinate (inf 0.5 0.5)" kdbuild inf.bin
    printf 'p 0.5 0.5 0.5\np 0.5 0.5 -inf\nperiodic 0\n' | mkstream -o ninf.bin
    fails "kdbuild: ninf.bin: particle 1 has a non-finite coordinate (0.5 0.5 -inf)" kdbuild ninf.bin
    printf 'p 0.5 1 0.5\n' | mkstream -o out1.bin
    fails "kdbuild: out1.bin: particle 0 at (0.5 1 0.5) lies outside the periodic box [0, 1)" kdbuild out1.bin
    printf 'box 2\norigin -1\np 0 0 0\np -1.0000001 0 0\n' | mkstream -o out2.bin
    fails "kdbuild: out2.bin: particle 1 at (-1 0 0) lies outside the periodic box [-1, 1)" kdbuild out2.bin
    # not periodic: anywhere finite is fine
    printf 'periodic 0\np 0.5 1 0.5\np -7 1e30 3\n' | mkstream -o iso.bin
    kdbuild -o iso.tree iso.bin
    [ "$(fofdump -c TBOX iso.tree)" = "-7 1 0.5 0.5 1.00000002e+30 3" ]
}

@test "a failure leaves no output file behind, and does not touch an existing one" {
    particles 50 | mkstream -o in.bin
    cp in.bin late.bin
    flip_byte late.bin $(($(chunk_offset in.bin ID) + 64)) # found after SNAP, POS, VEL, MASS, TYPE
    no_partial_output 1 kdbuild late.bin
    head -c 500 in.bin >cut.bin
    no_partial_output 1 kdbuild cut.bin
    no_partial_output 2 kdbuild -s 1 in.bin
    kdbuild in.bin >tree.bin
    no_partial_output 1 kdbuild tree.bin
    # a success replaces the file
    kdbuild -o out.bin in.bin
    [ "$(fofdump -c TREE out.bin | head -1)" = "n 50" ]
    [ -z "$(ls -A | grep '\.tmp\.')" ]
}

@test "--device and FOFKIT_DEVICE: cpu works, gpu without a GPU fails with status 3 and the reason" {
    particles 50 | mkstream -o in.bin
    # -v says which device and why
    kdbuild -v --device=cpu -o f.bin in.bin 2>err.txt
    grep -qx 'kdbuild: device: CPU (as asked)' err.txt
    grep -q '^kdbuild: built a tree of 50 particles, depth 2, 7 nodes in ' err.txt
    run --separate-stderr kdbuild -o g.bin in.bin
    [ -z "$stderr" ]
    device_choices kdbuild in.bin -s 2
}

@test "the real snapshots: tree order and layout" {
    need_snapshot test4-zoom
    need_snapshot run99-gas-dark-star
    tipsy2bin -o zoom.bin "$DATA/test4-zoom.std"
    kdbuild -s 33 -o zoom.tree zoom.bin
    same_particles zoom.bin zoom.tree
    tipsy2bin --no-periodic -o gal.bin "$DATA/run99-gas-dark-star.std"
    kdbuild -s 2 -o gal.tree gal.bin
    same_particles gal.bin gal.tree
    tree_layout gal.tree 2
}
