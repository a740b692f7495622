"""test_stream.py - the fofkit package against fofdump(1) and the C programs, and on damaged streams.

Run with `python3 -m unittest` in python/: the programs are found on the PATH, in $FOFKIT_BUILD/bin or in
the checkout's build/bin (buildenv.py); without them the tests that need them skip, naming them. Nothing
here needs ../shared/data.
"""

import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import buildenv  # noqa: E402  (first: the build's programs on the PATH, its libfofkit)
import fofkit  # noqa: E402

PROGRAMS = ["mkuniverse", "tipsy2bin", "kdbuild", "foflink", "groups", "halostats", "fofdump"]
NEED = buildenv.need(PROGRAMS)


def sh(cmd, cwd):
    """Runs a shell pipeline in cwd; its stdout as bytes (a failure fails the test)."""
    return subprocess.run(cmd, shell=True, cwd=cwd, check=True, stdout=subprocess.PIPE).stdout


class Fixture:
    """One mock universe through the pipeline, made once: plain and compressed streams, the
    catalogue as text and as a stream, and the .grp file."""

    dir = None

    @classmethod
    def get(cls):
        if cls.dir is None:
            cls.dir = tempfile.mkdtemp(prefix="fofkit-py-")
            sh("mkuniverse -n 20000 -s 7 -o snap.std"
               " && tipsy2bin -o snap.fof snap.std"
               " && kdbuild snap.fof | foflink -b 0.2,0.1 | groups -m 10 -o grouped.fof"
               " && tipsy2bin -z snap.std | kdbuild -z | foflink -z -b 0.2,0.1 | groups -z -m 10 -o groupedz.fof"
               " && halostats --G=1 --format=stream -o cat.fof grouped.fof"  # the mock's units: G = 1
               " && halostats --G=1 -o cat.txt grouped.fof"
               " && groups -m 10 --format=grp -o snap.grp grouped.fof", cls.dir)
        return cls.dir


def tearDownModule():
    if Fixture.dir:
        shutil.rmtree(Fixture.dir)


def path(name):
    return os.path.join(Fixture.get(), name)


def fofdump_chunks(p):
    """fofdump's listing: (tag, dtype, level, rows, cols, stored, flags) per chunk."""
    out = []
    for line in sh("fofdump " + p, Fixture.get()).decode().splitlines()[1:]:
        f = line.split()
        out.append((f[0], f[1], int(f[2]), int(f[3]), int(f[4]), int(f[5]), sorted(f[6:])))
    return out


@NEED
class AgainstPrograms(unittest.TestCase):
    def test_chunk_list_equals_fofdump(self):
        for name in ("grouped.fof", "groupedz.fof", "cat.fof"):
            with fofkit.open(path(name)) as s:
                mine = [(c.tag, c.dtype, c.level, c.rows, c.columns, c.stored, sorted(c.flag_names()))
                        for c in s.chunks]
                self.assertEqual(mine, fofdump_chunks(name), name)

    def test_every_chunk_equals_fofdump_c(self):
        with fofkit.open(path("cat.fof")) as s:
            self.assertTrue(s.has("HALO", 1) and s.has("HCOL"))
            for c in s.chunks:
                text = sh("fofdump -c %s -l %d cat.fof" % (c.tag, c.level), Fixture.get()).decode()
                if c.text:
                    want = dict(line.split(" ", 1) for line in text.splitlines())
                    self.assertEqual(s.text(c.tag, c.level), want, c.tag)
                else:
                    got = s.array(c.tag, c.level)
                    self.assertEqual(got.shape, (c.rows, c.columns))
                    # fofdump prints binary32 with 9 digits, binary64 with 17 and integers whole: all read
                    # back exactly
                    want = np.array([line.split() for line in text.splitlines()], dtype=np.float64)
                    want = want.astype(got.dtype).reshape(got.shape)
                    self.assertTrue(np.array_equal(got, want), c.tag)

    def test_module_lists_as_fofdump(self):
        pkg = os.path.dirname(os.path.dirname(fofkit.__file__))
        for name in ("cat.fof", "groupedz.fof"):
            mine = sh("PYTHONPATH=%s %s -m fofkit %s" % (pkg, sys.executable, name), Fixture.get())
            self.assertEqual(mine, sh("fofdump " + name, Fixture.get()), name)
        mine = sh("PYTHONPATH=%s %s -m fofkit < cat.fof" % (pkg, sys.executable), Fixture.get())
        self.assertEqual(mine, sh("fofdump cat.fof", Fixture.get()))

    def test_compressed_and_pipe_read_the_same(self):
        with fofkit.open(path("grouped.fof")) as a, fofkit.open(path("groupedz.fof")) as z:
            with open(path("groupedz.fof"), "rb") as f:
                p = fofkit.open(f)  # read sequentially, as from a pipe
            self.assertTrue(any(c.zlib for c in z.chunks))
            self.assertEqual([(c.tag, c.level) for c in a.chunks], [(c.tag, c.level) for c in z.chunks])
            for c in a.chunks:
                for other in (z, p):
                    x, y = a.get(c.tag, c.level), other.get(c.tag, c.level)
                    if c.text:
                        self.assertEqual(x, y)
                    else:
                        self.assertTrue(np.array_equal(x, y), c.tag)

    def test_stdin_pipe(self):
        code = ("import sys; sys.path.insert(0, %r); import fofkit; s = fofkit.open('-'); "
                "print(len(s.chunks), s.name, int(s.gid().sum()))" % os.path.dirname(os.path.dirname(fofkit.__file__)))
        out = sh("kdbuild snap.fof | foflink -b 0.2 | groups -m 10 | %s -c \"%s\"" % (sys.executable, code),
                 Fixture.get()).decode().split()
        with fofkit.open(path("grouped.fof")) as s:
            self.assertEqual(out[1], "stdin")
            self.assertEqual(int(out[2]), int(s.gid(0).astype(np.int64).sum()))

    def test_particles_in_snapshot_order(self):
        # kdbuild puts the particles in tree order; by ID they are tipsy2bin's order again
        with fofkit.open(path("snap.fof")) as raw, fofkit.open(path("grouped.fof")) as s:
            self.assertFalse(np.array_equal(s.get("POS"), raw.get("POS")))
            for tag in ("POS", "VEL", "MASS", "ID"):
                self.assertTrue(np.array_equal(s.particles(tag, order="snapshot"), raw.get(tag)), tag)
            with self.assertRaises(fofkit.StreamError):
                s.particles("GID")  # not per particle
            with self.assertRaises(ValueError):
                s.particles("POS", order="tree")

    def test_groups_equal_the_grp_file(self):
        with open(path("snap.grp")) as f:
            grp = np.array(f.read().split(), dtype=np.int64)
        with fofkit.open(path("grouped.fof")) as s:
            gid = s.gid(0)
            self.assertEqual(grp[0], len(gid))
            self.assertTrue(np.array_equal(grp[1:], gid))
            members = s.members(0)
            self.assertEqual(len(members), int(s.text("GRPS")["ngroups"]))
            for g in (1, 2, len(members)):
                self.assertTrue(np.array_equal(members[g - 1], np.flatnonzero(grp[1:] == g)))
            sizes = [len(m) for m in members]
            self.assertEqual(sizes, sorted(sizes, reverse=True))  # numbered by size
            self.assertTrue(len(s.members(1)) > 0)

    def test_catalogue_equals_halostats_text(self):
        with open(path("cat.txt")) as f:
            lines = f.read().splitlines()
        names = [ln for ln in lines if ln.startswith("#")][-1][1:].split()
        rows = np.array([ln.split() for ln in lines if not ln.startswith("#")], dtype=np.float64)
        with fofkit.open(path("cat.fof")) as s:
            cat = s.catalogue()
            self.assertEqual(list(cat.dtype.names), names)
            self.assertEqual(len(cat), len(rows))
            self.assertEqual(sorted(set(cat["level"])), [0, 1])
            # whole-number columns are integers; mbp_id exact
            for name in ("level", "host", "id", "n", "mbp_id"):
                self.assertEqual(cat.dtype[name], np.dtype("<i8"), name)
            self.assertEqual(cat.dtype["mass"], np.dtype("<f8"))
            self.assertEqual(list(cat["mbp_id"]), [int(v) for v in rows[:, names.index("mbp_id")]])
            for k, name in enumerate(names):
                # the text has 9 significant digits (%.9g); the stream the full binary64
                self.assertTrue(np.allclose(cat[name], rows[:, k], rtol=1e-8, atol=1e-12), name)
            units = s.catalogue_units()
            self.assertEqual(units["mass"], "mass")
            self.assertEqual(units["n"], "1")
            self.assertEqual(units["phi_mbp"], "velocity^2")
            one = s.catalogue(level=1)
            self.assertTrue(np.all(one["level"] == 1))
            self.assertEqual(len(one), int(s.text("GRPS", 1)["ngroups"]))
            # group 1's size and mass from the particles themselves
            ids, mass = s.ids(), s.get("MASS")[:, 0]
            in1 = s.gid(0)[ids] == 1
            self.assertEqual(cat["n"][0], in1.sum())
            self.assertAlmostEqual(cat["mass"][0], mass[in1].sum(dtype=np.float64), delta=1e-6 * cat["mass"][0])


def damaged(data, what):
    """A temporary file holding data; its path."""
    fd, p = tempfile.mkstemp(prefix="fofkit-py-" + what + "-", dir=Fixture.get())
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return p


@NEED
class Damage(unittest.TestCase):
    """Every kind of damage is a StreamError naming it, from a file and from a pipe; fofdump
    refuses the same files."""

    @classmethod
    def setUpClass(cls):
        with open(path("groupedz.fof"), "rb") as f:
            cls.good = f.read()
        with fofkit.open(path("groupedz.fof")) as s:
            cls.pos = s.find("POS")
            cls.snapc = s.find("SNAP")

    def refused(self, data, message, payload=False):
        p = damaged(data, "x")
        for how in ("file", "pipe"):
            with self.assertRaises(fofkit.StreamError, msg=how) as e:
                if how == "file":
                    with fofkit.open(p) as s:
                        if payload:
                            s.verify()
                else:
                    with open(p, "rb") as f:
                        fofkit.open(f)
            self.assertIn(message, str(e.exception))
        r = subprocess.run(["fofdump", "--check", p], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.assertEqual(r.returncode, 1, r.stderr)

    def test_intact(self):
        s = fofkit.open(damaged(self.good, "ok"))
        self.addCleanup(s.close)
        s.verify()
        self.assertEqual(len(s.chunks), len(fofdump_chunks(path("groupedz.fof"))))

    def test_payload_byte_flipped(self):
        d = bytearray(self.good)
        d[self.pos.offset + 100] ^= 0x10
        self.refused(bytes(d), "chunk POS: payload CRC mismatch", payload=True)
        # the damage is found when the chunk is read, and only then
        s = fofkit.open(damaged(bytes(d), "lazy"))
        self.addCleanup(s.close)
        s.get("VEL")
        with self.assertRaises(fofkit.StreamError):
            s.get("POS")

    def test_header_byte_flipped(self):
        d = bytearray(self.good)
        d[self.pos.offset - 64 + 17] ^= 1  # the rows field
        self.refused(bytes(d), "damaged chunk header at byte %d" % (self.pos.offset - 64))

    def test_stream_header(self):
        d = bytearray(self.good)
        d[20] = 1
        self.refused(bytes(d), "damaged stream header")
        self.refused(b"\x89PNG\r\n\x1a\n" + self.good[8:], "not a fofkit stream")
        self.refused(b"hello\n", "not a fofkit stream")
        with self.assertRaises(fofkit.StreamError):
            fofkit.open(damaged(b"", "empty"))

    def test_version(self):
        d = bytearray(self.good[:64])
        d[8:12] = struct.pack("<I", 2)
        d[60:64] = struct.pack("<I", zlib.crc32(bytes(d[:60])))
        self.refused(bytes(d) + self.good[64:], "unsupported stream version 2")

    def test_module_refuses_damage(self):
        d = bytearray(self.good)
        d[self.pos.offset + 100] ^= 0x10
        p = damaged(bytes(d), "m")
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(fofkit.__file__)))
        r = subprocess.run([sys.executable, "-m", "fofkit", p], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, b"")
        self.assertEqual(r.stderr.decode(), "fofkit: %s: chunk POS: payload CRC mismatch (damaged data)\n" % p)

    def test_truncated_anywhere(self):
        n = len(self.good)
        for cut in (64, 100, self.pos.offset - 10, self.pos.offset + 5, n - 64, n - 1):
            self.refused(self.good[:cut], "truncated stream")

    def test_data_after_end(self):
        self.refused(self.good + bytes(64), "data after the END chunk")

    def test_nonzero_padding(self):
        c = self.snapc  # a compressed text record: its padding follows the stored bytes
        self.assertNotEqual(c.stored % 64, 0)
        d = bytearray(self.good)
        d[c.offset + c.stored] = 7
        self.refused(bytes(d), "chunk SNAP: nonzero padding", payload=True)

    def test_corrupt_zlib_with_a_valid_crc(self):
        # the CRC rewritten over damaged deflate data: only inflating finds it
        c = self.pos
        d = bytearray(self.good)
        for k in range(c.offset + 10, c.offset + 40):
            d[k] ^= 0xFF
        crc = zlib.crc32(bytes(d[c.offset:c.offset + c.stored]))
        h = c.offset - 64
        d[h + 40:h + 44] = struct.pack("<I", crc)
        d[h + 60:h + 64] = struct.pack("<I", zlib.crc32(bytes(d[h:h + 60])))
        s = fofkit.open(damaged(bytes(d), "zlib"))
        self.addCleanup(s.close)
        with self.assertRaises(fofkit.StreamError) as e:
            s.get("POS")
        self.assertIn("chunk POS:", str(e.exception))

    def test_missing_chunk(self):
        with fofkit.open(path("snap.fof")) as s:
            # a StreamError, and a KeyError as before
            for cls in (fofkit.StreamError, KeyError, fofkit.ChunkMissing):
                with self.assertRaises(cls) as e:
                    s.gid()
                self.assertEqual(str(e.exception), "%s: stream has no chunk GID of level 0" % s.name)
            with self.assertRaises(fofkit.StreamError) as e:
                s.catalogue()
            self.assertIn("stream has no halostats catalogue (no HCOL chunk: run halostats --format=stream)",
                          str(e.exception))


if __name__ == "__main__":
    unittest.main()
