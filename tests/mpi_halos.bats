#!/usr/bin/env bats
# mpi_halos.bats - halostats under mpirun: the catalogue of 1 to 8 ranks byte for byte the single-process one (levels, --unbind, --so, HDF5 and stream outputs, real snapshots), bad input on every rank.

bats_require_minimum_version 1.5.0

load mpi_helpers
export OMP_NUM_THREADS=1

DATA=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}

# A 2-level mock linked in one process (kd-tree order), made once.
setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    mpi_probe
    mkuniverse -n 20000 -s 7 -o mock.std
    tipsy2bin mock.std | kdbuild | foflink -b 0.2,0.1 -o link.fof
}

# The catalogue with its input's name (header line 2) replaced: a distributed
# run names the pattern it read, one process its file.
unnamed() {
    sed '2s|^# input [^:]*:|# input NAME:|' "$1"
}

# Splits the single-process linked STREAM into R per-rank streams in its
# stream order (as foflink under mpirun leaves them), groups them under
# mpirun, and checks that `mpirun -n R halostats OPTIONS` writes what one
# process writes on the single-process grouped stream (ref.txt, made by the
# caller with the same options). Usage: same R M STREAM OPTIONS...
same() {
    local R=$1 m=$2 s=$3
    shift 3
    mkgmin "$R" "$s" "l$R.%r.fof"
    mpirun -n "$R" groups -m "$m" --format=stream "l$R.%r.fof" -o "g$R.%r.fof"
    mpirun -n "$R" halostats "$@" "g$R.%r.fof" -o "d$R.txt"
    cmp <(unnamed ref.txt) <(unnamed "d$R.txt")
    [ "$(sed -n 2p "d$R.txt" | cut -d: -f1)" = "# input g$R.%r.fof" ]
    ! ls d$R.txt.* 2>/dev/null
}

@test "mock, 2 levels: the catalogue of 1, 2, 3, 4 and 8 ranks is the single-process one (text, CSV)" {
    need_mpi halostats
    groups -m 20 link.fof -o grp.fof
    # the mock has no units: G given (1, the mock's N-body units), as every mock run here
    halostats --G=1 grp.fof -o ref.txt
    for R in $(rank_counts 1 2 3 4 8); do same "$R" 20 link.fof --G=1; done # make test: 1, 3, 8
    [ "$(grep -vc '^#' ref.txt)" -gt 100 ]               # groups of both levels: not an empty comparison
    grep -q '^1 ' ref.txt                                 # level 1 rows
    halostats --G=1 --csv grp.fof -o ref.csv
    mpirun -n 3 halostats --G=1 --csv g3.%r.fof -o d3.csv
    cmp ref.csv d3.csv
}

@test "mock: --unbind on 2, 3 and 8 ranks, and with --centre=com, is the single-process catalogue" {
    need_mpi halostats
    groups -m 10 link.fof | halostats --G=1 --unbind -o ref.txt
    grep -q n_bound ref.txt
    for R in 3 8; do same "$R" 10 link.fof --G=1 --unbind; done
    groups -m 10 link.fof | halostats --G=1 --unbind --centre=com --bound-min=5 -o ref.txt
    same 2 10 link.fof --G=1 --unbind --centre=com --bound-min=5
}

# The HALO chunks (every level, <f8: every bit of every column) and HCOL of two streams
# from halostats --format=stream are the same. Usage: same_halo A B LEVELS
same_halo() {
    local k
    cmp <(fofdump -c HCOL "$1") <(fofdump -c HCOL "$2")
    for ((k = 0; k < $3; k++)); do cmp <(fofdump -c HALO -l "$k" "$1") <(fofdump -c HALO -l "$k" "$2"); done
}

@test "mock: --so on 1, 2, 3 and 4 ranks is the single-process catalogue; --format=stream's SO doubles bit for bit" {
    need_mpi halostats
    groups -m 20 link.fof -o grp.fof
    halostats --G=1 --so --omega-m=0.3 grp.fof -o ref.txt
    [ "$(grep -v '^#' ref.txt | grep -cv nan)" -gt 100 ] # radii reached at both levels: not an empty comparison
    grep -q r200m ref.txt
    for R in $(rank_counts 1 2 3 4); do same "$R" 20 link.fof --G=1 --so --omega-m=0.3; done # make test: 1, 3, 4
    halostats --G=1 --so --omega-m=0.3 --format=stream grp.fof -o ref.fof
    mpirun -n 3 halostats --G=1 --so --omega-m=0.3 --format=stream g3.%r.fof -o s3.%r.fof
    same_halo ref.fof s3.0.fof 2
    # every rank's stream is its input written on; rank 0's also holds the catalogue
    cmp <(fofdump -c GIDL -l 1 g3.2.fof) <(fofdump -c GIDL -l 1 s3.2.fof)
    [ "$(fofdump s3.1.fof | grep -c -e HALO -e HCOL)" -eq 0 ]
}

@test "mock: --so --unbind, the first rounds narrowed and widened, --so-min: the single-process catalogue" {
    need_mpi halostats
    groups -m 10 link.fof | halostats --G=1 --so --unbind --omega-m=0.25 --so-min=20 -o ref.txt
    grep -q n_bound ref.txt && grep -q r200c ref.txt
    same 3 10 link.fof --G=1 --so --unbind --omega-m=0.25 --so-min=20
    # the first round at a quarter of its radius: more spheres asked again, the same rows
    mkgmin 2 link.fof l2.%r.fof
    mpirun -n 2 groups -m 10 --format=stream l2.%r.fof -o g2.%r.fof
    mpirun -n 2 -x FOFKIT_DIST_SO_START=0.25 halostats -v --G=1 --so --unbind --omega-m=0.25 --so-min=20 g2.%r.fof -o a.txt 2>a.err
    cmp <(unnamed ref.txt) <(unnamed a.txt)
    grep -Eq 'SO: [0-9]+ spheres \(every level\) in [2-9] rounds' a.err # asked again: the rounds are tested
    grep -q 'SO: rank 1 measured [0-9]* spheres over [1-9][0-9]* particles; sent [1-9][0-9]* of its particles' a.err
    # every first sphere over the cells of its first search (where one process may search with every thread)
    mpirun -n 2 -x FOFKIT_DIST_SO_TEAM=1 halostats --G=1 --so --unbind --omega-m=0.25 --so-min=20 g2.%r.fof -o b.txt
    cmp <(unnamed ref.txt) <(unnamed b.txt)
}

# A 2-level mock whose masses span 13 decades (1e-15 to 1e-2): their sums in double depend on
# the order they are added in, so the SO masses of a distributed run match only when each
# sphere's particles are summed in the single process's order.
@test "masses of every size: the SO doubles of 1 and 3 ranks (--format=stream) are the single process's bit for bit" {
    need_mpi halostats
    tipsy2bin mock.std | fofdump -c POS | awk 'BEGIN { srand(7) } { print "d", $1, $2, $3, 0, 0, 0, exp(30 * rand()) / 1e15 }' |
        ascii2tipsy -o wide.std
    # every particle's spacing: the lightest particle's (the default) would link almost nothing here
    tipsy2bin wide.std | kdbuild | foflink -b 0.2,0.1 --spacing=all -o wide.fof
    groups -m 20 wide.fof | halostats --G=1 --so --omega-m=0.3 --format=stream -o ref.fof
    for R in 1 3; do
        mkgmin "$R" wide.fof w$R.%r.fof
        mpirun -n "$R" groups -m 20 --format=stream w$R.%r.fof -o wg$R.%r.fof
        mpirun -n "$R" halostats --G=1 --so --omega-m=0.3 --format=stream wg$R.%r.fof -o ws$R.%r.fof
        same_halo ref.fof ws$R.0.fof 2
    done
    [ "$(fofdump -c HALO ref.fof | grep -cv nan)" -gt 20 ]
    # the ghost spheres moved in rounds of at most 7 particles between two ranks
    mpirun -n 3 -x FOFKIT_DIST_ROUND=7 halostats --G=1 --so --omega-m=0.3 --format=stream wg3.%r.fof -o wr.%r.fof
    same_halo ref.fof wr.0.fof 2
}

# The catalogues of the grouped single-process stream GRP (ref.fof: --format=stream with --so,
# every HALO double; ref.hdf5 and ref.txt with --so --unbind; OPTIONS given to each), and those
# of R ranks that link SNAP split into R slices (splitstream SPLIT...) under mpirun: byte for
# byte, every column at full precision (the stream's and the HDF5 file's doubles; the text too
# when TEXT is 1). Usage: whole_ref GRP "OPTIONS"; whole_same R "SPLIT..." SNAP LEVELS MINSIZE
# "LINK OPTIONS" "OPTIONS" TEXT
whole_ref() {
    local grp=$1 opts=$2
    halostats $opts --so --format=stream "$grp" -o ref.fof
    halostats $opts --so --unbind "$grp" -o ref.txt
    halostats $opts --so --unbind --format=hdf5 --subhalos=levels "$grp" -o ref.hdf5
}
whole_same() {
    local R=$1 split=$2 snap=$3 levels=$4 m=$5 link=$6 opts=$7 text=$8
    # shellcheck disable=SC2086
    splitstream $split "$R" "$snap" "w$R.%r.fof"
    # shellcheck disable=SC2086
    mpirun -n "$R" foflink $link "w$R.%r.fof" -o "wl$R.%r.fof"
    mpirun -n "$R" groups -m "$m" --format=stream "wl$R.%r.fof" -o "wg$R.%r.fof"
    # shellcheck disable=SC2086
    mpirun -n "$R" halostats $opts --so --format=stream "wg$R.%r.fof" -o "ws$R.%r.fof"
    same_halo ref.fof "ws$R.0.fof" "$levels"
    # shellcheck disable=SC2086
    mpirun -n "$R" halostats $opts --so --unbind --format=hdf5 --subhalos=levels "wg$R.%r.fof" -o "wh$R.hdf5"
    cmp ref.hdf5 "wh$R.hdf5"
    [ "$text" = 1 ] || return 0
    # shellcheck disable=SC2086
    mpirun -n "$R" halostats $opts --so --unbind "wg$R.%r.fof" -o "wt$R.txt"
    cmp <(unnamed ref.txt) <(unnamed "wt$R.txt")
}

# Each halo's sums run over its members in ID order (halomembers.h), each SO grid cell's over its
# particles by ID (so.h), the box's mass is an exact sum (spacing.h): the catalogue depends neither
# on the stream's order (one process links a kd-tree ordered stream, the ranks their slices in
# file order) nor on the split. Masses over 9 decades (sums in another order round otherwise), a
# fifth of the particles gas, 2 levels.
@test "every column, every format: 1, 2, 3, 5 and 8 ranks linking slices in file order write the kd-ordered single process's catalogue byte for byte (--so, --unbind, HDF5)" {
    need_mpi halostats
    halostats --format=hdf5 /dev/null 2>&1 | grep -q 'no HDF5' && skip "this build has no HDF5"
    tipsy2bin mock.std -o m.fof
    paste -d ' ' <(fofdump -c POS m.fof) <(fofdump -c VEL m.fof) |
        awk 'BEGIN { srand(11) } { print (NR % 5 ? "d" : "g"), $0, exp(20 * rand()) / 1e9 }' | ascii2tipsy -o wide.std
    tipsy2bin wide.std | setunits -o snap.fof -
    kdbuild snap.fof | foflink -b 0.2,0.1 --spacing=all | groups -m 20 -o grp.fof
    whole_ref grp.fof "--omega-m=0.3"
    [ "$(fofdump -c HALO -l 1 ref.fof | grep -cv nan)" -gt 20 ] # SO radii reached at level 1: not an empty comparison
    grep -q ' n_bound ' ref.txt
    for R in $(rank_counts 1 2 5 8); do whole_same "$R" "" snap.fof 2 20 "-b 0.2,0.1 --spacing=all" "--omega-m=0.3" $((R == 8)); done
    whole_same 3 "--weights=0,1,3" snap.fof 2 20 "-b 0.2,0.1 --spacing=all" "--omega-m=0.3" 1 # an empty rank
}

# The same on real snapshots: Gadget-4 with gas (its units, cosmology and particle IDs: the HDF5
# catalogue names members by ParticleIDs, the PID chunks gathered from every rank), and a
# zoom-in with 5 particle masses (--so).
@test "every column, every format, real snapshots: 1, 3, 5 and 8 ranks write the kd-ordered single process's catalogue byte for byte (Gadget-4 with gas; a zoom)" {
    need_mpi halostats
    [ -f "$DATA/g4-lcdm-gas-z0.hdf5" ] && [ -f "$DATA/test4-zoom.std" ] || skip "no snapshots in $DATA"
    command -v hdf52bin >/dev/null && hdf52bin "$DATA/g4-lcdm-gas-z0.hdf5" -o g4.fof 2>/dev/null ||
        skip "this build reads no HDF5"
    kdbuild g4.fof | foflink -b 0.2 | groups -m 10 -o grp.fof
    whole_ref grp.fof ""
    [ "$(fofdump -c HALO ref.fof | wc -l)" -gt 100 ] && [ "$(fofdump -c HALO ref.fof | grep -cv nan)" -gt 5 ]
    python3 -c 'import h5py' 2>/dev/null && # the snapshot's own IDs, not indices
        python3 -c 'import h5py, sys; f = h5py.File(sys.argv[1]); s = h5py.File(sys.argv[2])
ids = set(); [ids.update(s[g]["ParticleIDs"][:].tolist()) for g in s if g.startswith("PartType")]
assert len(f["IDs/ID"]) > 100 and set(f["IDs/ID"][:].tolist()) <= ids' ref.hdf5 "$DATA/g4-lcdm-gas-z0.hdf5"
    whole_same 1 "" g4.fof 1 10 "-b 0.2" "" 0
    whole_same 3 "--weights=0,1,3" g4.fof 1 10 "-b 0.2" "" 1 # an empty rank: its PID chunk empty
    whole_same 8 "" g4.fof 1 10 "-b 0.2" "" 0
    tipsy2bin "$DATA/test4-zoom.std" -o zoom.fof
    kdbuild zoom.fof | foflink -b 0.2 | groups -m 10 -o zgrp.fof
    halostats --so --omega-m=0.3 --format=stream zgrp.fof -o zref.fof
    splitstream 5 zoom.fof z.%r.fof
    mpirun -n 5 foflink -b 0.2 z.%r.fof -o zl.%r.fof
    mpirun -n 5 groups -m 10 --format=stream zl.%r.fof -o zg.%r.fof
    mpirun -n 5 halostats --so --omega-m=0.3 --format=stream zg.%r.fof -o zs.%r.fof
    same_halo zref.fof zs.0.fof 1
}

@test "HDF5: the catalogue of 1, 2 and 3 ranks is the single-process file byte for byte (2 levels; --so --unbind)" {
    need_mpi halostats
    halostats --format=hdf5 /dev/null 2>&1 | grep -q 'no HDF5' && skip "this build has no HDF5"
    # a catalogue states units: the mock's given, Gadget's (setunits, as a converter that knows them)
    setunits link.fof -o ulink.fof
    groups -m 20 ulink.fof -o grp.fof
    halostats --format=hdf5 grp.fof -o ref.hdf5
    halostats --format=hdf5 --so --unbind --subhalos=levels --omega-m=0.3 grp.fof -o ref2.hdf5
    for R in 1 2 3; do
        mkgmin "$R" ulink.fof l$R.%r.fof
        mpirun -n "$R" groups -m 20 --format=stream l$R.%r.fof -o g$R.%r.fof
        mpirun -n "$R" halostats --format=hdf5 g$R.%r.fof -o d$R.hdf5
        cmp ref.hdf5 d$R.hdf5
    done
    mpirun -n 3 halostats --format=hdf5 --so --unbind --subhalos=levels --omega-m=0.3 g3.%r.fof -o e3.hdf5
    cmp ref2.hdf5 e3.hdf5
    [ -z "$(ls d3.hdf5.* e3.hdf5.* 2>/dev/null)" ]
    if python3 -c 'import h5py' 2>/dev/null; then # a catalogue of both levels: Groups and Subhalos with members
        python3 -c 'import h5py, sys; f = h5py.File(sys.argv[1]); assert len(f["Group/GroupLen"]) > 20 and len(f["Subhalo/SubhaloLen"]) > 20 and len(f["IDs/ID"]) == f["Header"].attrs["Nids_Total"] > 0' e3.hdf5
    fi
}

@test "mock: the whole pipeline under mpirun (tipsy2bin, foflink, groups, halostats) on 2 and 4 ranks writes the single-process catalogue" {
    need_mpi halostats
    tipsy2bin mock.std | kdbuild | foflink -b 0.2,0.1 | groups -m 20 | halostats --G=1 --unbind -o ref.txt
    for R in 2 4; do
        mpirun -n "$R" tipsy2bin mock.std -o "p$R.%r.fof"
        mpirun -n "$R" foflink -b 0.2,0.1 "p$R.%r.fof" -o "q$R.%r.fof"
        mpirun -n "$R" groups -m 20 --format=stream "q$R.%r.fof" -o "r$R.%r.fof"
        mpirun -n "$R" halostats --G=1 --unbind "r$R.%r.fof" -o "f$R.txt"
        cmp <(unnamed ref.txt) <(unnamed "f$R.txt")
    done
}

@test "GPU: 2 ranks computing their potentials on the GPU write the single-process CPU catalogue (skips without a GPU)" {
    need_mpi halostats
    groups -m 20 link.fof -o grp.fof
    halostats --device=gpu grp.fof -o /dev/null 2>/dev/null || skip "no usable GPU"
    halostats --G=1 --device=cpu grp.fof -o ref.txt
    mkgmin 2 link.fof l.%r.fof
    mpirun -n 2 groups -m 20 --format=stream l.%r.fof -o g.%r.fof
    mpirun -n 2 halostats --G=1 --device=gpu g.%r.fof -o gpu.txt
    grep -q 'least); on the GPU$' gpu.txt # the header says where the potentials were summed, the rows agree
    cmp <(unnamed ref.txt) <(unnamed gpu.txt | sed 's/least); on the GPU$/least); on the CPU/')
}

@test "real snapshots: the catalogue of 3 ranks is the single-process one (isolated; Gadget-4 units)" {
    need_mpi halostats
    [ -f "$DATA/run581-dark-star.std" ] && [ -f "$DATA/g4-lcdm-gas-z0.hdf5" ] || skip "no snapshots in $DATA"
    tipsy2bin --no-periodic "$DATA/run581-dark-star.std" | kdbuild | foflink -b 0.2 -o real.fof
    groups -m 10 real.fof | halostats --G=1 --unbind -o ref.txt # a tipsy run: G = 1
    [ "$(grep -vc '^#' ref.txt)" -gt 0 ]
    same 3 10 real.fof --G=1 --unbind
    command -v hdf52bin >/dev/null && hdf52bin "$DATA/g4-lcdm-gas-z0.hdf5" -o g4.fof 2>/dev/null ||
        skip "this build reads no HDF5"
    kdbuild g4.fof | foflink -b 0.2 -o g4link.fof
    groups -m 10 g4link.fof | halostats -o ref.txt
    grep -q '^# units: length kpc' ref.txt
    same 3 10 g4link.fof
}

@test "real snapshots, --so: a zoom with 5 particle masses (periodic), Gadget-4 (cosmology from SNAP), isolated: 3 ranks give one process's" {
    need_mpi halostats
    [ -f "$DATA/test4-zoom.std" ] && [ -f "$DATA/run581-dark-star.std" ] || skip "no snapshots in $DATA"
    tipsy2bin "$DATA/test4-zoom.std" | kdbuild | foflink -b 0.2 -o zoom.fof
    groups -m 10 zoom.fof | halostats --so --omega-m=0.3 --format=stream -o zref.fof
    groups -m 10 zoom.fof | halostats --so --omega-m=0.3 -o ref.txt
    same 3 10 zoom.fof --so --omega-m=0.3
    mpirun -n 3 halostats --so --omega-m=0.3 --format=stream g3.%r.fof -o zs.%r.fof
    same_halo zref.fof zs.0.fof 1
    tipsy2bin --no-periodic "$DATA/run581-dark-star.std" | kdbuild | foflink -b 0.2 -o iso.fof
    groups -m 10 iso.fof | halostats --G=1 --so --omega-m=0.3 --rho-crit=100 --unbind -o ref.txt
    [ "$(grep -v '^#' ref.txt | grep -cv nan)" -gt 0 ]
    same 3 10 iso.fof --G=1 --so --omega-m=0.3 --rho-crit=100 --unbind
    [ -f "$DATA/g4-lcdm-gas-z0.hdf5" ] && command -v hdf52bin >/dev/null && hdf52bin "$DATA/g4-lcdm-gas-z0.hdf5" -o g4.fof 2>/dev/null ||
        skip "this build reads no HDF5"
    kdbuild g4.fof | foflink -b 0.2 -o g4link.fof
    groups -m 10 g4link.fof | halostats --so -o ref.txt
    grep -q 'Omega_m 0.3 (from SNAP)' ref.txt
    same 3 10 g4link.fof --so
}

# Checks a failed run: status STATUS on every rank (mpirun's), one halostats message MATCHING, no
# output. Usage: fails STATUS MATCHING COMMAND...
fails() {
    local status=$1 msg=$2
    shift 2
    run -"$status" --separate-stderr "$@"
    # one message, beside the note that ranks share a GPU (FOFKIT_DEVICE=gpu on a host of fewer GPUs than ranks)
    [ "$(grep -v ' share its [0-9]* GPUs* in turn' <<<"$stderr" | grep -c '^halostats:')" -eq 1 ]
    grep -q "^halostats: .*$msg" <<<"$stderr"
    [ ! -e bad.txt ] && ! ls bad.txt.* 2>/dev/null
}

@test "bad input: a rank's stream missing, no group ids, wrong rank count, --format=grp, --format=stream, --so, no GPU: one message, every rank fails, no output" {
    need_mpi halostats
    mkgmin 3 link.fof l.%r.fof
    mpirun -n 3 groups -m 20 --format=stream l.%r.fof -o g.%r.fof
    mv g.1.fof away.fof
    fails 1 "g.1.fof: cannot open: No such file" mpirun -n 3 halostats g.%r.fof -o bad.txt
    # an output that cannot be made: said before any rank reads (g.1.fof a FIFO nobody writes)
    mkfifo g.1.fof
    run timeout 60 mpirun -n 3 halostats g.%r.fof -o nodir/bad.txt
    echo "$output"
    [ "$status" -ne 0 ] && [ "$status" -ne 124 ]
    [[ "$output" == *"halostats: nodir/bad.txt: cannot create: no directory nodir"* ]]
    rm g.1.fof
    mv away.fof g.1.fof
    fails 1 "l.0.fof: stream has no GIDL chunk (run groups --format=stream under mpirun first)" \
        mpirun -n 3 halostats l.%r.fof -o bad.txt
    fails 1 "g.0.fof: grouped by 3 ranks, this run has 2" mpirun -n 2 halostats g.%r.fof -o bad.txt
    fails 2 "option --format=grp is not available under mpirun" mpirun -n 3 halostats --unbind --format=grp g.%r.fof -o bad.txt
    fails 2 "options --format=stream and --unbind do not go together under mpirun" \
        mpirun -n 3 halostats --unbind --format=stream g.%r.fof -o bad.%r.fof
    fails 2 "with 3 ranks, --format=stream needs -o NAME with %r" mpirun -n 3 halostats --format=stream g.%r.fof -o bad.txt
    [ -z "$(ls bad.*.fof bad.*.fof.* 2>/dev/null)" ]
    fails 2 "option --so needs --omega-m" mpirun -n 3 halostats --so g.%r.fof -o bad.txt
    fails 2 "under mpirun the HDF5 catalogue's subhalos are the level 1 groups: give --subhalos=levels" \
        mpirun -n 3 halostats --unbind --format=hdf5 g.%r.fof -o bad.txt
    fails 2 "option --snapshot is not available under mpirun" mpirun -n 3 halostats --format=hdf5 --snapshot=s.hdf5 g.%r.fof -o bad.txt
    fails 2 "option --so-from is not available under mpirun" mpirun -n 3 halostats --so --so-from=x.fof g.%r.fof -o bad.txt
    fails 2 "one file: -o FILE without %r" mpirun -n 3 halostats g.%r.fof -o bad.%r.txt
    fails 2 "the input name needs the rank pattern" mpirun -n 3 halostats g.0.fof -o bad.txt
    if ! groups -m 20 link.fof | halostats --device=gpu -o /dev/null 2>/dev/null; then # no GPU here: every rank says so, once
        fails 3 "rank 0: --device=gpu: " mpirun -n 3 halostats --device=gpu g.%r.fof -o bad.txt
    fi
}
