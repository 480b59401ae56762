"""Compaction in place: the open file is replaced by a copy of its live records.

The copy is written by ``write_live_copy`` (a temporary sibling, fsynced,
renamed over the original, the directory fsynced), so a crash at any step
leaves under the file's name either the old file or the new one, each whole.
The old engine is closed once the new file has the name; its bytes go with
the last handle on the old inode.
"""

from __future__ import annotations

import contextlib
import struct
from dataclasses import dataclass
from itertools import chain, repeat

from memhop.engine.compact import write_live_copy
from memhop.engine.engine import Engine
from memhop.engine.frame import RECORD_HEADER_SIZE
from memhop.engine.header import DATA_START
from memhop.errors import MemHopError

__all__ = ["Occupancy", "compact_in_place", "occupancy"]

_LENGTH = struct.Struct("<I")
_LENGTH_AT = 2  # a frame starts with type (1 byte) and flags (1 byte), then the payload length


@dataclass(frozen=True, slots=True)
class Occupancy:
    """How much of a file the live records need, and how much is dead.

    ``live_bytes`` counts the headers, every live frame and the active index
    snapshot; ``dead_bytes`` is the rest: tombstones, superseded and deleted
    frames, old snapshots. Compaction leaves a file of about ``live_bytes``.
    """

    file_bytes: int
    live_bytes: int

    @property
    def dead_bytes(self) -> int:
        return max(self.file_bytes - self.live_bytes, 0)

    @property
    def dead_ratio(self) -> float:
        """Dead bytes as a share of the file (0.0 for an empty file)."""
        return self.dead_bytes / self.file_bytes if self.file_bytes else 0.0


def occupancy(engine: Engine) -> Occupancy:
    """Measure the live and dead bytes of ``engine``'s file (one length read per live record)."""
    with engine.exclusive():
        view, size = engine.log_view()
        live = engine.live_index()
        offsets = list(chain.from_iterable(by_id.values() for by_id in live.values()))
        unpack = _LENGTH.unpack_from
        lengths = sum(n for (n,) in map(unpack, repeat(view), (o + _LENGTH_AT for o in offsets)))
        frames = lengths + RECORD_HEADER_SIZE * len(offsets)
        current = engine.headers.current
        snapshot = 0
        if current.has_snapshot and current.snapshot_offset + current.snapshot_length <= size:
            snapshot = current.snapshot_length
        return Occupancy(file_bytes=size, live_bytes=min(DATA_START + frames + snapshot, size))


def compact_in_place(engine: Engine, path: str) -> Engine:
    """Replace the file at ``path`` (``engine``'s, absolute) by its live records; return it, open.

    Writes wait while the copy runs. On success ``engine`` is closed and the
    returned engine, holding the file lock, is the file's; on failure (a
    record that will not read, a full disk) ``engine`` is untouched and still
    open, and no temporary file is left. The caller has checked that ``path``
    still names ``engine``'s file.
    """
    with engine.exclusive():
        fresh = write_live_copy(engine, path, replace=True, what="compact in place")
        # Everything acknowledged is in the copy, which has the name now: the old
        # file needs no checkpoint, and a failure to unlock it changes nothing.
        with contextlib.suppress(MemHopError):
            engine.close_without_checkpoint()
    return fresh
