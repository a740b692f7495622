#!/usr/bin/env bats
# mpi_gadget.bats - gadget2bin and hdf52bin --slice and under mpirun: slices are the whole conversion cut, the distributed pipeline's .grp the single-process one, bad input.

bats_require_minimum_version 1.5.0
load snap_helpers
load mpi_helpers
export OMP_NUM_THREADS=1

setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    mpi_probe
}

need_ics() {
    [ -f "$ICS" ] || skip "$ICS is missing"
}

# The R slices that CONVERTER --slice=K/R writes of INPUT are, byte for byte, the whole
# conversion cut into R by splitstream (particles [K n/R, (K+1) n/R), SNAP counting the
# slice's particles and the whole snapshot's source). Usage: slices_agree R CONVERTER ARGS... INPUT
slices_agree() {
    local R=$1 k
    shift
    "$@" -o whole.fof
    splitstream "$R" whole.fof want.%r.fof
    for ((k = 0; k < R; k++)); do
        "${@:1:1}" --slice=$k/$R "${@:2}" -o got.$k.fof
        cmp want.$k.fof got.$k.fof
    done
}

@test "hdf52bin --slice: the slices are the whole conversion cut in R (one file, 3 files, --types, 1 to 7 slices)" {
    need_hdf5
    snapcopy --to=hdf5 --files=3 --masses "$G4" split
    local R
    for R in 1 2 3 7; do
        slices_agree $R hdf52bin "$G4"
        slices_agree $R hdf52bin split.0.hdf5
    done
    slices_agree 5 hdf52bin --types=dark split.0.hdf5
    slices_agree 4 hdf52bin --no-periodic --origin=-10 split.0.hdf5
    # slice 1 of 3: 21845 particles, gas from 21845 and dark matter up to 43690
    hdf52bin --slice=1/3 -o s.fof split.0.hdf5
    [ "$(chunk s.fof SNAP | grep -E '^(n|ngas|ndark|nsource|nsource_gas) ' | tr '\n' ' ')" = \
        "n 21845 ngas 10923 ndark 10922 nsource 65536 nsource_gas 32768 " ]
    [ "$(chunk s.fof ID | sed -n '1p;$p' | tr '\n' ' ')" = "21845 43689 " ]
}

@test "gadget2bin --slice: the slices are the whole conversion cut in R (3 files, format 2, big-endian, MASS, stdin)" {
    need_ics
    snapcopy --format=2 --big --masses --files=3 "$ICS" ics
    snapcopy --format=1 --double --ids8 "$ICS" one
    local R
    for R in 1 3 6; do
        slices_agree $R gadget2bin --box=50000 ics.0
        slices_agree $R gadget2bin --box=50000 --types=1 ics.0
    done
    slices_agree 4 gadget2bin --box=50000 one
    # from a pipe, where skipping means reading
    gadget2bin --box=50000 -o whole.fof one
    splitstream 3 whole.fof want.%r.fof
    gadget2bin --box=50000 --slice=2/3 <one >pipe.fof
    cmp <(chunk want.2.fof POS) <(chunk pipe.fof POS)
    cmp <(chunk want.2.fof ID) <(chunk pipe.fof ID)
}

@test "gadget2bin --slice reads only its files: one outside it may be damaged" {
    need_ics
    snapcopy --files=3 "$ICS" ics
    # file 2 cut short after its header: slice 0 of 3 (files 0 and 1) never reads past it
    head -c 300 ics.2 >cut && mv cut ics.2
    gadget2bin --box=50000 --slice=0/3 -o s0.fof ics.0
    [ "$(chunk s0.fof SNAP | grep '^n ')" = "n 21845" ]
    # a slice that holds its particles finds the header's claim too large for the file before it reads
    fails "gadget2bin: ics.2: the header claims 21846 particles in this file, which needs at least 611976 bytes; the file holds 300 (truncated, or not a Gadget-2 snapshot)" \
        gadget2bin --box=50000 --slice=2/3 -o s2.fof ics.0
    [ ! -e s2.fof ]
}

@test "hdf52bin --slice reads only its rows: a NaN outside them is not seen" {
    need_hdf5
    python3 -c 'import h5py, numpy' 2>/dev/null || skip "no h5py (scripts/deps installs it)"
    snapcopy --to=hdf5 --files=3 "$G4" split
    # a NaN among file 1's dark matter: slice 0 of 3 (gas up to 21845) holds none of its rows
    python3 -c 'import h5py, numpy
with h5py.File("split.1.hdf5", "r+") as f: f["PartType1/Coordinates"][5, 1] = numpy.nan'
    hdf52bin --slice=0/3 -o h0.fof split.0.hdf5
    [ "$(chunk h0.fof SNAP | grep '^n ')" = "n 21845" ]
    fails "hdf52bin: split.0.hdf5: particle 43695 (type 1, number 10927 of its type) has a non-finite position" \
        hdf52bin --slice=2/3 -o h2.fof split.0.hdf5
    [ ! -e h2.fof ]
}

@test "--slice: K/R checked, one line and status 2" {
    need_ics
    usage_fails "option --slice: K must be below R in K/R, not '3/2'" gadget2bin --box=50000 --slice=3/2 "$ICS"
    usage_fails "option --slice needs K/R (slice K of R, counted from 0), not '3'" gadget2bin --slice=3 "$ICS"
    usage_fails "option --slice: 0 is out of range [1, 4294967295]" hdf52bin --slice=0/0 x.0.hdf5
}

@test "hdf52bin and gadget2bin under mpirun with fewer files than ranks: rank r writes slice r of R, a stream per rank" {
    need_mpi gadget2bin
    need_ics
    snapcopy --files=2 "$ICS" ics
    mpirun -n 3 gadget2bin --box=50000 ics.0 -o part.%r.fof
    local k
    for k in 0 1 2; do
        gadget2bin --box=50000 --slice=$k/3 ics.0 -o s.$k.fof
        cmp part.$k.fof s.$k.fof
    done
    # the unit and cosmology options travel to every rank: the slices' SNAP records
    mpirun -n 3 gadget2bin --box=50000 --unit-length-cm=3.085678e24 --unit-mass-g=1.989e43 --unit-velocity-cm-s=1e5 \
        --omega-baryon=0.04 ics.0 -o u.%r.fof
    for k in 0 1 2; do
        gadget2bin --box=50000 --unit-length-cm=3.085678e24 --unit-mass-g=1.989e43 --unit-velocity-cm-s=1e5 \
            --omega-baryon=0.04 --slice=$k/3 ics.0 -o s.$k.fof
        cmp u.$k.fof s.$k.fof
        grep -qx 'unit_length_cm 3.085678e+24' <(fofdump -c SNAP u.$k.fof)
        grep -qx 'omega_baryon 0.040000000000000001' <(fofdump -c SNAP u.$k.fof)
    done
    need_hdf5
    mpirun -n 2 hdf52bin --types=dark "$G4" -o h.%r.fof
    for k in 0 1; do
        hdf52bin --types=dark --slice=$k/2 "$G4" -o s.$k.fof
        cmp h.$k.fof s.$k.fof
    done
    mpirun -n 2 hdf52bin --types=dark --no-comoving --omega-baryon=0.05 "$G4" -o n.%r.fof
    for k in 0 1; do
        run ! grep -q '^comoving' <(fofdump -c SNAP n.$k.fof)
        grep -qx 'omega_baryon 0.050000000000000003' <(fofdump -c SNAP n.$k.fof)
    done
}

# Every particle row of STREAMS... (ID, POS, VEL, MASS, TYPE, PID), sorted by ID: the ranks'
# streams together are the single process's when their rows are the same. Usage: rows STREAM...
rows() {
    local f
    for f in "$@"; do
        paste <(chunk "$f" ID) <(chunk "$f" POS) <(chunk "$f" VEL) <(chunk "$f" MASS) <(chunk "$f" TYPE) <(chunk "$f" PID)
    done | sort -n -k1,1
}

# Under `mpirun -n R CONVERTER -v ARGS... FIRST` on a snapshot of F >= R files FIRST, FILES...
# (file k at index k), rank r says it read the files [F r / R, F (r + 1) / R) alone (-v), and the
# bytes it read are theirs (the Gadget-2 reader reads each whole file; an HDF5 rank counts the
# sizes of the files it opened: every file, had it read a slice); the ranks' rows are the single
# process's. Usage: whole_files R "CONVERTER ARGS..." FILE...
whole_files() {
    local R=$1 cmd=$2 r k
    shift 2
    local F=$# files=("$@")
    # shellcheck disable=SC2086 # a command line
    $cmd "${files[0]}" -o one.fof
    # shellcheck disable=SC2086
    mpirun -n "$R" $cmd -v "${files[0]}" -o "w$R.%r.fof" 2>"w$R.err"
    cat "w$R.err"
    local streams=()
    for ((r = 0; r < R; r++)); do
        local lo=$((F * r / R)) hi=$((F * (r + 1) / R - 1)) sum=0
        for ((k = lo; k <= hi; k++)); do sum=$((sum + $(stat -c %s "${files[k]}"))); done
        local n
        n=$(fofdump -c SNAP "w$R.$r.fof" | sed -n 's/^n //p')
        # (the ranks' lines may interleave on stderr: each is looked for as a piece of text)
        grep -qF "${files[0]}: rank $r: files $lo-$hi of $F, $n particles, $sum bytes read" "w$R.err"
        streams+=("w$R.$r.fof")
    done
    [ "$(grep -o ': rank [0-9]*: files ' "w$R.err" | wc -l)" -eq "$R" ]
    cmp <(rows one.fof) <(rows "${streams[@]}")
    [ "$(rows one.fof | wc -l)" -gt 1000 ]
}

@test "under mpirun with at least as many files as ranks, each rank reads its whole files alone: the rows are the single process's (gas and dark, 2 to 4 ranks)" {
    need_mpi gadget2bin
    need_ics
    snapcopy --files=4 "$ICS" ics
    local R
    for R in 2 3 4; do whole_files "$R" "gadget2bin --box=50000" ics.0 ics.1 ics.2 ics.3; done
    # a rank's streams holds both types of its files, type by type
    [ "$(chunk w2.1.fof TYPE | uniq | tr '\n' ' ')" = "0 1 " ]
    [ "$(chunk w2.1.fof ID | head -1)" = 16384 ] # after file 0 and 1's gas
    # a file that is rank 1's, damaged past its header: rank 0 never reads it, rank 1 says so
    head -c 1000 ics.3 >cut && mv cut ics.3
    run mpirun -n 2 gadget2bin --box=50000 ics.0 -o out.%r.fof
    echo "$output"
    [ "$status" -ne 0 ]
    [[ "$output" == *"gadget2bin: ics.3: the header claims 16384 particles in this file"* ]]
    # file 2's header alone overstates a total: only its rank (2 of 4) sees it, and names the file
    snapcopy --files=4 "$ICS" tot
    python3 -c 'import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<I", b, 104, struct.unpack_from("<I", b, 104)[0] + 1) # npartTotal[1]
open(sys.argv[1], "wb").write(b)' tot.2
    run mpirun -n 4 gadget2bin --box=50000 tot.0 -o out.%r.fof
    echo "$output"
    [ "$status" -ne 0 ]
    [ "$(grep -c '^gadget2bin: ' <<<"$output")" -eq 1 ]
    [[ "$output" == *"gadget2bin: tot.0: inconsistent counts: the 4 files hold 32768 particles of type 1, the header of file 2 says 32769"* ]]
    [ -z "$(ls out.* 2>/dev/null)" ]
    need_hdf5
    snapcopy --to=hdf5 --files=3 "$G4" split
    for R in 2 3; do whole_files "$R" hdf52bin split.0.hdf5 split.1.hdf5 split.2.hdf5; done
}

# The distributed pipeline (CONVERTER, foflink, groups under mpirun on each R given) writes the
# single-process .grp. Usage: pipeline_agrees "R..." "CONVERTER ARGS... INPUT" "FOFLINK-OPTIONS" MINSIZE
pipeline_agrees() {
    local R
    # shellcheck disable=SC2086 # lists of words
    $2 | kdbuild | foflink $3 | groups -m "$4" --format=grp >ref.grp
    for R in $1; do
        # shellcheck disable=SC2086
        mpirun -n "$R" $2 -o "p$R.%r.fof"
        # shellcheck disable=SC2086
        mpirun -n "$R" foflink $3 "p$R.%r.fof" -o "l$R.%r.fof"
        mpirun -n "$R" groups -m "$4" --format=grp "l$R.%r.fof" -o "d$R.grp"
        cmp ref.grp "d$R.grp"
    done
}

@test "the distributed pipeline from an HDF5 snapshot in 3 files writes the single-process .grp (1 to 4 ranks)" {
    need_mpi gadget2bin
    need_hdf5
    snapcopy --to=hdf5 --files=3 "$G4" split
    # make test: 1, 3 and 4 ranks (rank_counts): fewer ranks than files, as many, more; 2 ranks
    # of 3 files in the next test
    pipeline_agrees "$(rank_counts 1 2 3 4)" "hdf52bin --types=dark split.0.hdf5" "-b 0.2" 20
    # groups were found: 106 of 20 or more (hdf52bin.bats), numbered in the .grp
    [ "$(sort -u ref.grp | wc -l)" -gt 100 ]
}

@test "gas and dark from 3 files on 2 and 3 ranks (whole files, the ranks' order not the snapshot's): the single-process .grp and catalogue" {
    need_mpi gadget2bin
    need_hdf5
    snapcopy --to=hdf5 --files=3 "$G4" split
    pipeline_agrees "2 3" "hdf52bin split.0.hdf5" "-b 0.2" 20
    [ "$(sort -u ref.grp | wc -l)" -gt 100 ]
    # halostats sums each halo over its members by ID: the order of the ranks' particles is no matter
    hdf52bin split.0.hdf5 | kdbuild | foflink -b 0.2 | groups -m 20 | halostats >ref.txt
    local R
    for R in 2 3; do
        mpirun -n "$R" groups -m 20 --format=stream "l$R.%r.fof" -o "g$R.%r.fof"
        mpirun -n "$R" halostats "g$R.%r.fof" -o "c$R.txt"
        cmp <(sed 2d ref.txt) <(sed 2d "c$R.txt")
    done
    [ "$(grep -cv '^#' ref.txt)" -gt 100 ]
}

@test "the distributed pipeline from a Gadget-2 snapshot in 3 files, 6D, writes the single-process .grp (3 ranks)" {
    need_mpi gadget2bin
    need_ics
    snapcopy --format=2 --files=3 "$ICS" ics
    pipeline_agrees 3 "gadget2bin --box=50000 ics.0" "-l 1406.25 --psi=0.5" 1
    [ "$(sort -u ref.grp | wc -l)" -gt 100 ]
}

# Runs `mpirun -n R PROG ARGS...`, which must fail with MESSAGE said once (lines starting
# "PROG: "), a non-zero status, and no stream. Usage: mpi_fails R MESSAGE PROG ARGS...
mpi_fails() {
    local R=$1 msg=$2 prog=$3
    shift 2
    run mpirun -n "$R" "$@"
    echo "$output"
    [ "$status" -ne 0 ]
    [ "$(grep -c "^$prog: " <<<"$output")" -eq 1 ]
    [[ "$output" == *"$prog: $msg"* ]]
    [ -z "$(ls out.* 2>/dev/null)" ]
}

@test "bad input under mpirun: one message, a non-zero exit on every rank, no stream left" {
    need_mpi gadget2bin
    need_ics
    snapcopy --files=3 "$ICS" ics
    mv ics.2 gone
    mpi_fails 3 "ics.2: cannot open: No such file or directory" gadget2bin --box=50000 ics.0 -o out.%r.fof
    mv gone ics.2
    # rank 2 (whole files: ics.2 alone) meets the damage; ranks 0 and 1 wrote their streams, and removed them
    head -c 300 ics.2 >cut && mv cut ics.2
    mpi_fails 3 "ics.2: the header claims 21846 particles in this file" gadget2bin --box=50000 ics.0 -o out.%r.fof
    mpi_fails 2 "option --slice: K must be below R in K/R, not '3/2'" gadget2bin --slice=3/2 ics.0 -o out.%r.fof
    mpi_fails 2 "--slice is for a run without mpirun (under mpirun each rank takes its own)" \
        gadget2bin --slice=0/2 ics.0 -o out.%r.fof
    mpi_fails 2 "under mpirun, -o needs a name with %r (a stream per rank)" gadget2bin --box=50000 ics.0 -o out.fof
    need_hdf5
    snapcopy --to=hdf5 --files=2 "$G4" split
    rm split.1.hdf5
    mpi_fails 2 "split.1.hdf5: cannot open: No such file or directory" hdf52bin split.0.hdf5 -o out.%r.fof
}
