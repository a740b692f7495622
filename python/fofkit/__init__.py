"""fofkit - the fofkit friends-of-friends halo finder from Python: its streams (fofstream(5)) read with numpy,
and, through libfofkit (fofkit(3)), groups and catalogues of particle arrays in memory.

    s = fofkit.open("grouped.fof")
    s.chunks, s.get("POS"), s.text("SNAP"), s.particles("POS", order="snapshot"),
    s.gid(), s.members(), s.catalogue(), s.catalogue_units()

    gid = fofkit.fof(pos, b=0.2, box=1.0)              # numpy or GPU arrays; needs libfofkit
    cat = fofkit.halos(pos, vel, gid, box=1.0)         # halostats' columns, a structured array

    idx = fofkit.members("fof_subhalo_tab_000.hdf5", ids)   # idx[g - 1]: rows of ids (the user's
                                                       # snapshot's IDs) of group g's members, by ID
    t = fofkit.read_tree("tree_0_0_0.dat")             # halotree's merger trees: t["Mvir"], t.main_branch(row)
"""

from .stream import (
    ALIGN,
    FLAG_PARTICLE,
    FLAG_TEXT,
    FLAG_ZLIB,
    MAGIC,
    VERSION,
    Chunk,
    ChunkMissing,
    Stream,
    StreamError,
    open,
)
from .library import FofkitError, LibraryError, fof, halo_columns, halos  # libfofkit, loaded at the first call
from .membership import members
from .tree import Tree, TreeError, read_tree

__version__ = "0.1.0"
__all__ = ["ALIGN", "FLAG_PARTICLE", "FLAG_TEXT", "FLAG_ZLIB", "MAGIC", "VERSION", "Chunk", "ChunkMissing", "Stream",
           "StreamError", "open", "fof", "halos", "halo_columns", "FofkitError", "LibraryError", "Tree", "TreeError",
           "read_tree", "members"]
