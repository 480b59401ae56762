"""Reading a ``.meh`` file without touching it: bytes, headers, snapshot, live index, frames.

The file is opened read-only, takes no lock, and is read into memory rather
than mapped: a writer trims its tail snapshot by truncating the file, and a
mapping read past a truncated end kills the reading process (SIGBUS), which a
notebook must never risk. The engine's pure functions do the rest: the header
choice, the snapshot parse and the forward scan, which stops at a torn tail
and reports it; nothing here cuts, repairs or writes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum

from memhop.engine.frame import Frame, decode_record, named_damage
from memhop.engine.header import DATA_START, HeaderPair, load_headers
from memhop.engine.recovery import ScanResult, scan_records
from memhop.engine.snapshot import PackedIndex, parse_snapshot
from memhop.errors import (
    CorruptionError,
    CRCMismatchError,
    InvalidQueryError,
    MemHopError,
    StorageIOError,
)

__all__ = ["FileState", "SnapshotState", "live_frame", "read_file_state"]


class SnapshotState(StrEnum):
    """What the active header's snapshot tells a reader."""

    CURRENT = "current"  # at the tail: nothing was written since the last checkpoint
    BEHIND = "behind"  # sound, with frames written after it
    NONE = "none"  # the header names none: a writer is at work, or one crashed
    UNUSABLE = "unusable"  # named but out of bounds or damaged; the log was scanned


@dataclass(frozen=True, slots=True)
class FileState:
    """One read of the file: its bytes as they were, and what the engine's rules make of them."""

    path: str
    data: bytes
    headers: HeaderPair
    index: PackedIndex
    scan: ScanResult
    snapshot: SnapshotState

    @property
    def size(self) -> int:
        return len(self.data)


def _read_bytes(path: str) -> bytes:
    """Read the whole file read-only; refuse a directory or a missing path clearly."""
    if os.path.isdir(path):
        msg = f"database path is a directory: {path}"
        raise InvalidQueryError(msg)
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError as exc:
        msg = f"no database at {path}"
        raise StorageIOError(msg) from exc
    except OSError as exc:
        msg = f"read {path}"
        raise StorageIOError(msg) from exc


def _restore(data: bytes, headers: HeaderPair) -> PackedIndex | None:
    """The active snapshot's index, or None when it is absent, out of bounds or damaged."""
    header = headers.current
    if not header.has_snapshot:
        return None
    start, end = header.snapshot_offset, header.snapshot_offset + header.snapshot_length
    if start < DATA_START or end > len(data):
        return None
    try:
        return parse_snapshot(data[start:end])
    except MemHopError:
        return None


def read_file_state(path: str) -> FileState:
    """Read ``path`` as it is now. CorruptionError when it is not a readable ``.meh`` file.

    A writer may be appending meanwhile: the read sees a prefix of its frames,
    and a frame cut by the end of the read is a torn tail the scan stops at.
    """
    data = _read_bytes(path)
    if len(data) < DATA_START:
        msg = f"{path} is not a memhop file: {len(data)} bytes, too small for the dual headers"
        raise CorruptionError(msg)
    headers = load_headers(data)
    header = headers.current
    restored = _restore(data, headers)
    if restored is None:
        index: PackedIndex = {}
        start = DATA_START
        state = SnapshotState.UNUSABLE if header.has_snapshot else SnapshotState.NONE
    else:
        index = restored
        start = header.snapshot_offset + header.snapshot_length
        state = SnapshotState.CURRENT if start == len(data) else SnapshotState.BEHIND
    scan = scan_records(data, start, len(data), index, header.snapshot_offset)
    return FileState(path, data, headers, index, scan, state)


def live_frame(state: FileState, agent_id: int, id_hash: int, offset: int) -> Frame:
    """The live frame the index places at ``offset`` for (agent, id), with every check the
    engine's read makes: a frame that fails its own, or that holds another record or a
    tombstone, is CorruptionError (or CRCMismatchError) naming the entry, never data."""
    try:
        return decode_record(state.data, offset, state.size, agent_id, id_hash)
    except (CorruptionError, CRCMismatchError) as exc:
        raise named_damage(exc, agent_id, id_hash, offset) from exc
