#!/usr/bin/env bats
# halostats_early.bats - halostats -m's work before its input ends: the same catalogue in any chunk order, through a slow pipe, and the input's errors first.

bats_require_minimum_version 1.5.0
load groups_helpers

PY=$BATS_TEST_DIRNAME/py

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    command -v kdbuild && command -v foflink && command -v mkuniverse || skip "upstream programs not built"
}

# foflink's stream of a 65536-particle mock (LINK and SINK before ID and VEL), with units so
# that --unbind is taken; $1 more foflink options.
mock_link() {
    mkuniverse -n 64Ki -o u.std
    # shellcheck disable=SC2086
    tipsy2bin --kpc-unit=100000 --msol-unit=2.2e17 u.std | kdbuild | foflink -b ${1:-0.2} >u.link
    chunks=$(fofdump u.link | awk 'NR > 1 { printf "%s ", $1 }')
    echo "$chunks"
    [[ "$chunks" == *"LINK SINK "*"ID "*"VEL "* ]]
}

# "A B C" from halostats -v's line "-m: ... from A s to B s; the input ended at C s" in FILE.
early_times() {
    sed -n 's/.*-m: .* from \([0-9.]*\) s to \([0-9.]*\) s; the input ended at \([0-9.]*\) s$/\1 \2 \3/p' "$1"
}

@test "-m: the same catalogue with LINK and SINK before the particles foflink passes on, after them, or no early work" {
    mock_link 0.2,0.12
    # an older foflink's order: LINK and SINK after every particle chunk
    addchunk --last=LINK --last=SINK u.link -o old.link
    fofdump old.link | awk 'NR > 1 { printf "%s ", $1 } END { print "" }' | grep -q "VEL LINK SINK SINK $"
    # no LINK: nothing says how many levels to wait for, so all of it after the input
    addchunk --drop=LINK u.link -o nolink.link
    # FOFKIT_POT_HOOK=cpu: the device's path (the minima on the finder's thread to the last batch)
    for hook in "" cpu; do
        for opts in "" "--unbind" "--csv --centre=com"; do
            export FOFKIT_POT_HOOK=$hook
            # shellcheck disable=SC2086
            groups -m 20 <u.link | halostats $opts >two.out
            # shellcheck disable=SC2086
            halostats -m 20 -v $opts <u.link >new.out 2>new.err
            # shellcheck disable=SC2086
            halostats -m 20 $opts <old.link >old.out
            # shellcheck disable=SC2086
            halostats -m 20 -v $opts <nolink.link 2>nolink.err | grep -v '^#' >nolink.rows
            [ -s two.out ]
            cmp two.out new.out
            cmp two.out old.out
            cmp <(grep -v '^#' two.out) nolink.rows
            grep -q "^halostats: -m: groups numbered" new.err
            grep -q "^halostats: level 1: before the input ended: members gathered" new.err
            ! grep -q "before the input ended" nolink.err
            if [ "$hook" = cpu ] && [ "$opts" != "--csv --centre=com" ]; then
                grep -q "^halostats: level 0: potentials on a thread of their own since the members were gathered" new.err
            fi
        done
    done
    unset FOFKIT_POT_HOOK
    # with --unbind the potentials of level 0 only are found early (the unbinding keeps one level's)
    # (the CPU's minima: a device's run on a thread of their own, as the hook's above)
    halostats -m 20 -v --device=cpu --unbind <u.link 2>&1 >/dev/null | grep -q "^halostats: level 0: before the input ended: potentials"
    halostats -m 20 -v --device=cpu --unbind <u.link 2>&1 >/dev/null | grep -q "^halostats: level 1: before the input ended: members gathered in [0-9.]* s; potentials after it$"
}

@test "-m through a slow pipe: the work starts while the velocities still come, the same catalogue in either order" {
    mock_link
    addchunk --last=LINK --last=SINK u.link -o old.link
    # the CPU's minima throughout (a GPU's differ in the last bits), also behind the device's hook
    groups -m 20 <u.link | halostats --device=cpu >two.txt
    # 64 KiB every 20 ms: the 768 KiB of VEL after ID take 0.24 s or more
    python3 "$PY/trickle.py" 65536 0.02 <u.link | halostats -m 20 -v --device=cpu -o new.txt 2>new.err
    python3 "$PY/trickle.py" 65536 0.02 <old.link | halostats -m 20 -v --device=cpu -o old.txt 2>old.err
    python3 "$PY/trickle.py" 65536 0.02 <u.link | FOFKIT_POT_HOOK=cpu halostats -m 20 -v --device=cpu -o hook.txt 2>hook.err
    cmp two.txt new.txt
    cmp two.txt old.txt
    cmp two.txt hook.txt
    grep -q "^halostats: level 0: potentials on a thread of their own" hook.err
    cat new.err
    grep -q "^halostats: level 0: before the input ended: potentials of [0-9]* of [0-9]* groups in" new.err
    read -r start done end <<<"$(early_times new.err)"
    echo "new order: from $start to $done, input ended at $end"
    # it began before the input ended (with LINK and SINK last, at the end)
    awk -v s="$start" -v e="$end" 'BEGIN { exit !(s < e) }'
    read -r start done end <<<"$(early_times old.err)"
    echo "old order: from $start to $done, input ended at $end"
    [ -n "$end" ]
}

@test "-m: the input's errors come before the early work's, and its own are those of the work after the input" {
    local desc
    desc=$(nine | sed 's/^sink .*/text LINK l 0.1 b 0.2 levels 1\nsink 3 5 7 4 4 5 6 7 99/')
    echo "$desc" | mkstream -o bad.fof
    # the early work finds the bad SINK: said once the input has been read
    fails halostats "halostats: bad.fof: SINK chunk: particle 8 links to 99, beyond the last particle (8)" -m 2 bad.fof
    # a later chunk that is wrong is the input's error, said first, as before
    addchunk bad.fof 'VEL:u4:0' -o twovel.fof
    fails halostats "halostats: twovel.fof: stream has two VEL chunks" -m 2 twovel.fof
    # a good stream whose IDs are not the source's indices
    desc=$(nine | sed 's/^nsource 13/nsource 9/; s/^sink .*/text LINK l 0.1 b 0.2 levels 1\nsink 3 5 7 4 4 5 6 7 8/')
    echo "$desc" | mkstream -o ids.fof
    fails halostats "halostats: ids.fof: ID chunk: particle 2 has original index 11, beyond the 9 particles of the source" -m 2 ids.fof
    # the same with the early work's input good and a later chunk bad: the input's error
    addchunk ids.fof 'MASS:u4:0' -o twomass.fof
    fails halostats "halostats: twomass.fof: stream has two MASS chunks" -m 2 twomass.fof
    # a velocity that is not finite, met after the input while the finder's thread runs: said, the thread stopped
    desc=$(nine | sed 's/^p 0.5   0.5   0.5    0 1 0/p 0.5   0.5   0.5    nan 1 0/; s/^sink .*/text LINK l 0.1 b 0.2 levels 1\nsink 3 5 7 4 4 5 6 7 8/')
    echo "$desc" | mkstream -o nanv.fof
    fails halostats "halostats: nanv.fof: particle 1 has a non-finite velocity" -m 2 nanv.fof
    FOFKIT_POT_HOOK=cpu fails halostats "halostats: nanv.fof: particle 1 has a non-finite velocity" -m 2 nanv.fof
}
