"""fofkit.stream - reads a fofkit stream (fofstream(5)): its chunks, arrays, text records, particles, groups, catalogue.

The layout (lib/stream.h and fofstream(5) hold the same tables): a 64-byte stream header, then
chunks, each a 64-byte header and a payload zero-padded to a multiple of 64 bytes, the last one END.

Stream header: magic (8 bytes), version (<u4), 48 reserved bytes, CRC-32 of bytes 0..59 (<u4).
Chunk header:  tag (8, NUL-padded), dtype (4, a numpy typestr), flags (<u4: 1 zlib, 2 particle,
               4 text), rows (<u8), columns (<u4), level (<u4), stored size (<u8), payload CRC-32
               (<u4), 16 reserved bytes, CRC-32 of bytes 0..59 (<u4).
"""

import io
import mmap
import os
import struct
import sys
import zlib

import numpy as np

MAGIC = bytes([0x89, 0x46, 0x4F, 0x46, 0x0D, 0x0A, 0x1A, 0x0A])
VERSION = 1
ALIGN = 64
FLAG_ZLIB = 1
FLAG_PARTICLE = 2
FLAG_TEXT = 4
FLAGS_KNOWN = FLAG_ZLIB | FLAG_PARTICLE | FLAG_TEXT
DTYPES = {"<f4": 4, "<f8": 8, "<u4": 4, "<u8": 8, "<i4": 4, "<i8": 8, "|u1": 1}
TAG_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")

_HEAD = struct.Struct("<8s4sIQIIQI")  # the chunk header's fields before the reserved bytes


class StreamError(ValueError):
    """A stream that is not one, damaged (a CRC, the padding, the zlib data) or truncated, or
    one without a chunk asked for (ChunkMissing)."""


class ChunkMissing(StreamError, KeyError):
    """The stream has no chunk of the tag and level asked for: a StreamError, and a KeyError
    as well (what Stream.find raised before)."""

    def __str__(self):  # KeyError's would quote the message
        return str(self.args[0]) if self.args else ""


# halostats' whole-number columns (lib/halostats.c's U64 columns: ids and counts), as int64: for
# fofkit.halos, and for streams whose HCOL predates its integer_columns key (tests/python.bats checks
# the list against halostats' integer_columns)
INTEGER_COLUMNS = ("level", "host", "id", "n", "mbp_id", "n_gas", "n_dark", "n_star", "n_contam", "n_bound")


def _crc(data):
    return zlib.crc32(data) & 0xFFFFFFFF


def _pad(n):
    return -n % ALIGN


class Chunk:
    """One chunk's header: tag, dtype, flags, rows, columns, level, stored size, CRC; index is its
    place in the stream (from 0), offset where its payload starts (in a file)."""

    __slots__ = ("index", "tag", "dtype", "flags", "rows", "columns", "level", "stored", "crc", "offset")

    def __init__(self, index, tag, dtype, flags, rows, columns, level, stored, crc, offset):
        self.index, self.tag, self.dtype, self.flags = index, tag, dtype, flags
        self.rows, self.columns, self.level = rows, columns, level
        self.stored, self.crc, self.offset = stored, crc, offset

    @property
    def zlib(self):
        return bool(self.flags & FLAG_ZLIB)

    @property
    def particle(self):
        return bool(self.flags & FLAG_PARTICLE)

    @property
    def text(self):
        return bool(self.flags & FLAG_TEXT)

    @property
    def rawsize(self):
        """The payload's size uncompressed: rows x columns x the element size."""
        return self.rows * self.columns * DTYPES[self.dtype]

    def flag_names(self):
        return [n for n, b in (("text", FLAG_TEXT), ("particle", FLAG_PARTICLE), ("zlib", FLAG_ZLIB)) if self.flags & b]

    def __repr__(self):
        return "Chunk(%s level %d: %s %d x %d, %d bytes stored%s)" % (
            self.tag, self.level, self.dtype, self.rows, self.columns, self.stored,
            "".join(", " + n for n in self.flag_names()))


def _decode(h, index, at, offset, name):
    """The Chunk of the 64-byte header h read at byte at; StreamError when it is not a valid one."""
    if _crc(h[:60]) != struct.unpack_from("<I", h, 60)[0]:
        raise StreamError("%s: damaged chunk header at byte %d (CRC mismatch)" % (name, at))
    tagb, typb, flags, rows, cols, level, stored, crc = _HEAD.unpack_from(h)
    tag = tagb.rstrip(b"\0")
    if not tag or any(ch not in TAG_CHARS for ch in tag) or b"\0" in tag:
        raise StreamError("%s: bad chunk tag at byte %d" % (name, at))
    tag = tag.decode()
    dtype = typb.rstrip(b"\0").decode("ascii", "replace")
    if dtype not in DTYPES:
        raise StreamError("%s: chunk %s has unknown element type '%s'" % (name, tag, dtype))
    if flags & ~FLAGS_KNOWN:
        raise StreamError("%s: chunk %s has unknown flags 0x%x" % (name, tag, flags))
    if cols == 0:
        raise StreamError("%s: chunk %s has zero columns" % (name, tag))
    if flags & FLAG_TEXT and (dtype != "|u1" or cols != 1):
        raise StreamError("%s: text chunk %s is not a byte array" % (name, tag))
    c = Chunk(index, tag, dtype, flags, rows, cols, level, stored, crc, offset)
    if not flags & FLAG_ZLIB and stored != c.rawsize:
        raise StreamError("%s: chunk %s: payload size %d does not match %d rows x %d columns of %s"
                          % (name, tag, stored, rows, cols, dtype))
    return c


class Stream:
    """A fofkit stream, its chunks listed when it is opened (every header checked, END required).

    source: a path (the file is memory-mapped: arrays of uncompressed chunks are views of it),
    "-" for standard input, or a binary file object (a pipe): these are read once, sequentially,
    every payload checked and kept in memory. Payloads of a file are checked (CRC, padding) when
    read; verify() checks them all. Raises StreamError on a damaged or truncated stream, OSError
    when the file cannot be read."""

    def __init__(self, source, name=None):
        self._map = None
        self._file = None
        self._payloads = {}
        self.chunks = []
        if isinstance(source, (str, bytes, os.PathLike)) and source != "-":
            self.name = name or os.fspath(source)
            self._file = io.open(source, "rb")
            size = os.fstat(self._file.fileno()).st_size
            if size == 0:
                self._file.close()
                raise StreamError("%s: empty input" % self.name)
            try:
                self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
                self._scan_map()
            except BaseException:
                self.close()
                raise
        else:
            f = sys.stdin.buffer if source == "-" else source
            self.name = name or ("stdin" if source == "-" else getattr(f, "name", "stream"))
            self._scan_pipe(f)

    # -- opening

    def _check_stream_header(self, h):
        if len(h) == 0:
            raise StreamError("%s: empty input" % self.name)
        if len(h) < 8 or h[:8] != MAGIC:
            raise StreamError("%s: not a fofkit stream (bad magic)" % self.name)
        if len(h) < ALIGN:
            raise StreamError("%s: truncated stream (ends inside the stream header at byte %d)" % (self.name, len(h)))
        if _crc(h[:60]) != struct.unpack_from("<I", h, 60)[0]:
            raise StreamError("%s: damaged stream header (CRC mismatch)" % self.name)
        version = struct.unpack_from("<I", h, 8)[0]
        if version != VERSION:
            raise StreamError("%s: unsupported stream version %d (this reader reads version %d)"
                              % (self.name, version, VERSION))

    def _end(self, c):
        if c.stored != 0:
            raise StreamError("%s: END chunk carries a payload" % self.name)

    def _scan_map(self):
        m, size = self._map, len(self._map)
        self._check_stream_header(m[:ALIGN])
        at = ALIGN
        while True:
            if at + ALIGN > size:
                raise StreamError("%s: truncated stream (%s)" % (
                    self.name, "no END chunk" if at == size else "ends inside a chunk header"))
            c = _decode(m[at:at + ALIGN], len(self.chunks), at, at + ALIGN, self.name)
            if c.tag == "END":
                self._end(c)
                if at + ALIGN != size:
                    raise StreamError("%s: data after the END chunk" % self.name)
                return
            end = c.offset + c.stored + _pad(c.stored)
            if end > size:
                raise StreamError("%s: truncated stream (ends inside chunk %s at byte %d)" % (self.name, c.tag, size))
            self.chunks.append(c)
            at = end

    def _read(self, f, n, what, at):
        """n bytes of f, which is at byte at of the stream."""
        data = bytearray()
        while len(data) < n:
            b = f.read(n - len(data))
            if not b:
                break
            data += b
        if len(data) < n:
            raise StreamError("%s: truncated stream (ends inside %s at byte %d)" % (self.name, what, at + len(data)))
        return bytes(data)

    def _scan_pipe(self, f):
        h = f.read(ALIGN)
        if h and len(h) < ALIGN:
            h += f.read(ALIGN - len(h))
        self._check_stream_header(h)
        at = ALIGN
        while True:
            h = f.read(ALIGN)
            if not h:
                raise StreamError("%s: truncated stream (no END chunk)" % self.name)
            if len(h) < ALIGN:
                h += self._read(f, ALIGN - len(h), "a chunk header", at + len(h))
            c = _decode(h, len(self.chunks), at, None, self.name)
            if c.tag == "END":
                self._end(c)
                if f.read(1):
                    raise StreamError("%s: data after the END chunk" % self.name)
                return
            data = self._read(f, c.stored + _pad(c.stored), "chunk " + c.tag, at + ALIGN)
            self._check_payload(c, data)
            self._payloads[c.index] = data[:c.stored]
            self.chunks.append(c)
            at += ALIGN + len(data)

    # -- payloads

    def _check_payload(self, c, padded):
        if _crc(padded[:c.stored]) != c.crc:
            raise StreamError("%s: chunk %s: payload CRC mismatch (damaged data)" % (self.name, c.tag))
        if any(padded[c.stored:]):
            raise StreamError("%s: chunk %s: nonzero padding (damaged data)" % (self.name, c.tag))

    def _stored(self, c):
        """Chunk c's stored bytes, checked (a memoryview of the file, or bytes)."""
        if self._map is None:
            return self._payloads[c.index]
        view = memoryview(self._map)[c.offset:c.offset + c.stored + _pad(c.stored)]
        self._check_payload(c, view)
        return view[:c.stored]

    def raw(self, c):
        """Chunk c's payload bytes, CRC-checked and inflated when compressed."""
        data = self._stored(c)
        if not c.zlib:
            return data
        d = zlib.decompressobj()
        try:
            out = d.decompress(data, c.rawsize + 1)
        except zlib.error:
            raise StreamError("%s: chunk %s: corrupt zlib data" % (self.name, c.tag)) from None
        if len(out) > c.rawsize:
            raise StreamError("%s: chunk %s: decompresses to more than its declared size" % (self.name, c.tag))
        if not d.eof or len(out) < c.rawsize:
            raise StreamError("%s: chunk %s: zlib data ends early (%d of %d bytes)"
                              % (self.name, c.tag, len(out), c.rawsize))
        if d.unused_data:
            raise StreamError("%s: chunk %s: data after the end of its zlib stream" % (self.name, c.tag))
        return out

    def verify(self):
        """Checks every payload (CRC, padding, zlib data); raises StreamError at the first bad one."""
        for c in self.chunks:
            self.raw(c)

    # -- chunks by tag

    def find(self, tag, level=0):
        """The Chunk of that tag and level; ChunkMissing (a StreamError and a KeyError) when the
        stream has none."""
        for c in self.chunks:
            if c.tag == tag and c.level == level:
                return c
        raise ChunkMissing("%s: stream has no chunk %s of level %d" % (self.name, tag, level))

    def has(self, tag, level=0):
        return any(c.tag == tag and c.level == level for c in self.chunks)

    def levels(self, tag):
        """The levels of the chunks of that tag, in stream order."""
        return [c.level for c in self.chunks if c.tag == tag]

    def array(self, tag, level=0):
        """An array chunk as a rows x columns numpy array (read-only: a view of a mapped file
        when the chunk is not compressed)."""
        c = tag if isinstance(tag, Chunk) else self.find(tag, level)
        a = np.frombuffer(self.raw(c), dtype=c.dtype, count=c.rows * c.columns)
        return a.reshape(c.rows, c.columns)

    def text(self, tag, level=0):
        """A text chunk as a dict of its "key value" records (values are strings; the first
        line of a key wins, as fofstream(5) says)."""
        c = tag if isinstance(tag, Chunk) else self.find(tag, level)
        if not c.text:
            raise StreamError("%s: chunk %s is not text" % (self.name, c.tag))
        raw = bytes(self.raw(c))
        if b"\0" in raw:
            raise StreamError("%s: text chunk %s contains a NUL byte" % (self.name, c.tag))
        out = {}
        for line in raw.decode("utf-8").splitlines():
            key, _, value = line.partition(" ")
            out.setdefault(key, value)
        return out

    def get(self, tag, level=0):
        """Any chunk: a dict for a text chunk, else a numpy array."""
        c = tag if isinstance(tag, Chunk) else self.find(tag, level)
        return self.text(c) if c.text else self.array(c)

    # -- what the chunks mean

    @property
    def snap(self):
        """The SNAP record (a dict)."""
        return self.text("SNAP")

    def ids(self):
        """The original index (ID chunk) of every particle, in stream order, as uint64."""
        return self.array("ID")[:, 0].astype(np.uint64)

    def particles(self, tag, order="stream", level=0):
        """A per-particle chunk (POS, VEL, MASS, TYPE, ID, SINK, ...): rows in stream order, or with
        order="snapshot" sorted by original index (the ID chunk), so that row r is particle r of
        the source snapshot when the stream holds all of it (n == nsource)."""
        c = self.find(tag, level)
        if not c.particle:
            raise StreamError("%s: chunk %s is not a per-particle chunk" % (self.name, tag))
        a = self.array(c)
        if order == "stream":
            return a
        if order != "snapshot":
            raise ValueError("order must be 'stream' or 'snapshot', not %r" % (order,))
        ids = self.ids()
        if len(ids) != c.rows:
            raise StreamError("%s: chunk ID has %d rows, chunk %s %d" % (self.name, len(ids), tag, c.rows))
        return a[np.argsort(ids, kind="stable")]

    def gid(self, level=0):
        """The group of every particle of the source snapshot by original index (GID chunk of
        groups(1)): 1 is the largest group, 0 none."""
        return self.array("GID", level)[:, 0]

    def members(self, level=0):
        """A list whose item g - 1 holds the original indices of the members of group g, sorted."""
        gid = self.gid(level).astype(np.int64)
        ngroups = int(self.text("GRPS", level)["ngroups"]) if self.has("GRPS", level) else int(gid.max(initial=0))
        if gid.size and gid.max() > ngroups:
            raise StreamError("%s: chunk GID of level %d names group %d of %d" % (self.name, level, gid.max(), ngroups))
        order = np.argsort(gid, kind="stable")
        bounds = np.searchsorted(gid[order], np.arange(1, ngroups + 2))
        return [order[bounds[g]:bounds[g + 1]] for g in range(ngroups)]

    def _hcol(self):
        if not self.has("HCOL"):
            raise ChunkMissing("%s: stream has no halostats catalogue (no HCOL chunk: run halostats "
                               "--format=stream)" % self.name)
        return self.text("HCOL")

    def catalogue_columns(self):
        """The columns of halostats' catalogue (HCOL): a list of (name, unit, definition);
        StreamError (ChunkMissing) when the stream has none."""
        hcol = self._hcol()
        cols = []
        for k in range(1, int(hcol["columns"]) + 1):
            name, unit, desc = (hcol["column_%d" % k].split(" ", 2) + ["", ""])[:3]
            cols.append((name, unit, desc))
        return cols

    def catalogue_units(self):
        """{column name: unit} of halostats' catalogue."""
        return {name: unit for name, unit, _ in self.catalogue_columns()}

    def catalogue(self, level=None):
        """halostats' catalogue (HCOL and the HALO chunks of halostats --format=stream) as a
        structured array, one field per column: int64 for the whole-number columns (level, host,
        id, n, mbp_id and the counts n_*: HCOL's integer_columns; exact below 2^53, -1 for none), float64
        for the others; one level, or with level=None every level, level by level, as halostats
        prints them. StreamError (ChunkMissing) when the stream has no catalogue."""
        cols = self.catalogue_columns()
        hcol = self._hcol()
        ints = set(hcol["integer_columns"].split()) if "integer_columns" in hcol else set(INTEGER_COLUMNS)
        dtype = np.dtype([(name, "<i8" if name in ints else "<f8") for name, _, _ in cols])
        levels = sorted(self.levels("HALO")) if level is None else [level]
        parts = []
        for k in levels:
            a = self.array("HALO", k)
            if a.shape[1] != len(cols):
                raise StreamError("%s: chunk HALO of level %d has %d columns, HCOL names %d"
                                  % (self.name, k, a.shape[1], len(cols)))
            part = np.empty(a.shape[0], dtype)
            for j, (name, _, _) in enumerate(cols):
                v = a[:, j]
                if name in ints and not np.array_equal(v, np.round(v)):
                    raise StreamError("%s: column %s of chunk HALO of level %d holds a value that is not a "
                                      "whole number" % (self.name, name, k))
                part[name] = v
            parts.append(part)
        return np.concatenate(parts) if parts else np.zeros(0, dtype)

    # -- closing

    def close(self):
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:  # arrays still view it: the mapping goes with them
                pass
            self._map = None
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<fofkit.Stream %s: %d chunks>" % (self.name, len(self.chunks))


def open(source, name=None):  # noqa: A001 - the package's entry point, as in gzip.open
    """Opens a stream: see Stream."""
    return Stream(source, name)
