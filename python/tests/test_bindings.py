"""test_bindings.py - fofkit.fof and fofkit.halos (libfofkit through ctypes) against the C programs' .grp and
catalogue, on mock universes and every real snapshot; bad arrays refused with clear errors; GPU arrays.

Run with `python3 -m unittest tests.test_bindings` in python/: the programs and the library are those of
$FOFKIT_BUILD or of the checkout's build/ (buildenv.py; $FOFKIT_LIB and the PATH before them).
The tests skip when libfofkit cannot be loaded; those of real snapshots when ../shared/data is absent
(FOFKIT_DATA overrides it); CudaArrays when CuPy or a GPU is missing.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import buildenv  # noqa: E402  (first: the build's programs on the PATH, its libfofkit)
import fofkit  # noqa: E402

try:
    fofkit.library.library()
    HAVE_LIB = True
except fofkit.LibraryError as e:
    HAVE_LIB, WHY = False, str(e)
NEED_LIB = unittest.skipUnless(HAVE_LIB, "" if HAVE_LIB else WHY)
PROGRAMS = ["mkuniverse", "tipsy2bin", "kdbuild", "foflink", "groups", "halostats"]
NEED_PROGRAMS = buildenv.need(PROGRAMS)
DATA = buildenv.DATA


def sh(cmd, cwd):
    return subprocess.run(cmd, shell=True, cwd=cwd, check=True, stdout=subprocess.PIPE).stdout


def grp(path):
    """The group column of a .grp file (its first line is the count)."""
    with open(path) as f:
        a = np.array(f.read().split(), dtype=np.int64)
    assert a[0] == len(a) - 1
    return a[1:]


def box_of(s):
    snap = s.text("SNAP")
    return float(snap["box"]), float(snap["origin"]), int(snap["periodic"]) == 1


class Dir:
    dir = None

    @classmethod
    def get(cls):
        if cls.dir is None:
            cls.dir = tempfile.mkdtemp(prefix="fofkit-bind-")
        return cls.dir


def tearDownModule():
    if Dir.dir:
        shutil.rmtree(Dir.dir)


@NEED_LIB
@NEED_PROGRAMS
class AgainstPrograms(unittest.TestCase):
    """fofkit.fof on a stream's arrays (tipsy2bin's order: the original) equals groups' .grp."""

    def same(self, stream, link, levels=1, periodic=True, **kw):
        d = Dir.get()
        name = os.path.basename(stream)
        # fofkit.fof links every particle together: foflink --link-types=all (a stream with dark
        # matter and gas or stars is otherwise a hydro run, foflink(1))
        sh("kdbuild --device=cpu %s | foflink --device=cpu --link-types=all %s | groups -m 8 -o %s.g"
           % (stream, link, name), d)
        with fofkit.open(stream) as s:
            pos = s.particles("POS", order="snapshot")
            vel = s.particles("VEL", order="snapshot") if "psi" in kw else None
            box, origin, per = box_of(s)
            ids = s.get("ID").ravel().astype(np.int64)
            nsource = int(s.text("SNAP")["nsource"])
        gid = fofkit.fof(pos, box=box, origin=origin, periodic=per and periodic, vel=vel, device="cpu", **kw)
        gid = gid.reshape(levels, -1)
        for k in range(levels):
            sh("groups -m 8 --format=grp --level=%d -o %s.%d.grp %s.g" % (k, name, k, name), d)
            ref = grp(os.path.join(d, "%s.%d.grp" % (name, k)))
            self.assertEqual(len(ref), nsource)
            mine = np.zeros(nsource, dtype=np.int64)
            mine[np.sort(ids)] = gid[k]  # particles() gave them by increasing ID
            np.testing.assert_array_equal(mine, ref)
            self.assertGreater(ref.max(), 0)

    def test_mock(self):
        d = Dir.get()
        sh("mkuniverse -n 30000 -s 21 -o mock.std && tipsy2bin mock.std -o mock.fof", d)
        m = os.path.join(d, "mock.fof")
        self.same(m, "-b 0.2", b=0.2)
        self.same(m, "-b 0.2,0.1,0.05", levels=3, b=[0.2, 0.1, 0.05])
        self.same(m, "-b 0.2 --psi-rel=1", b=0.2, psi=1.0, psi_relative=True)
        self.same(m, "-l 0.01 --no-periodic", l=0.01, periodic=False)

    def test_real_snapshots(self):
        if not os.path.isdir(DATA):
            self.skipTest("no %s" % DATA)
        d, ran = Dir.get(), 0
        for f, conv, link, kw in [
                ("skid-dark.std", "tipsy2bin", "-b 0.2", dict(b=0.2)),
                ("lambs-30k.std", "tipsy2bin", "-b 0.2", dict(b=0.2)),
                # fofkit.fof's b is every particle's spacing: foflink --spacing=all (the zoom's masses differ)
                ("test4-zoom.std", "tipsy2bin", "-b 0.2 --spacing=all", dict(b=0.2)),
                ("cube300-ics.std", "tipsy2bin", "-l 0.02", dict(l=0.02)),
                ("run581-dark-star.std", "tipsy2bin --no-periodic", "-l 0.05", dict(l=0.05)),
                ("run99-gas-dark-star.std", "tipsy2bin --no-periodic", "-l 0.05", dict(l=0.05)),
                ("onestar-pad1.std", "tipsy2bin --no-periodic", "-l 0.05", dict(l=0.05)),
                ("gadget2-lcdm-gas-ics.dat", "gadget2bin --box=50000 -t dark", "-l 1406.25", dict(l=1406.25)),
                ("g4-lcdm-gas-z0.hdf5", "hdf52bin --types=dark", "-b 0.2", dict(b=0.2))]:
            path = os.path.join(DATA, f)
            if not os.path.exists(path):
                continue
            out = os.path.join(d, f + ".fof")
            r = subprocess.run("%s %s -o %s" % (conv, path, out), shell=True, cwd=d, stderr=subprocess.PIPE)
            if r.returncode and b"no HDF5 support" in r.stderr:
                continue
            self.assertEqual(r.returncode, 0, r.stderr)
            with self.subTest(snapshot=f):
                self.same(out, link, **kw)
            ran += 1
        self.assertGreater(ran, 0)

    def test_halos(self):
        """fofkit.halos on a grouped stream's arrays (its order and IDs) equals halostats' catalogue."""
        d = Dir.get()
        sh("mkuniverse -n 30000 -s 22 | tipsy2bin | kdbuild | foflink -b 0.2 | groups -m 20 -o hg.fof"
           " && halostats --G=1 --format=stream -o hc.fof hg.fof"  # the mock's units: G = 1, fofkit.halos' default
           " && halostats --G=1 --format=stream --so --omega-m=0.3 --unbind -o hm.fof hg.fof", d)
        with fofkit.open(os.path.join(d, "hg.fof")) as s:
            pos, vel, mass = s.get("POS"), s.get("VEL"), np.ascontiguousarray(s.get("MASS").ravel())
            ids = s.get("ID").ravel().astype(np.uint64)
            group = s.gid()[ids]
            box, origin, per = box_of(s)
        for stream, kw in (("hc.fof", {}), ("hm.fof", dict(so=True, omega_m=0.3, unbind=True))):
            with fofkit.open(os.path.join(d, stream)) as c:
                ref = c.catalogue(level=0)
                ints = set(c.text("HCOL")["integer_columns"].split())
            cat = fofkit.halos(pos, vel, group, mass=mass, ids=ids, box=box, origin=origin, periodic=per,
                               device="cpu", **kw)
            self.assertEqual(cat.dtype.names, ref.dtype.names)
            # ids and counts are integers in both, with halostats' integer_columns (HCOL)
            self.assertEqual(cat.dtype, ref.dtype)
            self.assertEqual(ints, {n for n in cat.dtype.names if cat.dtype[n] == np.int64})
            self.assertTrue({"id", "n", "mbp_id", "n_dark", "n_contam"} <= ints)
            self.assertEqual("n_bound" in ints, "unbind" in kw)
            self.assertEqual(len(cat), len(ref))
            for name in ref.dtype.names:
                np.testing.assert_array_equal(cat[name], ref[name], err_msg=name)
        cat, bound = fofkit.halos(pos, vel, group, mass=mass, ids=ids, box=box, origin=origin, unbind=True,
                                  return_bound=True)
        self.assertEqual(int(bound.sum()), int(cat["n_bound"].sum()))


@NEED_LIB
class Arrays(unittest.TestCase):
    """What users pass: arrays used in place, wrong ones refused with clear errors, calls from threads."""

    @classmethod
    def setUpClass(cls):
        rng = np.random.default_rng(5)
        centres = rng.random((40, 3))
        cls.pos = np.concatenate([rng.random((4000, 3)),
                                  (centres[rng.integers(0, 40, 16000)] + 0.01 * rng.standard_normal((16000, 3))) % 1.0]
                                 ).astype(np.float32)
        cls.vel = rng.standard_normal(cls.pos.shape).astype(np.float32)

    def test_groups(self):
        gid = fofkit.fof(self.pos, b=0.2, box=1.0)
        self.assertEqual(gid.dtype, np.uint32)
        self.assertEqual(gid.shape, (len(self.pos),))
        sizes = np.bincount(gid)[1:]
        self.assertTrue(len(sizes) >= 30 and (np.diff(sizes) <= 0).all() and sizes.min() >= 8)
        sinks = fofkit.fof(self.pos, b=0.2, box=1.0, sinks=True)
        self.assertTrue((sinks <= np.arange(len(self.pos))).all())
        self.assertTrue((gid[sinks] == gid).all())
        lev = fofkit.fof(self.pos, b=[0.2, 0.1], box=1.0, minsize=1)
        self.assertEqual(lev.shape, (2, len(self.pos)))
        # levels nest: a level-1 group lies inside one level-0 group
        pairs = np.unique(np.stack([lev[1], lev[0]]), axis=1)
        self.assertEqual(len(np.unique(pairs[0])), pairs.shape[1])
        # a read-only array is read in place
        ro = self.pos.copy()
        ro.flags.writeable = False
        np.testing.assert_array_equal(fofkit.fof(ro, b=0.2, box=1.0), gid)

    def test_bad_arrays(self):
        pos = self.pos.copy()
        with self.assertRaisesRegex(TypeError, r"pos: dtype float64; fofkit needs float32 .*astype\(np.float32\)"):
            fofkit.fof(pos.astype(np.float64), box=1.0)
        with self.assertRaisesRegex(ValueError, r"pos: shape \(20000, 2\); fofkit needs \(n, 3\)"):
            fofkit.fof(pos[:, :2].copy(), box=1.0)
        with self.assertRaisesRegex(ValueError, r"pos: shape \(60000,\); fofkit needs \(n, 3\)"):
            fofkit.fof(pos.ravel(), box=1.0)
        with self.assertRaisesRegex(ValueError, "not C-contiguous"):
            fofkit.fof(np.asfortranarray(pos), box=1.0)
        with self.assertRaisesRegex(TypeError, "a numpy array .* is needed, not list"):
            fofkit.fof(pos.tolist(), box=1.0)
        pos[17, 1] = np.nan
        with self.assertRaises(fofkit.FofkitError) as e:
            fofkit.fof(pos, box=1.0)
        self.assertEqual(str(e.exception), "fofkit_fof: pos: particle 17 has a non-finite coordinate (%g nan %g)"
                         % (pos[17, 0], pos[17, 2]))
        self.assertEqual(e.exception.code, -2)
        pos[17, 1] = 0.5
        with self.assertRaisesRegex(fofkit.FofkitError, r"lies outside the periodic box \[0, 0.5\)"):
            fofkit.fof(pos, box=0.5)  # a box too small for the positions
        with self.assertRaisesRegex(fofkit.FofkitError, "larger than half the box"):
            fofkit.fof(pos, l=0.6, box=1.0)  # a box too small for l
        with self.assertRaisesRegex(fofkit.FofkitError, "b needs the box"):
            fofkit.fof(pos)
        with self.assertRaisesRegex(ValueError, "device: 'auto', 'cpu' or 'gpu'"):
            fofkit.fof(pos, box=1.0, device="tpu")
        with self.assertRaisesRegex(ValueError, "vel: 10 rows for the 20000 particles"):
            fofkit.fof(pos, box=1.0, vel=self.vel[:10], psi=1.0)
        with self.assertRaisesRegex(ValueError, "group: shape"):
            fofkit.halos(pos, self.vel, np.zeros((len(pos), 2), dtype=np.uint32), box=1.0)
        with self.assertRaisesRegex(TypeError, "group: dtype int64"):
            fofkit.halos(pos, self.vel, np.zeros(len(pos), dtype=np.int64), box=1.0)
        gid = fofkit.fof(pos, box=1.0)
        # out=: the caller's array, written in place, of the result's shape and dtype
        out = np.zeros(len(pos), dtype=np.uint32)
        self.assertIs(fofkit.fof(pos, box=1.0, out=out), out)
        np.testing.assert_array_equal(out, gid)
        out2 = np.zeros((2, len(pos)), dtype=np.uint32)
        fofkit.fof(pos, b=[0.2, 0.1], box=1.0, out=out2)
        np.testing.assert_array_equal(out2, fofkit.fof(pos, b=[0.2, 0.1], box=1.0))
        with self.assertRaisesRegex(TypeError, "out: dtype int32; fofkit needs uint32"):
            fofkit.fof(pos, box=1.0, out=np.zeros(len(pos), dtype=np.int32))
        with self.assertRaisesRegex(ValueError, "out: 3 rows; the result has 2 levels of 20000 particles"):
            fofkit.fof(pos, b=[0.2, 0.1], box=1.0, out=np.zeros((3, len(pos)), dtype=np.uint32))
        with self.assertRaisesRegex(ValueError, "out: 10 rows; the result has 20000 particles"):
            fofkit.fof(pos, box=1.0, out=out[:10])
        with self.assertRaisesRegex(fofkit.FofkitError, "fofkit_halos: .*omega_m"):
            fofkit.halos(pos, self.vel, gid, box=1.0, so=True)
        m = np.ones(len(pos), dtype=np.float32)
        m[3] = -1
        with self.assertRaisesRegex(fofkit.FofkitError, "mass: particle 3 has mass -1"):
            fofkit.halos(pos, self.vel, gid, mass=m, box=1.0)

    def test_threads(self):
        alone = [fofkit.fof(self.pos, l=0.003 + 0.001 * k, box=1.0, threads=1) for k in range(4)]
        out = [None] * 4

        def work(k):
            out[k] = fofkit.fof(self.pos, l=0.003 + 0.001 * k, box=1.0, threads=1)

        th = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in th:
            t.start()
        for t in th:
            t.join()
        for a, b in zip(alone, out):
            np.testing.assert_array_equal(a, b)

    def test_halos_columns(self):
        gid = fofkit.fof(self.pos, box=1.0, minsize=20)
        cat = fofkit.halos(self.pos, self.vel, gid, box=1.0, level=2)
        self.assertEqual(list(cat.dtype.names), fofkit.halo_columns())
        self.assertEqual(len(cat), gid.max())
        np.testing.assert_array_equal(cat["id"], np.arange(1, gid.max() + 1))
        np.testing.assert_array_equal(cat["n"], np.bincount(gid)[1:])
        self.assertTrue((cat["level"] == 2).all())
        self.assertIn("m200c", fofkit.halo_columns(so=True))


def _cupy():
    try:
        import cupy
        return cupy if cupy.cuda.runtime.getDeviceCount() > 0 else None
    except Exception:  # no CuPy, no driver, no GPU
        return None


@NEED_LIB
@unittest.skipUnless(_cupy(), "no CuPy with a GPU")
class CudaArrays(unittest.TestCase):
    """GPU arrays (__cuda_array_interface__) are linked on their GPU: the CPU's groups."""

    def test_cupy(self):
        cp = _cupy()
        rng = np.random.default_rng(9)
        pos = (rng.random((200000, 3)) ** 2).astype(np.float32)
        vel = rng.standard_normal(pos.shape).astype(np.float32)
        ref = fofkit.fof(pos, b=[0.2, 0.1], box=1.0, device="cpu")
        gpu = fofkit.fof(cp.asarray(pos), b=[0.2, 0.1], box=1.0)
        np.testing.assert_array_equal(gpu, ref)
        ref6 = fofkit.fof(pos, b=0.2, box=1.0, vel=vel, psi=1.0, device="cpu")
        np.testing.assert_array_equal(fofkit.fof(cp.asarray(pos), b=0.2, box=1.0, vel=cp.asarray(vel), psi=1.0), ref6)
        # the numbers written into GPU arrays (out=), one level and two, never through the host
        out = cp.zeros(len(pos), dtype=cp.uint32)
        self.assertIs(fofkit.fof(cp.asarray(pos), b=0.2, box=1.0, out=out), out)
        np.testing.assert_array_equal(cp.asnumpy(out), fofkit.fof(pos, b=0.2, box=1.0, device="cpu"))
        out2 = cp.zeros((2, len(pos)), dtype=cp.uint32)
        fofkit.fof(cp.asarray(pos), b=[0.2, 0.1], box=1.0, out=out2)
        np.testing.assert_array_equal(cp.asnumpy(out2), ref)
        with self.assertRaisesRegex(fofkit.FofkitError, "level 0: the group array is GPU memory, but the call runs "
                                                        "on the CPU"):
            fofkit.fof(pos, b=0.2, box=1.0, device="cpu", out=out)
        with self.assertRaisesRegex(ValueError, r"out: a GPU array of shape \(2, 200000\); fofkit needs \(n,\)"):
            fofkit.fof(cp.asarray(pos), b=0.2, box=1.0, out=out2)
        bad = cp.asarray(pos)
        bad[5, 0] = cp.nan
        with self.assertRaisesRegex(fofkit.FofkitError, "pos: particle 5 has a non-finite coordinate"):
            fofkit.fof(bad, box=1.0)
        cat = fofkit.halos(cp.asarray(pos), cp.asarray(vel), cp.asarray(ref[0]), ngroups=int(ref[0].max()), box=1.0,
                           centre="com")
        want = fofkit.halos(pos, vel, ref[0], box=1.0, centre="com")
        self.assertEqual(cat.dtype, want.dtype)
        for name in want.dtype.names:  # column by column: a NaN column (phi_mbp of COM centres) equals itself
            np.testing.assert_array_equal(cat[name], want[name], err_msg=name)


if __name__ == "__main__":
    unittest.main()
