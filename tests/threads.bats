#!/usr/bin/env bats
# threads.bats - every stage gives the same bytes with OMP_NUM_THREADS=1, 2 and 7 (tipsy2bin, kdbuild, groups, .grp, halostats).

bats_require_minimum_version 1.5.0

setup_file() {
    cd "$BATS_FILE_TMPDIR"
    # clustered, two levels (GPAR), 200k particles: more than one block of
    # every parallel pass, a second or two in all
    mkuniverse -n 200000 -s 7 -o u.std
    tipsy2bin u.std | kdbuild | foflink -b 0.2,0.1 >u.fof
}

setup() {
    cd "$BATS_FILE_TMPDIR"
}

@test "tipsy2bin and kdbuild: the stream and the tree order byte-identical for 1, 2 and 7 threads" {
    for t in 1 2 7; do
        OMP_NUM_THREADS=$t tipsy2bin -o b$t.bin u.std
        OMP_NUM_THREADS=$t kdbuild --device=cpu -o k$t.kd b1.bin
    done
    cmp b1.bin b2.bin
    cmp b1.bin b7.bin
    ! cmp -s b1.bin k1.kd
    cmp k1.kd k2.kd
    cmp k1.kd k7.kd
}

@test "groups: GRPS, GID and GPAR byte-identical for 1, 2 and 7 threads" {
    for t in 1 2 7; do OMP_NUM_THREADS=$t groups -m 8 -o g$t.fof u.fof; done
    [ "$(fofdump g1.fof | grep -c GPAR)" -ge 1 ]
    cmp g1.fof g2.fof
    cmp g1.fof g7.fof
}

@test "groups --format=grp: the .grp text byte-identical for 1, 2 and 7 threads, every level" {
    for t in 1 2 7; do
        OMP_NUM_THREADS=$t groups -m 2 --format=grp -o l0_$t.grp u.fof
        OMP_NUM_THREADS=$t groups -m 2 --format=grp --level=1 -o l1_$t.grp u.fof
    done
    [ "$(head -1 l0_1.grp)" = 200000 ] && [ "$(wc -l <l0_1.grp)" -eq 200001 ]
    ! cmp -s l0_1.grp l1_1.grp
    for t in 2 7; do cmp l0_1.grp l0_$t.grp; cmp l1_1.grp l1_$t.grp; done
}

@test "halostats: the catalogue byte-identical for 1, 2 and 7 threads" {
    [ -f g1.fof ] || groups -m 8 -o g1.fof u.fof
    for t in 1 2 7; do OMP_NUM_THREADS=$t halostats --device=cpu -o h$t.txt g1.fof; done
    [ "$(grep -vc '^#' h1.txt)" -gt 10 ]
    cmp h1.txt h2.txt
    cmp h1.txt h7.txt
}
