#!/usr/bin/env python3
"""member_order.py - halostats' HDF5 catalogue lists each halo's members most bound first: checked by numpy.

Usage: member_order.py CATALOGUE SNAPSHOT G EPS [ORDER]

CATALOGUE is halostats --format=hdf5's file, SNAPSHOT the group-ordered snapshot it wrote beside it
(--snapshot) of a physical stream (no Hubble flow), G and EPS the gravitational constant and the
softening halostats was given (--G, --softening), in the files' units. For every run of IDs/ID (each
Subhalo's members, then the rest of each group) it computes by brute force, O(n^2) in numpy:
  binding_energy  each Subhalo's members' energies in the Subhalo, phi_i = -G sum_(j != i) m_j /
                  sqrt(r_ij^2 + EPS^2) over its members, plus |v_i - v|^2 / 2 about its mass-weighted
                  mean velocity: they must not decrease along the run; the rest by distance from
                  GroupPos
  radius          each run by distance from its centre (SubhaloPos, GroupPos): not decreasing
  id              each run by ascending ID
ORDER checks the runs for that order instead of the one IDs/MemberOrder names (a test that the
orders differ). Prints one line: the order, the runs and members checked. Exit 1 on the first run
out of order.
"""
import sys

import h5py
import numpy as np


def main():
    cat, snap, G, eps = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    c, s = h5py.File(cat, "r"), h5py.File(snap, "r")
    order = c["IDs"].attrs["MemberOrder"]
    order = order.decode() if isinstance(order, bytes) else str(order)
    if len(sys.argv) > 5:
        order = sys.argv[5]
    ids = c["IDs/ID"][:] if "ID" in c["IDs"] else np.zeros(0, "i8")
    box = float(c["Header"].attrs["BoxSize"])
    # every particle of the snapshot by ID
    pid, pos, vel, mass = [], [], [], []
    for t in range(6):
        g = "PartType%d" % t
        if g not in s:
            continue
        n = len(s[g + "/ParticleIDs"])
        pid.append(s[g + "/ParticleIDs"][:])
        pos.append(s[g + "/Coordinates"][:].astype(np.float64))
        vel.append(s[g + "/Velocities"][:].astype(np.float64))
        mass.append(s[g + "/Masses"][:].astype(np.float64) if "Masses" in s[g] else
                    np.full(n, float(s["Header"].attrs["MassTable"][t])))
    pid, pos, vel, mass = (np.concatenate(a) for a in (pid, pos, vel, mass))
    at = np.argsort(pid)
    where = at[np.searchsorted(pid[at], ids)]
    assert np.array_equal(pid[where], ids), "a member is not in the snapshot"
    P, V, M = pos[where], vel[where], mass[where]

    def image(d):
        return d - box * np.round(d / box)

    glen = c["Group/GroupLen"][:] if "GroupLen" in c["Group"] else np.zeros(0, "i8")
    gpos = c["Group/GroupPos"][:] if len(glen) else None
    nsub = int(c["Header"].attrs["Nsubhalos_Total"])
    slen = c["Subhalo/SubhaloLen"][:] if nsub else np.zeros(0, "i8")
    spos = c["Subhalo/SubhaloPos"][:] if nsub else None
    first = c["Group/GroupFirstSub"][:] if len(glen) else None
    nsubs = c["Group/GroupNsubs"][:] if len(glen) else None
    runs = checked = 0

    def fail(what, g, k):
        print("%s: %s run of group %d out of order at its member %d" % (cat, what, g, k))
        sys.exit(1)

    def radius_run(a, n, centre, g):
        r2 = np.sum(image(P[a:a + n] - centre) ** 2, axis=1)
        bad = np.nonzero(r2[1:] < r2[:-1] * (1 - 1e-12))[0]
        if len(bad):
            fail("radius", g, int(bad[0]) + 1)

    def energy_run(a, n, g):
        x, v, m = P[a:a + n], V[a:a + n], M[a:a + n]
        d = image(x[:, None, :] - x[None, :, :])
        w = 1 / np.sqrt(np.sum(d * d, axis=2) + eps * eps)
        np.fill_diagonal(w, 0)
        phi = -G * (w @ m)
        u = v - (m @ v) / m.sum()
        e = phi + 0.5 * np.sum(u * u, axis=1)
        tol = 1e-9 * np.max(np.abs(e))
        bad = np.nonzero(e[1:] < e[:-1] - tol)[0]
        if len(bad):
            fail("binding-energy", g, int(bad[0]) + 1)

    at = 0
    for g in range(len(glen)):
        end = at + int(glen[g])
        for k in range(int(first[g]), int(first[g]) + int(nsubs[g])) if nsubs[g] > 0 else ():
            n = int(slen[k])
            if order == "binding_energy":
                energy_run(at, n, g)
            elif order == "radius":
                radius_run(at, n, spos[k], g)
            elif np.any(np.diff(ids[at:at + n]) < 0):
                fail("id", g, 0)
            runs += 1
            checked += n
            at += n
        if order in ("binding_energy", "radius"):
            radius_run(at, end - at, gpos[g], g)
        elif np.any(np.diff(ids[at:end]) < 0):
            fail("id", g, 0)
        runs += 1
        checked += end - at
        at = end
    print("%s: %s order: %d runs, %d members most bound first" % (cat, order, runs, checked))


if __name__ == "__main__":
    main()
