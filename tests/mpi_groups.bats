#!/usr/bin/env bats
# mpi_groups.bats - groups and tipsy2bin under mpirun: the distributed .grp byte for byte the single-process one, tipsy2bin slices, bad input on every rank.

bats_require_minimum_version 1.5.0
load ref_helpers
load mpi_helpers

mpi() {
    mpirun -n "$@"
}

# A linked 3-level mock, made once; whether mpirun starts at all (a container may forbid what
# it needs), tried once.
setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    mpi_probe
    mkuniverse -n 20000 -s 7 -o mock.std
    tipsy2bin mock.std | kdbuild | foflink -b 0.2,0.1,0.05 -o link.fof
}

# Checks that `mpirun -n R groups -m M --level=L` on per-rank streams PATTERN writes the
# single-process .grp of STREAM. Usage: same_grp R M L STREAM PATTERN
same_grp() {
    local R=$1 m=$2 L=$3
    groups -m "$m" --format=grp --level="$L" -o ref.grp "$4"
    mpi "$R" groups -m "$m" --format=grp --level="$L" -o dist.grp "$5"
    cmp ref.grp dist.grp
    ! ls dist.grp.tmp.* 2>/dev/null
}

@test "mock, 3 levels: the .grp of 1, 2, 3, 4 and 8 ranks is the single-process one (-m 1, 5, 20; stream and ID order)" {
    need_mpi groups
    cp "$BATS_FILE_TMPDIR/link.fof" .
    mkgmin 1 link.fof a.%r.fof
    same_grp 1 20 0 link.fof a.%r.fof
    mkgmin 2 link.fof b.%r.fof
    same_grp 2 1 1 link.fof b.%r.fof
    mkgmin --by-id 3 link.fof c.%r.fof
    same_grp 3 5 2 link.fof c.%r.fof
    mkgmin 4 link.fof d.%r.fof
    same_grp 4 20 1 link.fof d.%r.fof
    mkgmin 8 link.fof e.%r.fof
    same_grp 8 5 0 link.fof e.%r.fof
    mkgmin --by-id 8 link.fof f.%r.fof
    same_grp 8 1 2 link.fof f.%r.fof
    # there was something to number: thousands of particles in groups
    [ "$(grep -c -v '^0$' ref.grp)" -gt 1000 ]
}

@test "mock, 3 levels: ranks of 3 and 5 threads write the single-process .grp and streams (stream and ID order)" {
    need_mpi groups
    cp "$BATS_FILE_TMPDIR/link.fof" .
    # Each thread counts a block of a rank's particles: in tree order nearly every run of a
    # block lies outside its window of the owned range (kept for the second pass until the
    # room runs out), in ID order nearly none; values owned by the other rank go to the
    # blocks' tables; the .grp text is formatted in batches of pieces.
    mkgmin 2 link.fof t.%r.fof
    mkgmin --by-id 2 link.fof i.%r.fof
    local th m
    for th in 3 5; do
        for m in 1 20; do
            OMP_NUM_THREADS=$th same_grp 1 "$m" 1 link.fof link.fof
            OMP_NUM_THREADS=$th same_grp 2 "$m" 0 link.fof t.%r.fof
            OMP_NUM_THREADS=$th same_grp 2 "$m" 2 link.fof i.%r.fof
        done
        OMP_NUM_THREADS=1 mpi 2 groups -m 5 -o one.%r.fof t.%r.fof
        OMP_NUM_THREADS=$th mpi 2 groups -m 5 -o many.%r.fof t.%r.fof
        cmp one.0.fof many.0.fof
        cmp one.1.fof many.1.fof
    done
}

@test "mock, 3 levels, --format=stream: per-rank GIDL and GPAR are the single-process GID and GPAR" {
    need_mpi groups
    cp "$BATS_FILE_TMPDIR/link.fof" .
    mkgmin 3 link.fof l.%r.fof
    groups -m 5 -o ref.fof link.fof
    mpi 3 groups -m 5 -o g.%r.fof l.%r.fof
    local k r
    for k in 0 1 2; do
        for r in 0 1 2; do
            paste <(fofdump -c ID g.$r.fof) <(fofdump -c GIDL -l $k g.$r.fof)
            [ "$(fofdump -c GRPS -l $k g.$r.fof | grep -v '^rank')" = "$(fofdump -c GRPS -l $k ref.fof)
nlocal $(fofdump -c SNAP g.$r.fof | awk '$1 == "n" { print $2 }')" ]
            [ "$(fofdump -c GRPS -l $k g.$r.fof | grep '^ranks')" = "ranks 3" ]
            if [ $k -gt 0 ]; then cmp <(fofdump -c GPAR -l $k g.$r.fof) <(fofdump -c GPAR -l $k ref.fof); fi
        done | sort -n -k1,1 | awk '{ print $2 }' >gidl.txt
        fofdump -c GID -l $k ref.fof | cmp - gidl.txt
    done
    fofdump --check g.2.fof >/dev/null
}

# The single-process .grp of snapshot NAME (tipsy2bin options TOPTS, foflink's LINK) against
# R ranks' (mkgmin SPLIT), at minimum size M. Usage: snapshot_agrees NAME R M "TOPTS" "LINK" [SPLIT]
snapshot_agrees() {
    local f=$DATA/$1.std
    [ -f "$f" ] || skip "$f is missing"
    # shellcheck disable=SC2086 # options, one word each
    tipsy2bin $4 "$f" | kdbuild | foflink $5 -o link.fof
    # shellcheck disable=SC2086
    mkgmin $6 "$2" link.fof s.%r.fof
    same_grp "$2" "$3" 0 link.fof s.%r.fof
}

@test "real snapshots: the distributed .grp is the single-process one (2 to 8 ranks)" {
    need_mpi groups
    [ -d "$DATA" ] || skip "$DATA is missing"
    snapshot_agrees skid-dark 2 8 "" "-b 0.2"
    snapshot_agrees lambs-30k 3 1 "" "-b 0.2" --by-id
    snapshot_agrees test4-zoom 4 20 "" "-b 0.2"
    snapshot_agrees cube300-ics 8 1 "" "-l 0.02"
    snapshot_agrees run581-dark-star 3 8 --no-periodic "-l 0.1"
    snapshot_agrees run99-gas-dark-star 2 1 --no-periodic "-l 0.1" --by-id
    snapshot_agrees onestar-pad1 4 1 "" "-b 0.2"
}

@test "tipsy2bin --slice: the slices, concatenated, are the whole conversion (file, gzip, pipe, types)" {
    local f=$DATA/run99-gas-dark-star.std R k t
    [ -f "$f" ] || skip "$f is missing"
    tipsy2bin --no-periodic "$f" -o whole.fof
    tipsy2bin --no-periodic -t gas,star "$f" -o whole-gs.fof
    gzip -c "$f" >snap.std.gz
    for R in 1 3 7; do
        for ((k = 0; k < R; k++)); do
            tipsy2bin --no-periodic --slice=$k/$R "$f" -o s.$k.fof
            gzip -dc snap.std.gz | tipsy2bin --no-periodic -t gas,star --slice=$k/$R >p.$k.fof
        done
        for t in POS VEL MASS TYPE ID; do
            cmp <(for ((k = 0; k < R; k++)); do fofdump -c $t s.$k.fof; done) <(fofdump -c $t whole.fof)
            cmp <(for ((k = 0; k < R; k++)); do fofdump -c $t p.$k.fof; done) <(fofdump -c $t whole-gs.fof)
        done
    done
    # SNAP: the slice's counts, the snapshot's source counts (slice 1 of 7: particles 1225..2450,
    # dark from 1049, stars from 2070)
    run fofdump -c SNAP s.1.fof
    [[ "$output" == *$'n 1226\nngas 0\nndark 845\nnstar 381\nnsource 8579\nnsource_gas 1049'* ]]
    usage_fails "option --slice: K must be below R in K/R, not '3/3'" tipsy2bin --slice=3/3 "$f"
    usage_fails "option --slice needs K/R (slice K of R, counted from 0), not '3'" tipsy2bin --slice=3 "$f"
    # a slice still checks the file's size
    head -c 100000 "$f" >cut.std
    fails "tipsy2bin: cut.std: truncated: the header promises 8579 particles (1049 gas, 1021 dark, 6509 star) in 373536 bytes, the file has 100000" \
        tipsy2bin --no-periodic --slice=0/3 cut.std -o x.fof
    [ ! -e x.fof ]
}

@test "tipsy2bin under mpirun: rank r writes slice r of R, a stream per rank" {
    need_mpi groups
    local f=$DATA/skid-dark.std k t
    [ -f "$f" ] || skip "$f is missing"
    mpi 3 tipsy2bin "$f" -o part.%r.fof
    for k in 0 1 2; do tipsy2bin --slice=$k/3 "$f" -o s.$k.fof; done
    for k in 0 1 2; do
        for t in SNAP POS VEL MASS TYPE ID; do cmp <(fofdump -c $t part.$k.fof) <(fofdump -c $t s.$k.fof); done
    done
    # a name without %r: each rank would write the same file
    run mpi 2 tipsy2bin "$f" -o part.fof
    [ "$status" -ne 0 ]
    [ "$(grep -c '^tipsy2bin: ' <<<"$output")" -eq 1 ]
    [[ "$output" == *"tipsy2bin: under mpirun, -o needs a name with %r (a stream per rank)"* ]]
    [ ! -e part.fof ]
}

# Runs `mpirun -n R groups ARGS...`, which must fail on every rank with MESSAGE said once,
# leaving no output. Usage: mpi_fails R MESSAGE ARGS...
mpi_fails() {
    local R=$1 msg=$2
    shift 2
    run mpi "$R" groups "$@"
    echo "$output"
    [ "$status" -ne 0 ]
    [ "$(grep -c '^groups: ' <<<"$output")" -eq 1 ]
    [[ "$output" == *"groups: $msg"* ]]
    [ -z "$(ls out.grp* g.*.fof 2>/dev/null)" ]
}

@test "bad input under mpirun: one message, a non-zero exit on every rank, nothing written" {
    need_mpi groups
    cp "$BATS_FILE_TMPDIR/link.fof" .
    mkgmin 3 link.fof l.%r.fof
    mv l.1.fof gone.fof
    mpi_fails 3 "l.1.fof: cannot open: No such file or directory" -m 5 --format=grp -o out.grp l.%r.fof
    mv gone.fof l.1.fof
    # an output that cannot be made: said before any rank reads its stream (l.1.fof is a FIFO
    # nobody writes, which a rank that read first would wait on for ever)
    mv l.1.fof l1.fof && mkfifo l.1.fof
    run timeout 60 mpirun -n 3 groups -m 5 --format=grp -o nodir/out.grp l.%r.fof
    echo "$output"
    [ "$status" -ne 0 ] && [ "$status" -ne 124 ]
    [[ "$output" == *"groups: nodir/out.grp: cannot create: no directory nodir"* ]]
    rm l.1.fof && mv l1.fof l.1.fof
    mpi_fails 2 "l.0.fof: linked by 3 ranks, this run has 2" -m 5 --format=grp -o out.grp l.%r.fof
    mkgmin --short-gmin=2 3 link.fof b.%r.fof
    mpi_fails 3 "b.2.fof: chunk GMIN has 6666 rows for 6667 particles" -m 5 -o g.%r.fof b.%r.fof
    mkgmin --nsource=1 3 link.fof n.%r.fof
    mpi_fails 3 "the ranks' streams disagree on nsource (20000 and 20001): not slices of one snapshot" \
        -m 5 --format=grp -o out.grp n.%r.fof
    mpi_fails 2 "under mpirun, --format=grp needs -o FILE (the ranks write one file)" --format=grp l.%r.fof
    # a single-process stream: SINK, no GMIN
    cp link.fof single.0.fof
    mpi_fails 1 "single.0.fof: stream has SINK but no GMIN chunk (link it with foflink under mpirun)" \
        --format=grp -o out.grp single.%r.fof
}
