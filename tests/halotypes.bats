#!/usr/bin/env bats
# halotypes.bats - halostats' members by type (n_gas ... m_star; HDF5 GroupLenType, GroupMassType) and zoom-in contamination (n_contam, m_contam) in text, CSV, stream and HDF5, under mpirun too; halomf and fofmap --clean.

bats_require_minimum_version 1.5.0

load mpi_helpers
load snap_helpers

DATA=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}
PY=$BATS_TEST_DIRNAME/../python

setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    mpi_probe
    if [ -r "$DATA/test4-zoom.std" ]; then
        tipsy2bin "$DATA/test4-zoom.std" | kdbuild | foflink -b 0.2 -o zoom.fof 2>/dev/null
        groups -m 20 zoom.fof -o zoomg.fof
        halostats zoomg.fof -o zoom.txt
    fi
    return 0
}

setup() {
    cd "$BATS_FILE_TMPDIR" || return 1
}

# Column NAME of a halostats text catalogue FILE, one value a row.
col() {
    awk -v c="$1" '/^# level /{for (i = 2; i <= NF; i++) if ($i == c) k = i - 1; next} /^#/{next} {print $k}' "$2"
}

need_zoom() {
    [ -r "$DATA/test4-zoom.std" ] || skip "no $DATA/test4-zoom.std"
}

@test "zoom-in (test4-zoom.std): group 2 is mostly low-resolution particles, the cluster is clean" {
    need_zoom
    paste <(col n zoom.txt) <(col mass zoom.txt) <(col n_contam zoom.txt) <(col m_contam zoom.txt) \
        <(col n_dark zoom.txt) <(col m_dark zoom.txt) <(col n_gas zoom.txt) <(col n_star zoom.txt) >t.tsv
    [ "$(wc -l <t.tsv)" -eq 98 ]
    # the cluster: 16242 members, no contaminant
    awk 'NR == 1 && !($1 == 16242 && $3 == 0 && $4 == 0) {exit 1}' t.tsv
    # group 2: 3527 members, mass 0.00903, most of it in contaminants
    awk 'NR == 2 && !($1 == 3527 && $3 > 1000 && $4 / $2 > 0.5) {exit 1}' t.tsv
    # every halo all dark (a dark-matter-only snapshot): the dark mass the mass; contaminants among them
    awk '!($5 == $1 && $7 == 0 && $8 == 0 && $6 == $2 && $3 <= $1 && $4 <= $2) {exit 1}' t.tsv
    grep -Eq "^# +[0-9]+ n_contam 1 +contaminants: dark members heavier than m_hires \(1 \+ 1e-6\)" zoom.txt
}

@test "the contaminants of every halo against numpy: dark members heavier than the least dark mass (1 + 1e-6)" {
    need_zoom
    python3 -c 'import numpy' 2>/dev/null || skip "no numpy"
    PYTHONPATH=$PY python3 - zoomg.fof zoom.txt <<'PY'
import sys
import numpy as np
import fofkit
with fofkit.open(sys.argv[1]) as s:
    m = s.get("MASS").ravel().astype(np.float64)
    ids = s.get("ID").ravel().astype(np.int64)
    g = s.gid()[ids]
hires = m.min()
c = m > hires * (1 + 1e-6)
names = [l for l in open(sys.argv[2]) if l.startswith("# level ")][-1].split()[1:]
t = np.loadtxt(sys.argv[2], ndmin=2)
ng = t.shape[0]
nc = np.bincount(g[c], minlength=ng + 1)[1:]
mc = np.bincount(g[c], weights=m[c], minlength=ng + 1)[1:]
assert (t[:, names.index("n_contam")] == nc).all()
assert np.allclose(t[:, names.index("m_contam")], mc, rtol=1e-7, atol=0)
assert nc[1] > 0.5 * t[1, names.index("n")] and nc[0] == 0
PY
}

@test "text, CSV and stream agree on the new columns; a stream without TYPE takes SNAP's counts by type" {
    need_zoom
    halostats --format=csv zoomg.fof -o z.csv
    halostats --format=stream zoomg.fof -o zs.fof
    head -1 z.csv | grep -q ',n_gas,n_dark,n_star,m_gas\[mass\],m_dark\[mass\],m_star\[mass\],n_contam,m_contam\[mass\]$'
    k=$(head -1 z.csv | tr , '\n' | grep -n '^n_contam$' | cut -d: -f1)
    [ "$(cut -d, -f"$k" z.csv | sed 1d | paste -sd' ')" = "$(col n_contam zoom.txt | paste -sd' ')" ]
    fofdump --head=HCOL zs.fof 2>/dev/null | grep -q "n_contam" || fofdump zs.fof | grep -q HCOL
    halomf --column=m_contam --min=1e-7 zs.fof | grep -q "column m_contam"
    # mkuniverse writes no TYPE: SNAP's ndark says all dark
    mkuniverse -n 3000 -s 3 | tipsy2bin | kdbuild | foflink -b 0.2 | groups -m 10 >u.fof
    halostats u.fof >u.txt
    [ "$(col n u.txt | paste -sd' ')" = "$(col n_dark u.txt | paste -sd' ')" ]
    [ "$(col n_contam u.txt | sort -u)" = 0 ]
}

@test "a hydro snapshot (Gadget-4, gas and dark): n_gas + n_dark = n; HDF5 GroupLenType and GroupMassType are the text's" {
    need_hdf5
    [ -r "$DATA/g4-lcdm-gas-z0.hdf5" ] || skip "no $DATA/g4-lcdm-gas-z0.hdf5"
    python3 -c 'import h5py' 2>/dev/null || skip "no h5py"
    hdf52bin "$DATA/g4-lcdm-gas-z0.hdf5" | kdbuild | foflink -b 0.2 2>/dev/null | groups -m 20 >gas.fof
    halostats gas.fof -o gas.txt
    halostats --format=hdf5 gas.fof -o gas.h5
    python3 - gas.txt gas.h5 <<'PY'
import sys
import numpy as np
import h5py
names = [l for l in open(sys.argv[1]) if l.startswith("# level ")][-1].split()[1:]
t = np.loadtxt(sys.argv[1], ndmin=2)
t = t[t[:, names.index("level")] == 0]
c = lambda n: t[:, names.index(n)]
assert (c("n_gas") + c("n_dark") + c("n_star") == c("n")).all()
assert (c("n_gas") > 0).sum() > 2 and (c("n_star") == 0).all() and (c("n_contam") == 0).all()
assert np.allclose(c("m_gas") + c("m_dark"), c("mass"), rtol=1e-8)
with h5py.File(sys.argv[2]) as f:
    g = f["Group"]
    lt, mt = g["GroupLenType"][:], g["GroupMassType"][:]
    assert lt.shape == (len(t), 6) and mt.shape == (len(t), 6) and lt.dtype == np.int64
    assert (lt[:, 0] == c("n_gas")).all() and (lt[:, 1] == c("n_dark")).all() and (lt[:, 4] == c("n_star")).all()
    assert (lt[:, [2, 3, 5]] == 0).all()
    # the text's %.9g of the same doubles, times the unit
    u = 1e10  # Msun/h per 1e10 Msun/h
    assert np.allclose(mt[:, 0] * u, c("m_gas"), rtol=1e-8) and np.allclose(mt[:, 1] * u, c("m_dark"), rtol=1e-8)
    a = g["GroupMassType"].attrs
    assert a["a_scaling"] == 0 and a["h_scaling"] == -1
    assert (g["GroupLenContam"][:] == 0).all() and g["GroupMassContam"].shape == (len(t),)
PY
}

@test "under mpirun the new columns are one process's (test4-zoom, 3 ranks)" {
    need_zoom
    need_mpi halostats
    mkgmin 3 zoom.fof "z.%r.fof"
    mpirun -n 3 groups -m 20 --format=stream "z.%r.fof" -o "zg.%r.fof"
    mpirun -n 3 halostats "zg.%r.fof" -o zd.txt
    for c in n_dark m_dark n_gas n_contam m_contam; do
        [ "$(col "$c" zd.txt | paste -sd' ')" = "$(col "$c" zoom.txt | paste -sd' ')" ]
    done
    [ "$(col n_contam zd.txt | sed -n 2p)" -gt 1000 ]
}

@test "halomf --clean[=F] leaves out the contaminated halos; fofmap --clean circles none of them" {
    need_zoom
    halomf --min=1e-6 zoom.txt >all.mf
    halomf --min=1e-6 --clean zoom.txt >clean.mf
    halomf --min=1e-6 --clean=0.5 zoom.txt >half.mf
    n_clean=$(paste <(col n_contam zoom.txt) | awk '$1 == 0' | wc -l)
    n_half=$(paste <(col m_contam zoom.txt) <(col mass zoom.txt) | awk '$1 / $2 <= 0.5' | wc -l)
    grep -q "^# 98 of 98 rows" all.mf
    grep -q "^# $n_clean of $n_clean rows" clean.mf
    grep -q "^# --clean=0: $((98 - n_clean)) halos left out" clean.mf
    grep -q "^# $n_half of $n_half rows" half.mf
    [ "$n_clean" -lt "$n_half" ] && [ "$n_half" -lt 98 ]
    run -2 halomf --clean=2 zoom.txt
    [[ "$output" == *"--clean"* ]]
    # a catalogue without the columns: a message, not a silent count
    awk '/^# level /{print "# level host id n mass x y z"; exit}' zoom.txt >old.txt
    grep -v "^#" zoom.txt | cut -d' ' -f1-8 >>old.txt
    run -1 halomf --clean old.txt
    [[ "$output" == *"no column 'm_contam'"* ]]
    if fofmap --help >/dev/null && halostats --format=stream zoomg.fof -o zs.fof; then
        fofmap -v --clean -n 100 zs.fof -o c.png 2>c.err || skip "no pictures (a build without cairo)"
        grep -q "fofmap: --clean=0: $((98 - n_clean)) halos left out" c.err
        grep -q "halos circled of $n_clean\$" c.err
    fi
}
