#!/usr/bin/env bats
# hydro.bats - foflink on streams with gas or stars: the dark matter linked alone at its own spacing, every other particle in its nearest dark matter particle's group (a brute-force reference), on the CPU, the GPU and 1 to 8 ranks.

bats_require_minimum_version 1.5.0

DATA=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}
load snap_helpers
load mpi_helpers

CHECK=$BATS_TEST_DIRNAME/py/hydro_check.py
RUN99=$DATA/run99-gas-dark-star.std

setup_file() {
    mpi_probe
}

setup() {
    cd "$BATS_TEST_TMPDIR"
}

# KEY's value in the LINK record of stream FILE.
link_key() {
    fofdump -c LINK "$1" | sed -n "s/^$2 //p"
}

# The Gadget-4 snapshot linked by default (gas.lk, -v into gas.err) and its dark matter alone
# at l = 312.5 (dm.lk), the length the issue names: 0.2 x 50000 / 32. Made once, in
# $BATS_FILE_TMPDIR/g4, and copied into the test's folder with the tree (gas.kd).
g4_streams() {
    need_hdf5
    local d=$BATS_FILE_TMPDIR/g4
    if [ ! -f "$d/dm.lk" ]; then
        rm -rf "$d" && mkdir "$d"
        (cd "$d" && hdf52bin "$G4" | kdbuild -o gas.kd &&
            foflink -v gas.kd -o gas.lk 2>gas.err &&
            hdf52bin -t dark "$G4" | kdbuild | foflink -l 312.5 -o dm.lk) || return 1
    fi
    cp "$d"/gas.kd "$d"/gas.lk "$d"/gas.err "$d"/dm.lk .
}

@test "g4-lcdm-gas-z0: the dark matter linked at Gadget-4's length, its groups those of a dark-matter-only FoF at 312.5, every gas particle in its nearest dark matter particle's group" {
    g4_streams
    cat gas.err
    [ "$(link_key gas.lk link_types)" = dark ]
    [ "$(link_key gas.lk attach_types)" = gas,star ]
    [ "$(link_key gas.lk spacing_of)" = "density dark" ]
    # Gadget-4's (m / ((Omega0 - OmegaBaryon) rho_crit))^(1/3), b = 0.2: 312.5 to 1e-4 (G = 6.6738e-8)
    awk -v l="$(link_key gas.lk l)" 'BEGIN { exit !(l > 312.49 && l < 312.54) }'
    grep -q "hydro run: the dark particles linked, the gas,star particles attached" gas.err
    grep -q "level 0: 32768 particles linked; 31924 of 32768 attached" gas.err
    run python3 "$CHECK" gas.lk dm.lk
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"32768 linked particles in the groups of the other stream, 31924 of 32768 attached"* ]]
    # the same dark matter length from -l: the same sinks as the density rule's
    foflink -l "$(link_key gas.lk l)" gas.kd -o gasl.lk
    cmp <(fofdump -c SINK gas.lk) <(fofdump -c SINK gasl.lk)
}

@test "g4-lcdm-gas-z0: --link-types=all is the old linking of every particle; the dark matter alone is unchanged; brute force and one thread give the same sinks" {
    g4_streams
    foflink --link-types=all gas.kd -o all.lk
    [ -z "$(link_key all.lk link_types)" ]
    awk -v l="$(link_key all.lk l)" 'BEGIN { exit !(l > 248.0 && l < 248.1) }' # 0.2 x 50000 / 65536^(1/3)
    ! cmp -s <(fofdump -c SINK all.lk) <(fofdump -c SINK gas.lk)
    # a stream of dark matter alone: no hydro run, the spacing of every particle
    hdf52bin -t dark "$G4" | kdbuild | foflink -o dmb.lk
    [ -z "$(link_key dmb.lk link_types)" ]
    [ "$(link_key dmb.lk spacing_of)" = lightest ]
    foflink --method=brute gas.kd -o brute.lk
    foflink -j 1 gas.kd -o one.lk
    cmp <(fofdump -c SINK gas.lk) <(fofdump -c SINK brute.lk)
    cmp <(fofdump -c SINK gas.lk) <(fofdump -c SINK one.lk)
}

@test "g4-lcdm-gas-z0: levels -b 0.2,0.1 attach at each level, and nest; --attach-types=none leaves the gas alone" {
    g4_streams
    foflink -b 0.2,0.1 gas.kd -o lev.lk
    hdf52bin -t dark "$G4" | kdbuild | foflink -l "$(link_key lev.lk l_0),$(link_key lev.lk l_1)" -o dmlev.lk
    run python3 "$CHECK" lev.lk dmlev.lk
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"level 1: "* ]]
    groups -m 1 lev.lk -o /dev/null # the levels nest (groups checks it)
    foflink --attach-types=none gas.kd -o none.lk
    [ "$(link_key none.lk attached_0)" = 0 ]
    run python3 "$CHECK" none.lk dm.lk
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "run99-gas-dark-star (tipsy, isolated): the dark matter at its own spacing, gas and stars attached, by the brute-force reference" {
    [ -f "$RUN99" ] || skip "no $RUN99"
    tipsy2bin --no-periodic "$RUN99" | kdbuild | foflink -b 0.2 -o t.lk
    [ "$(link_key t.lk spacing_of)" = "types dark" ] # no units: box / n_dark^(1/3)
    [ "$(link_key t.lk periodic)" = 0 ]
    tipsy2bin --no-periodic -t dark "$RUN99" | kdbuild | foflink -l "$(link_key t.lk l)" -o tdm.lk
    run python3 "$CHECK" t.lk tdm.lk
    echo "$output"
    [ "$status" -eq 0 ]
    # stars alone linked with the gas attached, and a star-only stream linked as before
    tipsy2bin --no-periodic "$RUN99" | kdbuild | foflink -l 0.05 --link-types=star --attach-types=gas -o s.lk
    tipsy2bin --no-periodic -t star "$RUN99" | kdbuild | foflink -l 0.05 -o sdm.lk
    run python3 "$CHECK" s.lk sdm.lk
    echo "$output"
    [ "$status" -eq 0 ]
    [ -z "$(link_key sdm.lk link_types)" ]
}

@test "foflink's type options: usage errors" {
    run -2 foflink --link-types=dust
    [[ "$output" == *"option --link-types takes a list of gas, dark, star, or all, not 'dust'"* ]]
    run -2 foflink --link-types=dark, x
    run -2 foflink --link-types=dark --attach-types=dark,gas
    [[ "$output" == *"name a type twice"* ]]
    run -2 foflink --attach-types=all
    [[ "$output" == *"cannot be all"* ]]
}

@test "hydro runs on the GPU: the CPU's sinks, one level and two (skipped without a GPU)" {
    g4_streams
    foflink --device=gpu gas.kd -o /dev/null 2>/dev/null || skip "no usable GPU"
    foflink --device=gpu gas.kd -o gpu.lk
    cmp <(fofdump -c SINK gas.lk) <(fofdump -c SINK gpu.lk)
    foflink -b 0.2,0.1 gas.kd -o cpu2.lk
    foflink --device=gpu -b 0.2,0.1 gas.kd -o gpu2.lk
    for k in 0 1; do cmp <(fofdump -c SINK -l $k cpu2.lk) <(fofdump -c SINK -l $k gpu2.lk); done
}

# The .grp of each level of the single process's stream ONE.lk (one.L.grp) and of the ranks'
# streams o.%r.fof linked on R ranks: byte for byte the same. Usage: same_grp R ONE LEVELS
same_grp() {
    local L
    for L in $(seq 0 $(($3 - 1))); do
        [ -f "$2.$L.grp" ] || groups -m 1 --level=$L --format=grp "$2.lk" -o "$2.$L.grp"
        timeout 120 mpirun -n "$1" groups -m 1 --level=$L --format=grp o.%r.fof -o "d$1.$L.grp"
        cmp "$2.$L.grp" "d$1.$L.grp"
    done
}

@test "hydro runs under mpirun on 1 to 8 ranks: the single process's .grp, the brute-force reference's groups, ghosts for attaching bounded" {
    need_hdf5
    need_mpi
    export OMP_NUM_THREADS=1
    g4_streams
    foflink -b 0.2,0.1 gas.kd -o gas2.lk
    for R in $(rank_counts 1 2 3 4 5 6 7 8); do
        rm -f s.*.fof o.*.fof
        for k in $(seq 0 $((R - 1))); do hdf52bin --slice=$k/$R "$G4" -o s.$k.fof; done
        timeout 120 mpirun -n $R foflink -v -b 0.2,0.1 s.%r.fof -o o.%r.fof 2>v.err
        [ "$(link_key o.0.fof link_types)" = dark ]
        [ "$(link_key o.0.fof l_0)" = "$(link_key gas2.lk l_0)" ]
        same_grp $R gas2 2
        # every rank says what it held to attach to: on 8 ranks its slab's share and the ghosts
        # within 6.4 l = 2000 kpc/h of it, well under the 32768 dark matter particles of the run
        [ "$(grep -c 'attaching: .* linked particles held' v.err)" -eq $R ]
        if [ $R = 8 ]; then
            held=$(sed -n 's/.* attached to \([0-9]*\) linked particles held.*/\1/p' v.err | sort -n | tail -1)
            echo "most held: $held"
            [ "$held" -lt 16384 ]
        fi
        [ $R = 5 ] || continue
        files=$(ls o.*.fof | paste -sd,)
        run python3 "$CHECK" --same "$files" gas2.lk
        echo "$output"
        [ "$status" -eq 0 ]
        # and the reference's groups, from the ranks' streams alone
        hdf52bin -t dark "$G4" | kdbuild |
            foflink -l "$(link_key o.0.fof l_0),$(link_key o.0.fof l_1)" -o dmlev.lk
        run python3 "$CHECK" "$files" dmlev.lk
        echo "$output"
        [ "$status" -eq 0 ]
    done
}

@test "a mkuniverse --gas mock (periodic) under mpirun on 1 to 8 ranks: the single process's .grp" {
    need_mpi
    export OMP_NUM_THREADS=1
    # -b 0.1: some gas particles lie further than l from every dark matter particle, so a
    # margin of l (the linking's) would attach them wrongly on some rank
    mkuniverse -n 20000 --gas -s 3 -o m.std
    tipsy2bin m.std -o m.fof
    kdbuild m.fof | foflink -b 0.1,0.05 -o one.lk
    [ "$(link_key one.lk link_types)" = dark ]
    [ "$(link_key one.lk attached_0)" -gt 0 ]
    for R in $(rank_counts 1 2 3 4 5 6 7 8); do
        rm -f in.*.fof o.*.fof
        splitstream "$R" m.fof in.%r.fof
        timeout 120 mpirun -n $R foflink -b 0.1,0.05 in.%r.fof -o o.%r.fof
        [ "$(link_key o.0.fof attached_0)" = "$(link_key one.lk attached_0)" ]
        same_grp $R one 2
    done
    # b = 1: the reach, 6.4 l = 0.24, spans two of the 8 slabs and wraps the period
    kdbuild m.fof | foflink -b 1 -o wide.lk
    timeout 120 mpirun -n 8 foflink -b 1 in.%r.fof -o o.%r.fof
    same_grp 8 wide 1
}

@test "run99-gas-dark-star (isolated) under mpirun on 2 and 3 ranks, 6D and levels: the single process's groups, lowest IDs" {
    [ -f "$RUN99" ] || skip "no $RUN99"
    need_mpi
    export OMP_NUM_THREADS=1
    tipsy2bin --no-periodic "$RUN99" -o t.fof
    kdbuild t.fof | foflink -b 0.2,0.1 -o one.lk
    kdbuild t.fof | foflink -b 0.2 --psi=0.5 -o one6.lk
    for R in 2 3; do
        rm -f in.*.fof o.*.fof
        splitstream "$R" t.fof in.%r.fof
        timeout 120 mpirun -n $R foflink -b 0.2,0.1 in.%r.fof -o o.%r.fof
        run python3 "$CHECK" --same "$(ls o.*.fof | paste -sd,)" one.lk
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(link_key o.0.fof attached_1)" = "$(link_key one.lk attached_1)" ]
        timeout 120 mpirun -n $R foflink -b 0.2 --psi=0.5 in.%r.fof -o o.%r.fof
        run python3 "$CHECK" --same "$(ls o.*.fof | paste -sd,)" one6.lk
        echo "$output"
        [ "$status" -eq 0 ]
    done
    # groups numbers the ranks' GMIN (it checks each is its group's lowest ID)
    timeout 120 mpirun -n 3 groups -m 8 o.%r.fof -o g.%r.fof
}
