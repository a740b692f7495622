"""treecheck.py - halotree's Consistent-Trees output checked against what was built (treecat.py) or against fofkit's own catalogues, read with the fofkit package and with ytree; for tests/halotree.bats.

Usage:
  python3 treecheck.py built TREE [XDESC]    the trees of treecat.py's series (halotree's defaults;
                                             XDESC: X's descendant, Z by default, Y with --positions)
  python3 treecheck.py series TREE CAT...    the main branch of the largest halo of the last
                                             catalogue: snapshots, masses and redshifts as in CAT...
  python3 treecheck.py ytree TREE CAT...     the same through ytree
  python3 treecheck.py deep TREE CAT...      the trees back to the first catalogue: the largest
                                             halo's tree holds halos of every snapshot, and the
                                             main branches of the last snapshot's halos that
                                             reach the first, as the catalogues (with ytree too
                                             when it is installed)
Prints what it checked; exits 1 (with the reason) on the first difference.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import fofkit  # noqa: E402

NAMES = [["A", "B", "C", "D", "E"], ["A1", "D1", "F", "C1", "D2", "X"], ["A2", "CF", "D3", "D2b", "E2", "Z", "Y"]]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def built(path, xdesc="Z"):
    t = fofkit.read_tree(path)
    row = {(int(s), int(h)): k for k, (s, h) in enumerate(zip(t["Snap_num"], t["Orig_halo_ID"]))}
    name = {k: NAMES[s][h] for (s, h), k in row.items()}
    by = {NAMES[s][h]: k for (s, h), k in row.items()}
    if len(t) != 18:
        fail(f"{len(t)} halos, 18 built")
    desc = {}
    for k in range(len(t)):
        d = t.row_of([t["desc_id"][k]])[0] if t["desc_id"][k] >= 0 else -1
        desc[name[k]] = name[d] if d >= 0 else None
    want = {"A": "A1", "B": "A1", "C": "C1", "D": "D1", "E": "E2", "A1": "A2", "D1": "D3", "F": "CF", "C1": "CF",
            "D2": "D2b", "X": xdesc, "A2": None, "CF": None, "D3": None, "D2b": None, "E2": None, "Z": None, "Y": None}
    if desc != want:
        fail(f"descendants {desc}, built {want}")
    main = {name[k] for k in range(len(t)) if t["mmp?"][k] == 1}
    if main != {"A", "C", "D", "E", "A1", "D1", "C1", "D2", "X"}:
        fail(f"main progenitors {sorted(main)}")
    nprog = {name[k]: int(t["num_prog"][k]) for k in range(len(t))}
    for h, n in [("A1", 2), ("CF", 2), ("A2", 1), ("E2", 1), ("D2", 0), ("F", 0), ("D1", 1), (xdesc, 1),
                 ({"Z": "Y", "Y": "Z"}[xdesc], 0)]:
        if nprog[h] != n:
            fail(f"{h} has {nprog[h]} progenitors, built {n}")
    roots = sorted(name[r] for r in t.roots)
    if roots != sorted(["A2", "CF", "D3", "D2b", "E2", "Z", "Y"]):
        fail(f"roots {roots}")
    for h, r in [("B", "A2"), ("E", "E2"), ("F", "CF"), ("D2", "D2b")]:
        if t["Tree_root_ID"][by[h]] != t["id"][by[r]]:
            fail(f"{h}'s tree root is not {r}")
    mm = {name[k]: float(t["scale_of_last_MM"][k]) for k in range(len(t))}
    for h, a in [("A1", 0.5), ("A2", 0.5), ("CF", 1.0), ("D3", 0.0), ("C1", 0.0)]:
        if abs(mm[h] - a) > 1e-6:
            fail(f"{h}'s last major merger at a = {mm[h]}, built {a}")
    mp = {name[k]: (name[t.row_of([t["Mainprog_id"][k]])[0]] if t["Mainprog_id"][k] >= 0 else None) for k in range(len(t))}
    other = {"Z": "Y", "Y": "Z"}[xdesc]
    if (mp["A2"], mp["A1"], mp["CF"], mp["E2"], mp[xdesc], mp[other]) != ("A1", "A", "C1", "E", "X", None):
        fail(f"Mainprog_id: {mp}")
    branch = [name[k] for k in t.main_branch(by["A2"])]
    if branch != ["A2", "A1", "A"]:
        fail(f"A2's main branch {branch}")
    # the mass of the history, not of the moment: CF's main progenitor is C1 although F is heavier
    if t["Mvir"][by["F"]] <= t["Mvir"][by["C1"]] or [name[k] for k in t.progenitors(by["CF"])] != ["C1", "F"]:
        fail("CF's main progenitor is not C1 (most massive history) or F is not the heavier")
    if abs(t["Mvir"][by["A"]] - 100 * 1e8) > 1e-3 * 1e10 or t["Len"][by["A"]] != 100:
        fail(f"A's mass {t['Mvir'][by['A']]} Msun/h, Len {t['Len'][by['A']]}: 100 members of 1e8 Msun/h built")
    if t.units["Mvir"] != "Msun/h" or t.units["x"] != "Mpc/h":
        fail(f"units {t.units['Mvir']}, {t.units['x']}")
    print("built: 18 halos, 7 trees, every descendant, main progenitor and merger as built")


def catalogues(cats):
    import h5py

    out = []
    for c in cats:
        with h5py.File(c, "r") as f:
            h = f["Header"].attrs
            m = f["Group/GroupMass"][:] if h["Ngroups_Total"] > 0 else np.zeros(0)
            unit = f["Parameters"].attrs["UnitMass_in_g"] / 1.989e33  # Msun/h a mass unit (Gadget's per-h units)
            out.append((float(h["Redshift"]), m * unit))
    return out


def branch_of_largest(t):
    last = t["Snap_num"].max()
    rows = np.flatnonzero((t["Snap_num"] == last) & (t["Orig_halo_ID"] == 0))
    if len(rows) != 1:
        fail("no halo 0 in the last snapshot")
    return t.main_branch(rows[0])


def series(path, cats):
    t = fofkit.read_tree(path)
    cat = catalogues(cats)
    b = branch_of_largest(t)
    snaps = t["Snap_num"][b]
    if t.roots[0] != b[0]:
        fail("the first tree is not the largest halo's of the last snapshot")
    first = min(s for s in range(len(cat)) if len(cat[s][1]))  # the earliest snapshot with a halo
    if list(snaps) != list(range(len(cat) - 1, first - 1, -1)):
        fail(f"main branch through snapshots {[int(s) for s in snaps]}, halos exist from snapshot {first}")
    for k in b:
        s, h = t["Snap_num"][k], t["Orig_halo_ID"][k]
        z, m = cat[s]
        if abs(1 / t["scale"][k] - 1 - z) > 1e-6 * (1 + z) or abs(t["Mvir"][k] - m[h]) > 1e-6 * m[h]:
            fail(f"snapshot {s} halo {h}: z {1 / t['scale'][k] - 1}, Mvir {t['Mvir'][k]}; catalogue {z}, {m[h]}")
    print(f"series: main branch of the largest halo from z = {cat[snaps[0]][0]:.3g} back to z = "
          f"{cat[snaps[-1]][0]:.3g} (snapshots {[int(s) for s in snaps]}), masses and redshifts as the catalogues'")


def with_ytree(path, cats):
    import ytree

    a = ytree.load(path)
    a.set_selector("max_field_value", "mmp?")
    cat = catalogues(cats)
    root = a[0]
    if int(root["Snap_num"]) != len(cat) - 1 or int(root["Orig_halo_ID"]) != 0:
        fail("ytree's first tree is not the largest halo of the last snapshot")
    z = root["prog", "redshift"]
    m = root["prog", "mass"].to("Msun/h").d
    snaps = root["prog", "Snap_num"].astype(int)
    rows = root["prog", "Orig_halo_ID"].astype(int)
    first = min(s for s in range(len(cat)) if len(cat[s][1]))
    if list(snaps) != list(range(len(cat) - 1, first - 1, -1)):
        fail(f"ytree's main branch through snapshots {[int(s) for s in snaps]}, halos exist from snapshot {first}")
    for s, h, zz, mm in zip(snaps, rows, z, m):
        zc, mc = cat[s]
        if abs(zz - zc) > 1e-5 * (1 + zc) or abs(mm - mc[h]) > 1e-5 * mc[h]:
            fail(f"ytree: snapshot {s} halo {h}: z {zz}, mass {mm} Msun/h; catalogue {zc}, {mc[h]}")
    print(f"ytree: {a.size} trees; main branch of the largest halo over snapshots {[int(s) for s in snaps]}, z {np.round(z, 3)}")


def deep(path, cats):
    cat = catalogues(cats)
    t = fofkit.read_tree(path)
    last = len(cat) - 1
    root = branch_of_largest(t)[0]
    spans = sorted({int(s) for s in t["Snap_num"][t["Tree_root_ID"] == t["id"][root]]})
    if spans != list(range(len(cat))):
        fail(f"the largest halo's tree holds halos of snapshots {spans}")
    reach = []
    for k in np.flatnonzero(t["Snap_num"] == last):
        b = t.main_branch(k)
        if [int(s) for s in t["Snap_num"][b]] != list(range(last, -1, -1)):
            continue
        for r in b:
            s, h = t["Snap_num"][r], t["Orig_halo_ID"][r]
            z, m = cat[s]
            if abs(1 / t["scale"][r] - 1 - z) > 1e-6 * (1 + z) or abs(t["Mvir"][r] - m[h]) > 1e-6 * m[h]:
                fail(f"snapshot {s} halo {h}: z {1 / t['scale'][r] - 1}, Mvir {t['Mvir'][r]}; catalogue {z}, {m[h]}")
        reach.append(int(t["Orig_halo_ID"][k]))
    if not reach:
        fail(f"no main branch from snapshot {last} back to snapshot 0")
    reach.sort()
    print(f"deep: the largest halo's tree holds halos of snapshots {spans}; {len(reach)} main branches from "
          f"z = {cat[last][0]:.3g} to z = {cat[0][0]:.3g}, of halos {reach[:8]}")
    try:
        import ytree
    except ImportError:
        return
    a = ytree.load(path)
    a.set_selector("max_field_value", "mmp?")
    h = reach[0]
    k = np.flatnonzero((a["Snap_num"].astype(int) == last) & (a["Orig_halo_ID"].astype(int) == h))
    if len(k) != 1:
        fail(f"ytree: no tree of halo {h} of snapshot {last}")
    tr = a[k[0]]
    snaps, rows = tr["prog", "Snap_num"].astype(int), tr["prog", "Orig_halo_ID"].astype(int)
    z, m = tr["prog", "redshift"], tr["prog", "mass"].to("Msun/h").d
    if list(snaps) != list(range(last, -1, -1)):
        fail(f"ytree: halo {h}'s main branch through snapshots {[int(s) for s in snaps]}")
    for s, r, zz, mm in zip(snaps, rows, z, m):
        zc, mc = cat[s]
        if abs(zz - zc) > 1e-5 * (1 + zc) or abs(mm - mc[r]) > 1e-5 * mc[r]:
            fail(f"ytree: snapshot {s} halo {r}: z {zz}, mass {mm} Msun/h; catalogue {zc}, {mc[r]}")
    print(f"ytree: halo {h}'s main branch over snapshots {[int(s) for s in snaps]}, z {np.round(z, 3)}")


if __name__ == "__main__":
    what, tree = sys.argv[1], sys.argv[2]
    if what == "built":
        built(tree, *sys.argv[3:4])
    elif what == "series":
        series(tree, sys.argv[3:])
    elif what == "deep":
        deep(tree, sys.argv[3:])
    else:
        with_ytree(tree, sys.argv[3:])
