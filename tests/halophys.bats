#!/usr/bin/env bats
# halophys.bats - halostats' physical halo properties at z > 0 on a Gadget-4 run (unbinding, vmax, SO, HDF5 a_scaling against numpy), and the refusal of a stream without units.

bats_require_minimum_version 1.5.0

load mpi_helpers

DATA=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}
SERIES=$DATA/g4-lcdm-series
CHECK=$BATS_TEST_DIRNAME/py/physcheck.py
export PYTHONDONTWRITEBYTECODE=1

# The series' dark matter at z = 3 (snapshot_001) and z = 1 (snapshot_003), grouped (sN.fof),
# their catalogues with --unbind --so (cN.txt), GID and halostats' BGID as text (gN.txt, bN.txt).
setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    mpi_probe
    [ -f "$SERIES/snapshot_001.hdf5" ] && hdf52bin --help >/dev/null 2>&1 || return 0
    for i in 1 3; do
        hdf52bin -t dark "$SERIES/snapshot_00$i.hdf5" 2>/dev/null | kdbuild | foflink -b 0.2 | groups -m 20 -o s$i.fof ||
            return 0
        halostats --unbind --so -o c$i.txt s$i.fof
        halostats --unbind --format=stream s$i.fof | fofdump -c BGID >b$i.txt
        fofdump -c GID s$i.fof >g$i.txt
    done
}

setup() {
    cd "$BATS_FILE_TMPDIR" || return 1
}

need_series() {
    [ -s c1.txt ] && [ -s c3.txt ] || skip "no $SERIES (or this build reads no HDF5)"
    python3 -c 'import numpy, h5py' 2>/dev/null || skip "python3 has no numpy or h5py"
}

# Column NAME of a text catalogue (its last '#' line names the columns).
col() {
    awk -v n="$1" '/^#/ { for (k = 2; k <= NF; k++) if ($k == n) c = k - 1; next } { print $c }' "$2"
}

@test "z = 3 and z = 1: unbinding, vmax, mbp, R200c and M200c agree with numpy in physical units" {
    need_series
    for i in 1 3; do
        run python3 "$CHECK" "$SERIES/snapshot_00$i.hdf5" c$i.txt g$i.txt b$i.txt
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == "a 0.$((i == 1 ? 25 : 5))"*" bound members with e < 0, "* ]]
    done
}

@test "the bound fraction of the largest halos does not collapse with redshift" {
    need_series
    # the three largest groups keep at least 90% of their members at z = 3, 1 and 0 (z = 0: the
    # same run's snapshot_004); before the Hubble flow and the physical potentials, z = 3 kept none
    hdf52bin -t dark "$SERIES/snapshot_004.hdf5" | kdbuild | foflink -b 0.2 | groups -m 20 | halostats --unbind -o c4.txt
    for i in 1 3 4; do
        paste -d ' ' <(col n c$i.txt) <(col n_bound c$i.txt) | head -n 3 >f.txt
        [ "$(wc -l <f.txt)" -eq 3 ]
        awk -v z="$i" '{ print "snapshot " z ": " $2 " of " $1 } $2 < 0.9 * $1 { bad = 1 } END { exit bad }' f.txt
    done
}

@test "the header says the frame: a, H(a), comoving lengths, physical velocities, per column" {
    need_series
    grep -qx "# comoving stream at a = 0.2500027893 (z = 2.999955372), H(a) = 0.4460869575 km/s per kpc/h physical: lengths comoving," c1.txt
    grep -q "^#   velocities peculiar (VEL a^0.5), the rest physical, as Gadget-4's SUBFIND" c1.txt
    grep -Eq "^#  6 x +kpc/h +comoving: centre of mass x" c1.txt
    grep -Eq "^# 21 vmax +km/s +physical: maximum circular velocity" c1.txt
    grep -Eq "^# 12 sigma_v +km/s +physical: " c1.txt
    grep -Eq "^# 32 r200c +kpc/h +comoving: " c1.txt
    # the stream's HCOL says the same
    hcol=$(halostats --format=stream s1.fof | fofdump -c HCOL)
    grep -qx "comoving 1" <<<"$hcol"
    grep -qx "comoving_columns x y z rmax xc yc zc rc_max r_half r_vmax" <<<"$hcol"
    grep -q "^hubble_of_a 0.44608695" <<<"$hcol"
    # H(z = 3) = 100 h km/s/Mpc E(z), E^2 = 0.3 a^-3 + 0.7, in km/s per kpc/h
    awk 'BEGIN { a = 0.25000278929342462; printf "%.10g\n", 0.1 * sqrt(0.3 / a ^ 3 + 0.7) }' | grep -qx 0.4460869575
}

@test "HDF5: Gadget-4's a_scaling and h_scaling say comoving or physical for every dataset" {
    need_series
    halostats --format=hdf5 /dev/null 2>&1 | grep -q 'no HDF5' && skip "this build has no HDF5"
    halostats --unbind --so --format=hdf5 -o cat1.hdf5 s1.fof
    python3 - cat1.hdf5 c1.txt <<'PY'
import sys
import h5py, numpy as np
f = h5py.File(sys.argv[1])
want = {"GroupPos": (1, -1), "GroupCM": (1, -1), "GroupVel": (0, 0), "GroupMass": (0, -1),
        "Group_R_Crit200": (1, -1), "Group_M_Crit200": (0, -1), "SubhaloPos": (1, -1), "SubhaloVel": (0, 0),
        "SubhaloVelDisp": (0, 0), "SubhaloVmax": (0, 0), "SubhaloVmaxRad": (0, -1), "SubhaloHalfmassRad": (0, -1)}
for name, (a, h) in want.items():
    d = f[("Group/" if name.startswith("Group") else "Subhalo/") + name]
    got = (d.attrs["a_scaling"], d.attrs["h_scaling"])
    assert got == (a, h), (name, got)
# the values: the text's comoving radius times a is SubhaloVmaxRad (physical, as SUBFIND's)
names = [l for l in open(sys.argv[2]) if l.startswith("#")][-1].split()[1:]
t = np.loadtxt(sys.argv[2], ndmin=2)
a = f["Header"].attrs["Time"]
rv = t[:, names.index("r_vmax")] * a
assert np.allclose(np.sort(f["Subhalo/SubhaloVmaxRad"][:]), np.sort(rv), rtol=1e-8), "SubhaloVmaxRad"
assert np.allclose(f["Group/GroupVel"][:, 0], t[:, names.index("vx")], rtol=1e-8), "GroupVel"
print("ok")
PY
}

@test "fofkit_halos (the library, and Python's fofkit.halos) given the comoving frame writes halostats' rows at z = 3 and z = 1" {
    need_series
    command -v fofarrays >/dev/null || skip "no fofarrays (test helper)"
    for i in 1 3; do
        # the text in the stream's own mass unit (1e10 Msun/h), as the library's table
        halostats --mass-name=1e10Msun/h --unbind s$i.fof | grep -v '^#' | awk '$1 == 0' >h.txt
        fofarrays --halos --physical --unbind s$i.fof >l.txt
        [ "$(wc -l <h.txt)" -gt 0 ]
        cmp h.txt l.txt
    done
    [ -n "${FOFKIT_BUILD:-}" ] && [ -f "$FOFKIT_BUILD/libfofkit.so" ] && [ -z "${ASAN_OPTIONS:-}" ] || skip "no shared library"
    FOFKIT_LIB=$FOFKIT_BUILD/libfofkit.so python3 - s1.fof c1.txt "$BATS_TEST_DIRNAME/../python" <<'PY'
import sys
sys.path.insert(0, sys.argv[3])
import numpy as np
import fofkit
with fofkit.open(sys.argv[1]) as s:
    pos, vel, mass = s.get("POS"), s.get("VEL"), np.ascontiguousarray(s.get("MASS").ravel())
    ids = s.get("ID").ravel().astype(np.uint64)
    group = s.gid()[ids]
a = 0.25000278929342462
H = 0.1 * np.sqrt(0.3 / a**3 + 0.7)
G = 6.6743e-8 * 1.989e43 / (3.085678e21 * 1e10)
cat = fofkit.halos(pos, vel, group, mass=mass, ids=ids, box=50000.0, origin=0.0, periodic=True, G=G, unbind=True,
                   comoving=True, scale_factor=a, vel_scale=np.sqrt(a), hubble_flow=H * a, device="cpu")
names = [l for l in open(sys.argv[2]) if l.startswith("#")][-1].split()[1:]
t = np.loadtxt(sys.argv[2], ndmin=2)
for c in ("n_bound", "vmax", "sigma_v", "lambda", "phi_mbp"):
    assert np.allclose(cat[c], t[:, names.index(c)], rtol=2e-8), c
print("ok", cat["vmax"][:3])
PY
}

@test "mpirun: 3 ranks at z = 1 write the single-process catalogue (--unbind --so)" {
    need_series
    need_mpi halostats
    hdf52bin -t dark "$SERIES/snapshot_003.hdf5" | kdbuild | foflink -b 0.2 -o link3.fof
    mkgmin 3 link3.fof l.%r.fof
    mpirun -n 3 groups -m 20 --format=stream l.%r.fof -o g.%r.fof
    mpirun -n 3 halostats --unbind --so g.%r.fof -o d3.txt
    cmp <(sed 2d c3.txt) <(sed 2d d3.txt)
    halostats --format=hdf5 /dev/null 2>&1 | grep -q 'no HDF5' && return 0
    halostats --unbind --so --subhalos=levels --format=hdf5 s3.fof -o ref.hdf5
    mpirun -n 3 halostats --unbind --so --subhalos=levels --format=hdf5 g.%r.fof -o d3.hdf5
    # every dataset and attribute the same but IDs/ID: a run under mpirun reads no PID chunk, so its
    # members are named by their index in the snapshot, one process's by the snapshot's own IDs
    python3 - ref.hdf5 d3.hdf5 <<'PY'
import sys
import h5py, numpy as np
a, b = h5py.File(sys.argv[1]), h5py.File(sys.argv[2])
n = 0
def same(g, h, p):
    global n
    assert sorted(g.attrs) == sorted(h.attrs) and sorted(g) == sorted(h), p
    for k in g.attrs:
        assert np.array_equal(g.attrs[k], h.attrs[k]), (p, k)
    for k in g:
        if isinstance(g[k], h5py.Group):
            same(g[k], h[k], p + "/" + k)
        elif p + "/" + k != "/IDs/ID":
            assert np.array_equal(g[k][()], h[k][()]) and all(np.array_equal(g[k].attrs[q], h[k].attrs[q]) for q in g[k].attrs), p + "/" + k
            n += 1
same(a, b, "")
assert n > 15, n  # the Group datasets (one level: no subhalos)
PY
}

@test "a stream without units: --unbind, --format=hdf5 and --so --hubble refused in one line; the rest with nan for G" {
    printf '%s\n' "box 1" "p 0.1 0.1 0.1 0 0 0 1 1 0" "p 0.11 0.1 0.1 0 0 0 1 1 1" "sink 0 0" | mkstream | groups -m 2 -o u.fof
    msg="halostats: u.fof: the stream has no units (no unit keys in its SNAP), so"
    fix="would be in G = 1: give --G=VALUE (G in the output units), or make the stream with its units (tipsy2bin --kpc-unit and --msol-unit, gadget2bin, hdf52bin)"
    run -1 --separate-stderr halostats --unbind u.fof
    [ "$stderr" = "$msg --unbind $fix" ]
    [ -z "$output" ]
    run -1 --separate-stderr halostats --so --omega-m=0.3 --hubble=0.1 u.fof
    [ "$stderr" = "$msg --so --hubble $fix" ]
    if ! halostats --format=hdf5 /dev/null 2>&1 | grep -q 'no HDF5'; then
        run -1 --separate-stderr halostats --format=hdf5 --G=1 -o cat.hdf5 u.fof
        [ "$stderr" = "$msg --format=hdf5 would state units it does not have: make the stream with its units (tipsy2bin --kpc-unit and --msol-unit, gadget2bin, hdf52bin)" ]
        [ ! -e cat.hdf5 ]
    fi
    # what needs no G: counts, centres, radii; phi_mbp, vmax, lambda nan; SO from the box's density
    halostats u.fof >t.txt
    [ "$(col n t.txt) $(col mbp_id t.txt) $(col phi_mbp t.txt) $(col vmax t.txt) $(col lambda t.txt)" = "2 0 nan nan nan" ]
    [ "$(col r_vmax t.txt)" = "$(col rc_max t.txt)" ] # the other member, from the most bound
    halostats --so --omega-m=1 u.fof | grep -q '^# SO: '
    # G given: the stream's units are the user's, everything answered
    halostats --G=1 --unbind --bound-min=2 u.fof >g.txt
    [ "$(col n_bound g.txt)" = 2 ]
    [ "$(col vmax g.txt)" = "$(awk -v r="$(col r_vmax g.txt)" 'BEGIN { printf "%.9g", sqrt(2 / r) }')" ]
}

@test "--softening-max-phys caps a comoving stream's softening at eps_max / a (comoving), as Gadget's" {
    need_series
    # z = 3: the default 78.125 kpc/h comoving is 19.53 physical; capped at 10 physical: 10 / a comoving
    halostats --softening-max-phys=10 s1.fof | grep -q '^#   eps 39.99955372 kpc/h (0.05 box / n^(1/3); capped: --softening-max-phys / a)'
    # no cap where the physical softening is below it: the catalogue unchanged
    [ "$(halostats --softening-max-phys=20 s1.fof | grep -v '^#')" = "$(halostats s1.fof | grep -v '^#')" ]
    [ "$(halostats --softening-max-phys=10 s1.fof | col phi_mbp /dev/stdin)" != "$(col phi_mbp c1.txt)" ]
    printf '%s\n' "box 1" "p 0.1 0.1 0.1 0 0 0 1 1 0" "p 0.11 0.1 0.1 0 0 0 1 1 1" "sink 0 0" | mkstream | groups -m 2 -o p.fof
    run -2 halostats --softening-max-phys=1 p.fof
    [ "${lines[0]}" = "halostats: option --softening-max-phys applies to a comoving stream only (SNAP's comoving 1)" ]
}
