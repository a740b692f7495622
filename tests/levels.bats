#!/usr/bin/env bats
# levels.bats - 6D linking (foflink --psi, --psi-rel) and hierarchical FoF (foflink -b B0,B1,..., groups levels and GPAR).

bats_require_minimum_version 1.5.0
load ref_helpers

# A clustered mock of 20000 particles (tipsy2bin | kdbuild) in mock.bin.
mock() {
    mkuniverse -n 20000 -s 7 -o mock.std
    tipsy2bin mock.std | kdbuild -o mock.bin
}

# Value of KEY in the text chunk TAG (level LEVEL) of FILE.
key() {
    fofdump -c "$2" -l "${4:-0}" "$1" | awk -v k="$3" '$1 == k { print $2 }'
}

# Checks GPAR of every level >= 1 of the grouped stream FILE against the GIDs: row 0 is
# 0, one row per group and one more, and each particle's level-k group has as parent
# its level-(k-1) group, never 0.
check_gpar() {
    local f=$1 n k
    n=$(key "$f" LINK levels)
    for ((k = 1; k < n; k++)); do
        [ "$(fofdump -c GPAR -l "$k" "$f" | wc -l)" -eq $(($(key "$f" GRPS ngroups "$k") + 1)) ]
        paste <(fofdump -c GID -l $((k - 1)) "$f") <(fofdump -c GID -l "$k" "$f") | awk -v par=<(fofdump -c GPAR -l "$k" "$f") '
            BEGIN { while ((getline p <par) > 0) P[g++] = p; if (P[0] != 0) { print "GPAR row 0 is " P[0]; exit 1 } }
            $2 != 0 && (P[$2] != $1 || $1 == 0) { printf "level %d group %d: parent %d, particle %d in %d\n", k, $2, P[$2], NR - 1, $1; bad = 1; exit }
            END { exit bad }' k="$k"
    done
}

@test "foflink --help names the 6D and level options" {
    run foflink --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"--psi=V"* ]]
    [[ "$output" == *"--psi-rel=F"* ]]
    [[ "$output" == *"-b and -l take a list too, B0,B1,... strictly decreasing:"* ]]
    [[ "$output" == *"up to 8 levels"* ]]
    run groups --help
    [[ "$output" == *"--level=K"* ]]
    [[ "$output" == *"GPAR"* ]]
}

@test "foflink usage errors: lists of lengths, psi, their counts" {
    usage_fails "option -b: the levels' linking lengths must decrease strictly, not 0.2 then 0.2" foflink -b 0.2,0.2
    usage_fails "option -l: the levels' linking lengths must decrease strictly, not 0.01 then 0.02" foflink -l 0.01,0.02
    usage_fails "option -b: the linking length must be positive, not 0" foflink -b 0.2,0
    usage_fails "option -b: the linking length must be positive, not -0.1" foflink -b 0.2,-0.1
    usage_fails "option -b takes at most 8 values" foflink -b 0.9,0.8,0.7,0.6,0.5,0.4,0.3,0.2,0.1
    usage_fails "option -b needs a comma-separated list of numbers, not '0.2,'" foflink -b 0.2,
    usage_fails "option -l needs a number, not 'x'" foflink -l 0.1,x
    usage_fails "option --psi: the value must be a positive number, not 0" foflink --psi=0
    usage_fails "option --psi-rel: the value must be a positive number, not -1" foflink --psi-rel=-1
    usage_fails "option --psi needs a number, not 'inf'" foflink --psi=inf
    usage_fails "option --psi: the levels' values must not grow, not 1 then 2 (the groups would not nest)" \
        foflink -b 0.2,0.1 --psi=1,2
    usage_fails "options --psi and --psi-rel are exclusive" foflink --psi=1 --psi-rel=1
    usage_fails "options --psi and --psi-rel are exclusive" foflink --psi-rel=1 --psi=1
    usage_fails "option --psi gives 2 values for 3 levels (give one, or one per level)" foflink -b 0.2,0.1,0.05 --psi=1,0.5
    usage_fails "option --psi-rel gives 2 values for 1 level (give one, or one per level)" foflink --psi-rel=1,0.5
    usage_fails "option '--psi' needs a value" foflink --psi
    # eight levels are allowed
    mock
    foflink -b 0.8,0.7,0.6,0.5,0.4,0.3,0.2,0.1 mock.bin | fofdump >chunks.txt
    [ "$(awk '$1 == "SINK" { printf "%s ", $3 }' chunks.txt)" = "0 1 2 3 4 5 6 7 " ]
}

@test "levels: one SINK per level, each the SINK of a separate run; LINK keys per level" {
    mock
    foflink -b 0.2,0.1,0.05 -o lev.bin mock.bin
    [ "$(fofdump lev.bin | awk 'NR > 1 { printf "%s:%s ", $1, $3 }')" = \
        "SNAP:0 POS:0 TREE:0 TBOX:0 MASS:0 TYPE:0 LINK:0 SINK:0 SINK:1 SINK:2 ID:0 VEL:0 " ]
    k=0
    for b in 0.2 0.1 0.05; do
        foflink -b "$b" -o one.bin mock.bin
        cmp <(fofdump -c SINK -l "$k" lev.bin) <(fofdump -c SINK one.bin)
        [ "$(key lev.bin LINK "l_$k")" = "$(key one.bin LINK l)" ]
        [ "$(key lev.bin LINK "b_$k")" = "$(key one.bin LINK b)" ]
        [ "$(key lev.bin LINK "psi_$k")" = 0 ]
        [ "$(key lev.bin LINK "groups_$k")" = "$(key one.bin LINK groups)" ]
        k=$((k + 1))
    done
    # level 0's keys as they always were
    fofdump -c LINK lev.bin >link.txt
    for kv in "levels 3" "b 0.20000000000000001" "psi 0" "periodic 1" "method tree"; do
        grep -qx "$kv" link.txt
    done
    grep -qxE "device (cpu|gpu)" link.txt # the default device: FOFKIT_DEVICE may ask for the GPU
    [ "$(key lev.bin LINK l)" = "$(key lev.bin LINK l_0)" ]
    [ "$(key lev.bin LINK groups)" = "$(key lev.bin LINK groups_0)" ]
    # more groups at each shorter length; none of the b keys with -l
    [ "$(key lev.bin LINK groups_1)" -gt "$(key lev.bin LINK groups_0)" ]
    [ "$(key lev.bin LINK groups_2)" -gt "$(key lev.bin LINK groups_1)" ]
    foflink -l 0.02,0.01 mock.bin | fofdump -c LINK >linkl.txt
    ! grep -q '^b' linkl.txt
    grep -qx "l_1 0.0099999997764825821" linkl.txt
    # a single length still writes levels 1 and the level-0 keys
    foflink -b 0.2 mock.bin | fofdump -c LINK >link1.txt
    grep -qx "levels 1" link1.txt
    grep -qx "l_0 $(key lev.bin LINK l)" link1.txt
    # brute force, the same SINKs
    foflink -b 0.2,0.1,0.05 --method=brute -o brute.bin mock.bin
    for k in 0 1 2; do cmp <(fofdump -c SINK -l "$k" lev.bin) <(fofdump -c SINK -l "$k" brute.bin); done
}

@test "groups: GRPS and GID per level, GPAR from level 1, every level as a separate run" {
    mock
    foflink -b 0.2,0.1,0.05 mock.bin | groups -m 8 -o g.bin
    [ "$(fofdump g.bin | awk 'NR > 1 && ($1 ~ /^(SINK|GRPS|GID|GPAR)$/) { printf "%s:%s ", $1, $3 }')" = \
        "SINK:0 SINK:1 SINK:2 GRPS:0 GID:0 GRPS:1 GID:1 GPAR:1 GRPS:2 GID:2 GPAR:2 " ]
    [ "$(fofdump g.bin | awk '$1 == "GPAR" { print $2, $5, $7 }' | sort -u)" = "<u4 1 " ]
    for k in 0 1 2; do
        [ "$(key g.bin GRPS level "$k")" = "$k" ]
        [ "$(key g.bin GRPS minsize "$k")" = 8 ]
        b=$(key g.bin LINK "b_$k")
        foflink -b "$b" mock.bin | groups -m 8 -o one.bin
        cmp <(fofdump -c GID -l "$k" g.bin) <(fofdump -c GID one.bin)
        # GRPS as a separate run's, but for the level
        diff <(fofdump -c GRPS -l "$k" g.bin | grep -v '^level') <(fofdump -c GRPS one.bin | grep -v '^level')
        # --format=grp --level=K: the same groups as text
        [ "$(groups -m 8 --format=grp --level="$k" g.bin | tail -n +2)" = "$(fofdump -c GID -l "$k" g.bin)" ]
    done
    [ "$(key g.bin GRPS ngroups 2)" -gt 10 ]
    check_gpar g.bin
    # --format=grp is level 0 by default
    cmp <(groups -m 8 --format=grp g.bin) <(groups -m 8 --format=grp --level=0 g.bin)
    # every minimum size: a kept group's parent is kept
    for m in 1 2 20 100; do
        groups -m "$m" g.bin >gm.bin
        check_gpar gm.bin
    done
}

@test "groups on a grouped hierarchy replaces every level's GRPS, GID and GPAR" {
    mock
    foflink -b 0.2,0.1 mock.bin | groups -m 8 | groups -m 20 -o twice.bin
    [ "$(fofdump twice.bin | awk '$1 ~ /^(GRPS|GID|GPAR)$/' | wc -l)" -eq 5 ]
    [ "$(key twice.bin GRPS minsize 1)" = 20 ]
    foflink -b 0.2,0.1 mock.bin | groups -m 20 -o once.bin
    cmp <(fofdump -c GPAR -l 1 once.bin) <(fofdump -c GPAR -l 1 twice.bin)
}

@test "groups: bad level structure, --level errors" {
    printf 'p 0.1 0.1 0.1\np 0.2 0.2 0.2\nsink 0 0\n' >two.txt
    mkstream --level=SINK=1 -o one.fof two.txt
    fails "groups: one.fof: stream has SINK level 1 but no SINK level 0 (the levels run 0, 1, 2, ...)" groups one.fof
    mkstream --level=SINK=8 -o eight.fof two.txt
    fails "groups: eight.fof: SINK level 8 found: at most 8 levels (0 to 7) are resolved" groups eight.fof
    mkstream -o level0.fof two.txt
    fails "groups: level0.fof: --level=1: the stream has SINK level 0 only" groups --format=grp --level=1 level0.fof
    mock
    foflink -b 0.2,0.1 -o two.bin mock.bin
    fails "groups: two.bin: --level=2: the stream has SINK levels 0 to 1" groups --format=grp --level=2 two.bin
    usage_fails "option --level applies to --format=grp only" groups --level=1
    usage_fails "option --level: 8 is out of range [0, 7]" groups --format=grp --level=8
}

@test "-v: a line per level, from foflink and groups" {
    mock
    run --separate-stderr foflink -v --device=cpu -b 0.2,0.1 -o lev.bin mock.bin
    [ "$status" -eq 0 ]
    # the mock's particles have one mass: the spacing of the lightest is box / n^(1/3)
    [ "${stderr_lines[0]}" = "foflink: device: CPU (as asked)" ]
    [ "${stderr_lines[1]}" = "foflink: -b: the mean spacing box / n_eff^(1/3) = 0.036840315 of the lightest particles (n_eff 20000; 20000 particles in the stream)" ]
    [ "${stderr_lines[2]}" = "foflink: linking 20000 particles with l = 0.007368063 (periodic box 1)" ]
    [ "${stderr_lines[3]}" = "foflink: level 1: l = 0.0036840315, psi = 0" ]
    [[ "${stderr_lines[4]}" =~ ^foflink:\ linked\ on\ the\ CPU\ \(tree\)\ in\ [0-9.]+\ s\ \(.*\):\ [0-9]+\ groups, ]]
    [[ "${stderr_lines[5]}" =~ ^foflink:\ level\ 1\ linked\ in\ [0-9.]+\ s\ \(.*\):\ [0-9]+\ groups,\ [0-9]+\ pair\ tests,\ [0-9]+\ box\ tests$ ]]
    [[ "${stderr_lines[6]}" =~ ^foflink:\ 2\ levels\ linked\ in\ [0-9.]+\ s$ ]]
    run --separate-stderr groups -v -m 8 -o g.bin lev.bin
    [ "${#stderr_lines[@]}" -eq 2 ]
    [[ "${stderr_lines[0]}" =~ ^groups:\ level\ 0:\ [0-9]+\ groups\ found,\ [0-9]+\ kept\ \(at\ least\ 8\ members\),\ largest\ [0-9]+,\ [0-9.]+%\ of\ 20000\ particles\ grouped$ ]]
    [[ "${stderr_lines[1]}" =~ ^groups:\ level\ 1:\ .*\ grouped\ \([0-9.]+\ s\)$ ]]
}

# Two clusters of 30 particles on top of each other (within 0.004), one moving at +1
# along x and the other at -1 (0.01 of scatter), and 4 strays: in 3D one group of 60,
# in 6D two of 30 (velocities coordinate multiples of 2^-10, positions of 2^-12).
streams() {
    awk 'BEGIN {
        srand(5); print "box 1"; print "origin 0"; print "periodic 1"
        for (i = 0; i < 60; i++) {
            line = "p"
            for (a = 0; a < 3; a++) line = line sprintf(" %.12f", int((0.3 + (rand() - 0.5) * 0.004) * 4096) / 4096)
            line = line sprintf(" %.12f %.12f %.12f", (i % 2 ? 1 : -1) + int((rand() - 0.5) * 10) / 1024, int((rand() - 0.5) * 10) / 1024, 0)
            print line
        }
        print "p 0.7 0.7 0.7 0 0 0"; print "p 0.1 0.9 0.5 0 0 0"; print "p 0.9 0.1 0.2 5 0 0"; print "p 0.5 0.5 0.9 -5 0 0"
    }'
}

@test "6D: --psi splits interpenetrating streams that 3D joins; the 3D limit; brute force agrees" {
    streams | mkstream | kdbuild -s 4 -o s.bin
    foflink -l 0.02 s.bin | groups -m 2 --format=grp >3d.grp
    [ "$(tail -n +2 3d.grp | sort | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')" = "0:4 1:60 " ]
    foflink -l 0.02 --psi=0.5 -o 6d.bin s.bin
    groups -m 2 --format=grp 6d.bin >6d.grp
    [ "$(tail -n +2 6d.grp | sort | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')" = "0:4 1:30 2:30 " ]
    # each 6D group is one stream: all its members move the same way
    paste <(tail -n +2 6d.grp) <(streams | awk '$1 == "p" { print $5 }') |
        awk '$1 > 0 { s = $2 > 0 ? "+" : "-"; if (($1 in S) && S[$1] != s) exit 1; S[$1] = s }'
    [ "$(key 6d.bin LINK psi)" = 0.5 ]
    [ "$(key 6d.bin LINK psi_0)" = 0.5 ]
    # the velocities were loaded and pass through unchanged
    cmp <(fofdump -c VEL s.bin) <(fofdump -c VEL 6d.bin)
    cmp <(foflink -l 0.02 --psi=0.5 --method=brute s.bin | fofdump -c SINK) <(fofdump -c SINK 6d.bin)
    # a psi far beyond every velocity difference gives the 3D groups
    cmp <(foflink -l 0.02 --psi=100000 s.bin | fofdump -c SINK) <(foflink -l 0.02 s.bin | fofdump -c SINK)
}

@test "--psi-rel: psi is F times the rms velocity about the mean, recorded in LINK" {
    # velocities 3 +- 1 along x, 0 else: mean (3,0,0), rms 1
    printf 'p 0.1 0.1 0.1 2 0 0\np 0.2 0.2 0.2 4 0 0\np 0.3 0.3 0.3 4 0 0\np 0.4 0.4 0.4 2 0 0\n' | mkstream | kdbuild -o v.bin
    foflink --psi-rel=0.5 v.bin | fofdump -c LINK >link.txt
    grep -qx "vscale 1" link.txt
    grep -qx "psi_rel 0.5" link.txt
    grep -qx "psi 0.5" link.txt
    foflink -l 0.2,0.1 --psi-rel=2,0.25 v.bin | fofdump -c LINK >link2.txt
    for kv in "psi 2" "psi_0 2" "psi_1 0.25" "psi_rel_0 2" "psi_rel_1 0.25" "vscale 1"; do grep -qx "$kv" link2.txt; done
    # one psi for every level
    foflink -l 0.2,0.1 --psi=0.75 v.bin | fofdump -c LINK >link3.txt
    for kv in "psi_0 0.75" "psi_1 0.75"; do grep -qx "$kv" link3.txt; done
    ! grep -q '^vscale' link3.txt
    # on the mock: the scale is the rms of |v - mean| computed from the tipsy velocities
    mock
    want=$(fofdump -c VEL mock.bin | awk '{ for (a = 1; a <= 3; a++) { v[NR, a] = $a; m[a] += $a } }
        END { for (a = 1; a <= 3; a++) m[a] /= NR; for (i = 1; i <= NR; i++) for (a = 1; a <= 3; a++) s += (v[i, a] - m[a]) ^ 2; print sqrt(s / NR) }')
    got=$(foflink --psi-rel=1 mock.bin | fofdump -c LINK | awk '$1 == "vscale" { print $2 }')
    awk -v a="$want" -v b="$got" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 1e-6 * a) }'
}

@test "6D input errors: no VEL, non-finite velocities, velocities that do not vary" {
    printf 'p 0.1 0.1 0.1 1 0 0\np 0.2 0.2 0.2 1 0 0\n' | mkstream --omit=VEL | kdbuild -o novel.bin
    fails "foflink: novel.bin: stream has no VEL chunk (6D linking needs the velocities)" foflink --psi=1 novel.bin
    foflink novel.bin >/dev/null # 3D does not need them
    printf 'p 0.1 0.1 0.1 1 0 0\np 0.2 0.2 0.2 1 0 0\n' | mkstream | kdbuild -o same.bin
    fails "foflink: same.bin: the particles' velocities do not vary (rms about the mean 0), so --psi-rel gives no velocity linking length: use --psi" foflink --psi-rel=1 same.bin
    foflink --psi=1 same.bin >/dev/null
    printf 'p 0.1 0.1 0.1 1 0 0\np 0.2 0.2 0.2 1 inf 0\n' | mkstream | kdbuild -o inf.bin
    fails "foflink: inf.bin: particle 1 has a non-finite velocity (1 inf 0)" foflink --psi=1 -o out.bin inf.bin
    [ ! -e out.bin ]
}

@test "6D hierarchy on a mock: levels nest, and every 6D group lies inside a 3D group" {
    mock
    foflink -b 0.2,0.1,0.05 --psi-rel=2,1,0.5 mock.bin | groups -m 1 -o g6.bin
    check_gpar g6.bin
    foflink -b 0.2,0.1,0.05 mock.bin | groups -m 1 -o g3.bin
    for k in 0 1 2; do
        # with -m 1 every particle has a group: the map 6D group -> 3D group is a function
        paste <(fofdump -c GID -l "$k" g6.bin) <(fofdump -c GID -l "$k" g3.bin) |
            awk '($1 in M) && M[$1] != $2 { exit 1 } { M[$1] = $2 }'
        [ "$(key g6.bin GRPS nfound "$k")" -gt "$(key g3.bin GRPS nfound "$k")" ]
    done
}

@test "levels and 6D on the GPU: the CPU's SINKs (skipped without a GPU)" {
    mock
    tipsy2bin mock.std | kdbuild -s 16 --device=cpu -o t16.bin
    foflink --device=gpu -b 0.2 t16.bin >/dev/null 2>&1 || skip "no usable GPU"
    for args in "-b 0.2,0.1,0.05" "-b 0.2,0.1 --psi-rel=1,0.5"; do
        # shellcheck disable=SC2086
        foflink --device=cpu $args -o cpu.bin t16.bin
        # shellcheck disable=SC2086
        foflink --device=gpu $args -o gpu.bin t16.bin
        fofdump -c LINK gpu.bin | grep -qx "device gpu"
        for k in $(seq 0 $(($(key cpu.bin LINK levels) - 1))); do
            cmp <(fofdump -c SINK -l "$k" cpu.bin) <(fofdump -c SINK -l "$k" gpu.bin)
        done
    done
}
