"""The way out of a damaged file: what damage the open file has met, and a salvaged copy.

Both read ``root.engine`` under the pool lock, which an in-place compaction
also holds while it swaps the engine (lock order: pool lock, then the
engine's own). Neither takes a domain lock: a salvage is a point-in-time
copy, as ``compact_to`` is, and writes wait for it in the engine.
"""

from __future__ import annotations

import os

from memhop.engine import LeftBehind
from memhop.engine import salvage_to as salvage_engine
from memhop.root.root import Root


def damage(root: Root) -> tuple[int, int, int]:
    """Return (damaged records met by reads, damaged frames skipped by the open, bytes the
    open cut from the tail)."""
    with root.pool_lock:
        root.check_open()
        return (*root.engine.damage(), root.engine.tail_bytes_cut)


def salvage_to(root: Root, new_path: str | os.PathLike[str]) -> tuple[int, list[LeftBehind]]:
    """Copy every live record that verifies to ``new_path``; return the count and the rest."""
    with root.pool_lock:
        root.check_open()
        return salvage_engine(root.engine, new_path)
