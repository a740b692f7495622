#!/usr/bin/env bats
# dist_overlay.bats - overlays under mpirun (foflink and groups --overlay): the .grp and catalogue of the full streams on 1 to 5 ranks, the full streams again when written on, bases found beside their overlays, and a wrong or missing base refused in one line with nothing written.

bats_require_minimum_version 1.5.0

load mpi_helpers
export OMP_NUM_THREADS=1

MAN=$BATS_TEST_DIRNAME/../man

setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    mpi_probe
    mkuniverse -n 20000 -s 5 -o mock.std
    # the single-process answer (levels 0 and 1; the .grp of level 0)
    tipsy2bin mock.std | kdbuild | foflink -b 0.2,0.1 -o single.fof
    groups -m 10 --format=grp single.fof -o ref.grp
}

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
}

# The chunks of stream FILE, their tags in order on one line.
tags() {
    fofdump "$1" | awk 'NR > 1 { printf "%s%s", (NR > 2 ? " " : ""), $1 } END { print "" }'
}

# Runs `mpirun -n R PROG ARGS...`, which must fail with MESSAGE (the start of the one line
# "PROG: ..." it says, Open MPI's report aside) and leave none of the files OUTPUTS (a glob).
# Usage: mpi_refuses R OUTPUTS MESSAGE PROG ARGS...
mpi_refuses() {
    local R=$1 outs=$2 msg=$3 prog=$4
    shift 3
    run mpirun -n "$R" "$@"
    echo "$output"
    [ "$status" -ne 0 ]
    [ "$(grep -c "^$prog: " <<<"$output")" -eq 1 ]
    [[ "$(grep "^$prog: " <<<"$output")" == "$prog: $msg"* ]]
    [ -z "$(compgen -G "$outs")" ]
    [ -z "$(compgen -G '*.tmp.*')" ]
}

@test "overlays on 1, 2, 3 and 5 ranks: the full streams' .grp and catalogue, levels 0 and 1; only the new chunks written" {
    need_mpi
    local R k n m=$BATS_FILE_TMPDIR/mock.std
    for R in $(rank_counts 1 2 3 5); do
        mkdir "$R" && cd "$R"
        mpirun -n "$R" tipsy2bin "$m" -o part.%r.fof
        # the full streams: every stage writes every rank's stream again
        mkdir full over
        mpirun -n "$R" foflink -b 0.2,0.1 part.%r.fof -o full/link.%r.fof
        (cd full && mpirun -n "$R" groups -m 10 --format=stream -o grp.%r.fof link.%r.fof &&
            mpirun -n "$R" halostats grp.%r.fof -o halos.txt)
        # overlays: each stage writes what it adds, and names its input
        mpirun -n "$R" foflink --overlay -b 0.2,0.1 part.%r.fof -o over/link.%r.fof
        (cd over && mpirun -n "$R" groups -m 10 --format=grp -o snap.grp link.%r.fof &&
            mpirun -n "$R" groups -m 10 --format=stream --overlay -o grp.%r.fof link.%r.fof &&
            mpirun -n "$R" halostats grp.%r.fof -o halos.txt)
        cmp "$BATS_FILE_TMPDIR/ref.grp" over/snap.grp
        cmp full/halos.txt over/halos.txt
        for ((k = 0; k < R; k++)); do
            [ "$(tags over/link.$k.fof)" = "BASE LINK GMIN GMIN" ]
            [ "$(tags over/grp.$k.fof)" = "BASE GRPS GIDL GRPS GIDL GPAR" ]
            fofdump -c BASE over/link.$k.fof | grep -qx "base ../part.$k.fof"
            fofdump -c BASE over/grp.$k.fof | grep -qx "base link.$k.fof"
            cmp <(fofdump -c GMIN -l 1 full/link.$k.fof) <(fofdump -c GMIN -l 1 over/link.$k.fof)
            cmp <(fofdump -c GIDL -l 1 full/grp.$k.fof) <(fofdump -c GIDL -l 1 over/grp.$k.fof)
            # bytes: 8 a particle a level for foflink, 4 for groups, and a few headers
            n=$(fofdump -c SNAP part.$k.fof | sed -n 's/^n //p')
            [ "$(stat -c %s over/link.$k.fof)" -le $((16 * n + 2048)) ]
            [ "$(stat -c %s over/grp.$k.fof)" -le $((8 * n + 4096)) ]
            [ "$(stat -c %s full/link.$k.fof)" -ge $((49 * n)) ]
        done
        [ "$(grep -vc '^#' over/halos.txt)" -gt 20 ] # halos were found: the comparison is not of nothing
        cd ..
    done
}

@test "a stream written on from an overlay is the full stream, byte for byte (groups and halostats --format=stream)" {
    need_mpi
    mpirun -n 2 tipsy2bin "$BATS_FILE_TMPDIR/mock.std" -o part.%r.fof
    mpirun -n 2 foflink -b 0.2 part.%r.fof -o full.%r.fof
    mpirun -n 2 foflink -b 0.2 --overlay part.%r.fof -o over.%r.fof
    mpirun -n 2 groups -m 10 --format=stream -o gfull.%r.fof full.%r.fof
    mpirun -n 2 groups -m 10 --format=stream -o gover.%r.fof over.%r.fof
    cmp gfull.0.fof gover.0.fof
    cmp gfull.1.fof gover.1.fof
    mpirun -n 2 groups -m 10 --format=stream --overlay -o go.%r.fof over.%r.fof
    mpirun -n 2 halostats --format=stream -o hfull.%r.fof gfull.%r.fof
    mpirun -n 2 halostats --format=stream -o hover.%r.fof go.%r.fof
    cmp hfull.0.fof hover.0.fof
    cmp hfull.1.fof hover.1.fof
    [ "$(tags hover.0.fof)" = "SNAP POS MASS TYPE ID VEL LINK GMIN GRPS GIDL HCOL HALO" ]
}

@test "a base is found relative to its overlay's directory, from any working directory, and moves with it" {
    need_mpi
    mkdir -p run/parts run/links elsewhere
    (cd run && mpirun -n 2 tipsy2bin "$BATS_FILE_TMPDIR/mock.std" -o parts/p.%r.fof &&
        mpirun -n 2 foflink --overlay parts/p.%r.fof -o links/l.%r.fof)
    [ "$(fofdump -c BASE run/links/l.1.fof | sed -n 's/^base //p')" = ../parts/p.1.fof ]
    (cd elsewhere && mpirun -n 2 groups -m 10 --format=grp -o ../a.grp ../run/links/l.%r.fof)
    mv run moved
    (cd moved/links && mpirun -n 2 groups -m 10 --format=grp -o ../../b.grp l.%r.fof)
    cmp a.grp "$BATS_FILE_TMPDIR/ref.grp"
    cmp b.grp "$BATS_FILE_TMPDIR/ref.grp"
    # an absolute input stays absolute; one rank without mpirun (%r) reads the same
    tipsy2bin "$BATS_FILE_TMPDIR/mock.std" -o whole.%r.fof
    (cd elsewhere && foflink --overlay "$PWD/../whole.%r.fof" -o l.%r.fof &&
        groups -m 10 --format=grp -o c.grp l.%r.fof)
    [ "$(fofdump -c BASE elsewhere/l.0.fof | sed -n 's/^base //p')" = "$PWD/elsewhere/../whole.0.fof" ]
    cmp elsewhere/c.grp "$BATS_FILE_TMPDIR/ref.grp"
}

@test "a wrong or missing base: one line naming the program, every rank stops, nothing written" {
    need_mpi
    mpirun -n 3 tipsy2bin "$BATS_FILE_TMPDIR/mock.std" -o part.%r.fof
    mpirun -n 3 foflink --overlay part.%r.fof -o link.%r.fof
    mpirun -n 3 groups -m 10 --format=stream --overlay -o grp.%r.fof link.%r.fof
    mv part.1.fof keep.fof
    # another rank's particles, of the same size: the headers' CRC tells them apart
    cp part.2.fof part.1.fof
    [ "$(stat -c %s part.1.fof)" -eq "$(stat -c %s keep.fof)" ]
    mpi_refuses 3 'out*' "link.1.fof: its base part.1.fof is not the stream it was written on (" \
        groups -m 10 --format=grp -o out.grp link.%r.fof
    mpi_refuses 3 'out*' "link.1.fof: its base part.1.fof is not the stream it was written on (" \
        halostats grp.%r.fof -o out.txt
    mpi_refuses 3 'out*' "link.1.fof: its base part.1.fof is not the stream it was written on (" \
        groups -m 10 --format=stream --overlay -o out.%r.fof link.%r.fof
    [[ "$output" == *"): run foflink again"* ]]
    # a base rewritten by another run (another size), a base cut short, a base gone
    mkuniverse -n 20003 -s 5 -o other.std
    tipsy2bin --slice=1/3 other.std -o part.1.fof
    mpi_refuses 3 'out*' "link.1.fof: its base part.1.fof is not the stream it was written on (" \
        groups -m 10 --format=grp -o out.grp link.%r.fof
    head -c 5000 keep.fof >part.1.fof
    mpi_refuses 3 'out*' "link.1.fof: its base part.1.fof: truncated stream" halostats grp.%r.fof -o out.txt
    rm part.1.fof
    mpi_refuses 3 'out*' "link.1.fof: its base part.1.fof: cannot open: No such file or directory" \
        halostats grp.%r.fof -o out.txt
    mv keep.fof part.1.fof
    mpirun -n 3 groups -m 10 --format=grp -o out.grp link.%r.fof # whole again: read
    cmp out.grp "$BATS_FILE_TMPDIR/ref.grp" && rm out.grp
    # an overlay replaces nothing: groups --overlay on groups' own overlay
    mpi_refuses 3 'out*' "grp.0.fof: stream has a GRPS chunk already (an overlay adds chunks: give --overlay the stream foflink wrote)" \
        groups -m 10 --overlay -o out.%r.fof grp.%r.fof
}

@test "overlays: the options' usage errors, and a reader that does not follow them says what it met" {
    need_mpi
    tipsy2bin "$BATS_FILE_TMPDIR/mock.std" -o part.%r.fof
    foflink --overlay part.%r.fof -o link.%r.fof
    run --separate-stderr foflink --overlay part.0.fof -o x.fof
    [ "$status" -eq 2 ] && [ "${stderr_lines[0]}" = "foflink: option --overlay is for distributed runs (under mpirun, or %r in a name)" ]
    run --separate-stderr foflink --overlay -o x.%r.fof - <part.0.fof
    [ "$status" -eq 2 ] &&
        [ "${stderr_lines[0]}" = "foflink: option --overlay needs the input in a file (the overlay names it as its base), not stdin" ]
    run --separate-stderr groups --overlay --format=grp -o x.grp link.%r.fof
    [ "$status" -eq 2 ] && [ "${stderr_lines[0]}" = "groups: option --overlay applies to --format=stream only" ]
    run --separate-stderr groups --overlay link.0.fof -o x.fof
    [ "$status" -eq 2 ] && [ "${stderr_lines[0]}" = "groups: option --overlay is for distributed runs (under mpirun, or %r in a name)" ]
    [ -z "$(compgen -G 'x*')" ]
    foflink --help | grep -q -- '--overlay  *distributed runs: write only LINK and GMIN'
    groups --help | grep -q -- '--overlay  *under mpirun, --format=stream: write only GRPS, GIDL and GPAR'
    # the single-process stages do not follow an overlay; fofdump shows its chunks
    run --separate-stderr halostats link.0.fof
    [ "$status" -eq 1 ]
    [ "$stderr" = "halostats: link.0.fof: an overlay, the chunks a distributed stage added to another stream (its BASE): the stages under mpirun read it with its base" ]
    [ "$(tags link.0.fof)" = "BASE LINK GMIN" ]
}

# The lines of the .EX block after the comment `.\" recipe: NAME` in man page PAGE, roff
# escapes undone, into NAME. Usage: man_recipe PAGE NAME
man_recipe() {
    awk -v name="$2" '$0 ~ "^\\.\\\\\" recipe: " name { on = 1; next } on && /^\.EX/ { ex = 1; next }
                      ex && /^\.EE/ { exit } ex' "$MAN/$1" | perl -pe 's/\\-/-/g; s/\\e/\\/g' >"$2"
    [ "$(grep -c '^mpirun ' "$2")" -ge 5 ]
}

@test "fofstream(5)'s and groups(1)'s overlay examples run under mpirun: the single-process .grp, the full streams' catalogue" {
    need_mpi
    cp "$BATS_FILE_TMPDIR/mock.std" snap.std
    man_recipe man5/fofstream.5 overlays.sh
    bash -e overlays.sh
    groups -m 20 --format=grp "$BATS_FILE_TMPDIR/single.fof" -o ref.grp
    cmp ref.grp snap.grp
    mpirun -n 4 foflink -b 0.2 part.%r.fof -o full.%r.fof
    mpirun -n 4 groups -m 20 --format=stream -o grp.%r.fof full.%r.fof # the same name: the same header
    mpirun -n 4 halostats grp.%r.fof -o full.txt
    cmp full.txt halos.txt
    mkdir g && cd g && cp ../snap.std .
    man_recipe man1/groups.1 dist.sh
    bash -e dist.sh
    groups -m 50 --format=grp "$BATS_FILE_TMPDIR/single.fof" -o ref.grp
    cmp ref.grp snap.grp
    [ "$(grep -vc '^#' halos.txt)" -gt 10 ]
}
