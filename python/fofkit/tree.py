"""fofkit.tree - merger trees that halotree(1) writes (Consistent-Trees ASCII) read into numpy.

    t = fofkit.read_tree("tree_0_0_0.dat")
    t.columns                        the column names, as in the file's first line
    t["Mvir"], t["Snap_num"]         one array a column, every halo of every tree, in file order
    t.units["Mvir"]                  "Msun/h" (from the header's "Name: description (unit)." lines)
    t.roots                          the row of each tree's root (its first halo)
    t.row_of(halo_id)                rows of the given ids (-1 where absent)
    t.main_branch(row)               rows from a halo back along its main progenitors
    t.progenitors(row)               rows whose descendant it is (the main one first)

The file: a '#' line of column names numbered "name(k)", '#' header lines (cosmology, box,
"Name: description (unit)." for every column), the number of trees, then each tree as a
"#tree ROOT_ID" line and one line a halo, depth-first from the root. Integer columns (ids, counts,
snapshot numbers) are int64, the rest float64.
"""

import re

import numpy as np

INT_COLUMNS = {
    "id", "desc_id", "num_prog", "pid", "upid", "desc_pid", "phantom", "mmp?", "Breadth_first_ID", "Depth_first_ID",
    "Tree_root_ID", "Orig_halo_ID", "Snap_num", "Next_coprogenitor_depthfirst_ID", "Last_progenitor_depthfirst_ID",
    "Last_mainleaf_depthfirst_ID", "Len", "Desc_count", "Mainprog_id",
}


class TreeError(ValueError):
    """A file that is not a Consistent-Trees ASCII file as halotree writes it."""


class Tree:
    """Every halo of a Consistent-Trees ASCII file, one numpy array a column."""

    def __init__(self, name, columns, data, units, header, roots):
        self.name = name
        self.columns = columns
        self._data = data
        self.units = units
        self.header = header
        self.roots = roots
        order = np.argsort(data["id"], kind="stable")
        self._ids_sorted = data["id"][order]
        self._rows_sorted = order

    def __getitem__(self, column):
        return self._data[column]

    def __len__(self):
        return len(self._data["id"])

    def row_of(self, ids):
        """The rows holding the given halo ids (an array; -1 where an id is absent)."""
        ids = np.asarray(ids, dtype=np.int64)
        k = np.searchsorted(self._ids_sorted, ids)
        k = np.clip(k, 0, max(len(self._ids_sorted) - 1, 0))
        found = len(self._ids_sorted) > 0
        ok = found & (self._ids_sorted[k] == ids) if found else np.zeros(ids.shape, bool)
        return np.where(ok, self._rows_sorted[k] if found else -1, -1)

    def progenitors(self, row):
        """Rows of the halos whose descendant is the halo in row, the main progenitor first."""
        rows = np.flatnonzero(self._data["desc_id"] == self._data["id"][row])
        return rows[np.argsort(-self._data["mmp?"][rows], kind="stable")]

    def main_branch(self, row):
        """Rows from row back in time along the main progenitors (row first)."""
        out = [int(row)]
        while True:
            p = self.progenitors(out[-1])
            if len(p) == 0 or self._data["mmp?"][p[0]] != 1:
                return np.array(out, dtype=np.int64)
            out.append(int(p[0]))


def read_tree(path):
    """Reads a Consistent-Trees ASCII file (halotree's output) into a Tree. Raises TreeError."""
    with open(path, "r") as f:
        first = f.readline()
        if not first.startswith("#"):
            raise TreeError(f"{path}: not a Consistent-Trees file (no '#' line of column names)")
        columns = [re.sub(r"\(\d+\)$", "", c) for c in first[1:].split()]
        header, units, ntrees = [], {}, None
        roots_ids, rows = [], []
        for line in f:
            if ntrees is None:
                if line.startswith("#"):
                    header.append(line[1:].rstrip("\n"))
                    m = re.match(r"#([^:]+):.*\(([^()]*)\)\.?\s*$", line)
                    if m:
                        unit = re.sub(r"\s*(physical, peculiar|comoving|physical)\s*", "", m.group(2)).strip()
                        for name in re.split(r"[/,]", m.group(1)):
                            units[name.strip()] = unit
                    continue
                try:
                    ntrees = int(line)
                except ValueError:
                    raise TreeError(f"{path}: no tree count after the header") from None
                continue
            if line.startswith("#tree"):
                roots_ids.append(int(line.split()[1]))
            elif line.strip():
                rows.append(line)
    if ntrees is None:
        raise TreeError(f"{path}: no tree count after the header")
    if len(roots_ids) != ntrees:
        raise TreeError(f"{path}: {len(roots_ids)} trees, the header says {ntrees}")
    table = np.loadtxt(rows, ndmin=2) if rows else np.zeros((0, len(columns)))
    if table.shape[1] != len(columns):
        raise TreeError(f"{path}: {table.shape[1]} columns, the header names {len(columns)}")
    data = {}
    for k, c in enumerate(columns):
        data[c] = table[:, k].astype(np.int64) if c in INT_COLUMNS else table[:, k]
    lower = {c.lower(): u for c, u in units.items()}
    units = {c: lower.get(c.lower(), "") for c in columns}
    t = Tree(path, columns, data, units, header, np.zeros(0, np.int64))
    t.roots = t.row_of(np.array(roots_ids, dtype=np.int64))
    return t
