"""test_tree.py - fofkit.read_tree on Consistent-Trees files: a small one written here, and halotree's own when the programs, h5py and a build with HDF5 are there.

Run with `python3 -m unittest tests.test_tree` in python/ (buildenv.py finds halotree: the PATH,
$FOFKIT_BUILD/bin or the checkout's build/bin).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import buildenv  # noqa: E402  (first: the build's programs on the PATH, its libfofkit)
import fofkit  # noqa: E402

HEADER = """#scale(0) id(1) desc_scale(2) desc_id(3) num_prog(4) mmp?(5) Mvir(6) x(7) Snap_num(8) Orig_halo_ID(9)
#Omega_M = 0.3; Omega_L = 0.7; h0 = 0.7
#Full box size = 50.0 Mpc/h
#Mvir: Halo mass (Msun/h).
#X/Y/Z: Halo position (Mpc/h comoving).
#Consistent Trees format
"""
# Two trees: 4 <- {2 (main), 3}, 2 <- 0 (main); and 5 alone.
ROWS = """2
#tree 4
1.0 4 0 -1 2 0 3e12 1.5 2 0
0.5 2 1.0 4 1 1 2e12 1.4 1 0
0.25 0 0.5 2 0 1 1e12 1.3 0 0
0.5 3 1.0 4 0 0 1.5e12 1.2 1 1
#tree 5
1.0 5 0 -1 0 0 7e11 9.0 2 1
"""


class TestReadTree(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, "tree_0_0_0.dat")
        with open(self.path, "w") as f:
            f.write(HEADER + ROWS)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_columns_units_types(self):
        t = fofkit.read_tree(self.path)
        self.assertEqual(t.columns[:4], ["scale", "id", "desc_scale", "desc_id"])
        self.assertEqual(len(t), 5)
        self.assertEqual(t.units["Mvir"], "Msun/h")
        self.assertEqual(t.units["x"], "Mpc/h")
        self.assertEqual(t["id"].dtype, np.int64)
        self.assertEqual(t["Mvir"].dtype, np.float64)
        np.testing.assert_array_equal(t["id"], [4, 2, 0, 3, 5])

    def test_roots_branches_progenitors(self):
        t = fofkit.read_tree(self.path)
        np.testing.assert_array_equal(t.roots, [0, 4])
        np.testing.assert_array_equal(t["id"][t.main_branch(t.roots[0])], [4, 2, 0])
        np.testing.assert_array_equal(t["id"][t.progenitors(0)], [2, 3])
        np.testing.assert_array_equal(t.main_branch(4), [4])
        np.testing.assert_array_equal(t.row_of([3, 99, 5]), [3, -1, 4])

    def test_bad_files(self):
        bad = os.path.join(self.dir, "bad.dat")
        with open(bad, "w") as f:
            f.write(HEADER + ROWS.replace("2\n#tree 4", "3\n#tree 4", 1))
        with self.assertRaisesRegex(fofkit.TreeError, "2 trees, the header says 3"):
            fofkit.read_tree(bad)
        with open(bad, "w") as f:
            f.write("1 2 3\n")
        with self.assertRaisesRegex(fofkit.TreeError, "not a Consistent-Trees file"):
            fofkit.read_tree(bad)


def halotree_missing():
    """None when halotree (built with HDF5) and h5py are there, else what is missing."""
    why = buildenv.why_missing(["halotree"])
    if why:
        return why
    try:
        import h5py  # noqa: F401
    except ImportError:
        return "no h5py"
    r = subprocess.run(["halotree", "a_0.hdf5", "a_1.hdf5"], stderr=subprocess.PIPE, text=True)
    return "halotree is built without HDF5" if "no HDF5" in r.stderr else None


@unittest.skipIf(halotree_missing(), halotree_missing() or "")
class TestHalotree(unittest.TestCase):
    def test_constructed_series(self):
        here = os.path.dirname(os.path.abspath(__file__))
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([sys.executable, os.path.join(here, "..", "..", "tests", "py", "treecat.py"), d], check=True)
            cats = [os.path.join(d, f"cat_00{k}.hdf5") for k in range(3)]
            out = os.path.join(d, "tree_0_0_0.dat")
            subprocess.run(["halotree", "-o", out] + cats, check=True)
            t = fofkit.read_tree(out)
            self.assertEqual(len(t), 18)
            self.assertEqual(len(t.roots), 7)
            # the first tree: A2 (snapshot 2, row 0), its main branch A1, A
            b = t.main_branch(t.roots[0])
            np.testing.assert_array_equal(t["Snap_num"][b], [2, 1, 0])
            np.testing.assert_array_equal(t["Len"][b], [143, 140, 100])


if __name__ == "__main__":
    unittest.main()
