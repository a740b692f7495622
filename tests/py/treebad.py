"""treebad.py - damaged halo catalogues for tests/halotree.bats: each a copy of treecat.py's cat_001.hdf5 (or subfind_001.hdf5) with one thing wrong, which halotree must refuse in one line.

Usage: python3 treebad.py DIR   (DIR holds treecat.py's files; writes DIR/bad_NAME_001.hdf5, one a case,
and prints the case names, one a line)
"""

import os
import shutil
import sys

import h5py
import numpy as np


def case(d, name, src, change):
    path = os.path.join(d, f"bad_{name}_001.hdf5")
    shutil.copy(os.path.join(d, src), path)
    with h5py.File(path, "a") as f:
        change(f)
    print(name)


def replace(f, path, value):
    del f[path]
    f[path] = value


def main(d):
    cases = {
        "noheader": ("cat_001.hdf5", lambda f: f.__delitem__("Header")),
        "nongroups": ("cat_001.hdf5", lambda f: f["Header"].attrs.__delitem__("Ngroups_Total")),
        "notime": ("cat_001.hdf5", lambda f: f["Header"].attrs.__delitem__("Time")),
        "lenshape": ("cat_001.hdf5", lambda f: replace(f, "Group/GroupLen", f["Group/GroupLen"][:-1])),
        "lensum": ("cat_001.hdf5", lambda f: replace(f, "Group/GroupLen", f["Group/GroupLen"][:] + 1)),
        "lenneg": ("cat_001.hdf5", lambda f: replace(f, "Group/GroupLen", -f["Group/GroupLen"][:])),
        "posshape": ("cat_001.hdf5", lambda f: replace(f, "Group/GroupPos", f["Group/GroupPos"][:, :2])),
        "nomass": ("cat_001.hdf5", lambda f: f.__delitem__("Group/GroupMass")),
        "idstext": ("cat_001.hdf5", lambda f: replace(f, "IDs/ID", np.array([b"x"] * len(f["IDs/ID"])))),
        "ids2d": ("cat_001.hdf5", lambda f: replace(f, "IDs/ID", np.zeros((len(f["IDs/ID"]), 2), np.int64))),
        "dupid": ("cat_001.hdf5", lambda f: f["IDs/ID"].__setitem__(slice(140, 141), f["IDs/ID"][0:1])),
        "numfiles": ("cat_001.hdf5", lambda f: f["Header"].attrs.__setitem__("NumFiles", np.int32(-3))),
        "subgroup": ("subfind_001.hdf5", lambda f: replace(f, "Subhalo/SubhaloGroupNr", f["Subhalo/SubhaloGroupNr"][:][::-1])),
        "sublen": ("subfind_001.hdf5", lambda f: replace(f, "Subhalo/SubhaloLen", f["Subhalo/SubhaloLen"][:] + 5)),
    }
    for name, (src, change) in cases.items():
        case(d, name, src, change)


if __name__ == "__main__":
    main(sys.argv[1])
