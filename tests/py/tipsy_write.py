#!/usr/bin/env python3
"""tipsy_write.py - a Gadget-4 HDF5 snapshot written as a ChaNGa-style cosmological tipsy snapshot.

Usage: tipsy_write.py IN.hdf5 OUT.std MSOL_UNIT

Writes standard (big-endian XDR) tipsy in the conventions of ChaNGa, PKDGRAV
and Gasoline (tipsy2bin(1)): the length unit is the box (dKpcUnit = BoxSize /
h kpc), positions comoving in [-0.5, 0.5), the mass unit MSOL_UNIT Msun
(dMsolUnit), G = 1 (the velocity unit sqrt(G M / L), G = 6.6743e-8 cgs), the
header's time the expansion factor a, and the velocities the comoving dx/dt,
a^-1 times the peculiar velocity (Gadget's are v_pec / sqrt(a)). Only gas
(type 0) and dark matter (every other type) are written. Prints the
tipsy2bin options that describe the file on stdout.
"""
import math
import struct
import sys

import h5py
import numpy as np

KPC_CM, MSUN_G, G_CGS = 3.085678e21, 1.989e33, 6.6743e-8


def main(src, dst, msol_unit):
    with h5py.File(src, "r") as f:
        h, par = f["Header"].attrs, f["Parameters"].attrs
        a = float(h["Time"])
        hub = float(par["HubbleParam"])
        box = float(np.atleast_1d(h["BoxSize"])[0])
        ulen, umass, uvel = (float(par[k]) for k in ("UnitLength_in_cm", "UnitMass_in_g", "UnitVelocity_in_cm_per_s"))
        kpc_unit = box * ulen / hub / KPC_CM
        L, M = kpc_unit * KPC_CM, msol_unit * MSUN_G
        V = math.sqrt(G_CGS * M / L)
        parts = []
        for t in range(len(h["NumPart_Total"])):
            if not h["NumPart_Total"][t]:
                continue
            g = f["PartType%d" % t]
            x = np.asarray(g["Coordinates"], np.float64) / box - 0.5
            vpec = np.asarray(g["Velocities"], np.float64) * math.sqrt(a) * uvel  # cm/s
            v = vpec / a / V
            if "Masses" in g:
                m = np.asarray(g["Masses"], np.float64)
            else:
                m = np.full(len(x), float(h["MassTable"][t]))
            m = m * umass / hub / M
            parts.append((0 if t == 0 else 1, x, v, m))
        cosmo = (hub, float(par["Omega0"]), float(par["OmegaLambda"]), float(par["OmegaBaryon"]))
    ngas = sum(len(p[1]) for p in parts if p[0] == 0)
    ndark = sum(len(p[1]) for p in parts if p[0] == 1)
    with open(dst, "wb") as out:
        out.write(struct.pack(">diiiiii", a, ngas + ndark, 3, ngas, ndark, 0, 0))
        for kind in (0, 1):
            for k, x, v, m in parts:
                if k != kind:
                    continue
                n = len(x)
                rec = np.zeros((n, 12 if kind == 0 else 9), ">f4")
                rec[:, 0] = m
                rec[:, 1:4] = x
                rec[:, 4:7] = v
                out.write(rec.tobytes())
    print("--kpc-unit=%r --msol-unit=%r --hubble=%r --omega-m=%r --omega-l=%r --omega-baryon=%r" % (
        kpc_unit, msol_unit, *cosmo))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip().splitlines()[2])
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
