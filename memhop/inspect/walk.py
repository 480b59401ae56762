"""Walking the record area region by region: frames, snapshot blobs and damage, in file order.

Unlike the engine's scan, which keeps only live records, the walk reports
everything the log holds: superseded versions, tombstones, the tail snapshot,
and each damaged stretch with its offset and the decoder's reason. Past
damage it searches byte by byte for the next frame (or snapshot blob) that
passes its own checks, as the engine's scan does, so one bad frame hides
nothing after it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from memhop.engine.frame import RECORD_HEADER_SIZE, ByteView, frame_bounds
from memhop.engine.header import DATA_START
from memhop.engine.snapshot import parse_snapshot, snapshot_length_at
from memhop.errors import CorruptionError, CRCMismatchError, MemHopError

__all__ = ["Progress", "Region", "RegionKind", "walk_regions"]

Progress = Callable[[int, int], None]
"""Called now and then with (bytes walked, bytes in all)."""

_PROGRESS_EVERY = 4096  # regions between progress calls


class RegionKind(StrEnum):
    FRAME = "frame"
    SNAPSHOT = "snapshot"
    DAMAGE = "damage"


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


def _sound_at(buf: ByteView, offset: int, size: int) -> bool:
    """Whether a whole frame or a snapshot blob that passes its CRC starts at ``offset``."""
    blob = snapshot_length_at(buf, offset, size)
    if blob is not None:
        try:
            parse_snapshot(buf[offset : offset + blob])
        except MemHopError:
            return False
        return True
    try:
        return frame_bounds(buf, offset, size) is not None
    except (CorruptionError, CRCMismatchError):
        return False


def _next_sound(buf: ByteView, offset: int, size: int) -> int:
    """The first offset after ``offset`` where something sound starts; ``size`` when none does."""
    for candidate in range(offset + 1, size):
        if _sound_at(buf, candidate, size):
            return candidate
    return size


def walk_regions(buf: ByteView, size: int, progress: Progress | None = None) -> Iterator[Region]:
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
        if bounds is None:
            resume = _next_sound(buf, offset, size)
            yield Region(RegionKind.DAMAGE, offset, resume, problem=problem)
            offset = resume
            continue
        rec_type, flags, agent_id, id_hash, end = bounds
        yield Region(RegionKind.FRAME, offset, end, rec_type, flags, agent_id, id_hash)
        offset = end
    if progress is not None:
        progress(size, size)
