"""pyread.py - times the fofkit Python package on stream files: opening, an array, snapshot order, verifying, groups, the catalogue.

Usage: python3 bench/pyread.py STREAM...   (for example the output of groups, or of halostats --format=stream)
Prints the best of a few runs of each step, in milliseconds.
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import fofkit  # noqa: E402


def best(what, f, reps=5):
    t = min(_timed(f) for _ in range(reps))
    print("%-60s %9.1f ms" % (what, t * 1e3))


def _timed(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for name in sys.argv[1:]:
        best(name + ": open (every chunk header checked)", lambda: fofkit.open(name).close())
        with fofkit.open(name) as s:
            c = s.find("POS")
            best("%s: POS, %d x 3 %s%s" % (name, c.rows, c.dtype, " (zlib)" if c.zlib else ""), lambda: s.get("POS"))
            best(name + ": POS in snapshot order (the ID chunk)", lambda: s.particles("POS", order="snapshot"))
            best(name + ": verify() every payload", s.verify, 3)
            if s.has("GID"):
                best(name + ": members(0)", lambda: s.members(0))
            if s.has("HALO"):
                best("%s: catalogue(), %d rows" % (name, len(s.catalogue())), s.catalogue)
        with open(name, "rb") as f:
            best(name + ": read as a pipe (every payload kept and checked)", lambda: (f.seek(0), fofkit.open(f)), 3)


if __name__ == "__main__":
    main()
