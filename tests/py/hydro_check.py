"""hydro_check.py - foflink's hydro linking against a dark-matter-only FoF and a brute-force nearest primary.

Usage (tests/hydro.bats runs it; the fofkit package comes from python/ of the repository):
    python3 hydro_check.py HYDRO[,HYDRO...] PRIMONLY[,PRIMONLY...]
    python3 hydro_check.py --same A[,A...] B[,B...]    every level's partition of A is B's (by ID)

HYDRO is foflink's output on a stream with gas or stars (one process: SINK levels; several files:
the per-rank streams of an mpirun, GMIN levels), PRIMONLY foflink's output on the linked types
alone at the linking length HYDRO's LINK record names (e.g. hdf52bin -t dark | kdbuild |
foflink -l L). Checks, level by level:
  - the linked particles' groups are PRIMONLY's, particle for particle (matched by ID);
  - every other particle of an attached type sits in the group of the primary that attachref (a
    brute-force C program, every pair, from foflink(1)'s rule) names as its nearest within
    6.4 l_k, and is alone when there is none;
  - particles of types neither linked nor attached are alone.
Prints a summary and exits 0, or prints what differs and exits 1.
"""

import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import fofkit  # noqa: E402

TYPES = {"gas": 0, "dark": 1, "star": 2}


def kv(text):
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(" ")
        out[k] = v
    return out


def type_bits(words):
    if words == "all":
        return {0, 1, 2}
    if words == "none":
        return set()
    return {TYPES[w] for w in words.split(",")}


def load(names):
    """The streams' POS, TYPE, ID and every level's labels (an ID naming the group), concatenated."""
    pos, typ, ids, labels, link = [], [], [], None, None
    for name in names.split(","):
        s = fofkit.open(name)
        link = {k: str(v) for k, v in s.text("LINK").items()}
        nlev = int(link["levels"])
        i = s.array("ID")[:, 0].astype(np.int64)
        p = s.array("POS").astype(np.float32)
        t = s.array("TYPE")[:, 0] if s.has("TYPE") else np.ones(len(i), np.uint8)
        lab = []
        for k in range(nlev):
            if s.has("GMIN", k):
                lab.append(s.array("GMIN", k)[:, 0].astype(np.int64))
            else:
                sink = s.array("SINK", k)[:, 0].astype(np.int64)
                low = np.full(len(sink), len(sink), np.int64)
                np.minimum.at(low, sink, np.arange(len(sink)))
                if not (low[sink] == sink).all():
                    sys.exit("%s: SINK level %d is not each group's lowest stream index" % (name, k))
                lab.append(i[sink])
        pos.append(p), typ.append(t), ids.append(i)
        if labels is None:
            labels = [[] for _ in range(nlev)]
        for k in range(nlev):
            labels[k].append(lab[k])
    ids = np.concatenate(ids)
    labels = [np.concatenate(x) for x in labels]
    if "ranks" in link:  # GMIN: each group's lowest ID over every rank
        for k, g in enumerate(labels):
            _, inv = np.unique(g, return_inverse=True)
            low = np.full(inv.max() + 1 if len(inv) else 0, np.iinfo(np.int64).max, np.int64)
            np.minimum.at(low, inv, ids)
            if not (low[inv] == g).all():
                sys.exit("GMIN level %d is not each group's lowest ID" % k)
    return np.concatenate(pos), np.concatenate(typ), ids, labels, link


def same_partition(a, b):
    pairs = np.unique(np.stack([a, b], axis=1), axis=0)
    return len(pairs) == len(np.unique(a)) == len(np.unique(b))


def same(a, b):
    _, _, ia, la, _ = load(a)
    _, _, ib, lb, _ = load(b)
    oa, ob = np.argsort(ia), np.argsort(ib)
    if not np.array_equal(ia[oa], ib[ob]) or len(la) != len(lb):
        print("the streams hold other particles or levels")
        return 1
    for k in range(len(la)):
        if not same_partition(la[k][oa], lb[k][ob]):
            print("level %d: the partitions differ" % k)
            return 1
        print("level %d: the same %d groups" % (k, len(np.unique(la[k]))))
    return 0


def main():
    if sys.argv[1] == "--same":
        return same(sys.argv[2], sys.argv[3])
    pos, typ, ids, labels, link = load(sys.argv[1])
    _, dtyp, dids, dlabels, dlink = load(sys.argv[2])
    linked = type_bits(link.get("link_types", "all"))
    attached = type_bits(link.get("attach_types", "none"))
    box, periodic = float(link["box"]), int(link["periodic"])
    nlev = int(link["levels"])
    bad = 0
    prim = np.isin(typ, list(linked))
    sec = np.isin(typ, list(attached))
    order = np.argsort(ids[prim])
    dorder = np.argsort(dids)
    if not np.array_equal(ids[prim][order], dids[dorder]):
        print("the linked particles' IDs are not the other stream's")
        return 1
    # the brute-force nearest primary of every secondary, at level 0's reach (the longest)
    pp, pk = pos[prim], ids[prim].astype(np.uint64)
    with tempfile.TemporaryDirectory() as tmp:
        for nm, arr in (("p.f32", pp), ("k.u64", pk), ("s.f32", pos[sec])):
            np.ascontiguousarray(arr).tofile(os.path.join(tmp, nm))
        out = subprocess.run(["attachref", os.path.join(tmp, "p.f32"), os.path.join(tmp, "k.u64"),
                              os.path.join(tmp, "s.f32"), repr(box), str(periodic), link["l_0"]],
                             check=True, capture_output=True, text=True).stdout.split()
    near = np.array(out[0::2], dtype=np.int64)
    nr2 = np.array(out[1::2], dtype=np.float32)
    for k in range(nlev):
        lab, dlab = labels[k], dlabels[k]
        l_k = float(link["l_%d" % k])
        if not same_partition(lab[prim][order], dlab[dorder]):
            print("level %d: the linked particles' groups differ from the other stream's" % k)
            bad += 1
        r = np.float32(6.4 * l_k)
        r2 = np.float32(r * r)
        join = (near >= 0) & (nr2 < r2)
        plab = lab[prim]
        want = np.where(join, plab[np.maximum(near, 0)], -1)
        got = lab[sec]
        wrong = join & (got != want)
        _, inverse, counts = np.unique(lab, return_inverse=True, return_counts=True)
        size = counts[inverse]
        alone_bad = (~join) & (size[sec] != 1)
        other = ~(prim | sec)
        other_bad = size[other] != 1
        if wrong.any() or alone_bad.any() or other_bad.any():
            print("level %d: %d attached particles not in their nearest primary's group, %d not alone, "
                  "%d of other types not alone" % (k, wrong.sum(), alone_bad.sum(), other_bad.sum()))
            bad += 1
        big = np.bincount(inverse)
        print("level %d: l %s (the other stream's %s), %d linked particles in the groups of the other stream, %d of %d attached "
              "to their nearest primary's group, %d alone; largest group %d"
              % (k, link["l_%d" % k], dlink["l_%d" % k], prim.sum(), join.sum(), sec.sum(), (~join).sum(), big.max()))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
