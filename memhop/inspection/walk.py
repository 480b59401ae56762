"""Walking the record area region by region: frames, snapshot blobs, damage and a writer's
reserve, in file order.

Unlike the engine's scan, which keeps only live records, the walk reports
everything the log holds: superseded versions, tombstones, the tail snapshot,
and each damaged stretch with its offset and the decoder's reason. Past
damage it goes on where the engine's scan would (the next frame that passes
its own checks) or at a sound snapshot blob before that, so one bad frame
hides nothing after it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from memhop.engine.frame import RECORD_HEADER_SIZE, frame_bounds
from memhop.engine.header import DATA_START

# The engine's resync, reused as is so the walk and the open agree on where a
# damaged region ends (it is the scan's step past damage, private to recovery).
from memhop.engine.recovery import _resync, is_reserve
from memhop.engine.snapshot import SNAPSHOT_MAGIC_BYTES, parse_snapshot, snapshot_length_at
from memhop.errors import CorruptionError, CRCMismatchError, MemHopError

__all__ = ["Progress", "Region", "RegionKind", "walk_regions"]

Progress = Callable[[int, int], None]
"""Called now and then with (bytes walked, bytes in all)."""

_PROGRESS_EVERY = 4096  # regions between progress calls


class RegionKind(StrEnum):
    FRAME = "frame"
    SNAPSHOT = "snapshot"
    DAMAGE = "damage"
    RESERVE = "reserve"  # an open writer's room to append in (or a crash's), not damage


@dataclass(frozen=True, slots=True)
class Region:
    """One stretch of the record area; frame fields are 0 for the other kinds.

    ``problem`` is empty for a sound frame or blob; a damage region spans from
    the bad offset to the next sound frame (or the end of the file).
    """

    kind: RegionKind
    offset: int
    end: int
    rec_type: int = 0
    flags: int = 0
    agent_id: int = 0
    id_hash: int = 0
    problem: str = ""

    @property
    def payload_start(self) -> int:
        return self.offset + RECORD_HEADER_SIZE


_BLOB_TRIES = 16  # snapshot magics looked at past one damaged region (crafted bytes stop here)


def _next_blob(buf: bytes, offset: int, limit: int) -> int | None:
    """The first sound snapshot blob after ``offset`` and before ``limit``, if any."""
    at = offset
    for _ in range(_BLOB_TRIES):
        at = buf.find(SNAPSHOT_MAGIC_BYTES, at + 1, limit)
        if at < 0:
            return None
        blob = snapshot_length_at(buf, at, len(buf))
        if blob is not None:
            try:
                parse_snapshot(buf[at : at + blob])
            except MemHopError:
                continue
            return at
    return None


def _next_sound(buf: bytes, offset: int, size: int) -> tuple[int, str]:
    """Where the walk goes on after damage at ``offset``, and what to add to its problem.

    The engine's own resync finds the next frame (bounded, linear in the
    region); a sound snapshot blob before that frame is met first.
    """
    found = _resync(buf, offset, size)
    limit = size if found is None or found < 0 else found
    blob = _next_blob(buf, offset, limit)
    if blob is not None:
        return blob, ""
    if found is not None and found < 0:
        return size, " (too long to search past; the rest of the file is not read)"
    return limit, ""


def walk_regions(buf: bytes, size: int, progress: Progress | None = None) -> Iterator[Region]:
    """Yield every region from the data start to ``size``, in file order."""
    offset = DATA_START
    count = 0
    while offset < size:
        count += 1
        if progress is not None and count % _PROGRESS_EVERY == 0:
            progress(offset, size)
        blob = snapshot_length_at(buf, offset, size)
        if blob is not None:
            try:
                parse_snapshot(buf[offset : offset + blob])
                problem = ""
            except MemHopError as exc:
                problem = f"snapshot blob at offset {offset}: {exc}"
            yield Region(RegionKind.SNAPSHOT, offset, offset + blob, problem=problem)
            offset += blob
            continue
        try:
            bounds = frame_bounds(buf, offset, size)
            problem = f"zeros where a frame header should be, at offset {offset}"
        except (CorruptionError, CRCMismatchError) as exc:
            bounds, problem = None, str(exc)
        if bounds is None and is_reserve(buf, offset, size):
            yield Region(RegionKind.RESERVE, offset, size)
            break
        if bounds is None:
            resume, note = _next_sound(buf, offset, size)
            yield Region(RegionKind.DAMAGE, offset, resume, problem=problem + note)
            offset = resume
            continue
        rec_type, flags, agent_id, id_hash, end = bounds
        yield Region(RegionKind.FRAME, offset, end, rec_type, flags, agent_id, id_hash)
        offset = end
    if progress is not None:
        progress(size, size)
