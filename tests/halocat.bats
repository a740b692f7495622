#!/usr/bin/env bats
# halocat.bats - halostats --format=hdf5 (Gadget-4 fof_subhalo_tab layout) and groups' .grp, opened by h5py, pynbody and yt when installed.

bats_require_minimum_version 1.5.0

DATA=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}
CHECK=$BATS_TEST_DIRNAME/py/halocat_check.py
NOHDF5="halostats: --format=hdf5: this build has no HDF5 (install libhdf5-dev, then make config and rebuild)"
G4=$DATA/g4-lcdm-gas-z0.hdf5
export PYTHONDONTWRITEBYTECODE=1

# One mock universe through the pipeline with two levels (b 0.2 and 0.1), for every test:
# u.fof (groups' output), u.txt (halostats' text), snap.std and its .grp. With HDF5 and the
# real Gadget-4 snapshot: its dark matter at b 0.2 and 0.1 (g4.fof), the text catalogue with SO
# masses and unbinding (g4.txt), the same as a stream (g4s.fof: BGID), and the HDF5 catalogue
# with the group-ordered snapshot beside it (fof_subhalo_tab_000.0.hdf5, snapshot_000.0.hdf5).
setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    mkuniverse -n 20000 -s 7 -o snap.std
    # the catalogue states units: the mock's are given, Gadget's (setunits, as a converter that knows them)
    tipsy2bin snap.std | setunits - | kdbuild | foflink -b 0.2,0.1 | groups -m 10 -o u.fof
    halostats --mass-name=1e10Msun/h -o u.txt u.fof # the text in the stream's mass unit, as the HDF5
    if [ -f "$G4" ] && [ "$(halostats --format=hdf5 /dev/null 2>&1)" != "$NOHDF5" ]; then
        mkdir g4 && cd g4 || return 1
        hdf52bin --types=dark "$G4" | kdbuild | foflink -b 0.2,0.1 | groups -m 20 -o g4.fof
        halostats --so --unbind -o g4.txt g4.fof
        halostats --so --unbind --format=stream -o g4s.fof g4.fof
        halostats --so --unbind --format=hdf5 --snapshot=snapshot_000.0.hdf5 -o fof_subhalo_tab_000.0.hdf5 g4.fof
    fi
}

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    cp "$BATS_FILE_TMPDIR"/{snap.std,u.fof,u.txt} .
}

# Skips unless halostats writes HDF5 (the build found libhdf5).
need_hdf5() {
    run halostats --format=hdf5 /dev/null
    [ "$output" != "$NOHDF5" ] || skip "this build has no HDF5"
}

# Skips unless python3 imports every module named (each tried once a file, py-MODULE.ok or
# py-MODULE.no in $BATS_FILE_TMPDIR: yt takes seconds to import).
need_python() {
    local m f
    command -v python3 >/dev/null || skip "no python3"
    for m in "$@"; do
        f=$BATS_FILE_TMPDIR/py-$m
        [ -e "$f.ok" ] || [ -e "$f.no" ] || { python3 -c "import $m" 2>/dev/null && touch "$f.ok" || touch "$f.no"; }
        [ -e "$f.ok" ] || skip "python3 has no $m"
    done
}

@test "--help names --format=hdf5" {
    run halostats --help
    [[ "$output" == *"'hdf5': a Gadget-4 style fof_subhalo_tab HDF5 file"* ]]
}

@test "without HDF5, --format=hdf5 is a one-line error before reading anything" {
    run halostats --format=hdf5 /dev/null
    [ "$output" = "$NOHDF5" ] || skip "this build has HDF5"
    [ "$status" -eq 1 ]
    run -1 halostats --format=hdf5 -o cat.hdf5 u.fof
    [ "$output" = "$NOHDF5" ]
    [ ! -e cat.hdf5 ]
}

@test "the catalogue is an HDF5 file, atomic, to a file or stdout, the same each time; not compressed with -z" {
    need_hdf5
    run -2 halostats --format=hdf5 -z u.fof
    [ "${lines[0]}" = "halostats: option -z applies to --format=stream only" ]
    halostats --format=hdf5 -o cat.hdf5 u.fof
    head -c 8 cat.hdf5 | od -An -tx1 | grep -q '89 48 44 46 0d 0a 1a 0a' # the HDF5 signature
    halostats --format=hdf5 u.fof >stdout.hdf5
    cmp cat.hdf5 stdout.hdf5
    # a truncated stream: status 1, and no file
    head -c 100000 u.fof >cut.fof
    run -1 halostats --format=hdf5 -o bad.hdf5 cut.fof
    [[ "$output" == "halostats: cut.fof: truncated stream"* ]]
    [ ! -e bad.hdf5 ]
    # the group-ordered snapshot beside it: the same bytes each time, none after a failure
    halostats --format=hdf5 --snapshot=s1.hdf5 -o c1.hdf5 u.fof
    halostats --format=hdf5 --snapshot=s2.hdf5 -o c2.hdf5 u.fof
    cmp s1.hdf5 s2.hdf5
    cmp c1.hdf5 cat.hdf5
    rm s1.hdf5 s2.hdf5 c1.hdf5 c2.hdf5
    run -1 halostats --format=hdf5 --snapshot=bad-snap.hdf5 -o bad.hdf5 cut.fof
    [ ! -e bad-snap.hdf5 ] && [ ! -e bad.hdf5 ]
    run -2 halostats --snapshot=s.hdf5 u.fof
    [ "${lines[0]}" = "halostats: option --snapshot applies to --format=hdf5 only" ]
    run -2 halostats --format=hdf5 --snapshot=- u.fof
    [ "${lines[0]}" = "halostats: option --snapshot needs a file name (the snapshot is not written to stdout)" ]
    ls -A | grep -v -e '^cat.hdf5$' -e '^stdout.hdf5$' -e '^cut.fof$' -e '^u.fof$' -e '^u.txt$' -e '^snap.std$' && return 1
    true
}

@test "h5py: Header, Group, Subhalo and IDs equal the stream and halostats' text" {
    need_hdf5
    need_python numpy h5py
    halostats --format=hdf5 -o fof_subhalo_tab_000.hdf5 u.fof
    run python3 "$CHECK" h5 fof_subhalo_tab_000.hdf5 u.fof u.txt
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == "h5py: 62 groups, 66 subhalos, "*" member IDs agree with the stream and the text" ]]
}

@test "h5py: units, and one level (no Subhalo datasets)" {
    need_hdf5
    need_python numpy h5py
    tipsy2bin snap.std | setunits - | kdbuild | foflink -b 0.2 | groups -m 10 -o one.fof
    halostats --format=hdf5 --centre=com --length-unit=1000 --mass-unit=2 --velocity-unit=3 -o cat.hdf5 one.fof
    halostats --centre=com --length-unit=1000 --mass-unit=2 --velocity-unit=3 -o one.txt one.fof
    run python3 - <<'EOF'
import h5py, numpy as np
f = h5py.File("cat.hdf5", "r")
lines = [l for l in open("one.txt") if not l.startswith("#")]
t = np.array([l.split() for l in lines], dtype=float)
h = f["Header"].attrs
assert h["Nsubhalos_Total"] == 0 and h["Ngroups_Total"] == len(t), (h["Ngroups_Total"], len(t))
assert h["BoxSize"] == 1000
assert len(f["Subhalo"].keys()) == 0 and "SubhaloIDMostbound" not in f["Subhalo"]
assert np.all(f["Group/GroupNsubs"][()] == 0) and np.all(f["Group/GroupFirstSub"][()] == -1)
assert np.allclose(f["Group/GroupMass"][()], t[:, 4], rtol=1e-8)
assert np.allclose(f["Group/GroupCM"][()][:, 0], t[:, 5] + 500, rtol=1e-8, atol=1e-5)
assert np.allclose(f["Group/GroupVel"][()][:, 2], t[:, 10], rtol=1e-8, atol=1e-8)
print("ok", len(t))
EOF
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == "ok "* ]]
}

@test "gas, dark and star (run99-gas-dark-star.std): types, offsets and members with h5py and pynbody" {
    need_hdf5
    need_python numpy h5py pynbody
    [ -f "$DATA/run99-gas-dark-star.std" ] || skip "no $DATA/run99-gas-dark-star.std"
    tipsy2bin --no-periodic "$DATA/run99-gas-dark-star.std" | setunits - | kdbuild | foflink --link-types=all -l 0.01,0.005 |
        groups -m 10 -o r.fof
    halostats --mass-name=1e10Msun/h -o r.txt r.fof
    halostats --format=hdf5 --snapshot=snapshot_099.hdf5 -o fof_subhalo_tab_099.hdf5 r.fof
    run python3 "$CHECK" h5 fof_subhalo_tab_099.hdf5 r.fof r.txt
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "h5py: 2 groups, 4 subhalos, 6331 member IDs agree"* ]]
    run python3 "$CHECK" pynbody fof_subhalo_tab_099.hdf5 r.fof r.txt
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "pynbody "*": 2 halos and 4 subhalos, their members"* ]]
}

@test "pynbody opens the catalogue beside the group-ordered snapshot halostats writes: halos, subhalos, members" {
    need_hdf5
    need_python numpy h5py pynbody
    halostats --format=hdf5 --snapshot=snapshot_000.hdf5 -o fof_subhalo_tab_000.hdf5 u.fof
    run python3 "$CHECK" pynbody fof_subhalo_tab_000.hdf5 u.fof u.txt
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "pynbody "*": 62 halos and 66 subhalos, their members, lengths, masses and positions agree" ]]
}

@test "yt opens the catalogue: groups, subhalos, member IDs" {
    need_hdf5
    need_python numpy h5py yt
    halostats --format=hdf5 -o fof_subhalo_tab_000.0.hdf5 u.fof
    run python3 "$CHECK" yt fof_subhalo_tab_000.0.hdf5 u.fof u.txt
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "yt "*": 62 groups, 66 subhalos; lengths, masses, positions and member IDs agree" ]]
}

@test "pynbody reads SNAPSHOT.grp beside a tipsy SNAPSHOT as its halo catalogue" {
    need_python numpy pynbody
    groups -m 10 --format=grp -o snap.std.grp u.fof
    run python3 "$CHECK" grp snap.std u.fof u.txt
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "pynbody "*": the .grp's 62 halos have halostats' members, masses, centres of mass and velocities" ]]
}

@test "pynbody reads the .grp of a real snapshot (skid-dark.std)" {
    need_python numpy pynbody
    [ -f "$DATA/skid-dark.std" ] || skip "no $DATA/skid-dark.std"
    ln -s "$DATA/skid-dark.std" skid-dark.std
    tipsy2bin skid-dark.std | kdbuild | foflink -b 0.2 | groups -m 8 -o s.fof
    groups -m 8 --format=grp -o skid-dark.std.grp s.fof
    halostats --centre=com -o s.txt s.fof
    run python3 "$CHECK" grp skid-dark.std s.fof s.txt
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "pynbody "*": the .grp's 237 halos have"* ]]
}

# Skips unless the real Gadget-4 snapshot's catalogue was made (setup_file), and enters its folder.
need_g4() {
    need_hdf5
    [ -f "$G4" ] || skip "no $G4"
    cd "$BATS_FILE_TMPDIR/g4" || return 1
}

@test "the real Gadget-4 snapshot, h5py: the snapshot's units and cosmology, SO and bound masses, bound subhalos, members by ID in the snapshot" {
    need_g4
    need_python numpy h5py
    run python3 "$CHECK" g4-h5 fof_subhalo_tab_000.0.hdf5 g4s.fof g4.txt "$G4"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "h5py: 106 groups, "*" bound subhalos; units, cosmology, SO masses, bound masses and members by ID in the snapshot agree with the text" ]]
    # halostats' header says which particles the SO sums counted: the dark matter, not the gas
    grep -qx "# SO sums: the stream's 32768 particles (gas 0 of 32768, dark 32768 of 32768, star 0 of 0 in the snapshot);" g4.txt
}

@test "the real Gadget-4 snapshot, pynbody: halos and subhalos through the group-ordered snapshot, halo 0 by ID in the snapshot itself" {
    need_g4
    need_python numpy h5py pynbody
    run python3 "$CHECK" g4-pynbody fof_subhalo_tab_000.0.hdf5 g4s.fof g4.txt "$G4"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "pynbody "*": 106 halos and their bound subhalos in the group-ordered snapshot, and halo 0 by ID in the snapshot itself, agree with the text" ]]
}

@test "the real Gadget-4 snapshot, yt: masses, positions and SO radii in the snapshot's units, members by ID in the snapshot" {
    need_g4
    need_python numpy h5py yt
    run python3 "$CHECK" g4-yt fof_subhalo_tab_000.0.hdf5 g4s.fof g4.txt "$G4"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "yt "*": masses, positions, SO radii and member IDs in the snapshot's units agree with the text; halo 0 found by ID in the snapshot" ]]
}

@test "--subhalos: the level 1 groups even with --unbind, or the bound subhalos; usage errors" {
    need_hdf5
    need_python numpy h5py
    halostats --unbind --subhalos=levels --format=hdf5 -o fof_subhalo_tab_000.hdf5 u.fof
    halostats --unbind --mass-name=1e10Msun/h -o ub.txt u.fof
    run python3 "$CHECK" h5 fof_subhalo_tab_000.hdf5 u.fof ub.txt
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "h5py: 62 groups, 66 subhalos, "* ]]
    halostats --unbind --format=hdf5 -o bound.hdf5 u.fof
    halostats --unbind --subhalos=bound --format=hdf5 -o bound2.hdf5 u.fof
    cmp bound.hdf5 bound2.hdf5
    python3 -c 'import h5py, sys; f = h5py.File(sys.argv[1]); l = f["Subhalo/SubhaloFofLevel"][()]; assert (l == 0).sum() > 0 and set(l) <= {0, 1}; print("ok")' bound.hdf5
    run -2 halostats --subhalos=bound --format=hdf5 u.fof
    [ "${lines[0]}" = "halostats: option --subhalos=bound needs --unbind" ]
    run -2 halostats --subhalos=levels u.fof
    [ "${lines[0]}" = "halostats: option --subhalos applies to --format=hdf5 only" ]
    run -2 halostats --subhalos=all --format=hdf5 u.fof
    [ "${lines[0]}" = "halostats: option --subhalos needs 'levels' or 'bound', not 'all'" ]
}
