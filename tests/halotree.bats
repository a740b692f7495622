#!/usr/bin/env bats
# halotree.bats - merger trees: a constructed series with a known history (every link, merger and main progenitor as built), the Gadget-4 series through the pipeline (its main branch against fofkit's catalogues, through the fofkit package and ytree), the bad-input messages.

bats_require_minimum_version 1.5.0

load mpi_helpers

DATA=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}
SERIES=$DATA/g4-lcdm-series
PY=$BATS_TEST_DIRNAME/py
NOHDF5="halotree: a_0.hdf5: this build has no HDF5 to read catalogues with (install libhdf5-dev, then make config and rebuild)"
export PYTHONDONTWRITEBYTECODE=1

# The constructed series (tests/py/treecat.py) for every test, when h5py is there; with the
# series and HDF5, its five catalogues through the pipeline (cat_000.hdf5 .. cat_004.hdf5) and
# those of the bound subhalos (sub_00K.hdf5), and of the groups of 2 members or more
# (m2_00K.hdf5: at z = 5.04 no group of this run has 3).
setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    mpi_probe
    if python3 -c 'import h5py, numpy' 2>/dev/null; then
        mkdir built && python3 "$PY/treecat.py" built || return 1
    fi
    if [ -f "$SERIES/snapshot_004.hdf5" ] && [ "$(halotree a_0.hdf5 a_1.hdf5 2>&1)" != "$NOHDF5" ]; then
        mkdir series && cd series || return 1
        local k
        for k in 0 1 2 3 4; do
            hdf52bin -t dark "$SERIES/snapshot_00$k.hdf5" | kdbuild | foflink -b 0.2 -o l$k.fof || return 1
            groups -m 20 l$k.fof -o g$k.fof || return 1
            groups -m 2 l$k.fof | halostats --format=hdf5 -o m2_00$k.hdf5 || return 1
            halostats --format=hdf5 -o cat_00$k.hdf5 g$k.fof || return 1
            halostats --unbind --format=hdf5 -o sub_00$k.hdf5 g$k.fof || return 1
        done
    fi
}

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
}

need_hdf5() {
    [ "$(halotree a_0.hdf5 a_1.hdf5 2>&1)" != "$NOHDF5" ] || skip "this build has no HDF5"
}

need_built() {
    need_hdf5
    [ -d "$BATS_FILE_TMPDIR/built" ] || skip "python3 has no h5py"
    cp "$BATS_FILE_TMPDIR"/built/*.hdf5 .
}

need_series() {
    need_hdf5
    [ -d "$BATS_FILE_TMPDIR/series" ] || skip "no $SERIES"
    cp "$BATS_FILE_TMPDIR"/series/*.hdf5 .
}

# Whether python3 imports ytree (tried once a file, ytree.ok or ytree.no in $BATS_FILE_TMPDIR:
# it takes seconds to import).
has_ytree() {
    local f=$BATS_FILE_TMPDIR/ytree
    [ -e "$f.ok" ] || [ -e "$f.no" ] || { python3 -c 'import ytree' 2>/dev/null && touch "$f.ok" || touch "$f.no"; }
    [ -e "$f.ok" ]
}

@test "--help and --version" {
    run -0 halotree --help
    [[ "${lines[0]}" == "Usage: halotree [OPTION]... EARLIER LATER..." ]]
    [[ "$output" == *"--skip=N"* ]]
    run -0 halotree --version
    [[ "$output" == *"0.1.0"* ]]
}

@test "usage errors exit 2" {
    run -2 halotree one.hdf5
    [[ "${lines[0]}" == "halotree: two catalogues or more are needed, earliest first" ]]
    run -2 halotree --skip=-1 a_0.hdf5 a_1.hdf5
    [[ "${lines[0]}" == *"--skip"* ]]
    run -2 halotree --weight=mass a_0.hdf5 a_1.hdf5
    [[ "${lines[0]}" == "halotree: --weight=mass: 'rank', 'count' or 'auto'" ]]
    run -2 halotree --bogus a_0.hdf5 a_1.hdf5
}

@test "without HDF5 the one-line message" {
    run halotree a_0.hdf5 a_1.hdf5
    [ "$output" = "$NOHDF5" ] || skip "this build has HDF5"
    [ "$status" -eq 1 ]
}

@test "constructed series: every link with its shared count and score, as built" {
    need_built
    run -0 halotree --links cat_000.hdf5 cat_001.hdf5 cat_002.hdf5
    echo "$output"
    # prog_snap prog desc_snap desc count score is_desc is_main
    [ "$(grep -v '^#' <<<"$output")" = "0 0 1 0 100 100 1 1
0 1 1 0 40 40 1 0
0 2 1 3 30 30 1 1
0 3 1 1 25 25 1 1
0 3 1 4 15 15 0 0
1 0 2 0 140 140 1 1
1 1 2 2 25 25 1 1
1 2 2 1 35 35 1 0
1 3 2 1 30 30 1 1
1 4 2 0 3 3 0 0
1 4 2 3 12 12 1 1
1 5 2 5 15 15 1 1
1 5 2 6 5 5 0 0
0 4 2 4 20 20 1 1" ]
}

@test "constructed series: descendants, main progenitors by history, mergers, roots, as built" {
    need_built
    run -0 halotree -o tree_0_0_0.dat cat_000.hdf5 cat_001.hdf5 cat_002.hdf5
    [ -z "$output" ]
    run -0 python3 "$PY/treecheck.py" built tree_0_0_0.dat
    echo "$output"
    [[ "$output" == "built: 18 halos, 7 trees,"* ]]
}

@test "--weight=rank and --positions: the descendant that receives the core, not the most members" {
    need_built
    # X (snapshot 1, row 5) lists 605-619 then 600-604 and splits into Z (605-619) and Y (600-604);
    # 600-604 lie at X's centre: by count Z, by 1/rank in the list Z, by 1/rank by distance Y
    run -0 halotree --links cat_001.hdf5 cat_002.hdf5
    [[ "$output" == *$'\n1 5 2 5 15 15 1 1\n1 5 2 6 5 5 0 0'* ]]
    run -0 halotree --weight=rank --links cat_001.hdf5 cat_002.hdf5
    [[ "$output" == *$'\n1 5 2 5 15 3.31823 1 1\n1 5 2 6 5 0.279511 0 0'* ]]
    run -0 halotree --positions=snapshot_%n.hdf5 --links cat_001.hdf5 cat_002.hdf5
    [[ "$output" == *$'\n1 5 2 5 15 1.31441 0 0\n1 5 2 6 5 2.28333 1 1'* ]]
    # --weight=count keeps counting with positions given
    run -0 halotree --positions=snapshot_%n.hdf5 --weight=count --links cat_001.hdf5 cat_002.hdf5
    [[ "$output" == *$'\n1 5 2 5 15 15 1 1\n1 5 2 6 5 5 0 0'* ]]
    # the whole tree: every other link as built
    run -0 halotree --positions=snapshot_%n.hdf5 -o tree_0_0_0.dat cat_000.hdf5 cat_001.hdf5 cat_002.hdf5
    run -0 python3 "$PY/treecheck.py" built tree_0_0_0.dat Y
    echo "$output"
    [[ "$output" == "built: 18 halos, 7 trees,"* ]]
}

@test "--weight=auto: 1/rank for SUBFIND's catalogues, counts for halostats' (SubhaloFofLevel) without IDs/MemberOrder" {
    need_built
    run -0 halotree -v --links subfind_001.hdf5 subfind_002.hdf5
    [[ "$output" == *$'\n1 5 2 5 15 3.31823 1 1\n1 5 2 6 5 0.279511 0 0'* ]]
    [[ "${lines[-1]}" == *"weight 1/rank;"* ]]
    run -0 halotree -v --subhalos --links subfind_001.hdf5 subfind_002.hdf5
    [[ "$output" == *$'\n1 5 2 5 15 3.31823 1 1\n1 5 2 6 5 0.279511 0 0'* ]]
    python3 -c 'import h5py, numpy
for k in (1, 2):
    f = h5py.File("subfind_00%d.hdf5" % k, "a"); f["Subhalo/SubhaloFofLevel"] = numpy.zeros(len(f["Subhalo/SubhaloLen"]), "i8")'
    run -0 halotree -v --links subfind_001.hdf5 subfind_002.hdf5
    [[ "$output" == *$'\n1 5 2 5 15 15 1 1\n1 5 2 6 5 5 0 0'* ]]
    [[ "${lines[-1]}" == *"weight count;"* ]]
}

@test "Gadget-4's catalogues in several files read as one" {
    need_built
    run -0 halotree subfind_000.hdf5 subfind_001.hdf5 subfind_002.hdf5
    local one=$output
    run -0 halotree fof_subhalo_tab_000.0.hdf5 fof_subhalo_tab_001.0.hdf5 fof_subhalo_tab_002.0.hdf5
    [ "$output" = "$one" ]
    run -0 halotree --subhalos --links subfind_000.hdf5 subfind_001.hdf5 subfind_002.hdf5
    one=$output
    run -0 halotree --subhalos --links fof_subhalo_tab_000.0.hdf5 fof_subhalo_tab_001.0.hdf5 fof_subhalo_tab_002.0.hdf5
    [ "$output" = "$one" ]
    run -1 halotree fof_subhalo_tab_000.1.hdf5 fof_subhalo_tab_001.1.hdf5
    [ "$output" = "halotree: fof_subhalo_tab_000.1.hdf5: a catalogue split over 2 files (NumFiles): name its first file, NAME.0.hdf5" ]
    rm fof_subhalo_tab_001.1.hdf5
    run -1 halotree fof_subhalo_tab_000.0.hdf5 fof_subhalo_tab_001.0.hdf5
    [ "$output" = "halotree: fof_subhalo_tab_001.1.hdf5: cannot open file 1 of the 2 of fof_subhalo_tab_001.0.hdf5" ]
}

@test "--positions: bad snapshots and patterns" {
    need_built
    run -2 halotree --positions=snapshot.hdf5 cat_000.hdf5 cat_001.hdf5
    [ "${lines[0]}" = "halotree: --positions=snapshot.hdf5: the pattern needs %n, the snapshot's number" ]
    cp cat_000.hdf5 early.hdf5 && cp cat_001.hdf5 late.hdf5
    run -2 halotree --positions=snapshot_%n.hdf5 early.hdf5 late.hdf5
    [ "${lines[0]}" = "halotree: --positions: early.hdf5 has no snapshot number in its name for %n" ]
    run -1 halotree --positions=nowhere/snapshot_%n.hdf5 cat_000.hdf5 cat_001.hdf5
    [ "$output" = "halotree: nowhere/snapshot_000.hdf5: cannot open: No such file or directory" ]
    mkdir other && cp snapshot_00?.hdf5 other/
    python3 -c 'import h5py; f = h5py.File("other/snapshot_001.hdf5", "a"); f["PartType1/ParticleIDs"][:] += 10**6'
    run -1 halotree --positions=other/snapshot_%n.hdf5 cat_000.hdf5 cat_001.hdf5
    [ "$output" = "halotree: other/snapshot_001.hdf5: no particle of ID 1000 (a member in cat_001.hdf5): not that catalogue's snapshot?" ]
}

@test "--skip=0: a halo missing for a snapshot ends its tree there" {
    need_built
    run -0 halotree --skip=0 --links cat_000.hdf5 cat_001.hdf5 cat_002.hdf5
    [[ "$output" != *$'\n0 4 2 4 '* ]]
    run -0 halotree --skip=0 cat_000.hdf5 cat_001.hdf5 cat_002.hdf5
    [ "$(sed -n '/^[0-9]*$/p' <<<"$output")" = 8 ]
    # E (snapshot 0, row 4) is a root: its desc_id -1
    [ "$(awk '!/^#/ && NF > 30 && $32 == 0 && $31 == 4 { print $4 }' <<<"$output")" = -1 ]
}

@test "bad input: catalogues of different runs, without IDs, out of order, missing" {
    need_built
    run -1 halotree cat_000.hdf5 other_001.hdf5 -o t.dat
    [ "$output" = "halotree: other_001.hdf5: shares no particle IDs with cat_000.hdf5 (a catalogue of another run?)" ]
    [ ! -e t.dat ]
    run -1 halotree cat_000.hdf5 cat_001.hdf5 -o nowhere/t.dat
    [ "$output" = "halotree: nowhere/t.dat: cannot create: no directory nowhere" ]
    if [ -w /dev/full ]; then
        run -1 bash -c 'halotree cat_000.hdf5 cat_001.hdf5 >/dev/full'
        [ "$output" = "halotree: stdout: cannot write: No space left on device" ]
    fi
    run -1 halotree cat_000.hdf5 noids_001.hdf5
    [ "$output" = "halotree: noids_001.hdf5: the catalogue has no members' IDs (IDs/ID; halostats --format=hdf5 writes them)" ]
    run -1 halotree cat_001.hdf5 cat_000.hdf5
    [ "$output" = "halotree: cat_000.hdf5: snapshot 0 after snapshot 1 of cat_001.hdf5 (give the catalogues in time order, earliest first)" ]
    cp cat_000.hdf5 early.hdf5 && cp cat_001.hdf5 late.hdf5
    run -1 halotree late.hdf5 early.hdf5
    [ "$output" = "halotree: early.hdf5: its time a = 0.25 is not later than late.hdf5's, a = 0.5 (give the catalogues in time order, earliest first)" ]
    run -1 halotree cat_000.hdf5 cat_002.hdf5
    [ "$output" = "halotree: cat_002.hdf5: snapshot 1 is missing between cat_000.hdf5 and cat_002.hdf5 (every snapshot's catalogue is needed; --skip links halos across gaps in a catalogue)" ]
    run -1 halotree cat_000.hdf5 cat_001.hdf5 cat_003.hdf5
    [ "$output" = "halotree: cat_003.hdf5: snapshot 2 is missing between cat_001.hdf5 and cat_003.hdf5 (every snapshot's catalogue is needed; --skip links halos across gaps in a catalogue)" ]
    cp cat_001.hdf5 nosub_001.hdf5
    python3 -c 'import h5py; del h5py.File("nosub_001.hdf5", "a")["Subhalo"]'
    run -1 halotree --subhalos cat_000.hdf5 nosub_001.hdf5
    [ "$output" = "halotree: nosub_001.hdf5: the catalogue has no subhalos (halostats --unbind or a second level writes them)" ]
    rm cat_001.hdf5
    run -1 halotree cat_000.hdf5 cat_001.hdf5
    [ "$output" = "halotree: cat_001.hdf5: cannot open: No such file or directory" ]
    echo text >cat_001.hdf5
    run -1 halotree cat_000.hdf5 cat_001.hdf5
    [ "$output" = "halotree: cat_001.hdf5: not an HDF5 file (halostats --format=hdf5 writes the catalogues)" ]
}

@test "a truncated catalogue: one line saying so, status 1, nothing written" {
    need_built
    local size
    size=$(stat -c %s cat_001.hdf5)
    head -c 3000 cat_001.hdf5 >cut_001.hdf5
    run -1 --separate-stderr halotree -o t.dat cat_000.hdf5 cut_001.hdf5
    [ "$stderr" = "halotree: cut_001.hdf5: truncated: the file holds 3000 of the $size bytes its HDF5 superblock gives" ]
    [ ! -e t.dat ]
    # the second file of a catalogue in several
    size=$(stat -c %s fof_subhalo_tab_001.1.hdf5)
    head -c 2500 fof_subhalo_tab_001.1.hdf5 >f && mv f fof_subhalo_tab_001.1.hdf5
    run -1 halotree fof_subhalo_tab_000.0.hdf5 fof_subhalo_tab_001.0.hdf5
    [ "$output" = "halotree: fof_subhalo_tab_001.1.hdf5: truncated: the file holds 2500 of the $size bytes its HDF5 superblock gives" ]
}

@test "damaged catalogues: one line naming the file, status 1, nothing written" {
    need_built
    local c first opt n=0
    for c in $(python3 "$PY/treebad.py" .); do
        first=cat_000.hdf5 opt=
        case $c in sub*) first=subfind_000.hdf5 opt=--subhalos ;; esac
        run -1 --separate-stderr halotree $opt -o t.dat "$first" "bad_${c}_001.hdf5"
        echo "$c: $stderr"
        [ "${#stderr_lines[@]}" -eq 1 ]
        [[ "$stderr" == "halotree: bad_${c}_001.hdf5: "* ]]
        [ ! -e t.dat ]
        n=$((n + 1))
    done
    [ "$n" -eq 14 ]
}

@test "series: the main branch of the largest halo at z = 0, masses and redshifts as fofkit's catalogues" {
    need_series
    run -0 halotree -v -o tree_0_0_0.dat cat_000.hdf5 cat_001.hdf5 cat_002.hdf5 cat_003.hdf5 cat_004.hdf5
    echo "$output"
    [[ "$output" == *"linked cat_003.hdf5 to cat_004.hdf5: "* ]]
    # at z = 5.04 no group reaches 20 particles: the branch goes back to z = 3, as far as halos exist
    [[ "${lines[0]}" == "halotree: device: "* ]]
    [[ "${lines[1]}" == "halotree: cat_000.hdf5: snapshot 0, a = 0.16556, 0 groups, 0 members" ]]
    run -0 python3 "$PY/treecheck.py" series tree_0_0_0.dat cat_00?.hdf5
    echo "$output"
    [[ "$output" == "series: main branch of the largest halo from z = 0 back to z = 3 (snapshots [4, 3, 2, 1])"* ]]
    # the same with SubLink's 1/rank, the ranks by distance from the centres in the snapshots
    run -0 halotree -v --positions="$SERIES/snapshot_%n.hdf5" -o ranked.dat cat_000.hdf5 cat_001.hdf5 cat_002.hdf5 cat_003.hdf5 cat_004.hdf5
    [[ "${lines[-1]}" == *"106 trees; weight 1/rank;"* ]]
    run -0 python3 "$PY/treecheck.py" series ranked.dat cat_00?.hdf5
    [[ "$output" == "series: main branch of the largest halo from z = 0 back to z = 3 (snapshots [4, 3, 2, 1])"* ]]
}

@test "series: ytree loads the tree, its main branch as fofkit's catalogues" {
    need_series
    has_ytree || skip "python3 has no ytree"
    halotree -o tree_0_0_0.dat cat_000.hdf5 cat_001.hdf5 cat_002.hdf5 cat_003.hdf5 cat_004.hdf5
    run -0 python3 "$PY/treecheck.py" ytree tree_0_0_0.dat cat_00?.hdf5
    echo "$output"
    [[ "${lines[-1]}" == "ytree: 106 trees; main branch of the largest halo over snapshots [4, 3, 2, 1], z [0.   1.   2.02 3.  ]" ]]
    # --locations: the index files (SAGE's way in); ytree's loader of locations.dat finds the same trees
    mkdir out
    halotree --locations -o out/tree_0_0_0.dat cat_000.hdf5 cat_001.hdf5 cat_002.hdf5 cat_003.hdf5 cat_004.hdf5
    cmp out/tree_0_0_0.dat tree_0_0_0.dat
    [ "$(head -n 1 out/locations.dat)" = "#TreeRootID FileID Offset Filename" ]
    [ "$(head -n 2 out/forests.list)" = $'#TreeRootID ForestID\n69 69' ]
    # each offset is the start of its root's line, after its "#tree ROOT" line
    local root file offset name
    read -r root file offset name < <(sed -n 2p out/locations.dat)
    [ "$root $file $name" = "69 0 tree_0_0_0.dat" ]
    [ "$(tail -c +$((offset + 1)) out/tree_0_0_0.dat | head -n 1 | cut -d ' ' -f 2)" = 69 ]
    [ "$(head -c "$offset" out/tree_0_0_0.dat | tail -n 1)" = "#tree 69" ]
    run -0 python3 -c 'import ytree, numpy as np
a, b = ytree.load("out/locations.dat"), ytree.load("tree_0_0_0.dat")
same = sum(x.tree_size == y.tree_size and np.array_equal(x["tree", "uid"], y["tree", "uid"]) for x, y in zip(a, b))
print(a.size, same)'
    [ "${lines[-1]}" = "106 106" ]
}

@test "series: the trees reach z = 5.04 over groups of 2 members or more, main branches as the catalogues (fofkit, ytree)" {
    need_series
    # at z = 5.04 the largest group of this 32768-particle run has 2 members (b = 0.2): the trees
    # over catalogues of groups -m 2; the largest halo's tree holds halos of every snapshot, and
    # the main branches that reach z = 5.04 are the catalogues' halos (through ytree too when installed)
    run -0 halotree -v -o tree_0_0_0.dat m2_000.hdf5 m2_001.hdf5 m2_002.hdf5 m2_003.hdf5 m2_004.hdf5
    [[ "${lines[1]}" == "halotree: m2_000.hdf5: snapshot 0, a = 0.16556, 29 groups, 58 members" ]]
    run -0 python3 "$PY/treecheck.py" deep tree_0_0_0.dat m2_00?.hdf5
    echo "$output"
    [[ "${lines[0]}" == "deep: the largest halo's tree holds halos of snapshots [0, 1, 2, 3, 4]; "*" main branches from z = 0 to z = 5.04, of halos [24, "* ]]
    if has_ytree; then
        [[ "${lines[-1]}" == "ytree: halo 24's main branch over snapshots [4, 3, 2, 1, 0], z [0.   1.   2.02 3.   5.04]" ]]
    fi
}

# mpirun -n R halotree ARGS... writes what one process writes, for R in $RANKS (default 1 to 4;
# make test: 1, 3, 4, rank_counts). Usage: [RANKS="2 3"] same_mpi ARGS...
same_mpi() {
    local R
    halotree "$@" -o one.out
    [ -s one.out ]
    for R in ${RANKS:-$(rank_counts 1 2 3 4)}; do
        mpirun --oversubscribe -n "$R" halotree "$@" -o "r$R.out"
        cmp one.out "r$R.out" || { echo "$R ranks differ: halotree $*"; return 1; }
    done
}

@test "mpirun: 1 to 4 ranks write the single process's links and trees, byte for byte (constructed series)" {
    need_built
    need_mpi halotree
    local c="cat_000.hdf5 cat_001.hdf5 cat_002.hdf5"
    same_mpi --links $c
    same_mpi $c
    RANKS=3 same_mpi --weight=rank --links $c
    RANKS=2 same_mpi --positions=snapshot_%n.hdf5 --links $c
    RANKS=4 same_mpi --subhalos fof_subhalo_tab_000.0.hdf5 fof_subhalo_tab_001.0.hdf5 fof_subhalo_tab_002.0.hdf5
    # the exchanges in rounds of 3 records
    FOFKIT_DIST_ROUND=3 mpirun --oversubscribe -n 3 halotree --links $c -o rounds.out
    halotree --links $c | cmp - rounds.out
    # -v: rank 0 reports
    run -0 --separate-stderr mpirun --oversubscribe -n 2 halotree -v $c -o v.out
    [ "$(grep -c 'linked cat_001.hdf5 to cat_002.hdf5' <<<"$stderr")" -eq 1 ]
}

@test "mpirun: bad input, one line from one rank, the single process's message and status" {
    need_built
    need_mpi halotree
    python3 "$PY/treebad.py" . >/dev/null
    local bad
    for bad in bad_dupid_001.hdf5 other_001.hdf5 noids_001.hdf5 bad_lensum_001.hdf5 bad_idstext_001.hdf5 bad_ids2d_001.hdf5; do
        run -1 --separate-stderr halotree -o t.dat cat_000.hdf5 "$bad"
        local want=$stderr
        [[ "$want" == "halotree: $bad: "* ]]
        run -1 --separate-stderr mpirun --oversubscribe -n 3 halotree -o t.dat cat_000.hdf5 "$bad"
        [ "$(grep -c '^halotree: ' <<<"$stderr")" -eq 1 ]
        grep -qxF "$want" <<<"$stderr"
        [ ! -e t.dat ]
    done
}

@test "mpirun: 1 to 4 ranks write the single process's trees of the Gadget-4 series" {
    need_series
    need_mpi halotree
    same_mpi cat_000.hdf5 cat_001.hdf5 cat_002.hdf5 cat_003.hdf5 cat_004.hdf5
    RANKS=3 same_mpi --links m2_000.hdf5 m2_001.hdf5 m2_002.hdf5 m2_003.hdf5 m2_004.hdf5
    RANKS=4 same_mpi --subhalos --links sub_000.hdf5 sub_001.hdf5 sub_002.hdf5 sub_003.hdf5 sub_004.hdf5
    RANKS=2 same_mpi --positions="$SERIES/snapshot_%n.hdf5" --links cat_000.hdf5 cat_001.hdf5 cat_002.hdf5 cat_003.hdf5 cat_004.hdf5
}

@test "series: the subhalos' trees, each subhalo's pid a main subhalo of its snapshot" {
    need_series
    run -0 halotree --subhalos -o subs.dat sub_000.hdf5 sub_001.hdf5 sub_002.hdf5 sub_003.hdf5 sub_004.hdf5
    # pid: -1 or the id of a halo of the same snapshot whose own pid is -1
    run -0 awk '!/^#/ && NF > 30 { snap[$2] = $32; pid[$2] = $6; n++ } END {
        for (h in pid) if (pid[h] != -1 && (!(pid[h] in pid) || pid[pid[h]] != -1 || snap[pid[h]] != snap[h])) bad++
        print n, bad + 0 }' subs.dat
    echo "$output"
    [ "${output#* }" = 0 ]
    [ "${output% *}" -gt 100 ]
}

# halotree ARGS... on the CPU and on the GPU ($FOFKIT_DEVICE): the same output, not empty.
same_on_gpu() {
    run -0 halotree --device=cpu "$@"
    local cpu=$output
    run -0 env FOFKIT_DEVICE=gpu halotree "$@"
    [ "$output" = "$cpu" ] || { echo "differs: halotree $*"; return 1; }
    [ -n "$cpu" ]
}

@test "--device=gpu: the CPU's links and trees, byte for byte (skipped without a GPU)" {
    need_built
    halotree --device=gpu cat_000.hdf5 cat_001.hdf5 >/dev/null 2>&1 || skip "no usable GPU"
    local c="cat_000.hdf5 cat_001.hdf5 cat_002.hdf5"
    for opts in --links "" --skip=0 "--weight=rank --positions=snapshot_%n.hdf5"; do
        # shellcheck disable=SC2086
        same_on_gpu $opts $c
    done
    same_on_gpu --subhalos --links subfind_000.hdf5 subfind_001.hdf5 subfind_002.hdf5
    if [ -d "$BATS_FILE_TMPDIR/series" ]; then
        cp "$BATS_FILE_TMPDIR"/series/*.hdf5 .
        same_on_gpu --links cat_00[0-4].hdf5
        same_on_gpu cat_00[0-4].hdf5
        same_on_gpu --subhalos --links sub_00[0-4].hdf5
    fi
}

@test "--device: a bad value is a usage error; gpu without a usable GPU says why, status 3" {
    run -2 halotree --device=tpu a_0.hdf5 a_1.hdf5
    [[ "$output" == "halotree: "*tpu* ]]
    need_built
    if halotree --device=gpu cat_000.hdf5 cat_001.hdf5 >/dev/null 2>&1; then skip "a GPU is present"; fi
    run -3 halotree --device=gpu cat_000.hdf5 cat_001.hdf5
    [ "${#lines[@]}" -eq 1 ]
    [[ "$output" == "halotree: "*GPU* ]]
}

@test "examples/trees.mk: make -j takes the series' snapshots to catalogues and the trees" {
    need_series
    command -v make >/dev/null || skip "no make"
    # a make of its own, not a part of the make that may run this test
    unset MAKEFLAGS MFLAGS MAKELEVEL
    # B, OUT and BIN in the environment (a build directory, say) are not the makefile's
    B=build-elsewhere BIN=/nowhere/ run -0 make -f "$BATS_TEST_DIRNAME/../examples/trees.mk" SNAPS="$SERIES" OUT=out -j 2
    [ -s out/cat_000.hdf5 ] && [ -s out/cat_004.hdf5 ]
    # the same trees as halotree over the same catalogues by hand (the directory differs in no byte)
    halotree -o by-hand.dat cat_000.hdf5 cat_001.hdf5 cat_002.hdf5 cat_003.hdf5 cat_004.hdf5
    cmp out/tree_0_0_0.dat by-hand.dat
    # nothing to remake; a catalogue newer than the tree remakes the tree alone
    run -0 make -f "$BATS_TEST_DIRNAME/../examples/trees.mk" SNAPS="$SERIES" OUT=out -j 2
    [[ "$output" == *"Nothing to be done"* ]]
    # (the snapshots' own times are not ours to move: a fresh copy of the data may be
    # seconds old, so the catalogue is made newer than the tree, not the rest older)
    sleep 1
    touch out/cat_004.hdf5
    run -0 make -f "$BATS_TEST_DIRNAME/../examples/trees.mk" SNAPS="$SERIES" OUT=out -j 2
    [[ "$output" == "halotree"*"-o out/tree_0_0_0.dat"* ]]
    run -2 make -f "$BATS_TEST_DIRNAME/../examples/trees.mk" SNAPS=nowhere
    [[ "$output" == *"no nowhere/snapshot_*.hdf5: name the directory of the snapshots with SNAPS=DIR"* ]]
}
