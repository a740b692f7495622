"""halocat_check.py - checks halostats' HDF5 catalogue and groups' .grp through readers fofkit did not write (h5py, pynbody, yt).

Usage (tests/halocat.bats runs it; the fofkit package comes from python/ of the repository):
    python3 halocat_check.py h5 CAT.hdf5 STREAM TEXT       the datasets against the stream and halostats' text
    python3 halocat_check.py pynbody CAT.hdf5 STREAM TEXT  the group-ordered snapshot halostats --snapshot wrote
                                                           beside CAT (snapshot_NNN.hdf5), opened with pynbody:
                                                           its halos, subhalos and their members
    python3 halocat_check.py yt CAT.0.hdf5 STREAM TEXT     yt.load(CAT): groups, subhalos, member IDs
    python3 halocat_check.py grp SNAP.std STREAM TEXT      pynbody.load(SNAP.std).halos() reads SNAP.grp
STREAM is the output of groups (levels 0 and 1), TEXT halostats' text output of it.
    python3 halocat_check.py g4-h5|g4-pynbody|g4-yt CAT STREAM TEXT SNAPSHOT
the catalogue of a real Gadget-4 snapshot (halostats --so --unbind --format=hdf5, --snapshot beside
it): STREAM is halostats --so --unbind --format=stream of the grouped stream (levels 0 and 1, BGID),
TEXT its text catalogue (kpc/h, Msun/h, km/s), SNAPSHOT the user's own snapshot. The values in the
snapshot's units, the cosmology, SO masses, bound subhalos and members against the text and the
stream; members found by ID in SNAPSHOT (h5py, pynbody, yt) and, with pynbody, through the offsets
of the group-ordered snapshot. Prints what differs and exits 1, or prints a summary and exits 0.
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
            # each run most bound first (IDs/MemberOrder; tests/py/member_order.py checks the order)
            check(np.array_equal(np.sort(ids[at:at + n]), np.flatnonzero(gid1 == fid[k])), "IDs of subhalo %d" % k)
            check(np.array_equal(soff[k], before[at]), "SubhaloOffsetType of subhalo %d" % k)
            at += n
    print("h5py: %d groups, %d subhalos, %d member IDs agree with the stream and the text" % (ng, ns, len(ids)))


def check_pynbody(cat_path, s, snap, t, origin):
    import pynbody

    # the group-ordered snapshot halostats --snapshot wrote beside the catalogue, named as pynbody
    # finds the catalogue from it (fof_subhalo_tab_NNN... beside snapshot_NNN...)
    d = os.path.dirname(os.path.abspath(cat_path))
    snap_path = os.path.join(d, "snapshot_" + os.path.basename(cat_path).split("_")[-1])
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

# ---- the real Gadget-4 snapshot: units, cosmology, SO, bound subhalos, members by ID -----------

MASS_UNIT = 1e10  # halostats' text is in Msun/h, the catalogue in the snapshot's 1e10 Msun/h


def expected_subhalos(s, t):
    """The subhalos of --unbind computed here from the BGID chunks (subhalos.h's rule): the bound
    part of every level 1 group but its host's central one (the one holding the host's most bound
    member) as satellites; each group's bound members outside its satellites as its main subhalo.
    A list of (host, level, id, original indices), host by host, the main subhalo first."""
    gid1 = s.gid(1).astype(np.int64)
    b0, b1 = s.array("BGID", 0)[:, 0].astype(np.int64), s.array("BGID", 1)[:, 0].astype(np.int64)
    host1 = np.concatenate([[0], t[1]["host"].astype(np.int64)])  # host of level 1 group k
    ng0 = len(t[0]["id"])
    central = np.concatenate([[0], gid1[t[0]["mbp_id"].astype(np.int64)]])  # of host g
    sat_of = np.where((b1 > 0) & (b1 != central[host1[b1]]), b1, 0)  # a satellite's bound member
    rows = []
    for g in range(1, ng0 + 1):
        main = np.flatnonzero((b0 == g) & (sat_of == 0))
        if len(main):
            rows.append((g, 0, g, main))
        for k in np.unique(sat_of[(sat_of > 0) & (host1[sat_of] == g)]):
            rows.append((g, 1, int(k), np.flatnonzero(sat_of == k)))
    return rows


def g4_load(cat_path, stream_path, text_path, snap_path):
    import h5py

    s, snap, t, origin = load(stream_path, text_path)
    ids = s.ids().astype(np.int64)
    pid_of = np.zeros(int(snap["nsource"]), np.int64)  # the snapshot's own ID of each original index
    pid_of[ids] = s.array("PID")[:, 0].astype(np.int64)
    f = h5py.File(cat_path, "r")
    real = h5py.File(snap_path, "r")
    return s, snap, t, origin, pid_of, f, real


def real_members(real, ids):
    """The particles of the user's snapshot whose ParticleIDs are among ids: (positions, masses) of
    every type, with masses from MassTable where there is no Masses dataset."""
    pos, mass = [], []
    mt = real["Header"].attrs["MassTable"]
    for k in range(len(mt)):
        name = "PartType%d" % k
        if name not in real:
            continue
        sel = np.isin(real[name]["ParticleIDs"][()].astype(np.int64), ids)
        pos.append(real[name]["Coordinates"][()][sel].astype(np.float64))
        m = real[name]["Masses"][()][sel] if "Masses" in real[name] else np.full(sel.sum(), mt[k])
        mass.append(np.asarray(m, dtype=np.float64))
    return np.concatenate(pos), np.concatenate(mass)


def check_g4_h5(cat_path, stream_path, text_path, snap_path):
    s, snap, t, origin, pid_of, f, real = g4_load(cat_path, stream_path, text_path, snap_path)
    h, par, g, sub = f["Header"].attrs, f["Parameters"].attrs, f["Group"], f["Subhalo"]
    rp = real["Parameters"].attrs
    # units and cosmology where Gadget-4 writes them, as the snapshot's
    for k in ("UnitLength_in_cm", "UnitMass_in_g", "UnitVelocity_in_cm_per_s", "HubbleParam", "Omega0", "OmegaLambda"):
        check(abs(par[k] - rp[k]) <= 1e-12 * abs(rp[k]), "Parameters %s %r, the snapshot's %r" % (k, par[k], rp[k]))
    for k in ("HubbleParam", "Omega0", "OmegaLambda"):
        check(h[k] == par[k], "Header %s" % k)
    check(h["Redshift"] == real["Header"].attrs["Redshift"] and h["Time"] == real["Header"].attrs["Time"], "Time")
    check(h["BoxSize"] == real["Header"].attrs["BoxSize"], "BoxSize")
    check(abs(g["GroupPos"].attrs["to_cgs"] - rp["UnitLength_in_cm"]) < 1e-6 * rp["UnitLength_in_cm"], "to_cgs")
    check(g["GroupMass"].attrs["h_scaling"] == -1 and g["GroupPos"].attrs["a_scaling"] == 1, "unit attributes")
    # values in the snapshot's units: 1e10 Msun/h and kpc/h
    ng = len(t[0]["id"])
    close(g["GroupLen"][()], t[0]["n"], "GroupLen")
    close(g["GroupMass"][()] * MASS_UNIT, t[0]["mass"], "GroupMass x 1e10 = the text's Msun/h")
    close(g["GroupPos"][()], np.stack([t[0][a] for a in ("xc", "yc", "zc")], 1), "GroupPos (kpc/h)", atol=1e-4)
    close(g["GroupCM"][()], np.stack([t[0][a] for a in ("x", "y", "z")], 1), "GroupCM (kpc/h)", atol=1e-4)
    close(g["GroupVel"][()], np.stack([t[0][a] for a in ("vx", "vy", "vz")], 1), "GroupVel (km/s)")
    for name, col, unit in (("Group_M_Crit200", "m200c", MASS_UNIT), ("Group_R_Crit200", "r200c", 1),
                            ("Group_M_Crit500", "m500c", MASS_UNIT), ("Group_M_Mean200", "m200m", MASS_UNIT),
                            ("Group_R_Mean200", "r200m", 1), ("Group_M_TopHat200", "mvir", MASS_UNIT),
                            ("Group_R_TopHat200", "rvir", 1)):
        close(g[name][()] * unit, np.nan_to_num(t[0][col], nan=0.0), name + " (0 where the text has nan)")
    close(g["GroupLenBound"][()], t[0]["n_bound"], "GroupLenBound")
    close(g["GroupMassBound"][()] * MASS_UNIT, t[0]["mass_bound"], "GroupMassBound")
    # the bound subhalos, host by host, and their members by the snapshot's IDs
    rows = expected_subhalos(s, t)
    ns = len(rows)
    check(h["Nsubhalos_Total"] == ns and len(sub["SubhaloLen"]) == ns, "%d subhalos, not %d" % (h["Nsubhalos_Total"], ns))
    ids = f["IDs/ID"][()]
    start = np.concatenate([[0], np.cumsum(g["GroupLen"][()])])
    first, nsubs = g["GroupFirstSub"][()], g["GroupNsubs"][()]
    mass = np.zeros(int(snap["nsource"]))
    mass[s.ids().astype(np.int64)] = s.get("MASS")[:, 0]
    for k, (host, level, fid, members) in enumerate(rows[:ns]):
        check(sub["SubhaloGroupNr"][k] == host - 1 and sub["SubhaloFofLevel"][k] == level and sub["SubhaloFofID"][k] == fid,
              "subhalo %d: host, level, id" % k)
        check(sub["SubhaloLen"][k] == len(members), "SubhaloLen of subhalo %d" % k)
        close(sub["SubhaloMass"][k], mass[members].sum(), "SubhaloMass of subhalo %d" % k, rtol=1e-6)
        at = start[host - 1] + sum(sub["SubhaloLen"][first[host - 1]:k])
        check(np.array_equal(np.sort(ids[at:at + len(members)]), np.sort(pid_of[members])), "IDs of subhalo %d" % k)
    for gi in range(ng):
        run = ids[start[gi]:start[gi + 1]]
        check(np.array_equal(np.sort(run), np.sort(pid_of[s.gid(0) == gi + 1])), "IDs of group %d" % (gi + 1))
        check(nsubs[gi] == sum(1 for r in rows if r[0] == gi + 1), "GroupNsubs of group %d" % (gi + 1))
    # halo 0 found in the user's own snapshot by ID: the text catalogue's members, mass and centre of mass
    pos, m = real_members(real, ids[:g["GroupLen"][0]])
    check(len(m) == t[0]["n"][0], "the snapshot holds %d of halo 0's IDs, not %d" % (len(m), t[0]["n"][0]))
    close(m.sum() * MASS_UNIT, t[0]["mass"][0], "halo 0's mass from the snapshot", rtol=1e-6)
    box = float(real["Header"].attrs["BoxSize"])
    d = pos - pos[0]
    d -= box * np.round(d / box)
    com = (pos[0] + (m[:, None] * d).sum(0) / m.sum()) % box
    close(com, [t[0][a][0] for a in ("x", "y", "z")], "halo 0's centre of mass from the snapshot", rtol=1e-6)
    print("h5py: %d groups, %d bound subhalos; units, cosmology, SO masses, bound masses and members by ID in the "
          "snapshot agree with the text" % (ng, ns))


def check_g4_pynbody(cat_path, stream_path, text_path, snap_path):
    import pynbody

    s, snap, t, origin, pid_of, f, real = g4_load(cat_path, stream_path, text_path, snap_path)
    d = os.path.dirname(os.path.abspath(cat_path))
    ordered = pynbody.load(os.path.join(d, "snapshot_" + os.path.basename(cat_path).split("_")[-1]))
    halos = ordered.halos()
    ng = len(t[0]["id"])
    check(type(halos).__name__ == "Gadget4SubfindHDFCatalogue" and len(halos) == ng, "pynbody: %d halos" % len(halos))
    props = halos.get_properties_all_halos(with_units=False)
    close(props["GroupMass"] * MASS_UNIT, t[0]["mass"], "pynbody GroupMass")
    close(props["Group_M_Crit200"] * MASS_UNIT, np.nan_to_num(t[0]["m200c"], nan=0.0), "pynbody Group_M_Crit200")
    gid0 = s.gid(0)
    rows = expected_subhalos(s, t)
    for gi in range(ng):
        h = halos[gi]
        check(np.array_equal(np.sort(np.asarray(h["iord"], dtype=np.int64)), np.sort(pid_of[gid0 == gi + 1])),
              "pynbody members of halo %d (the group-ordered snapshot)" % gi)
        want = [r for r in rows if r[0] == gi + 1]
        check(len(h.subhalos) == len(want), "pynbody subhalos of halo %d" % gi)
        for sh, r in zip(h.subhalos, want):
            check(np.array_equal(np.sort(np.asarray(sh["iord"], dtype=np.int64)), np.sort(pid_of[r[3]])),
                  "pynbody members of a subhalo of halo %d" % gi)
    # the user's own snapshot, by the recipe of halostats(1): members by ID
    own = pynbody.load(snap_path)
    ids0 = f["IDs/ID"][:f["Group/GroupLen"][0]]
    h0 = own[np.isin(np.asarray(own["iord"], dtype=np.int64), ids0)]
    check(len(h0) == t[0]["n"][0], "pynbody: %d of halo 0's IDs in the snapshot, not %d" % (len(h0), t[0]["n"][0]))
    close(np.asarray(h0["mass"], dtype=np.float64).sum() * MASS_UNIT, t[0]["mass"][0], "pynbody halo 0's mass by ID",
          rtol=1e-6)
    close(np.asarray(h0["pos"], dtype=np.float64).mean(0), [t[0][a][0] for a in ("x", "y", "z")],
          "pynbody halo 0's mean position by ID (equal masses: the centre of mass)", rtol=1e-6)
    print("pynbody %s: %d halos and their bound subhalos in the group-ordered snapshot, and halo 0 by ID in the "
          "snapshot itself, agree with the text" % (pynbody.__version__, ng))


def check_g4_yt(cat_path, stream_path, text_path, snap_path):
    import yt

    yt.set_log_level(40)
    s, snap, t, origin, pid_of, f, real = g4_load(cat_path, stream_path, text_path, snap_path)
    # yt never reads units from a catalogue: they are handed to it from the file's Parameters
    units = {k: float(f["Parameters"].attrs[k]) for k in ("UnitLength_in_cm", "UnitMass_in_g", "UnitVelocity_in_cm_per_s")}
    ds = yt.load(cat_path, unit_base=units)
    check(ds.hubble_constant == 0.7 and ds.omega_matter == 0.3 and ds.omega_lambda == 0.7, "yt cosmology")
    ad = ds.all_data()
    close(ad["Group", "GroupMass"].to("g/h").d / units["UnitMass_in_g"] * MASS_UNIT, t[0]["mass"], "yt GroupMass")
    # lengths through yt's units back into the file's (comoving, per h), against the text's kpc/h
    to_file = 1 / units["UnitLength_in_cm"]
    close(ad["Group", "GroupPos_0"].to("cmcm/h").d * to_file, t[0]["xc"], "yt GroupPos_0", atol=1e-4)
    close(ad["Group", "Group_R_Crit200"].to("cmcm/h").d * to_file, np.nan_to_num(t[0]["r200c"], nan=0.0),
          "yt Group_R_Crit200")
    gid0 = s.gid(0)
    ng = len(t[0]["id"])
    for gi in (0, 1, ng - 1):
        ids = ds.halo("Group", gi)["Group", "ID"].d.astype(np.int64)
        check(np.array_equal(np.sort(ids), np.sort(pid_of[gid0 == gi + 1])), "yt member IDs of group %d" % gi)
    # halo 0 in the user's own snapshot, by ID, with yt (the same units handed to it)
    snapds = yt.load(snap_path, unit_base=units)
    sad = snapds.all_data()
    ids0 = ds.halo("Group", 0)["Group", "ID"].d.astype(np.int64)
    sel = np.isin(sad["PartType1", "ParticleIDs"].d.astype(np.int64), ids0)
    check(sel.sum() == t[0]["n"][0], "yt: %d of halo 0's IDs in the snapshot" % sel.sum())
    close(sad["PartType1", "Masses"][sel].sum().to("Msun/h").d, ad["Group", "GroupMass"][0].to("Msun/h").d,
          "yt: halo 0's mass by ID against the catalogue's", rtol=1e-6)
    print("yt %s: masses, positions, SO radii and member IDs in the snapshot's units agree with the text; halo 0 "
          "found by ID in the snapshot" % yt.__version__)


def main():
    g4 = {"g4-h5": check_g4_h5, "g4-pynbody": check_g4_pynbody, "g4-yt": check_g4_yt}
    if len(sys.argv) == 6 and sys.argv[1] in g4:
        g4[sys.argv[1]](*sys.argv[2:])
        sys.exit(1 if failures else 0)
    if len(sys.argv) != 5 or sys.argv[1] not in ("h5", "pynbody", "yt", "grp"):
        sys.exit(__doc__)
    mode, target, stream_path, text_path = sys.argv[1:]
    args = load(stream_path, text_path)
    {"h5": check_h5, "pynbody": check_pynbody, "yt": check_yt, "grp": check_grp}[mode](target, *args)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
