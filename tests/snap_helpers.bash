# snap_helpers.bash - shared by hdf52bin.bats and gadget2bin.bats: the real snapshots, skips, failure checks.

load ref_helpers

G4=$DATA/g4-lcdm-gas-z0.hdf5
ICS=$DATA/gadget2-lcdm-gas-ics.dat

# Skips the test unless the Gadget-4 HDF5 snapshot is there and this build reads HDF5.
need_hdf5() {
    [ -f "$G4" ] || skip "$G4 is missing"
    if hdf52bin -o /dev/null /nonexistent.hdf5 2>&1 | grep -q 'no HDF5 support'; then
        skip "built without HDF5 (libhdf5-dev)"
    fi
}

# The text of chunk TAG of stream FILE (fofdump -c), for comparisons.
chunk() {
    fofdump -c "$2" "$1"
}

# Every particle chunk of two streams is identical, and their SNAP records differ at most in
# the line that names the source and the lines that match the regular expression IGNORE.
#   same_stream A B [IGNORE]
same_stream() {
    local t skip="^source ${3:+|$3}"
    for t in POS VEL MASS TYPE ID PID; do
        cmp <(chunk "$1" $t) <(chunk "$2" $t)
    done
    diff <(chunk "$1" SNAP | grep -Ev "$skip") <(chunk "$2" SNAP | grep -Ev "$skip")
}

# The .grp (every group, -m 1) of a stream linked at b = 0.2.
grp_of() {
    kdbuild "$1" | foflink -b 0.2 | groups -m 1 --format=grp
}
