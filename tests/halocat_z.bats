#!/usr/bin/env bats
# halocat_z.bats - halostats' HDF5 catalogue at z = 3 read by yt and pynbody: comoving and physical values against the text, with the factors of a and h its a_scaling and h_scaling name.

bats_require_minimum_version 1.5.0

DATA=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}
SNAP=$DATA/g4-lcdm-series/snapshot_001.hdf5
CHECK=$BATS_TEST_DIRNAME/py/halocat_z.py
export PYTHONDONTWRITEBYTECODE=1

# The series' dark matter at z = 3, grouped (s.fof, through tee), its HDF5 catalogue with the
# group-ordered snapshot beside it (named as yt and pynbody look for them) and its text catalogue.
setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    [ -f "$SNAP" ] && hdf52bin --help >/dev/null 2>&1 || return 0
    halostats --format=hdf5 /dev/null 2>&1 | grep -q 'no HDF5' && return 0
    hdf52bin -t dark "$SNAP" | kdbuild | foflink -b 0.2 | groups -m 20 | tee s.fof |
        halostats --so --unbind --format=hdf5 --snapshot=snapshot_001.hdf5 -o fof_subhalo_tab_001.0.hdf5 || return 0
    halostats --so --unbind -o c.txt s.fof
}

setup() {
    cd "$BATS_FILE_TMPDIR" || return 1
}

# Skips unless the catalogues were made and python3 imports the modules named (each set tried
# once a file, py-MODULE.ok or py-MODULE.no in $BATS_FILE_TMPDIR: yt takes seconds to import).
need() {
    local f=$BATS_FILE_TMPDIR/py-${1:-none}
    [ -f "$SNAP" ] || skip "no $SNAP"
    [ -s fof_subhalo_tab_001.0.hdf5 ] && [ -s c.txt ] || skip "this build reads or writes no HDF5"
    [ -e "$f.ok" ] || [ -e "$f.no" ] || { python3 -c "import numpy, h5py${1:+, $1}" 2>/dev/null && touch "$f.ok" || touch "$f.no"; }
    [ -e "$f.ok" ] || skip "python3 has no numpy, h5py${1:+ or $1}"
}

@test "the z = 3 catalogue: three groups, the frame in the text and in HDF5's Header" {
    need
    [ "$(grep -vc '^#' c.txt)" -eq 3 ]
    grep -q "^# comoving stream at a = 0.2500027893 (z = 2.999955372)" c.txt
    python3 -c 'import h5py, sys; h = h5py.File(sys.argv[1])["Header"].attrs
assert (h["Time"], h["HubbleParam"], h["Ngroups_Total"]) == (0.2500027892934246, 0.7, 3), dict(h)' fof_subhalo_tab_001.0.hdf5
}

@test "yt reads the z = 3 catalogue: positions, SO radii, masses and velocities, comoving and physical, as the text with a = 0.25 and h = 0.7" {
    need yt
    run python3 "$CHECK" yt fof_subhalo_tab_001.0.hdf5 c.txt
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "yt "*" at z = 3 (a = 0.2500028, h = 0.7): 9 of 11 datasets agree with the text, comoving and physical; SubhaloVmaxRad as its number"* ]]
}

@test "pynbody reads the z = 3 catalogue through the group-ordered snapshot: comoving and physical values as the text" {
    need pynbody
    run python3 "$CHECK" pynbody fof_subhalo_tab_001.0.hdf5 c.txt snapshot_001.hdf5
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "pynbody "*" at z = 3 (a = 0.2500028, h = 0.7): 3 halos; 8 of 11 datasets agree with the text, comoving and physical; GroupVel, SubhaloVmax, SubhaloVmaxRad as their numbers"* ]]
}

@test "the check fails on a catalogue whose GroupPos says physical or whose SO radii are physical" {
    need yt
    cp fof_subhalo_tab_001.0.hdf5 bad.hdf5
    mkdir -p bad && mv bad.hdf5 bad/fof_subhalo_tab_001.0.hdf5
    python3 -c 'import h5py, sys; f = h5py.File(sys.argv[1], "r+"); f["Group/GroupPos"].attrs["a_scaling"] = 0.0
d = f["Group/Group_R_Crit200"]; d[...] = d[()] * f["Header"].attrs["Time"]' bad/fof_subhalo_tab_001.0.hdf5
    run -1 python3 "$CHECK" yt bad/fof_subhalo_tab_001.0.hdf5 c.txt
    echo "$output"
    [[ "$output" == *"FAIL: Group/GroupPos (h5py) against the text with a^0 h^-1"* ]]
    [[ "$output" == *"FAIL: Group/Group_R_Crit200 (h5py) against the text with a^1 h^-1"* ]]
}
