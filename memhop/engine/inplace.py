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
from itertools import repeat

from memhop.engine.compact import write_live_copy
from memhop.engine.engine import Engine
from memhop.engine.frame import RECORD_HEADER_SIZE
from memhop.engine.header import DATA_START
from memhop.engine.snapshot import MIN_SNAPSHOT_SIZE
from memhop.errors import MemHopError

__all__ = ["Occupancy", "compact_in_place", "occupancy"]

_LENGTH = struct.Struct("<I")
_LENGTH_AT = 2  # a frame starts with type (1 byte) and flags (1 byte), then the payload length
_SNAPSHOT_AGENT = 12  # per domain in a snapshot: agent id (8) and entry count (4)
_SNAPSHOT_ENTRY = 16  # per record: id hash (8) and offset (8)


@dataclass(frozen=True, slots=True)
class Occupancy:
    """How much of a file the live records need, and how much is dead.

    ``live_bytes`` is the size of the file a compaction would leave: the
    headers, every live frame and one index snapshot of them. ``dead_bytes``
    is the rest: tombstones, superseded and deleted frames, old snapshots.
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


def occupancy(engine: Engine, *, sample: int = 0) -> Occupancy:
    """Measure the live and dead bytes of ``engine``'s file (one length read per live record).

    ``sample`` > 0 reads about that many records, evenly spread over each
    domain, and scales their frame sizes to the domain's count: an estimate
    whose cost hardly grows with the file, for a cheap policy check.
    """
    with engine.exclusive():
        view, size = engine.log_view()
        live = engine.live_index()
        count = sum(map(len, live.values()))
        step = max(count // sample, 1) if sample > 0 else 1
        unpack = _LENGTH.unpack_from
        frames = 0.0
        for by_id in live.values():
            picked = [o + _LENGTH_AT for o in by_id.sample(step)]
            if picked:
                read = sum(n for (n,) in map(unpack, repeat(view), picked))
                frames += (read / len(picked) + RECORD_HEADER_SIZE) * len(by_id)
        snapshot = MIN_SNAPSHOT_SIZE + sum(
            _SNAPSHOT_AGENT + _SNAPSHOT_ENTRY * len(i) for i in live.values() if i
        )
        live_bytes = DATA_START + round(frames) + snapshot
        return Occupancy(file_bytes=size, live_bytes=min(live_bytes, size))


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
        fresh.tail_bytes_cut = engine.tail_bytes_cut  # what this file's open cut, still
        # The old seed went with the old file; a kill before the next close
        # would otherwise leave the copy's first write to a whole-log scan.
        fresh.checkpoint_if_stale(seed=True)
        # Everything acknowledged is in the copy, which has the name now: the old
        # file needs no checkpoint, and a failure to unlock it changes nothing.
        with contextlib.suppress(MemHopError):
            engine.close_without_checkpoint()
    return fresh
