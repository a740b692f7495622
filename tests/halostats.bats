#!/usr/bin/env bats
# halostats.bats - halostats(1): header, columns, CSV, values against hand and awk computations, every bad input.

bats_require_minimum_version 1.5.0
load groups_helpers

DATA=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}

# Runs halostats ARGS... expecting status 1, exactly MESSAGE on stderr and nothing
# on stdout (nothing is written before the whole input is read).
hs_fails() {
    fails halostats "$@"
    [ -z "$output" ]
}

# The nine-particle stream with a LINK chunk, through groups -m 2.
nine_grouped() {
    nine | sed 's/^sink/text LINK l 0.1 b 0.2\nsink/' | mkstream | groups -m 2
}

# The nine particles with a GID (and the GRPS given) but no SINK, for halostats alone.
nine_gid() {
    nine | sed "s/^sink .*/gid $1/" | { cat; [ -z "$2" ] || echo "text GRPS $2"; } | mkstream "${@:3}"
}

# By hand: group 1 = masses 1, 1, 2 at (1/8, 1/8, 1/8), (1/4, 1/8, 1/8), (1/8, 1/4, 1/8),
# all moving at (1, 0, 0): centre (5/32, 3/16, 1/8), farthest member (1/4, 1/8, 1/8) at
# sqrt(0.0126953125); groups 2 and 3: unit pairs 1/8 apart along z.
NINE_ROWS="1 3 4 0.15625 0.1875 0.125 1 0 0 0 0.112673477
2 2 2 0.75 0.25 0.5625 0 0 1 0 0.0625
3 2 2 0.5 0.5 0.5625 0 1 0 0 0.0625"

@test "--help (with --csv), --version, an unknown option" {
    standard_options halostats
    run halostats --help
    [[ "$output" == *"--csv"* ]]
}

@test "usage errors: one message, a pointer to --help, status 2" {
    run -2 halostats -z
    [ "${lines[0]}" = "halostats: option -z does not apply: halostats writes text" ]
    run -2 halostats -q
    [ "${lines[0]}" = "halostats: unknown option '-q'" ]
    run -2 halostats a b
    [ "${lines[0]}" = "halostats: too many input files (one at most, or '-' for stdin)" ]
}

@test "one line per group with the hand-computed values, sorted by id" {
    nine_grouped >in.fof
    run --separate-stderr halostats in.fof
    [ "$status" -eq 0 ]
    [ "$(grep -v '^#' <<<"$output")" = "$NINE_ROWS" ]
    [ -z "$stderr" ]
}

@test "the header names every column with its unit, and the run's parameters" {
    nine_grouped | halostats -o halos.txt
    grep -qx "# box 1 origin 0 periodic 1" halos.txt
    grep -qx "# linking length l 0.1 (b 0.2, psi 0; psi 0 is 3D linking)" halos.txt
    grep -qx "# groups 3, min size 2" halos.txt
    grep -q "^# input stdin: source 'mkstream -', 9 particles of 13, time 1$" halos.txt
    grep -q "^# units: the snapshot's; length: box side = 1" halos.txt
    grep -q "less than$" halos.txt # the periodic assumption
    for c in "id 1" "n 1" "mass mass" "x length" "y length" "z length" "vx velocity" "vy velocity" \
        "vz velocity" "sigma_v velocity" "rmax length"; do
        grep -Eq "^# +[0-9]+ ${c% *} +${c#* } +[a-zA-Z0-9]" halos.txt
    done
    grep -q "^# *10 sigma_v .*3D" halos.txt
    [ "$(grep '^#' halos.txt | tail -n 1)" = "# id n mass x y z vx vy vz sigma_v rmax" ]
    # every other line is a row of 11 numbers
    [ "$(grep -v '^#' halos.txt | awk 'NF == 11' | wc -l)" -eq 3 ]
}

@test "--csv: one header row of column names, then the same rows comma-separated" {
    nine_grouped >in.fof
    run --separate-stderr halostats --csv in.fof
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "id,n,mass,x,y,z,vx,vy,vz,sigma_v,rmax" ]
    [ "$(tail -n +2 <<<"$output")" = "$(tr ' ' ',' <<<"$NINE_ROWS")" ]
}

@test "-v prints one summary line on stderr" {
    nine_grouped >in.fof
    run --separate-stderr halostats -v -o out.txt in.fof
    [ "$status" -eq 0 ]
    [[ "$stderr" =~ ^halostats:\ 3\ groups\ holding\ 7\ of\ 9\ particles,\ largest\ 3\ \([0-9.]+\ s\)$ ]]
}

@test "no groups: the header alone" {
    nine | mkstream | groups -m 4 | halostats >halos.txt
    grep -qx "# groups 0, min size 4" halos.txt
    [ "$(grep -cv '^#' halos.txt)" -eq 0 ]
}

@test "without GRPS the groups are 1 to the largest GID, min size unknown" {
    nine_gid "$NINE_GID" "" -o in.fof
    halostats in.fof >halos.txt
    grep -qx "# groups 3, min size unknown (no GRPS chunk)" halos.txt
    grep -qx "# linking length unknown (no LINK chunk)" halos.txt
    [ "$(grep -v '^#' halos.txt)" = "$NINE_ROWS" ]
}

@test "a group across the periodic boundary: centre wrapped into the box" {
    # box 2 from -1: masses 1 and 3 at x = 0.875 and -0.875 (0.25 apart across the
    # boundary): centre 0.1875 beyond 0.875, wrapped to -0.9375; not periodic: the mean
    printf '%s\n' "box 2" "origin -1" "p 0.875 0 0 0 0 0 1 1 0" "p -0.875 0 0 0 0 0 3 1 1" "sink 0 0" |
        mkstream | groups -m 2 | halostats | grep -v '^#' >halos.txt
    [ "$(cat halos.txt)" = "1 2 4 -0.9375 0 0 0 0 0 0 0.1875" ]
    printf '%s\n' "box 2" "origin -1" "periodic 0" "p 0.875 0 0 0 0 0 1 1 0" "p -0.875 0 0 0 0 0 3 1 1" "sink 0 0" |
        mkstream | groups -m 2 | halostats | grep -v '^#' >halos.txt
    [ "$(cat halos.txt)" = "1 2 4 -0.4375 0 0 0 0 0 0 1.3125" ]
}

@test "missing chunks: GID, POS, VEL, MASS, ID, SNAP" {
    nine | mkstream -o nogid.fof
    hs_fails "halostats: stream has no GID chunk (run groups first)" nogid.fof
    for tag in POS VEL MASS ID; do
        nine_gid "$NINE_GID" "" --omit=$tag -o no.fof
        hs_fails "halostats: stream has no $tag chunk (run tipsy2bin first)" no.fof
    done
    nine_gid "$NINE_GID" "" --omit=SNAP -o no.fof
    hs_fails "halostats: no.fof: stream does not start with a SNAP chunk" no.fof
}

@test "a GID that does not fit: wrong length, groups beyond GRPS, empty groups" {
    nine_gid "0 2 1 3 0" "" -o bad.fof
    hs_fails "halostats: bad.fof: chunk GID has 5 rows for the 13 particles of the source" bad.fof
    nine_gid "$NINE_GID" "ngroups 2 minsize 2" -o bad.fof
    hs_fails "halostats: bad.fof: particle 1 is in group 3, beyond the 2 groups" bad.fof
    nine_gid "$NINE_GID" "ngroups 4 minsize 2" -o bad.fof
    hs_fails "halostats: bad.fof: group 4 has no member" bad.fof
    nine_gid "$NINE_GID" "minsize 2" -o bad.fof
    hs_fails "halostats: bad.fof: GRPS chunk lacks the key 'ngroups'" bad.fof
    nine | sed "s/^sink .*/gid $NINE_GID/; s/ 1 1 12$/ 1 1 7/" | mkstream -o bad.fof
    hs_fails "halostats: bad.fof: ID chunk: particle 8 repeats original index 7 (IDs must be distinct)" bad.fof
}

@test "damaged input: empty, wrong magic, truncated, CRC mismatch" {
    : >empty.fof
    hs_fails "halostats: empty.fof: empty input" empty.fof
    hs_fails "halostats: stdin: empty input" </dev/null
    printf 'not a stream at all' >magic.fof
    hs_fails "halostats: magic.fof: truncated stream (ends inside the stream header at byte 19)" magic.fof
    head -c 100 /dev/zero >magic.fof
    hs_fails "halostats: magic.fof: not a fofkit stream (bad magic)" magic.fof
    nine_grouped >in.fof
    size=$(stat -c %s in.fof)
    head -c $((size - 64)) in.fof >cut.fof
    hs_fails "halostats: cut.fof: truncated stream (no END chunk)" cut.fof
    gid=$(chunks in.fof | awk '$2 == "GID" { print $1 }')
    cp in.fof crc.fof
    flip_byte crc.fof $((gid + 64 + 3))
    hs_fails "halostats: crc.fof: chunk GID: payload CRC mismatch (damaged data)" crc.fof
}

@test "a failure leaves no output: neither a new file nor a temporary, an old file untouched" {
    nine | mkstream -o nogid.fof
    run -1 halostats -o new.txt nogid.fof
    [ ! -e new.txt ]
    echo old >old.txt
    run -1 halostats --csv -o old.txt nogid.fof
    [ "$(cat old.txt)" = old ]
    [ "$(ls | sort | tr '\n' ' ')" = "nogid.fof old.txt " ]
}

@test "end to end: clustered particles, some across the boundary, against an awk computation" {
    command -v kdbuild && command -v foflink || skip "kdbuild and foflink not built"
    clusters >cl.txt
    awk_fof 0.03 3 <cl.txt >want.grp
    awk_halostats want.grp cl.txt >want.txt
    [ "$(wc -l <want.txt)" -eq 5 ]
    mkstream cl.txt | kdbuild | foflink -l 0.03 | groups -m 3 | halostats >halos.txt
    grep -v '^#' halos.txt >got.txt
    same_numbers want.txt got.txt
    # three of the groups straddle the boundary; every centre lies inside the box
    awk '!/^#/ { for (k = 4; k <= 6; k++) if ($k < -0.5 || $k >= 0.5) exit 1 }' halos.txt
    [ "$(awk '!/^#/ && ($4 < -0.49 || $5 < -0.49 || $6 < -0.49)' halos.txt | wc -l)" -eq 3 ]
}

@test "end to end: a real snapshot: rows and sizes agree with GRPS, CSV alike" {
    [ -f "$DATA/skid-dark.std" ] || skip "no $DATA/skid-dark.std"
    command -v tipsy2bin && command -v kdbuild && command -v foflink || skip "upstream programs not built"
    tipsy2bin "$DATA/skid-dark.std" | kdbuild | foflink -b 0.2 | groups -m 20 -o skid.grps
    halostats skid.grps >halos.txt
    grps=$(text_payload skid.grps GRPS)
    ngroups=$(awk '$1 == "ngroups" { print $2 }' <<<"$grps")
    ngrouped=$(awk '$1 == "ngrouped" { print $2 }' <<<"$grps")
    grep -v '^#' halos.txt >rows.txt
    [ "$(wc -l <rows.txt)" -eq "$ngroups" ]
    # ids 1..ng in order, sizes not growing, at least 20 members, the sizes add up
    awk '$1 != NR || $2 < 20 || (NR > 1 && $2 > last) { exit 1 } { last = $2 }' rows.txt
    [ "$(awk '{ s += $2 } END { print s }' rows.txt)" -eq "$ngrouped" ]
    grep -q "^# linking length l 0.00625" halos.txt
    [ "$(halostats --csv skid.grps | tail -n +2 | tr ',' ' ')" = "$(cat rows.txt)" ]
}
