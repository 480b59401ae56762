"""Replaying the record area into an index, and finding where it ends.

These functions only read: they report what they found (and whether the tail
must be cut) and leave every repair to the caller, so a read-only reader can
use them on a file another process is writing.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass

from memhop.engine.frame import FLAG_DELETED, ByteView, frame_bounds
from memhop.engine.header import DATA_START
from memhop.engine.snapshot import Index, snapshot_length_at
from memhop.errors import CorruptionError, CRCMismatchError

log = logging.getLogger("memhop.engine")


@dataclass(frozen=True, slots=True)
class ScanResult:
    """Where a scan stopped, whether the bytes from there on must be cut, and what it skipped."""

    end: int
    truncate: bool
    skipped: int = 0
    first_skipped: int = 0
    frames: int = 0


def _resync(buf: ByteView, offset: int, size: int) -> int | None:
    """Return the first offset after ``offset`` where a whole frame decodes cleanly."""
    for candidate in range(offset + 1, size):
        try:
            if frame_bounds(buf, candidate, size) is not None:
                return candidate
        except (CorruptionError, CRCMismatchError):
            continue
    return None


def _resume_point(buf: ByteView, offset: int, size: int, snapshot_offset: int) -> int | None:
    """Where to go on after damage at ``offset``; None means cut the file there.

    Damage at or behind a committed snapshot is the tail of a crashed write.
    """
    if snapshot_offset and offset >= snapshot_offset:
        return None
    return _resync(buf, offset, size)


def scan_records(
    buf: ByteView, start: int, size: int, index: Index, snapshot_offset: int
) -> ScanResult:
    """Merge the frames from ``start`` into ``index`` until the log ends.

    A damaged frame loses only itself: its length field sits inside the bytes
    its checksum just disbelieved, so the scan never steps by it and instead
    searches byte by byte for the next frame that passes its own CRC. Damage at
    or behind a committed snapshot is the tail of a crashed write, so it is cut.
    """
    offset = start
    skipped = first_skipped = frames = 0
    truncate = False
    while offset != size:
        try:
            bounds = frame_bounds(buf, offset, size)
        except (CorruptionError, CRCMismatchError):
            bounds = None
        if bounds is None:
            # A frame that fails its checks, or zeros where a header should be:
            # the engine never writes zeros, so they are the residue of a
            # crashed extension (or a zeroed page), not the end of the log.
            skipped += 1
            if skipped == 1:
                first_skipped = offset
            resumed = _resume_point(buf, offset, size, snapshot_offset)
            if resumed is None:
                truncate = True
                break
            offset = resumed
            continue
        _, flags, agent, id_hash, end = bounds
        frames += 1
        if flags & FLAG_DELETED:
            ids = index.get(agent)
            if ids is not None:
                ids.pop(id_hash, None)
                if not ids:
                    del index[agent]
        else:
            index.setdefault(agent, {})[id_hash] = offset
        offset = end
    if skipped:
        log.warning(
            "skipped %d damaged record(s), the first at offset %d; scan ended at %d (truncate=%s)",
            skipped,
            first_skipped,
            offset,
            truncate,
        )
    return ScanResult(offset, truncate, skipped, first_skipped, frames)


def walk_record_area(buf: ByteView, size: int, fallback: int) -> int:
    """Find the end of the last frame by walking from the data start.

    Snapshot blobs met on the way are stepped over whole. If the walk does not
    land exactly on the file end, the answer is ``fallback``.
    """
    offset = last_end = DATA_START
    while offset < size:
        blob = snapshot_length_at(buf, offset, size)
        if blob is not None:
            offset += blob
            continue
        try:
            bounds = frame_bounds(buf, offset, size)
        except (CorruptionError, CRCMismatchError):
            return fallback
        if bounds is None:
            return fallback
        offset = last_end = bounds[4]
    return last_end if offset == size else fallback


def group_by_type(buf: ByteView, size: int, ids: dict[int, int]) -> dict[int, set[int]]:
    """Group one domain's ids by the type byte of the frame each offset names.

    Entries past the log are left out here (they stay indexed and read as
    corruption). This is the cost of a domain's first typed enumeration after
    an open; the plain loop measured faster than sort-and-slice variants.
    """
    by_type: defaultdict[int, set[int]] = defaultdict(set)
    for id_hash, offset in ids.items():
        if offset < size:
            by_type[buf[offset]].add(id_hash)
    return dict(by_type)
