"""halocat_check.py - checks halostats' HDF5 catalogue and groups' .grp through readers fofkit did not write (h5py, pynbody, yt).

Usage (tests/halocat.bats runs it; the fofkit package comes from python/ of the repository):
    python3 halocat_check.py h5 CAT.hdf5 STREAM TEXT       the datasets against the stream and halostats' text
    python3 halocat_check.py pynbody CAT.hdf5 STREAM TEXT  a group-ordered Gadget-4 snapshot beside CAT, opened
                                                           with pynbody: its halos, subhalos and their members
    python3 halocat_check.py yt CAT.0.hdf5 STREAM TEXT     yt.load(CAT): groups, subhalos, member IDs
    python3 halocat_check.py grp SNAP.std STREAM TEXT      pynbody.load(SNAP.std).halos() reads SNAP.grp
STREAM is the output of groups (levels 0 and 1), TEXT halostats' text output of it. Prints what
differs and exits 1, or prints a summary and exits 0.
"""

import os
import sys

import warnings

import numpy as np

warnings.simplefilter("ignore")  # the readers warn about units a fofkit catalogue does not hold

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import fofkit  # noqa: E402

GTYPE = {0: 0, 1: 1, 2: 4}  # fofkit's particle types (gas, dark, star) as Gadget's
failures = []
# halostats' text has 9 significant digits: a position near the box's edge (|x| ~ box / 2 in a box
# centred on 0) is off by up to ~5e-10 box, large against a small position measured from the corner
POS_ATOL = 1e-8


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def close(a, b, what, rtol=1e-8, atol=1e-12):
    """Values from halostats' text (9 significant digits) against binary64 ones."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    check(a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol), "%s: %s vs %s" % (what, a.ravel()[:6], b.ravel()[:6]))


def text_table(path):
    """halostats' text output: {level: structured rows by id}."""
    lines = open(path).read().splitlines()
    names = [ln for ln in lines if ln.startswith("#")][-1][1:].split()
    rows = np.array([ln.split() for ln in lines if not ln.startswith("#")], dtype=np.float64)
    table = {n: rows[:, k] for k, n in enumerate(names)}
    return {lv: {n: v[table["level"] == lv] for n, v in table.items()} for lv in (0, 1)}


def load(stream_path, text_path):
    s = fofkit.open(stream_path)
    snap = s.snap
    t = text_table(text_path)
    origin = float(snap["origin"])
    return s, snap, t, origin


def check_h5(cat_path, s, snap, t, origin):
    import h5py

    f = h5py.File(cat_path, "r")
    h = f["Header"].attrs
    g, sub = f["Group"], f["Subhalo"]
    ng, ns = len(t[0]["id"]), len(t[1]["id"])
    check(h["Ngroups_Total"] == ng and h["Ngroups_ThisFile"] == ng, "Ngroups")
    check(h["Nsubhalos_Total"] == ns and h["Nsubgroups_Total"] == ns, "Nsubhalos")
    check(h["NumFiles"] == 1, "NumFiles")
    check(h["BoxSize"] == float(snap["box"]), "BoxSize")
    check(h["Nids_Total"] == t[0]["n"].sum(), "Nids_Total")
    close(g["GroupLen"][()], t[0]["n"], "GroupLen")
    close(g["GroupMass"][()], t[0]["mass"], "GroupMass")
    close(g["GroupPos"][()], np.stack([t[0][a] - origin for a in ("xc", "yc", "zc")], 1), "GroupPos", atol=POS_ATOL)
    close(g["GroupCM"][()], np.stack([t[0][a] - origin for a in ("x", "y", "z")], 1), "GroupCM", atol=POS_ATOL)
    close(g["GroupVel"][()], np.stack([t[0][a] for a in ("vx", "vy", "vz")], 1), "GroupVel")
    close(g["GroupLenType"][()].sum(1), t[0]["n"], "GroupLenType sums")
    ids, typ = s.ids().astype(np.int64), s.get("TYPE")[:, 0]
    lt = np.zeros((ng + 1, 6), np.int64)
    np.add.at(lt, (s.gid(0)[ids], np.vectorize(GTYPE.get)(typ)), 1)
    check(np.array_equal(g["GroupLenType"][()], lt[1:]), "GroupLenType against the TYPE chunk")
    time = float(snap["time"])
    cosmo = snap["periodic"] == "1" and 0 < time <= 1
    check(h["Time"] == time and h["Redshift"] == (1 / time - 1 if cosmo else 0), "Time and Redshift")
    close(g["GroupMassType"][()].sum(1), t[0]["mass"], "GroupMassType sums", rtol=1e-6)
    # Subhalos: host by host; SubhaloFofID names the level 1 row of the text
    fid = sub["SubhaloFofID"][()]
    check(sorted(fid) == list(range(1, ns + 1)), "SubhaloFofID is a permutation")
    row = fid - 1
    close(sub["SubhaloGroupNr"][()], t[1]["host"][row] - 1, "SubhaloGroupNr")
    check(np.array_equal(sub["SubhaloGrNr"][()], sub["SubhaloGroupNr"][()]), "SubhaloGrNr")
    check(np.all(np.diff(sub["SubhaloGroupNr"][()]) >= 0), "Subhalos come host by host")
    close(sub["SubhaloLen"][()], t[1]["n"][row], "SubhaloLen")
    close(sub["SubhaloMass"][()], t[1]["mass"][row], "SubhaloMass")
    close(sub["SubhaloPos"][()], np.stack([t[1][a][row] - origin for a in ("xc", "yc", "zc")], 1), "SubhaloPos", atol=POS_ATOL)
    close(sub["SubhaloVelDisp"][()], t[1]["sigma_v"][row] / np.sqrt(3), "SubhaloVelDisp")
    close(sub["SubhaloVmax"][()], t[1]["vmax"][row], "SubhaloVmax")
    close(sub["SubhaloHalfmassRad"][()], t[1]["r_half"][row], "SubhaloHalfmassRad")
    close(sub["SubhaloIDMostbound"][()], t[1]["mbp_id"][row], "SubhaloIDMostbound")
    nsubs = np.bincount(sub["SubhaloGroupNr"][()], minlength=ng)
    check(np.array_equal(g["GroupNsubs"][()], nsubs), "GroupNsubs")
    first = g["GroupFirstSub"][()]
    check(np.all((first == -1) == (nsubs == 0)), "GroupFirstSub is -1 exactly where there are no subhalos")
    for gi in np.flatnonzero(nsubs):
        check(np.all(sub["SubhaloGroupNr"][first[gi]:first[gi] + nsubs[gi]] == gi), "GroupFirstSub of %d" % gi)
    # IDs/ID: group by group, in a group subhalo by subhalo, then the rest
    ids = f["IDs/ID"][()]
    gid0, gid1 = s.gid(0), s.gid(1)
    start = np.concatenate([[0], np.cumsum(g["GroupLen"][()])])
    # the offsets, type by type, in the group-ordered snapshot: IDs/ID's order within each type
    gtype = np.zeros(int(snap["nsource"]), np.int64)
    gtype[s.ids().astype(np.int64)] = np.vectorize(GTYPE.get)(s.get("TYPE")[:, 0])
    before = np.zeros((len(ids) + 1, 6), np.int64)  # before[i, t]: members of type t among ids[:i]
    before[1:] = np.cumsum(gtype[ids][:, None] == np.arange(6), axis=0)
    goff, soff = g["GroupOffsetType"][()], sub["SubhaloOffsetType"][()] if ns else None
    for gi in range(ng):
        run = ids[start[gi]:start[gi + 1]]
        check(np.array_equal(np.sort(run), np.flatnonzero(gid0 == gi + 1)), "IDs of group %d" % (gi + 1))
        check(np.array_equal(goff[gi], before[start[gi]]), "GroupOffsetType of group %d" % (gi + 1))
        at = start[gi]
        for k in range(first[gi], first[gi] + nsubs[gi]) if nsubs[gi] else ():
            n = sub["SubhaloLen"][k]
            check(np.array_equal(ids[at:at + n], np.flatnonzero(gid1 == fid[k])), "IDs of subhalo %d" % k)
            check(np.array_equal(soff[k], before[at]), "SubhaloOffsetType of subhalo %d" % k)
            at += n
    print("h5py: %d groups, %d subhalos, %d member IDs agree with the stream and the text" % (ng, ns, len(ids)))


def write_gadget4_snapshot(path, s, snap, origin, cat_path):
    """The stream's particles as a Gadget-4 HDF5 snapshot in the catalogue's group order (type by
    type: the order of IDs/ID, then the ungrouped particles by original index), ParticleIDs the
    original indices: the snapshot Gadget-4 writes with its group catalogue."""
    import h5py

    with h5py.File(cat_path, "r") as c:
        order_ids = c["IDs/ID"][()] if "IDs" in c and "ID" in c["IDs"] else np.zeros(0, np.int64)
    ids = s.ids().astype(np.int64)
    at = np.full(int(snap["nsource"]), -1, np.int64)
    at[ids] = np.arange(len(ids))  # stream row of each original index
    pos = s.get("POS").astype(np.float64) - origin
    vel, mass, typ = s.get("VEL"), s.get("MASS")[:, 0], s.get("TYPE")[:, 0]
    grouped = np.zeros(len(at), bool)
    grouped[order_ids] = True
    rest = np.flatnonzero(~grouped & (at >= 0))
    order = at[np.concatenate([order_ids, rest])]
    with h5py.File(path, "w") as f:
        npart = np.zeros(6, np.int64)
        for ft, gt in GTYPE.items():
            rows = order[typ[order] == ft]
            npart[gt] = len(rows)
            if not len(rows):
                continue
            p = f.create_group("PartType%d" % gt)
            p["Coordinates"] = pos[rows]
            p["Velocities"] = vel[rows]
            p["ParticleIDs"] = ids[rows].astype(np.uint64)
            p["Masses"] = mass[rows]
        h = f.create_group("Header").attrs
        h["NumPart_ThisFile"] = npart.astype(np.int32)
        h["NumPart_Total"] = npart.astype(np.uint64)
        h["NumFilesPerSnapshot"] = 1
        h["MassTable"] = np.zeros(6)
        h["Time"] = float(snap["time"])
        h["Redshift"] = 1 / float(snap["time"]) - 1
        h["BoxSize"] = float(snap["box"])
        par = f.create_group("Parameters").attrs
        for k, v in (("UnitLength_in_cm", 3.085678e24), ("UnitMass_in_g", 1.989e43), ("UnitVelocity_in_cm_per_s", 1e5),
                     ("Omega0", 0.3), ("OmegaLambda", 0.7), ("HubbleParam", 0.7), ("BoxSize", float(snap["box"]))):
            par[k] = v


def check_pynbody(cat_path, s, snap, t, origin):
    import pynbody

    d = os.path.dirname(os.path.abspath(cat_path))
    snap_path = os.path.join(d, "snapshot_" + os.path.basename(cat_path).split("_")[-1])
    write_gadget4_snapshot(snap_path, s, snap, origin, cat_path)
    sim = pynbody.load(snap_path)
    halos = sim.halos()
    check(type(halos).__name__.endswith("SubfindHDFCatalogue"), "catalogue class %s" % type(halos).__name__)
    ng = len(t[0]["id"])
    check(len(halos) == ng, "pynbody: %d halos, not %d" % (len(halos), ng))
    gid0, gid1 = s.gid(0), s.gid(1)
    props = halos.get_properties_all_halos(with_units=False)
    close(props["GroupLen"], t[0]["n"], "pynbody GroupLen")
    close(props["GroupMass"], t[0]["mass"], "pynbody GroupMass")
    close(props["GroupPos"], np.stack([t[0][a] - origin for a in ("xc", "yc", "zc")], 1), "pynbody GroupPos", atol=POS_ATOL)
    nsub_seen = 0
    for gi in range(ng):
        h = halos[gi]
        members = np.sort(np.asarray(h["iord"]))
        check(np.array_equal(members, np.flatnonzero(gid0 == gi + 1)), "pynbody members of group %d" % (gi + 1))
        close(np.asarray(h["mass"]).sum(dtype=np.float64), t[0]["mass"][gi], "pynbody mass of group %d" % (gi + 1),
              rtol=1e-6)
        for sh in h.subhalos:
            fid = int(sh.properties["SubhaloFofID"])
            check(np.array_equal(np.sort(np.asarray(sh["iord"])), np.flatnonzero(gid1 == fid)),
                  "pynbody members of level 1 group %d" % fid)
            nsub_seen += 1
    check(nsub_seen == len(t[1]["id"]), "pynbody: %d subhalos, not %d" % (nsub_seen, len(t[1]["id"])))
    print("pynbody %s: %d halos and %d subhalos, their members, lengths, masses and positions agree"
          % (pynbody.__version__, ng, nsub_seen))


def check_yt(cat_path, s, snap, t, origin):
    import yt

    yt.set_log_level(40)
    ds = yt.load(cat_path)
    check(type(ds).__name__ == "GadgetFOFDataset", "yt dataset class %s" % type(ds).__name__)
    ad = ds.all_data()
    ng, ns = len(t[0]["id"]), len(t[1]["id"])
    close(ad["Group", "GroupLen"].d, t[0]["n"], "yt GroupLen")
    close(ad["Group", "GroupMass"].d, t[0]["mass"], "yt GroupMass")
    close(ad["Group", "GroupPos_0"].d, t[0]["xc"] - origin, "yt GroupPos_0", atol=POS_ATOL)
    check(len(ad["Subhalo", "SubhaloLen"]) == ns, "yt subhalos")
    gid0, gid1 = s.gid(0), s.gid(1)
    for gi in (0, 1, ng - 1):
        h = ds.halo("Group", gi)
        check(h.particle_number == t[0]["n"][gi], "yt particle_number of group %d" % (gi + 1))
        check(np.array_equal(np.sort(h["Group", "ID"].d.astype(np.int64)), np.flatnonzero(gid0 == gi + 1)),
              "yt member_ids of group %d" % (gi + 1))
    import h5py

    with h5py.File(cat_path, "r") as f:
        fid = f["Subhalo/SubhaloFofID"][()]
    for k in range(min(ns, 5)):
        sh = ds.halo("Subhalo", k)
        check(np.array_equal(np.sort(sh["Subhalo", "ID"].d.astype(np.int64)), np.flatnonzero(gid1 == fid[k])),
              "yt member_ids of subhalo %d" % k)
    print("yt %s: %d groups, %d subhalos; lengths, masses, positions and member IDs agree" % (yt.__version__, ng, ns))


def check_grp(snap_path, s, snap, t, origin):
    import pynbody

    from pynbody.halo.number_array import HaloNumberCatalogue

    sim = pynbody.load(snap_path)
    halos = sim.halos()  # found by itself: SNAP.std.grp beside SNAP.std, the array "grp"
    check(type(halos) is HaloNumberCatalogue, "catalogue class %s" % type(halos).__name__)
    ng = len(t[0]["id"])
    gid0 = s.gid(0)
    # halo 0, the ungrouped particles, counts unless it is ignored
    check(len(halos) == ng + bool(np.any(gid0 == 0)), "pynbody: %d halos in the .grp for %d groups" % (len(halos), ng))
    check(len(HaloNumberCatalogue(sim, ignore=0)) == ng, "pynbody: ignore=0 leaves the %d groups" % ng)
    box = float(snap["box"])
    for g in range(1, ng + 1):
        h = halos[g]
        idx = np.sort(h.get_index_list(sim))
        check(np.array_equal(idx, np.flatnonzero(gid0 == g)), "members of halo %d" % g)
        m = np.asarray(sim["mass"][idx], dtype=np.float64)
        close(m.sum(), t[0]["mass"][g - 1], "mass of halo %d" % g, rtol=1e-6)
        pos = np.asarray(sim["pos"][idx], dtype=np.float64)
        ref = pos[0]  # the member with the lowest index, as halostats unwraps about
        d = pos - ref
        d -= box * np.round(d / box)
        com = ref + (m[:, None] * d).sum(0) / m.sum()
        com = (com - origin) % box + origin
        close(com, [t[0][a][g - 1] for a in ("x", "y", "z")], "centre of mass of halo %d" % g, rtol=1e-5, atol=1e-6)
        vel = (m[:, None] * np.asarray(sim["vel"][idx], dtype=np.float64)).sum(0) / m.sum()
        close(vel, [t[0][a][g - 1] for a in ("vx", "vy", "vz")], "mean velocity of halo %d" % g, rtol=1e-5, atol=1e-6)
    print("pynbody %s: the .grp's %d halos have halostats' members, masses, centres of mass and velocities"
          % (pynbody.__version__, ng))


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("h5", "pynbody", "yt", "grp"):
        sys.exit(__doc__)
    mode, target, stream_path, text_path = sys.argv[1:]
    args = load(stream_path, text_path)
    {"h5": check_h5, "pynbody": check_pynbody, "yt": check_yt, "grp": check_grp}[mode](target, *args)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
