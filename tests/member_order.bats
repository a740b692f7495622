#!/usr/bin/env bats
# member_order.bats - halostats lists each halo's members most bound first (HDF5's IDs/MemberOrder, the stream's MORDER and MRANK), checked by numpy's brute-force energies; the same lists from 1 to 3 ranks and from CPU and GPU; halotree's --weight=auto weighs them by 1/rank.

bats_require_minimum_version 1.5.0

load mpi_helpers

PY=$BATS_TEST_DIRNAME/py
export PYTHONDONTWRITEBYTECODE=1

# A 2-level mock with units (setunits), linked and grouped once.
setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    mpi_probe
    mkuniverse -n 20000 -s 3 -o mock.std
    tipsy2bin mock.std | kdbuild | foflink -b 0.2,0.1 | setunits - -o link.fof
    groups -m 20 link.fof -o grp.fof
}

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
}

need_h5py() {
    halostats --format=hdf5 /dev/null 2>&1 | grep -q 'no HDF5' && skip "this build has no HDF5"
    python3 -c 'import h5py, numpy' 2>/dev/null || skip "python3 has no h5py"
}

# G and the softening given, every potential an exact sum (the numpy check's)
OPTS=(--G=1 --softening=0.002 --exact-max=100000)

@test "--unbind: each subhalo's members by binding energy (numpy's O(n^2) energies), the rest by distance" {
    need_h5py
    halostats "${OPTS[@]}" --unbind --format=hdf5 --snapshot=snap.hdf5 "$BATS_FILE_TMPDIR/grp.fof" -o cat.hdf5
    run -0 python3 "$PY/member_order.py" cat.hdf5 snap.hdf5 1 0.002
    echo "$output"
    [[ "$output" =~ ^cat.hdf5:\ binding_energy\ order:\ [0-9]+\ runs,\ 10[0-9]{3}\ members ]]
    # not the order by distance: the kinetic term counts
    run -1 python3 "$PY/member_order.py" cat.hdf5 snap.hdf5 1 0.002 radius
    [[ "$output" == *"radius run of group"*"out of order"* ]]
}

@test "potential centres without --unbind: nearest the most bound member first; --centre=com: by ID" {
    need_h5py
    halostats "${OPTS[@]}" --format=hdf5 --snapshot=snap.hdf5 "$BATS_FILE_TMPDIR/grp.fof" -o cat.hdf5
    run -0 python3 "$PY/member_order.py" cat.hdf5 snap.hdf5 1 0.002
    [[ "$output" == "cat.hdf5: radius order: "* ]]
    run -1 python3 "$PY/member_order.py" cat.hdf5 snap.hdf5 1 0.002 id
    halostats --G=1 --centre=com --format=hdf5 --snapshot=com.hdf5 "$BATS_FILE_TMPDIR/grp.fof" -o com_cat.hdf5
    run -0 python3 "$PY/member_order.py" com_cat.hdf5 com.hdf5 1 0.002
    [[ "$output" == "com_cat.hdf5: id order: "* ]]
    # the same members, in each run
    python3 -c 'import h5py, sys, numpy as np
a, b = (h5py.File(f)["IDs/ID"][:] for f in sys.argv[1:])
assert len(a) == len(b) > 0 and not np.array_equal(a, b) and np.array_equal(np.sort(a), np.sort(b))' cat.hdf5 com_cat.hdf5
}

@test "--format=stream: MORDER and MRANK, each group's members in the HDF5 catalogue's order" {
    need_h5py
    # one level, so that the HDF5 catalogue's groups have no subhalos: their runs are whole groups
    tipsy2bin "$BATS_FILE_TMPDIR/mock.std" | kdbuild | foflink -b 0.2 | setunits - | groups -m 20 -o g1.fof
    halostats "${OPTS[@]}" --format=stream g1.fof -o cat.fof
    halostats "${OPTS[@]}" --format=hdf5 g1.fof -o cat.hdf5
    run -0 fofdump -c MORDER cat.fof
    [[ "$output" == *"order radius"* ]]
    fofdump -c MRANK -l 0 cat.fof >rank.txt
    fofdump -c GID -l 0 cat.fof >gid.txt
    python3 -c 'import h5py, sys, numpy as np
rank = np.loadtxt(sys.argv[1], dtype=np.int64); gid = np.loadtxt(sys.argv[2], dtype=np.int64)
ids = h5py.File(sys.argv[3])["IDs/ID"][:]
assert len(rank) == len(gid) and np.array_equal(rank > 0, gid > 0)
# the HDF5 runs: group by group, each in MRANK order (IDs are original indices: no PID chunk)
order = np.lexsort((rank, gid))[np.count_nonzero(gid == 0):]
assert np.array_equal(order, ids), "MRANK is not the HDF5 order"
print(len(ids))' rank.txt gid.txt cat.hdf5
    # --centre=com: no order to record
    halostats --G=1 --centre=com --format=stream g1.fof -o com.fof
    run -0 fofdump com.fof
    [[ "$output" != *MRANK* && "$output" != *MORDER* ]]
    # a stream catalogue read again: its MORDER and MRANK replaced, not doubled
    halostats "${OPTS[@]}" --format=stream cat.fof -o again.fof
    [ "$(fofdump again.fof | grep -c '^MRANK')" -eq 1 ]
    cmp <(fofdump -c MRANK -l 0 again.fof) rank.txt
}

@test "1, 2 and 3 ranks: the single process's HDF5 lists, byte for byte (nearest first)" {
    need_h5py
    need_mpi halostats
    halostats --format=hdf5 "$BATS_FILE_TMPDIR/grp.fof" -o ref.hdf5
    python3 -c 'import h5py, sys; assert h5py.File(sys.argv[1])["IDs"].attrs["MemberOrder"] == b"radius"' ref.hdf5
    for R in 1 2 3; do
        mkgmin "$R" "$BATS_FILE_TMPDIR/link.fof" l$R.%r.fof
        mpirun -n "$R" groups -m 20 --format=stream l$R.%r.fof -o g$R.%r.fof
        mpirun -n "$R" halostats --format=hdf5 g$R.%r.fof -o d$R.hdf5
        cmp ref.hdf5 d$R.hdf5
    done
}

@test "--device=gpu: the CPU's lists, byte for byte (skipped without a GPU)" {
    need_h5py
    halostats --device=gpu --format=hdf5 "$BATS_FILE_TMPDIR/grp.fof" -o gpu.hdf5 2>/dev/null || skip "no usable GPU"
    halostats --device=cpu --format=hdf5 "$BATS_FILE_TMPDIR/grp.fof" -o cpu.hdf5
    cmp cpu.hdf5 gpu.hdf5
    halostats --device=gpu --unbind --format=hdf5 "$BATS_FILE_TMPDIR/grp.fof" -o gpub.hdf5
    halostats --device=cpu --unbind --format=hdf5 "$BATS_FILE_TMPDIR/grp.fof" -o cpub.hdf5
    # the bound sets may differ by the trees' errors at e = 0 (halostats(1)); each shared subhalo's list does not
    python3 -c 'import h5py, sys, numpy as np
a, b = (h5py.File(f) for f in sys.argv[1:])
same = 0
la, lb = a["Subhalo/SubhaloLen"][:], b["Subhalo/SubhaloLen"][:]
oa, ob = np.concatenate(([0], np.cumsum(a["Group/GroupLen"][:]))), np.concatenate(([0], np.cumsum(b["Group/GroupLen"][:])))
for g in range(len(oa) - 1):
    fa, fb = a["Group/GroupFirstSub"][g], b["Group/GroupFirstSub"][g]
    if fa < 0 or fb < 0 or la[fa] != lb[fb]: continue
    ia, ib = a["IDs/ID"][oa[g]:oa[g] + la[fa]], b["IDs/ID"][ob[g]:ob[g] + lb[fb]]
    if set(ia) == set(ib):
        assert np.array_equal(ia, ib), g
        same += 1
assert same > 10
print(same)' cpub.hdf5 gpub.hdf5
}

# A halo X whose 20 central members (IDs 20-39) go to Y while its 40 outer ones go to Z: by
# count Z is its descendant, by 1/rank of halostats' lists (nearest first) Y.
@test "halotree --weight=auto: 1/rank on halostats' ordered lists picks the halo that receives the core" {
    need_h5py
    python3 -c '
for k in range(60): print("p %.4f 0.5 0.5 0 0 0 1 1 %d" % (0.3 + 0.005 * k, k))' >s0.txt
    python3 -c '
for k in range(60):
    core = 20 <= k < 40
    x = 0.3 + 0.005 * k
    print("p %.4f %.1f 0.5 0 0 0 1 1 %d" % (x if core or k < 20 else x - 0.1, 0.2 if core else 0.8, k))' >s1.txt
    for s in 0 1; do
        mkstream s$s.txt | setunits --time=0.$((s + 5)) - | kdbuild | foflink -l 0.008 | groups -m 10 -o g$s.fof
        halostats --format=hdf5 g$s.fof -o c_00$s.hdf5
        halostats --centre=com --format=hdf5 g$s.fof -o id_00$s.hdf5
    done
    # prog_snap prog desc_snap desc count score is_desc is_main; desc 0 is Z (40), 1 is Y (20)
    run -0 halotree -v --links c_000.hdf5 c_001.hdf5
    [[ "$output" == *$'\n0 0 1 0 40 1.08451 0 0\n0 0 1 1 20 3.59536 1 1\n'* ]]
    [[ "${lines[-1]}" == *"weight 1/rank;"* ]]
    run -0 halotree --weight=count --links c_000.hdf5 c_001.hdf5
    [[ "$output" == *$'\n0 0 1 0 40 40 1 1\n0 0 1 1 20 20 0 0' ]]
    # lists by ID (centres of mass): counts
    run -0 halotree -v --links id_000.hdf5 id_001.hdf5
    [[ "$output" == *$'\n0 0 1 0 40 40 1 1\n0 0 1 1 20 20 0 0\n'* ]]
    [[ "${lines[-1]}" == *"weight count;"* ]]
}
