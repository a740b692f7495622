"""fofkit.membership - fofkit.members(): each halo's members as indices into the user's own particle arrays, joined by particle ID:
the snapshot as the user loaded it (h5py, pynbody), no group-ordered copy of it (halostats --snapshot).

    ids = np.concatenate([f["PartType%d/ParticleIDs" % t][:] for t in (0, 1)])   # the user's arrays' order
    idx = fofkit.members("fof_subhalo_tab_000.hdf5", ids)    # idx[g - 1]: group g's members, as rows of ids
    pos[idx[0]]                                              # the largest halo's particles

The catalogue names its members by ID: halostats' HDF5 catalogue (--format=hdf5, Gadget-4's
fof_subhalo_tab layout: IDs/ID, the members group by group, GroupLen of each; read with h5py, imported
at the call), or a stream grouped by groups(1) (halostats --format=stream passes it on): GID of each
original index, the snapshot's own IDs in PID (hdf52bin, gadget2bin). The join sorts the user's IDs
once (numpy's argsort) and finds every member's by binary search (searchsorted): O((n + m) log n).
"""

import os

import numpy as np

from .stream import MAGIC, Stream

_MISSING = ("raise", "drop")


def _join(ids, want, missing):
    """Rows of ids holding each value of want (int64), in want's order; rows of IDs absent from ids are
    -1 (missing 'drop') or a ValueError (missing 'raise')."""
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise ValueError("ids: shape %s; fofkit.members needs the particles' IDs as one array (n,)" % (ids.shape,))
    if ids.dtype.kind not in "iu":
        raise TypeError("ids: dtype %s; particle IDs are integers (ParticleIDs, pynbody's iord)" % ids.dtype)
    ids = ids.astype(np.uint64, copy=False)
    want = np.asarray(want).astype(np.uint64, copy=False)
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    if sorted_ids.size > 1:
        dup = np.flatnonzero(sorted_ids[1:] == sorted_ids[:-1])
        if dup.size:
            raise ValueError("ids: ID %d is held by rows %d and %d: the join needs unique IDs"
                             % (sorted_ids[dup[0]], order[dup[0]], order[dup[0] + 1]))
    at = np.searchsorted(sorted_ids, want)
    found = at < sorted_ids.size
    found[found] = sorted_ids[at[found]] == want[found]
    rows = np.full(want.shape, -1, dtype=np.int64)
    rows[found] = order[at[found]]
    if not found.all() and missing == "raise":
        k = np.flatnonzero(~found)
        raise ValueError("ids: %d of the catalogue's %d member IDs are not among the %d given (ID %d the first): "
                         "pass every particle the catalogue was made from, or missing='drop'"
                         % (k.size, want.size, ids.size, want[k[0]]))
    return rows


def _split(rows, lengths, group, missing, order):
    """rows cut into runs of lengths (one per halo): a list, or run group - 1 alone; each sorted with
    order 'snapshot'."""
    ends = np.cumsum(lengths, dtype=np.int64)
    starts = ends - np.asarray(lengths, dtype=np.int64)
    if group is not None and not 1 <= group <= len(starts):
        raise ValueError("group %d: the catalogue has groups 1 to %d" % (group, len(starts)))
    runs = [rows[a:b] for a, b in (zip(starts, ends) if group is None else [(starts[group - 1], ends[group - 1])])]
    if missing == "drop":
        runs = [r[r >= 0] for r in runs]
    if order == "snapshot":
        runs = [np.sort(r) for r in runs]
    return runs if group is None else runs[0]


def _hdf5_members(f, name, subhalos, level):
    """(member IDs of every halo, one run after another; the halos' lengths) of an HDF5 catalogue."""
    if level:
        raise ValueError("%s: an HDF5 catalogue holds the level 0 groups (and their Subhalos: subhalos=True), "
                         "not level %d; a stream of groups(1) holds every level" % (name, level))
    if "IDs/ID" not in f:
        raise ValueError("%s: no IDs/ID dataset: not a catalogue with its members' IDs (halostats --format=hdf5 "
                         "writes one)" % name)
    nfiles = int(f["Header"].attrs.get("NumFiles", 1)) if "Header" in f else 1
    if nfiles != 1:
        raise ValueError("%s: one file of %d: fofkit.members reads a catalogue in one file" % (name, nfiles))
    ids = f["IDs/ID"][:]
    glen = f["Group/GroupLen"][:].astype(np.int64) if "Group/GroupLen" in f else np.zeros(0, np.int64)
    if glen.sum() > ids.size:
        raise ValueError("%s: Group/GroupLen sums to %d members, IDs/ID holds %d" % (name, glen.sum(), ids.size))
    if not subhalos:
        return ids[:glen.sum()], glen
    # IDs/ID runs group by group, in a group Subhalo by Subhalo (rows GroupFirstSub on, host by host),
    # then the rest: a Subhalo's first member is its group's plus the lengths of its group's Subhalos before it.
    if "Subhalo/SubhaloLen" not in f:
        return np.zeros(0, ids.dtype), np.zeros(0, np.int64)
    slen = f["Subhalo/SubhaloLen"][:].astype(np.int64)
    host = f["Subhalo/SubhaloGroupNr"][:].astype(np.int64) if "Subhalo/SubhaloGroupNr" in f else \
        f["Subhalo/SubhaloGrNr"][:].astype(np.int64)
    first = f["Group/GroupFirstSub"][:].astype(np.int64)
    gstart = np.concatenate([[0], np.cumsum(glen)[:-1]])
    before = np.concatenate([[0], np.cumsum(slen)[:-1]])  # lengths of every Subhalo row before
    start = gstart[host] + before - before[first[host]]
    take = np.repeat(start - before, slen) + np.arange(slen.sum())  # Subhalo after Subhalo, each its run
    return ids[take], slen


def _stream_members(s, level, with_ids):
    """(member IDs of every group of the level, the groups' lengths) of a grouped stream: each group's
    original indices (GID) as the snapshot's IDs (PID); the original indices themselves when with_ids
    is False."""
    runs = s.members(level)
    orig = np.concatenate(runs) if runs else np.zeros(0, np.int64)
    lengths = np.array([r.size for r in runs], dtype=np.int64)
    if not with_ids:
        return orig, lengths
    if not s.has("PID"):
        raise ValueError("%s: no PID chunk (the snapshot's own particle IDs: hdf52bin and gadget2bin write it; a "
                         "tipsy snapshot has none): its members are original indices, rows of the snapshot as "
                         "written: pass ids=None" % s.name)
    pid_of = np.zeros(int(s.snap["nsource"]), dtype=np.uint64)
    pid_of[s.array("ID")[:, 0].astype(np.int64)] = s.array("PID")[:, 0]
    return pid_of[orig], lengths


def _is_stream(path):
    with open(path, "rb") as f:
        return f.read(len(MAGIC)) == MAGIC


def members(catalogue, ids, group=None, subhalos=False, level=0, missing="raise", order="catalogue"):
    """The members of each halo of catalogue as indices into the user's own particle arrays: rows of ids,
    the particle IDs of the user's snapshot in the order of its arrays (ParticleIDs of an HDF5 snapshot,
    the types concatenated as loaded; pynbody's sim["iord"]), found by ID.

    catalogue: halostats' HDF5 catalogue (--format=hdf5; Gadget-4's fof_subhalo_tab layout with IDs/ID),
    its path or an open h5py.File (h5py is imported only then); or a stream grouped by groups(1)
    (halostats --format=stream's output holds it too), its path or a fofkit.Stream, whose members' IDs
    are its PID chunk's (hdf52bin, gadget2bin); ids=None takes a stream's original indices themselves
    (tipsy snapshots: the rows of the file).
    group: None for every halo, a list whose item g - 1 is group g's (with subhalos, Subhalo row g - 1's);
    or g, that halo's alone.
    subhalos: an HDF5 catalogue's Subhalo rows in place of its Groups (item k: Subhalo row k).
    level: a stream's level of groups.
    missing: 'raise' (default) when a member's ID is not among ids (ValueError, saying how many), or
    'drop' to leave such members out (ids of some particle types only).
    order: 'catalogue' (default), the rows in the order the catalogue lists its members (an HDF5
    catalogue's IDs/ID: a group's Subhalos first, each run most bound first as its attribute
    IDs/MemberOrder says; a stream's by original index); 'snapshot', increasing
    (pynbody's sim[rows] needs its families in order).
    Returns int64 arrays of rows of ids."""
    if missing not in _MISSING:
        raise ValueError("missing: 'raise' or 'drop', not %r" % (missing,))
    if order not in ("catalogue", "snapshot"):
        raise ValueError("order: 'catalogue' or 'snapshot', not %r" % (order,))
    is_h5 = hasattr(catalogue, "filename") and hasattr(catalogue, "attrs")  # an open h5py.File
    is_stream = isinstance(catalogue, Stream) or (not is_h5 and _is_stream(os.fspath(catalogue)))
    if is_stream:
        if subhalos:
            raise ValueError("subhalos: an HDF5 catalogue's; a stream's levels of groups are chosen by level=")
        if isinstance(catalogue, Stream):
            want, lengths = _stream_members(catalogue, level, ids is not None)
        else:
            with Stream(os.fspath(catalogue)) as s:
                want, lengths = _stream_members(s, level, ids is not None)
        if ids is None:  # the original indices: rows of the snapshot as written
            return _split(want.astype(np.int64), lengths, group, missing, order)
    else:
        if ids is None:
            raise ValueError("ids: an HDF5 catalogue names its members by ID: pass the snapshot's particle IDs")
        if is_h5:
            want, lengths = _hdf5_members(catalogue, catalogue.filename, subhalos, level)
        else:
            path = os.fspath(catalogue)
            try:
                import h5py
            except ImportError:
                raise ImportError("%s: an HDF5 catalogue is read with h5py (pip install h5py)" % path) from None
            with h5py.File(path, "r") as f:
                want, lengths = _hdf5_members(f, path, subhalos, level)
    return _split(_join(ids, want, missing), lengths, group, missing, order)
