"""test_members.py - fofkit.members: each halo's members from the user's own Gadget-4 HDF5 snapshot by ID (h5py,
pynbody), the catalogue's (halostats --format=hdf5, and the grouped stream) against the snapshot's values; and
what `import fofkit` loads (no MPI, HDF5, libpng or cairo until a call needs it).

Run with `python3 -m unittest tests.test_members` in python/ (buildenv.py finds the programs). Skips, saying
why, without ../shared/data/g4-lcdm-gas-z0.hdf5 (FOFKIT_DATA), h5py, the programs or a build with HDF5;
the pynbody test without pynbody.
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

SNAPSHOT = os.path.join(buildenv.DATA, "g4-lcdm-gas-z0.hdf5")
PROGRAMS = ["hdf52bin", "kdbuild", "foflink", "groups", "halostats"]


def _why_not():
    if not os.path.exists(SNAPSHOT):
        return "no %s" % SNAPSHOT
    try:
        import h5py  # noqa: F401
    except ImportError:
        return "no h5py"
    why = buildenv.why_missing(PROGRAMS)
    if why:
        return why
    r = subprocess.run(["halostats", "--format=hdf5", "/dev/null"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    return "halostats is built without HDF5" if "no HDF5" in r.stderr else None


WHY = _why_not()


def snapshot_arrays(f, name):
    """A Gadget-4 HDF5 snapshot's dataset over every particle type, types in order, as a user loads it."""
    parts = [f["PartType%d/%s" % (t, name)][:] for t in range(6) if "PartType%d" % t in f]
    return np.concatenate(parts)


def snapshot_masses(f):
    table = f["Header"].attrs["MassTable"]
    return np.concatenate([f["PartType%d/Masses" % t][:] if "Masses" in f["PartType%d" % t] else
                           np.full(f["PartType%d/ParticleIDs" % t].shape[0], table[t])
                           for t in range(6) if "PartType%d" % t in f])


def centre_of_mass(pos, m, box, near):
    """The periodic centre of mass of pos, the minimum image taken about near."""
    d = pos.astype(np.float64) - near
    d -= box * np.round(d / box)
    return (near + (m[:, None] * d).sum(0) / m.sum()) % box


@unittest.skipIf(WHY, WHY or "")
class Members(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import h5py

        cls.dir = tempfile.mkdtemp(prefix="fofkit-members-")
        # every type, dark matter linked at two levels and gas attached (foflink's hydro default)
        subprocess.run("hdf52bin %s | kdbuild | foflink -b 0.2,0.1 | groups -m 20 -o g.fof"
                       " && halostats --format=hdf5 -o cat.hdf5 g.fof && halostats --format=stream -o cat.fof g.fof"
                       % SNAPSHOT, shell=True, cwd=cls.dir, check=True)
        with h5py.File(SNAPSHOT, "r") as f:
            cls.ids, cls.pos = snapshot_arrays(f, "ParticleIDs"), snapshot_arrays(f, "Coordinates")
            cls.mass, cls.box = snapshot_masses(f), float(f["Header"].attrs["BoxSize"])
        cls.cat = os.path.join(cls.dir, "cat.hdf5")
        with h5py.File(cls.cat, "r") as c:
            cls.glen, cls.gmass, cls.gcm = c["Group/GroupLen"][:], c["Group/GroupMass"][:], c["Group/GroupCM"][:]
            cls.catids = c["IDs/ID"][:]
            cls.fofid = c["Subhalo/SubhaloFofID"][:] if "Subhalo/SubhaloFofID" in c else np.zeros(0)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_h5py_snapshot(self):
        """Each group's members from the snapshot by ID: the catalogue's IDs, count, mass and centre of mass."""
        idx = fofkit.members(self.cat, self.ids)
        self.assertEqual(len(idx), len(self.glen))
        self.assertGreater(len(idx), 10)
        start = 0
        for g, rows in enumerate(idx):
            self.assertEqual(rows.dtype, np.int64)
            self.assertEqual(len(rows), self.glen[g])
            np.testing.assert_array_equal(self.ids[rows], self.catids[start:start + self.glen[g]])
            start += self.glen[g]
            m = self.mass[rows].astype(np.float64)
            np.testing.assert_allclose(m.sum(), self.gmass[g], rtol=1e-6)
            np.testing.assert_allclose(centre_of_mass(self.pos[rows], m, self.box, self.gcm[g]), self.gcm[g],
                                       rtol=0, atol=1e-6 * self.box, err_msg="group %d" % (g + 1))
        # gas and dark matter both among the members of the largest group (the IDs of both types joined)
        ngas = len(self.ids) // 2
        self.assertTrue((idx[0] < ngas).any() and (idx[0] >= ngas).any())
        # one group alone, and the open file
        import h5py

        with h5py.File(self.cat, "r") as f:
            np.testing.assert_array_equal(fofkit.members(f, self.ids, group=3), idx[2])

    def test_any_order(self):
        """The user's arrays in another order: the rows follow them."""
        perm = np.random.default_rng(3).permutation(len(self.ids))
        idx = fofkit.members(self.cat, self.ids[perm], group=1)
        np.testing.assert_array_equal(self.ids[perm][idx], self.catids[:self.glen[0]])

    def test_stream(self):
        """The grouped stream's groups, by its PID chunk: the HDF5 catalogue's members; ids=None: original indices."""
        h5 = fofkit.members(self.cat, self.ids)
        for name in ("g.fof", "cat.fof"):
            st = fofkit.members(os.path.join(self.dir, name), self.ids)
            self.assertEqual(len(st), len(h5))
            for a, b in zip(st, h5):
                np.testing.assert_array_equal(np.sort(a), np.sort(b))
        with fofkit.open(os.path.join(self.dir, "g.fof")) as s:
            orig = fofkit.members(s, None, level=1)
            ref = s.members(level=1)
            self.assertEqual(len(orig), len(ref))
            for a, b in zip(orig, ref):
                np.testing.assert_array_equal(a, b)

    def test_subhalos(self):
        """Subhalo rows (the level 1 groups here): the stream's level 1 groups named by SubhaloFofID."""
        sub = fofkit.members(self.cat, self.ids, subhalos=True)
        self.assertEqual(len(sub), len(self.fofid))
        self.assertGreater(len(sub), 5)
        level1 = fofkit.members(os.path.join(self.dir, "g.fof"), self.ids, level=1)
        for k, rows in enumerate(sub):
            np.testing.assert_array_equal(np.sort(rows), np.sort(level1[self.fofid[k] - 1]))

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, r"^ids: 1 of the catalogue's [0-9]+ member IDs are not among"):
            fofkit.members(self.cat, np.delete(self.ids, np.flatnonzero(np.isin(self.ids, self.catids))[0]))
        # missing='drop': the dark matter alone gives each group's dark members
        dark = self.ids[len(self.ids) // 2:]
        rows = fofkit.members(self.cat, dark, group=1, missing="drop")
        self.assertTrue(0 < len(rows) < self.glen[0])
        self.assertTrue(np.isin(dark[rows], self.catids[:self.glen[0]]).all())
        with self.assertRaisesRegex(ValueError, r"^ids: ID [0-9]+ is held by rows"):
            fofkit.members(self.cat, np.concatenate([self.ids, self.ids[:1]]))
        with self.assertRaisesRegex(ValueError, r"^ids: an HDF5 catalogue names its members by ID"):
            fofkit.members(self.cat, None)
        with self.assertRaisesRegex(ValueError, r"^group 0: the catalogue has groups 1 to [0-9]+$"):
            fofkit.members(self.cat, self.ids, group=0)
        with self.assertRaisesRegex(TypeError, r"^ids: dtype float64"):
            fofkit.members(self.cat, self.ids.astype(np.float64))
        with self.assertRaisesRegex(ValueError, r"level 1"):
            fofkit.members(self.cat, self.ids, level=1)

    def test_pynbody(self):
        """pynbody's own load of the snapshot: the halo's particles through the rows of its iord."""
        try:
            import pynbody
        except ImportError:
            self.skipTest("no pynbody")
        sim = pynbody.load(SNAPSHOT)
        iord = np.asarray(sim["iord"])
        idx = fofkit.members(self.cat, iord, order="snapshot")  # a SubSnap keeps pynbody's family order
        for g in (0, 1, len(idx) - 1):
            h = sim[idx[g]]
            self.assertEqual(len(h), self.glen[g])
            start = int(self.glen[:g].sum())
            np.testing.assert_array_equal(np.sort(np.asarray(h["iord"])),
                                          np.sort(self.catids[start:start + self.glen[g]]))
            m = np.asarray(h["mass"], dtype=np.float64)
            np.testing.assert_allclose(m.sum(), self.gmass[g], rtol=1e-6)
            np.testing.assert_allclose(centre_of_mass(np.asarray(h["pos"]), m, self.box, self.gcm[g]), self.gcm[g],
                                       rtol=0, atol=1e-6 * self.box)

    def test_loaded_libraries(self):
        """import fofkit and fofkit.fof load no MPI, HDF5, libpng or cairo; fofkit.members of an HDF5 catalogue
        (the call that needs HDF5) then works, h5py's libhdf5 loaded for it."""
        code = r"""
import re, sys, numpy as np
def loaded():
    with open("/proc/self/maps") as f:
        return sorted(set(m for m in re.findall(r"/(lib(?:mpi|hdf5|png|cairo)[^/\s]*\.so[^/\s]*)", f.read())))
import fofkit
print("import:", loaded())
try:
    fofkit.library.library()
    g = fofkit.fof(np.random.default_rng(1).random((1000, 3), dtype=np.float32), box=1.0)
    print("fof:", loaded(), fofkit.library.library()._name)
except fofkit.LibraryError:
    print("fof: no library")
ids = np.concatenate([np.arange(1, 32769), np.arange(1, 32769) + 32768])
print("members:", len(fofkit.members(sys.argv[1], ids, missing="drop")[0]) > 0, loaded() != [])
"""
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(fofkit.__file__)))
        r = subprocess.run([sys.executable, "-c", code, self.cat], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(lines[0], "import: []")
        if lines[1] != "fof: no library":
            self.assertTrue(lines[1].startswith("fof: [] "), lines[1])
        self.assertEqual(lines[2], "members: True True")


if __name__ == "__main__":
    unittest.main()
