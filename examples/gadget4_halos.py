"""gadget4_halos.py - example: the halos of a Gadget-4 snapshot in a few lines of Python, as in a notebook: read it
with h5py, find the friends-of-friends groups of its dark matter with fofkit.fof, measure them with fofkit.halos.

Usage: python3 examples/gadget4_halos.py [SNAPSHOT.hdf5]   (default ../shared/data/g4-lcdm-gas-z0.hdf5)
Needs numpy, h5py and libfofkit (`make lib`, or `pip install ./python`). Prints the groups found and the ten
largest halos with their centres, M200c and bound mass.
"""

import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import fofkit  # noqa: E402

path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                          "shared", "data", "g4-lcdm-gas-z0.hdf5")
with h5py.File(path, "r") as f:
    header = dict(f["Header"].attrs)
    params = dict(f["Parameters"].attrs) if "Parameters" in f else {}
    dm = f["PartType1"]
    pos = np.ascontiguousarray(dm["Coordinates"][...], dtype=np.float32)   # kpc/h, float32 already
    vel = np.ascontiguousarray(dm["Velocities"][...], dtype=np.float32)    # km/s (Gadget's sqrt(a) u)
    mass = np.full(len(pos), header["MassTable"][1], dtype=np.float32)     # 1e10 Msun/h, one mass

box = float(header["BoxSize"])
omega_m = float(params.get("Omega0", header.get("Omega0", 0.3)))
a = float(header["Time"])
G = 43007.1  # in kpc (km/s)^2 / (1e10 Msun): Gadget's internal units
rho_crit = 3 * 0.1 ** 2 / (8 * np.pi * G)  # H0 = 100 h km/s/Mpc = 0.1 (km/s)/(kpc/h): 1e10 Msun/h / (kpc/h)^3

gid = fofkit.fof(pos, b=0.2, box=box)                   # groups of 8 or more, numbered by size
print("%s: %d dark matter particles in a box of %g kpc/h, a = %.3f" % (os.path.basename(path), len(pos), box, a))
print("%d groups of at least 8 particles, %d particles in them" % (gid.max(), (gid > 0).sum()))

halos = fofkit.halos(pos, vel, gid, mass=mass, box=box, G=G, so=True, omega_m=omega_m, scale_factor=a,
                     rho_crit=rho_crit, unbind=True)
print("%5s %6s %10s %10s %10s %12s %12s %7s" % ("id", "n", "xc", "yc", "zc", "m200c", "mass_bound", "lambda"))
for h in halos[:10]:
    print("%5d %6d %10.1f %10.1f %10.1f %12.4g %12.4g %7.3f" % (h["id"], h["n"], h["xc"], h["yc"], h["zc"], h["m200c"],
                                                                h["mass_bound"], h["lambda"]))
