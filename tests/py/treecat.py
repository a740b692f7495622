"""treecat.py - a series of halo catalogues with a known merger history, in the HDF5 layout halostats --format=hdf5 writes (h5py), for tests/halotree.bats.

Usage: python3 treecat.py DIR
Writes DIR/cat_000.hdf5, cat_001.hdf5, cat_002.hdf5 (a = 0.25, 0.5, 1), their snapshots
DIR/snapshot_000.hdf5 .. snapshot_002.hdf5 (Gadget-4 HDF5: 620 particles of type 1, each halo's
members near its GroupPos, nearer the earlier they are listed, the others 100 kpc/h away), and for
the bad-input tests DIR/other_001.hdf5 (snapshot 1 of another run: no ID in common),
DIR/noids_001.hdf5 (no IDs/ID); and DIR/subfind_000.hdf5 .. subfind_002.hdf5, the catalogues as
SUBFIND writes them (one subhalo a group, no SubhaloFofLevel), and the same as two files each as
Gadget-4 writes them, DIR/fof_subhalo_tab_000.0.hdf5 and .1.hdf5, ... (two groups in file 0, the
IDs split at 55 regardless).
Halos (particle indices; the file's IDs are 1000 + index; 1e8 Msun/h a particle; rows in this order):
  snapshot 0: A 0-99, B 100-149, C 200-229, D 300-339, E 400-419
  snapshot 1: A1 0-139 (A and 40 of B: a major merger), D1 300-324 and D2 325-339 (D split),
              F 500-534 (new), C1 200-229, X 605-619 then 600-604 (E is missing; in snapshot 1 X's
              600-604 lie at its centre, its 605-619 farther out)
  snapshot 2: A2 A1 and 3 of D2 (a fly-by's link), CF C1 and F (C1 the main progenitor by its
              history, F the more massive), D3 300-324, D2b 325-336, E2 400-419 (E back after a
              gap), Z 605-619 and Y 600-604 (X split: Z by count and by 1/rank in the list's order, Y
              by 1/rank by distance from X's centre)
"""

import os
import sys

import h5py
import numpy as np

SNAPS = [
    (0.25, [("A", range(0, 100)), ("B", range(100, 150)), ("C", range(200, 230)), ("D", range(300, 340)),
            ("E", range(400, 420))]),
    (0.5, [("A1", range(0, 140)), ("D1", range(300, 325)), ("F", range(500, 535)), ("C1", range(200, 230)),
           ("D2", range(325, 340)), ("X", list(range(605, 620)) + list(range(600, 605)))]),
    (1.0, [("A2", list(range(0, 140)) + [337, 338, 339]), ("CF", list(range(200, 230)) + list(range(500, 535))),
           ("D3", range(300, 325)), ("D2b", range(325, 337)), ("E2", range(400, 420)), ("Z", range(605, 620)),
           ("Y", range(600, 605))]),
]
PMASS = 0.01  # 1e10 Msun/h units


def write(path, a, halos, id_offset=1000, ids=True, subfind=False):
    with h5py.File(path, "w") as f:
        h = f.create_group("Header").attrs
        ng = len(halos)
        n = sum(len(m) for _, m in halos)
        for k, v in [("Ngroups_ThisFile", ng), ("Ngroups_Total", ng), ("Nsubhalos_ThisFile", 0),
                     ("Nsubhalos_Total", 0), ("Nids_ThisFile", n), ("Nids_Total", n)]:
            h[k] = np.int64(v)
        h["NumFiles"] = np.int32(1)
        h["BoxSize"], h["Time"], h["Redshift"] = 1000.0, a, 1 / a - 1
        h["HubbleParam"], h["Omega0"], h["OmegaLambda"] = 0.7, 0.3, 0.7
        p = f.create_group("Parameters").attrs
        p["UnitLength_in_cm"], p["UnitMass_in_g"], p["UnitVelocity_in_cm_per_s"] = 3.085678e21, 1.989e43, 1e5
        p["HubbleParam"], p["ComovingIntegrationOn"] = 0.7, np.int32(1)
        g = f.create_group("Group")
        g["GroupLen"] = np.array([len(m) for _, m in halos], dtype=np.int64)
        g["GroupMass"] = np.array([len(m) * PMASS for _, m in halos])
        g["GroupPos"] = np.array([[10.0 * k, 20.0, 30.0] for k in range(ng)])
        g["GroupVel"] = np.zeros((ng, 3))
        g["GroupFirstSub"] = -np.ones(ng, dtype=np.int64)
        g["GroupNsubs"] = np.zeros(ng, dtype=np.int64)
        s = f.create_group("Subhalo")
        if subfind:  # SUBFIND's layout: one subhalo a group, the whole group, no SubhaloFofLevel
            h["Nsubhalos_ThisFile"] = h["Nsubhalos_Total"] = np.int64(ng)
            g["GroupFirstSub"][:] = np.arange(ng)
            g["GroupNsubs"][:] = 1
            s["SubhaloLen"] = g["GroupLen"][:]
            s["SubhaloGroupNr"] = np.arange(ng, dtype=np.int64)
            s["SubhaloMass"], s["SubhaloPos"], s["SubhaloVel"] = g["GroupMass"][:], g["GroupPos"][:], g["GroupVel"][:]
            s["SubhaloVmax"] = np.full(ng, 100.0)
        if ids:
            f.create_group("IDs")["ID"] = np.concatenate([np.asarray(list(m), dtype=np.int64) for _, m in halos]) + id_offset


NPART = 620


def write_snapshot(path, a, halos):
    """A Gadget-4 style snapshot: each halo's members at its GroupPos plus 0.01 kpc/h x their place in
    the list (X of snapshot 1: its last five members at the centre, the others 5 kpc/h out), every
    other particle 100 kpc/h above the box's centre."""
    pos = np.tile([500.0, 500.0, 600.0], (NPART, 1))
    for row, (name, members) in enumerate(halos):
        centre = np.array([10.0 * row, 20.0, 30.0])
        for j, i in enumerate(members):
            off = 0.01 * (j + 1)
            if name == "X":
                off = 0.001 * (j - 14) if j >= 15 else 5.0 + 0.01 * j
            pos[i] = centre + [off, 0, 0]
    with h5py.File(path, "w") as f:
        h = f.create_group("Header").attrs
        h["NumPart_ThisFile"] = np.array([0, NPART, 0, 0, 0, 0], dtype=np.uint32)
        h["NumPart_Total"] = np.array([0, NPART, 0, 0, 0, 0], dtype=np.uint64)
        h["MassTable"] = np.array([0, 0.01, 0, 0, 0, 0])
        h["BoxSize"], h["Time"], h["Redshift"], h["NumFilesPerSnapshot"] = 1000.0, a, 1 / a - 1, np.int32(1)
        p = f.create_group("PartType1")
        p["Coordinates"] = pos
        p["Velocities"] = np.zeros((NPART, 3), dtype=np.float32)
        p["ParticleIDs"] = np.arange(NPART, dtype=np.uint64) + 1000


def split(path, first, ngroups_0, nids_0):
    """Gadget-4's layout of several files: first (a one-file catalogue) written again as
    path.0.hdf5 and path.1.hdf5, its first ngroups_0 groups (and their subhalos) in file 0, the
    rest in file 1, and the IDs split at nids_0, apart from the groups as Gadget-4 splits them."""
    with h5py.File(first, "r") as f:
        ng = int(f["Header"].attrs["Ngroups_Total"])
        ns = int(f["Header"].attrs["Nsubhalos_Total"])
        sub_grp = f["Subhalo/SubhaloGroupNr"][:] if ns else np.zeros(0, int)
        ns_0 = int((sub_grp < ngroups_0).sum())
        nids = int(f["Header"].attrs["Nids_Total"])
        for k, (g, s, i) in enumerate([(slice(0, ngroups_0), slice(0, ns_0), slice(0, nids_0)),
                                       (slice(ngroups_0, ng), slice(ns_0, ns), slice(nids_0, nids))]):
            with h5py.File(f"{path}.{k}.hdf5", "w") as o:
                for grp in ("Header", "Parameters"):
                    o.create_group(grp)
                    for a, v in f[grp].attrs.items():
                        o[grp].attrs[a] = v
                h = o["Header"].attrs
                h["NumFiles"] = np.int32(2)
                h["Ngroups_ThisFile"] = np.int64(g.stop - g.start)
                h["Nsubhalos_ThisFile"] = np.int64(s.stop - s.start)
                h["Nids_ThisFile"] = np.int64(i.stop - i.start)
                for grp, sl in (("Group", g), ("Subhalo", s), ("IDs", i)):
                    o.create_group(grp)
                    if sl.stop > sl.start:
                        for name, d in f[grp].items():
                            o[grp][name] = d[sl]


def main(d):
    for k, (a, halos) in enumerate(SNAPS):
        write(os.path.join(d, f"cat_{k:03d}.hdf5"), a, halos)
        write_snapshot(os.path.join(d, f"snapshot_{k:03d}.hdf5"), a, halos)
        write(os.path.join(d, f"subfind_{k:03d}.hdf5"), a, halos, subfind=True)
        split(os.path.join(d, f"fof_subhalo_tab_{k:03d}"), os.path.join(d, f"subfind_{k:03d}.hdf5"), 2, 55)
    write(os.path.join(d, "other_001.hdf5"), 0.5, SNAPS[1][1], id_offset=10**6)
    write(os.path.join(d, "noids_001.hdf5"), 0.5, SNAPS[1][1], ids=False)


if __name__ == "__main__":
    main(sys.argv[1])
