#!/usr/bin/env python3
"""h5_equal.py - two HDF5 files hold the same groups, datasets and attributes, value for value.

Usage: h5_equal.py A.hdf5 B.hdf5

Exits 0 when every object of either file is in the other with equal values
(datasets and attributes compared exactly, NaN equal to NaN), else prints the
first differences and exits 1. Prints how many objects it compared.
"""
import sys

import h5py
import numpy as np


def objects(f):
    out = {"/": f}
    f.visititems(lambda name, obj: out.__setitem__(name, obj))
    return out


def same(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    if x.dtype.kind == "f":
        return bool(np.array_equal(x, y, equal_nan=True))
    return bool(np.array_equal(x, y))


def main(a, b):
    bad = []
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        oa, ob = objects(fa), objects(fb)
        for name in sorted(set(oa) ^ set(ob)):
            bad.append("%s only in %s" % (name, a if name in oa else b))
        for name in sorted(set(oa) & set(ob)):
            x, y = oa[name], ob[name]
            if isinstance(x, h5py.Dataset) != isinstance(y, h5py.Dataset):
                bad.append("%s: a dataset in one file only" % name)
                continue
            if isinstance(x, h5py.Dataset) and not same(x[()], y[()]):
                bad.append("%s: values differ" % name)
            for key in sorted(set(x.attrs) | set(y.attrs)):
                if key not in x.attrs or key not in y.attrs:
                    bad.append("%s: attribute %s in one file only" % (name, key))
                elif not same(x.attrs[key], y.attrs[key]):
                    bad.append("%s: attribute %s: %r != %r" % (name, key, x.attrs[key], y.attrs[key]))
        print("%d objects compared" % len(set(oa) & set(ob)))
    for line in bad[:20]:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    sys.exit(main(sys.argv[1], sys.argv[2]))
