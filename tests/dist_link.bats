#!/usr/bin/env bats
# dist_link.bats - foflink under mpirun: GMIN and the .grp equal the single-process groups for 1 to 64 ranks, boxes (rcb) and slabs (3D, 6D, levels, a tiled box, real snapshots); failures on one rank end every rank.

bats_require_minimum_version 1.5.0

DATA=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}

load mpi_helpers # rank_counts; this file keeps its own need_mpi, below

# mpirun as root in a container, oversubscribed on few cores; one OpenMP thread a rank (the
# ranks share the cores).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMP_NUM_THREADS=1

# Skips without mpirun, in a build without MPI, and in the sanitizer build (make check-asan:
# Open MPI's runtime leaks by design and is not built for ASan; docs/TESTING.md).
need_mpi() {
    [ -z "${ASAN_OPTIONS:-}" ] || skip "MPI runs are left out of the sanitizer build"
    command -v mpirun >/dev/null || skip "mpirun is not installed (Debian: openmpi-bin)"
    foflink --help >/dev/null || return 1
    if [ ! -f "$BATS_FILE_TMPDIR/mpi.ok" ]; then
        mkuniverse -n 100 -s 1 -o "$BATS_FILE_TMPDIR/tiny.std"
        tipsy2bin "$BATS_FILE_TMPDIR/tiny.std" -o "$BATS_FILE_TMPDIR/tiny.0.fof"
        if ! mpirun -n 1 foflink "$BATS_FILE_TMPDIR/tiny.%r.fof" -o /dev/null 2>"$BATS_FILE_TMPDIR/mpi.err"; then
            grep -q "has no MPI" "$BATS_FILE_TMPDIR/mpi.err" && skip "this build of fofkit has no MPI"
            cat "$BATS_FILE_TMPDIR/mpi.err"
            return 1
        fi
        touch "$BATS_FILE_TMPDIR/mpi.ok"
    fi
}

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    need_mpi
}

# "ID label" lines sorted by ID, the single-process answer: each particle's ID and the lowest
# ID of its level-K group, from foflink's SINK and the ID chunk of the linked stream FILE.
# Usage: ref_labels FILE K
ref_labels() {
    paste <(fofdump -c SINK -l "$2" "$1") <(fofdump -c ID "$1") |
        awk '{ s[NR] = $1; id[NR] = $2; if (!($1 in m) || $2 < m[$1]) m[$1] = $2 }
             END { for (i = 1; i <= NR; i++) print id[i], m[s[i]] }' | sort -n
}

# The same from the distributed outputs FILES...: ID and GMIN of level K. Usage: dist_labels K FILES...
dist_labels() {
    local k=$1 f
    shift
    for f in "$@"; do paste -d ' ' <(fofdump -c ID "$f") <(fofdump -c GMIN -l "$k" "$f"); done | sort -n
}

# The mock (20000 particles, snapshot order, no tree) in $BATS_FILE_TMPDIR/snap.fof, made once.
mock() {
    local d=$BATS_FILE_TMPDIR
    [ -f "$d/snap.fof" ] || {
        mkuniverse -n 20000 -s 20240611 -o "$d/snap.std"
        tipsy2bin "$d/snap.std" -o "$d/snap.fof"
    }
}

# Links SNAP in one process with foflink ARGS and on R = 1, 2, 3, 4, 8 ranks (make test: 1, 3, 8,
# rank_counts; SNAP split in contiguous slices; $RANKS others, $DIST_ARGS more options for them)
# and compares every level's labels. Usage: same_partition SNAP LEVELS ARGS...
same_partition() {
    local snap=$1 levels=$2 r k
    shift 2
    kdbuild "$snap" | foflink "$@" -o ref.fof
    for ((k = 0; k < levels; k++)); do ref_labels ref.fof "$k" >"ref.$k"; done
    [ "$(wc -l <ref.0)" -gt 0 ]
    for r in ${RANKS:-$(rank_counts 1 2 3 4 8)}; do
        rm -f in.*.fof out.*.fof
        splitstream "$r" "$snap" in.%r.fof
        # shellcheck disable=SC2086 # DIST_ARGS: words
        mpirun -n "$r" foflink "$@" ${DIST_ARGS:-} in.%r.fof -o out.%r.fof
        for ((k = 0; k < levels; k++)); do
            dist_labels "$k" out.*.fof >dist
            cmp dist "ref.$k" || { echo "$r ranks, level $k: labels differ"; diff dist "ref.$k" | head; return 1; }
        done
        [ "$(fofdump -c LINK out.0.fof | awk '$1 == "groups" { print $2 }')" = \
            "$(fofdump -c LINK ref.fof | awk '$1 == "groups" { print $2 }')" ]
    done
}

@test "foflink on 1, 2, 3, 4 and 8 ranks: the single-process groups (3D)" {
    mock
    same_partition "$BATS_FILE_TMPDIR/snap.fof" 1 -b 0.2
    # groups of many members span the domains: the test is not trivial
    [ "$(awk '$1 != $2' ref.0 | wc -l)" -gt 5000 ]
    # slabs (--decomp=slabs) as well as boxes (the default)
    DIST_ARGS=--decomp=slabs RANKS="2 3 5" same_partition "$BATS_FILE_TMPDIR/snap.fof" 1 -b 0.2
    # IDs in 8 bytes (as when some exceed 32 bits), and with 3 levels
    FOFKIT_DIST_WIDE_IDS=1 RANKS="3" same_partition "$BATS_FILE_TMPDIR/snap.fof" 3 -b 0.2,0.1,0.05
}

@test "foflink on 1, 2, 3, 4 and 8 ranks: the single-process groups (6D)" {
    mock
    same_partition "$BATS_FILE_TMPDIR/snap.fof" 1 -b 0.2 --psi=0.5
    [ "$(awk '$1 != $2' ref.0 | wc -l)" -gt 1000 ]
}

@test "foflink on 1, 2, 3, 4 and 8 ranks: the single-process groups (3 levels; 2 levels in 6D)" {
    mock
    same_partition "$BATS_FILE_TMPDIR/snap.fof" 3 -b 0.2,0.1,0.05
    RANKS="2 3" same_partition "$BATS_FILE_TMPDIR/snap.fof" 2 -b 0.2,0.1 --psi=0.6,0.3
}

@test "foflink on ranks: real snapshots, periodic with particles outside the box, and isolated" {
    [ -f "$DATA/cube300-ics.std" ] && [ -f "$DATA/run581-dark-star.std" ] || skip "no $DATA"
    tipsy2bin "$DATA/cube300-ics.std" -o cube.fof
    RANKS="1 3 4" same_partition cube.fof 1 -l 0.02
    tipsy2bin --no-periodic "$DATA/run581-dark-star.std" -o iso.fof
    RANKS="2 3" same_partition iso.fof 1 -b 0.2
}

@test "foflink on ranks: each output is its input in order, with LINK (ranks, rank) and GMIN; an empty rank" {
    mock
    splitstream --weights=0,1,3 3 "$BATS_FILE_TMPDIR/snap.fof" in.%r.fof
    mpirun -n 3 foflink in.%r.fof -o out.%r.fof
    for r in 0 1 2; do
        for tag in POS VEL MASS ID TYPE; do
            cmp <(fofdump -c "$tag" "in.$r.fof") <(fofdump -c "$tag" "out.$r.fof")
        done
        [ "$(fofdump -c LINK "out.$r.fof" | awk '$1 == "rank" { print $2 }')" = "$r" ]
        [ "$(fofdump -c LINK "out.$r.fof" | awk '$1 == "ranks" { print $2 }')" = 3 ]
        [ "$(fofdump -c GMIN "out.$r.fof" | wc -l)" -eq "$(fofdump -c ID "in.$r.fof" | wc -l)" ]
        fofdump --check "out.$r.fof" >/dev/null
    done
    [ "$(fofdump -c ID in.0.fof | wc -l)" -eq 0 ]
    kdbuild "$BATS_FILE_TMPDIR/snap.fof" | foflink -o ref.fof
    cmp <(dist_labels 0 out.*.fof) <(ref_labels ref.fof 0)
}

# mpirun -n 3 foflink on in.%r.fof fails (not by the timeout) with one message, about in.1.fof,
# and leaves no output.
rank1_fails() {
    run --separate-stderr timeout 60 mpirun -n 3 foflink in.%r.fof -o out.%r.fof
    echo "$stderr"
    [ "$status" -ne 0 ] && [ "$status" -ne 124 ]
    [ "$(grep -c '^foflink: ' <<<"$stderr")" -eq 1 ]
    grep -q '^foflink: in.1.fof: ' <<<"$stderr"
    ! ls out.* 2>/dev/null
}

@test "foflink on ranks: a rank's missing or damaged stream stops every rank, one message, no output" {
    mock
    splitstream 3 "$BATS_FILE_TMPDIR/snap.fof" in.%r.fof
    mv in.1.fof keep.fof
    rank1_fails
    head -c 100000 keep.fof >in.1.fof
    rank1_fails
}

@test "foflink on ranks: names without %r, a stream without IDs" {
    mock
    splitstream 2 "$BATS_FILE_TMPDIR/snap.fof" in.%r.fof
    run --separate-stderr timeout 60 mpirun -n 2 foflink in.0.fof -o out.%r.fof
    [ "$status" -ne 0 ] && [ "$status" -ne 124 ]
    [ "$(grep -c '^foflink: ' <<<"$stderr")" -eq 1 ]
    grep -q 'the input name needs the rank pattern %r' <<<"$stderr"
    run --separate-stderr timeout 60 mpirun -n 2 foflink in.%r.fof -o out.fof
    [ "$status" -ne 0 ] && grep -q 'the output name (-o) needs the rank pattern %r' <<<"$stderr"
    addchunk --drop=ID in.1.fof -o noid.fof && mv noid.fof in.1.fof
    run --separate-stderr timeout 60 mpirun -n 2 foflink in.%r.fof -o out.%r.fof
    echo "$stderr"
    [ "$status" -ne 0 ] && [ "$status" -ne 124 ]
    grep -q '^foflink: in.1.fof: stream has no ID chunk' <<<"$stderr"
    ! ls out.* 2>/dev/null
}

@test "foflink on ranks: a rank's particles linked in pieces (--piece-size) give the same groups" {
    mock
    DIST_ARGS=--piece-size=1500 RANKS="1 3" same_partition "$BATS_FILE_TMPDIR/snap.fof" 3 -b 0.2,0.1,0.05
    DIST_ARGS=--piece-size=2000 RANKS="2" same_partition "$BATS_FILE_TMPDIR/snap.fof" 1 -b 0.2 --psi=0.5
    run --separate-stderr mpirun -n 2 foflink -v --piece-size=1500 in.%r.fof -o out.%r.fof
    [ "$status" -eq 0 ]
    echo "$stderr"
    grep -q '^foflink: rank 0: .*link [0-9.]* s (7 pieces)' <<<"$stderr"
    run -2 foflink --piece-size=10 in.0.fof -o /dev/null
    [[ "$output" == *"option --piece-size is for distributed runs"* ]]
}

@test "foflink -v on ranks: rank 0 reports every rank's domain, ghosts, bytes, join and times, once" {
    mock
    splitstream 2 "$BATS_FILE_TMPDIR/snap.fof" in.%r.fof
    run --separate-stderr mpirun -n 2 foflink -v --decomp=slabs in.%r.fof -o out.%r.fof
    [ "$status" -eq 0 ]
    echo "$stderr"
    [ "$(grep -c '^foflink: rank 1: slab ' <<<"$stderr")" -eq 1 ]
    grep -q '^foflink: join across ranks (slabs): [1-9][0-9]* rounds' <<<"$stderr"
    run --separate-stderr mpirun -n 2 foflink -v in.%r.fof -o out.%r.fof
    [ "$status" -eq 0 ]
    echo "$stderr"
    [ "$(grep -c '^foflink: rank 1: box .* to .*, .* to .*, .* to .*, [0-9]* owned' <<<"$stderr")" -eq 1 ]
    [ "$(grep -c '^foflink: rank 0: join across ranks: [1-9][0-9]* rounds' <<<"$stderr")" -eq 1 ]
    grep -q '^foflink: join across ranks (rcb): [1-9][0-9]* rounds, [0-9]* pointer jumps' <<<"$stderr"
    [ "$(grep -c '^foflink: linking 20000 particles on 2 ranks' <<<"$stderr")" -eq 1 ]
    grep -q '^foflink: ghosts: [1-9][0-9]* for 20000 particles' <<<"$stderr"
    grep -q '^foflink: slowest rank: decomposition [0-9.]* s, link [0-9.]* s, merge [0-9.]* s' <<<"$stderr"
    grep -q '^foflink: level 0: [1-9][0-9]* groups' <<<"$stderr"
}

@test "foflink on ranks: each rank takes its own share of the node's cores, from one core or from all" {
    mock # the CPU named: with a GPU the lines name it instead (the cores are the same)
    splitstream 1 "$BATS_FILE_TMPDIR/snap.fof" in.%r.fof
    n=$(env -u OMP_NUM_THREADS nproc)
    [ "$n" -ge 2 ] || skip "one core: nothing to share"
    # Open MPI binds one rank to one core: the rank widens it to the node's cores and runs as many threads
    run --separate-stderr env -u OMP_NUM_THREADS mpirun --bind-to core -n 1 foflink -v --device=cpu in.%r.fof -o out.%r.fof
    [ "$status" -eq 0 ]
    echo "$stderr"
    grep -q "^foflink: rank 0: CPU, $n threads, $n cores (" <<<"$stderr"
    # OMP_NUM_THREADS still sets the threads
    run --separate-stderr mpirun --bind-to core -n 1 foflink -v --device=cpu in.%r.fof -o out.%r.fof
    [ "$status" -eq 0 ]
    grep -q "^foflink: rank 0: CPU, 1 threads, $n cores (" <<<"$stderr"
    # two ranks on two cores: a core each, each its own
    [ "$n" -eq 2 ] || return 0
    splitstream 2 "$BATS_FILE_TMPDIR/snap.fof" two.%r.fof
    run --separate-stderr env -u OMP_NUM_THREADS mpirun --bind-to core -n 2 foflink -v --device=cpu two.%r.fof -o out.%r.fof
    [ "$status" -eq 0 ]
    echo "$stderr"
    grep -q "^foflink: rank 0: CPU, 1 threads, 1 core (0 to 0)" <<<"$stderr"
    grep -q "^foflink: rank 1: CPU, 1 threads, 1 core (1 to 1)" <<<"$stderr"
    # unbound ranks would share every core: each takes its own, unless FOFKIT_AFFINITY=keep
    run --separate-stderr env -u OMP_NUM_THREADS mpirun --bind-to none -n 2 foflink -v --device=cpu two.%r.fof -o out.%r.fof
    [ "$status" -eq 0 ]
    grep -q "^foflink: rank 0: CPU, 1 threads, 1 core (0 to 0)" <<<"$stderr"
    grep -q "^foflink: rank 1: CPU, 1 threads, 1 core (1 to 1)" <<<"$stderr"
    run --separate-stderr mpirun -x FOFKIT_AFFINITY=keep --bind-to none -n 2 foflink -v --device=cpu two.%r.fof -o out.%r.fof
    [ "$status" -eq 0 ]
    grep -q "^foflink: rank 1: CPU, 1 threads, 2 cores (0 to 1)" <<<"$stderr"
}

@test "foflink on ranks on the GPU: the single-process groups, whole and in pieces (skipped without a GPU)" {
    mock
    kdbuild --device=cpu "$BATS_FILE_TMPDIR/snap.fof" -o tree.fof
    foflink --device=gpu tree.fof -o /dev/null 2>/dev/null || skip "no usable GPU"
    RANKS="1 2 3" same_partition "$BATS_FILE_TMPDIR/snap.fof" 3 --device=gpu -b 0.2,0.1,0.05
    fofdump -c LINK out.0.fof | grep -qx "device gpu"
    DIST_ARGS=--piece-size=2500 RANKS="2" same_partition "$BATS_FILE_TMPDIR/snap.fof" 1 --device=gpu -b 0.2 --psi=0.5
}

@test "foflink on ranks: streams already split in space send only their ghosts, and give the same groups" {
    mock
    kdbuild --device=cpu "$BATS_FILE_TMPDIR/snap.fof" -o tree.fof # the median tree: its first cut halves x
    splitstream 2 tree.fof in.%r.fof
    run --separate-stderr mpirun -n 2 foflink -v in.%r.fof -o out.%r.fof
    [ "$status" -eq 0 ]
    echo "$stderr"
    # 20000 particles of 28 bytes would be 0.28 MB a rank; the ghosts (and their labels) are far less
    [ "$(grep -c '^foflink: rank [01]: .* 0\.0[0-4][0-9] MB sent' <<<"$stderr")" -eq 2 ]
    foflink tree.fof -o ref.fof
    cmp <(dist_labels 0 out.*.fof) <(ref_labels ref.fof 0)
}

# A tiled periodic box: 2 x 2 x 2 copies of a 4000-particle mock, each halved, so that linking at
# half the length finds every group of the tile 8 times (2077 groups, 19 of 8 or more): a known
# answer. In $BATS_FILE_TMPDIR/tiled.fof, made once.
tiled() {
    local d=$BATS_FILE_TMPDIR
    [ -f "$d/tiled.fof" ] && return 0
    mkuniverse -n 4000 -s 7 -o "$d/tile.std"
    tipsy2bin "$d/tile.std" -o "$d/tile.fof"
    fofdump -c POS "$d/tile.fof" |
        awk '{ for (i = 0; i < 2; i++) for (j = 0; j < 2; j++) for (k = 0; k < 2; k++)
                   printf "d %.9g %.9g %.9g\n", $1 / 2 - 0.25 + i / 2, $2 / 2 - 0.25 + j / 2, $3 / 2 - 0.25 + k / 2 }' |
        ascii2tipsy -o "$d/tiled.std"
    tipsy2bin "$d/tiled.std" -o "$d/tiled.fof"
}

# The .grp of groups -m M under mpirun on R ranks (foflink ARGS, its stderr in link.err, then
# groups) against GRP. Usage: same_grp GRP SNAP R M ARGS...
same_grp() {
    local grp=$1 snap=$2 r=$3 m=$4
    shift 4
    rm -f in.*.fof out.*.fof dist.grp
    splitstream "$r" "$snap" in.%r.fof
    mpirun -n "$r" foflink "$@" in.%r.fof -o out.%r.fof 2>link.err || { cat link.err; return 1; }
    mpirun -n "$r" groups -m "$m" --format=grp out.%r.fof -o dist.grp
    cmp "$grp" dist.grp || { echo "$r ranks ($*): the .grp differs"; return 1; }
}

@test "foflink on 1 to 64 ranks, boxes (rcb) and slabs: the tiled box's .grp is one process's, 8 times the tile's groups" {
    tiled
    kdbuild "$BATS_FILE_TMPDIR/tiled.fof" | foflink -l 0.005 | groups -v -m 8 --format=grp >ref.grp 2>sum
    cat sum
    grep -q '16616 groups found, 152 kept' sum # 8 x 2077, 8 x 19
    for r in $(rank_counts 1 3 5 7 8 27 64); do same_grp ref.grp "$BATS_FILE_TMPDIR/tiled.fof" "$r" 8 -l 0.005; done
    for r in 5 27; do same_grp ref.grp "$BATS_FILE_TMPDIR/tiled.fof" "$r" 8 -l 0.005 --decomp=slabs; done
}

@test "foflink on 5, 7 and 27 ranks (rcb): levels and 6D give the single-process groups" {
    mock
    RANKS="$(rank_counts 5 7 27)" same_partition "$BATS_FILE_TMPDIR/snap.fof" 3 -b 0.2,0.1,0.05
    RANKS="5 27" same_partition "$BATS_FILE_TMPDIR/snap.fof" 1 -b 0.2 --psi=0.5
    FOFKIT_DIST_WIDE_IDS=1 RANKS="7" same_partition "$BATS_FILE_TMPDIR/snap.fof" 2 -b 0.2,0.1
}

@test "foflink on 8, 27 and 64 ranks: the real snapshots' .grp is one process's (skipped without them)" {
    [ -f "$DATA/cube300-ics.std" ] && [ -f "$DATA/run581-dark-star.std" ] || skip "no $DATA"
    tipsy2bin "$DATA/cube300-ics.std" -o cube.fof
    kdbuild cube.fof | foflink -l 0.02 | groups -m 8 --format=grp >cube.grp
    [ "$(sort -u cube.grp | wc -l)" -gt 10 ]
    for r in 8 27 $(full_only 64); do same_grp cube.grp cube.fof "$r" 8 -l 0.02; done
    tipsy2bin --no-periodic "$DATA/run581-dark-star.std" -o iso.fof
    kdbuild iso.fof | foflink -b 0.2 | groups -m 8 --format=grp >iso.grp
    for r in 7 27; do same_grp iso.grp iso.fof "$r" 8 -b 0.2; done
}

@test "foflink --decomp: rcb or slabs, under mpirun only" {
    mock
    run -2 foflink --decomp=cubes "$BATS_FILE_TMPDIR/snap.fof" -o /dev/null
    [[ "$output" == *"option --decomp takes rcb or slabs, not 'cubes'"* ]]
    run -2 foflink --decomp=slabs "$BATS_FILE_TMPDIR/snap.fof" -o /dev/null
    [[ "$output" == *"option --decomp is for distributed runs"* ]]
}

@test "foflink on 27 and 64 ranks: one group winding through every rank's box (and the period) is joined whole" {
    # 2000 particles 0.0038 apart on a line that wraps 3 and 7 times in y and z, in 6000 uniform ones
    awk 'BEGIN { srand(5)
                 for (i = 0; i < 2000; i++) { t = -0.5 + i / 2000; y = 3 * t; z = 7 * t
                     y -= int(y + 10.5) - 10; z -= int(z + 10.5) - 10; printf "d %.9g %.9g %.9g\n", t, y, z }
                 for (i = 0; i < 6000; i++) printf "d %.9g %.9g %.9g\n", rand() - 0.5, rand() - 0.5, rand() - 0.5 }' |
        ascii2tipsy -o line.std
    tipsy2bin line.std -o line.fof
    kdbuild line.fof | foflink -l 0.005 | groups -v -m 8 --format=grp >line.grp 2>sum
    cat sum
    grep -q ' 1 kept (at least 8 members), largest 200[0-9],' sum
    for r in 27 $(full_only 64); do
        same_grp line.grp line.fof "$r" 8 -v -l 0.005
        # on 27 ranks the chain takes rounds to join (-v: the same streams, and what it did)
        [ "$r" != 27 ] || grep -q '^foflink: join across ranks (rcb): [3-9] rounds' link.err || { cat link.err; return 1; }
    done
}

@test "hydro runs on 7, 27 and 64 ranks, boxes and slabs: gas attached across domains gives one process's .grp" {
    # -b 0.1: gas further than l from every dark matter particle is attached from ghosts within
    # the reach (6.4 l); b = 1: the reach spans several boxes and wraps the period
    mkuniverse -n 20000 --gas -s 3 -o m.std
    tipsy2bin m.std -o m.fof
    for b in 0.1 1; do
        kdbuild m.fof | foflink -b "$b" | groups -m 2 --format=grp >"hydro$b.grp"
        [ "$(sort -u "hydro$b.grp" | wc -l)" -gt 10 ]
    done
    for r in 7 27 $(full_only 64); do same_grp hydro0.1.grp m.fof "$r" 2 -b 0.1; done
    same_grp hydro0.1.grp m.fof 27 2 -b 0.1 --decomp=slabs
    same_grp hydro1.grp m.fof 27 2 -b 1
    fofdump -c LINK out.0.fof | grep -q '^attached_0 [1-9]'
}
