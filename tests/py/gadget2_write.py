#!/usr/bin/env python3
"""gadget2_write.py - an HDF5 snapshot (Gadget-3/4 layout) written as a Gadget-2 binary snapshot.

Usage: gadget2_write.py IN.hdf5 OUT

Writes OUT in SnapFormat 1, little-endian, one file: the 256-byte header, then
the POS, VEL and ID blocks, and a MASS block for the types whose MassTable
entry is 0, each a Fortran record (4-byte length, data, length). Positions,
velocities and masses are written as float32, IDs as uint32 (uint64 when they
do not fit). The header's HubbleParam, Omega0 and OmegaLambda come from the
Header or the Parameters group; Redshift and Time from the Header. The
snapshot's OmegaBaryon (0 when it has none) is printed on stdout.

This is the tests' own writer, written from Gadget-2's io.c layout (the header
table in lib/gadget.h), independent of fofkit's reader.
"""
import struct
import sys

import h5py
import numpy as np


def attr(f, key, default=0.0):
    for group in ("Header", "Parameters", "Cosmology"):
        if group in f and key in f[group].attrs:
            return f[group].attrs[key]
    return default


def record(out, data):
    out.write(struct.pack("<I", len(data)))
    out.write(data)
    out.write(struct.pack("<I", len(data)))


def main(src, dst):
    with h5py.File(src, "r") as f:
        h = f["Header"].attrs
        nt = len(h["NumPart_Total"])
        if nt > 6:
            sys.exit("gadget2_write.py: %s has %d particle types, Gadget-2 holds 6" % (src, nt))
        npart = [0] * 6
        masstab = [0.0] * 6
        for t in range(nt):
            npart[t] = int(h["NumPart_Total"][t])
            masstab[t] = float(h["MassTable"][t]) if "MassTable" in h else 0.0
        pos, vel, ids, mass = [], [], [], []
        for t in range(6):
            if not npart[t]:
                continue
            g = f["PartType%d" % t]
            pos.append(np.asarray(g["Coordinates"], dtype="<f4"))
            vel.append(np.asarray(g["Velocities"], dtype="<f4"))
            ids.append(np.asarray(g["ParticleIDs"], dtype=np.uint64))
            if masstab[t] == 0:
                mass.append(np.asarray(g["Masses"], dtype="<f4"))
        ids = np.concatenate(ids)
        idtype = "<u4" if ids.max() < 2**32 else "<u8"
        header = struct.pack(
            "<6I6d2d2i6I2i4d2i6Ii",
            *npart, *masstab,
            float(h["Time"]), float(h["Redshift"]),
            0, 0,                      # flag_sfr, flag_feedback
            *npart,                    # npartTotal, low words (< 2^32 here)
            0, 1,                      # flag_cooling, num_files
            float(np.atleast_1d(h["BoxSize"])[0]),
            float(attr(f, "Omega0")), float(attr(f, "OmegaLambda")), float(attr(f, "HubbleParam")),
            0, 0,                      # flag_stellarage, flag_metals
            *([0] * 6),                # npartTotalHighWord
            0)                         # flag_entropy_instead_u
        header += bytes(256 - len(header))
        assert len(header) == 256
        with open(dst, "wb") as out:
            record(out, header)
            record(out, np.concatenate(pos).astype("<f4").tobytes())
            record(out, np.concatenate(vel).astype("<f4").tobytes())
            record(out, ids.astype(idtype).tobytes())
            if mass:
                record(out, np.concatenate(mass).astype("<f4").tobytes())
        print(repr(float(attr(f, "OmegaBaryon"))))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    main(sys.argv[1], sys.argv[2])
