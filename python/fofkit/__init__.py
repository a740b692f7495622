"""fofkit - reads the streams of the fofkit friends-of-friends programs (fofstream(5)) with numpy.

    s = fofkit.open("grouped.fof")
    s.chunks, s.get("POS"), s.text("SNAP"), s.particles("POS", order="snapshot"),
    s.gid(), s.members(), s.catalogue(), s.catalogue_units()
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

__version__ = "0.1.0"
__all__ = ["ALIGN", "FLAG_PARTICLE", "FLAG_TEXT", "FLAG_ZLIB", "MAGIC", "VERSION", "Chunk", "ChunkMissing", "Stream",
           "StreamError", "open"]
