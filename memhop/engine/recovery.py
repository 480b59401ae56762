"""Replaying the record area into an index, and finding where it ends.

These functions only read: they report what they found (and whether the tail
must be cut) and leave every repair to the caller, so a read-only reader can
use them on a file another process is writing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from memhop.engine.frame import (
    FLAG_DELETED,
    LENGTH_AT,
    LENGTH_FIELD,
    RECORD_HEADER_SIZE,
    ByteView,
    frame_bounds,
)
from memhop.engine.header import DATA_START
from memhop.engine.snapshot import SNAPSHOT_MAGIC_BYTES, PackedIndex, snapshot_length_at
from memhop.engine.storefile import FENCE
from memhop.errors import CorruptionError, CRCMismatchError
from memhop.intmap import IntMap

log = logging.getLogger("memhop.engine")


RESYNC_MAX_CANDIDATES = 1 << 16
"""Possible frame starts one resync may look at, besides one per 128 bytes it walks past.

Honest damage (a torn frame, a zeroed page, a flipped bit) is followed by an
intact frame, or the end, well within this; random bytes use about half of
it. Only bytes crafted to look like frame starts exhaust it.
"""
RESYNC_MAX_CHECKS = 1 << 14
"""Checksum checks one resync may make, besides one per 4 KiB it walks past."""
RESYNC_CRC_BUDGET = 64 << 20
"""Bytes one resync may checksum, besides twice the bytes it walks past."""

_CHECK_FREELY = 64 << 10  # claims up to this are checksummed without looking past them
_ZEROS = bytes(4096)
_ZERO_HEADER = bytes(RECORD_HEADER_SIZE)


@dataclass(frozen=True, slots=True)
class ScanResult:
    """Where a scan stopped and what it met.

    ``truncate``: the bytes from ``end`` on hold no frame and must be cut.
    ``reserve``: they are a writer's reserve (``storefile.FENCE``, then zeros
    to the end): the room an open writer appends in, or left by a crash.
    ``skipped``: damaged regions met, the first at ``first_skipped``; of
    them, ``resumed`` had intact frames after them (damage inside the log,
    not a torn tail). ``unresolved``: the offset of a damaged region the
    resync gave up on (0 if none); the bytes from there on are left unread.
    """

    end: int
    truncate: bool
    skipped: int = 0
    first_skipped: int = 0
    frames: int = 0
    resumed: int = 0
    unresolved: int = 0
    reserve: bool = False


def _zero_run_end(buf: ByteView, at: int, size: int) -> int:
    """Return the first offset at or after ``at`` (a zero byte) that is not zero, or ``size``."""
    step = len(_ZEROS)
    while at + step <= size and buf[at : at + step] == _ZEROS:
        at += step
    while at < size and buf[at] == 0:
        at += 1
    return at


def is_reserve(buf: ByteView, at: int, size: int) -> bool:
    """True when the bytes from ``at`` are a writer's reserve: the fence, then only zeros."""
    fence_end = at + len(FENCE)
    return buf[at:fence_end] == FENCE and _zero_run_end(buf, fence_end, size) == size


def _next_could_start(buf: ByteView, at: int, size: int) -> bool:
    """True when what starts at ``at`` could follow a frame: the end, a frame, or a snapshot."""
    if at + RECORD_HEADER_SIZE > size:
        return True  # the end, or a torn last header
    if buf[at + 1] <= 1 and buf[at + 5] == 0:
        return True
    return buf[at : at + 4] == SNAPSHOT_MAGIC_BYTES


def _resync(buf: ByteView, offset: int, size: int) -> int | None:
    """Return the first offset after ``offset`` where a whole frame decodes cleanly.

    None when no frame follows; -1 when the budget ran out first. Linear in
    the bytes walked: every frame the engine writes has a zero at +5 (the high
    byte of a length under the frame limit), so candidates are found with
    ``find``; zero runs are stepped over a page at a time; a claim over 64 KiB
    is checksummed only when a frame, a snapshot or the end could follow it;
    the candidates looked at and the bytes checksummed are capped.
    """
    finder = bytes(buf).find if isinstance(buf, memoryview) else buf.find
    region = size - offset
    candidates = RESYNC_MAX_CANDIDATES + region // 128
    checks = RESYNC_MAX_CHECKS + region // 4096
    crc_bytes = RESYNC_CRC_BUDGET + 2 * region
    last = size - RECORD_HEADER_SIZE
    pos = offset + 6  # the +5 byte of the first candidate, offset + 1
    while True:
        zero = finder(b"\0", pos)
        c = zero - 5
        if zero < 0 or c > last:
            return None
        pos = zero + 1
        candidates -= 1
        if candidates < 0:
            return -1
        flags = buf[c + 1]
        if flags > 1:
            continue
        if not (flags or buf[c]) and buf[c : c + RECORD_HEADER_SIZE] == _ZERO_HEADER:
            # Every start inside a zero run is a zero header: go on with the
            # first candidate whose header reaches past the run.
            pos = max(pos, _zero_run_end(buf, c, size) - RECORD_HEADER_SIZE + 6)
            continue
        (length,) = LENGTH_FIELD.unpack_from(buf, c + LENGTH_AT)
        end = c + RECORD_HEADER_SIZE + length
        if (flags and length) or end > size:
            continue  # a tombstone has no payload; a frame fits in the file
        if length > _CHECK_FREELY and not _next_could_start(buf, end, size):
            continue  # a long claim is checksummed only when something frame-like follows it
        checks -= 1
        crc_bytes -= RECORD_HEADER_SIZE + length
        if checks < 0 or crc_bytes < 0:
            return -1
        try:
            if frame_bounds(buf, c, size) is not None:
                return c
        except (CorruptionError, CRCMismatchError):
            continue


def scan_records(
    buf: ByteView, start: int, size: int, index: PackedIndex, snapshot_offset: int
) -> ScanResult:
    """Merge the frames from ``start`` into ``index`` until the log ends.

    A damaged frame loses only itself: its length field sits inside the bytes
    its checksum just disbelieved, so the scan never steps by it and instead
    searches for the next frame that passes its own CRC (``_resync``). Damage
    at or behind a committed snapshot, or with no frame after it, is the tail
    of a crashed write, so it is cut. A resync that runs out of budget stops
    the scan there and cuts nothing (``unresolved``). A writer's reserve ends
    the log without being damage.
    """
    offset = start
    skipped = first_skipped = frames = resumed = unresolved = 0
    truncate = reserve = False
    while offset != size:
        try:
            bounds = frame_bounds(buf, offset, size)
        except (CorruptionError, CRCMismatchError):
            bounds = None
        if bounds is None:
            if is_reserve(buf, offset, size):
                truncate = reserve = True
                break
            # A frame that fails its checks, or zeros where a header should be:
            # the engine never writes zeros, so they are the residue of a
            # crashed extension (or a zeroed page), not the end of the log.
            skipped += 1
            if skipped == 1:
                first_skipped = offset
            behind_snapshot = snapshot_offset and offset >= snapshot_offset
            found = None if behind_snapshot else _resync(buf, offset, size)
            if found is None:
                truncate = True
                break
            if found < 0:
                unresolved = offset
                break
            resumed += 1
            offset = found
            continue
        rec_type, flags, agent, id_hash, end = bounds
        frames += 1
        ids = index.get(agent)
        if flags & FLAG_DELETED:
            if ids is not None and ids.discard(id_hash) and not ids:
                del index[agent]
        else:
            if ids is None:
                ids = index[agent] = IntMap()
            ids.put(id_hash, offset, rec_type)
        offset = end
    if skipped:
        log.warning(
            "skipped %d damaged record(s), the first at offset %d; scan ended at %d (truncate=%s)",
            skipped,
            first_skipped,
            offset,
            truncate,
        )
    if unresolved:
        log.error(
            "the damaged region at offset %d is too large to resync past; the %d bytes from"
            " there on are left unread and writes are refused",
            unresolved,
            size - unresolved,
        )
    return ScanResult(
        offset, truncate, skipped, first_skipped, frames, resumed, unresolved, reserve
    )


def walk_record_area(buf: ByteView, size: int, fallback: int) -> int:
    """Find the end of the last frame by walking from the data start.

    Snapshot blobs met on the way are stepped over whole. If the walk does not
    land exactly on the file end, the answer is ``fallback``.
    """
    last_end = DATA_START
    try:
        for frame in frames_between(buf, DATA_START, size):
            last_end = frame[-1]
    except (CorruptionError, CRCMismatchError):
        return fallback
    return last_end


def frames_between(
    buf: ByteView, start: int, end: int
) -> Iterator[tuple[int, int, int, int, int, int]]:
    """Yield (offset, type, flags, agent id, id hash, frame end) of each frame in ``[start, end)``.

    Snapshot blobs met on the way are stepped over whole. A frame that fails
    its checks, zeros, or a walk that does not land on ``end`` raise
    CorruptionError (or CRCMismatchError): ``start`` is not a frame boundary
    of this log, or the log is damaged there.
    """
    offset = start
    while offset < end:
        blob = snapshot_length_at(buf, offset, end)
        if blob is not None:
            offset += blob
            continue
        bounds = frame_bounds(buf, offset, end)
        if bounds is None:
            msg = f"no frame at offset {offset}, before the record end {end}"
            raise CorruptionError(msg)
        yield offset, *bounds
        offset = bounds[4]
    if offset != end:
        msg = f"the frames from {start} run past the record end {end}"
        raise CorruptionError(msg)


def domain_frames_since(
    buf: ByteView, start: int, end: int, agent_id: int, live: Mapping[int, int] | None
) -> list[tuple[int, int, int]]:
    """(offset, type, id) of ``agent_id``'s frames in ``[start, end)``, in log order: those
    ``live`` (the domain's id -> offset index) holds where they are; with ``live`` None, its
    tombstones. ``frames_between``'s errors for a ``start`` that is not a frame boundary."""
    if not DATA_START <= start <= end:
        msg = f"{start} is outside the record area [{DATA_START}, {end}]"
        raise CorruptionError(msg)
    found = []
    for offset, rec_type, flags, agent, id_hash, _ in frames_between(buf, start, end):
        if agent != agent_id:
            continue
        deleted = flags & FLAG_DELETED
        if (deleted and live is None) or (
            not deleted and live is not None and live.get(id_hash) == offset
        ):
            found.append((offset, rec_type, id_hash))
    return found
