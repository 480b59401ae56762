"""Compaction in place: the open file is replaced by a copy of its live records while writes go on.

``compact_in_place`` runs in three phases (``memhop.engine.catchup`` does the copying):

1. Copy, without holding writes. The live frames before a settled end E1 are
   copied, in log order, to a temporary sibling of the file. The log is read
   from a pinned view with no lock held (frames are only appended, so those
   bytes never change); the engine lock is taken once a chunk (at most 4,096
   frames or 1 MiB of log) to ask which of its frames are still live, so a
   writer waits for one chunk at most, and a record deleted or superseded
   since E1 is not copied.
2. Catch up, still without holding writes: the frames written since (new
   records and versions, tombstones) are replayed onto the copy, round after
   round while a round finds more than a little; then the copy is
   checkpointed (its fsync makes the copy durable) and its index seed made.
3. Swap, under the caller's ``hold`` (the root's holds every call of the file)
   and the engine lock: the frames written since phase 2 are replayed, the
   copy is fsynced, renamed over the file and the directory fsynced, the seed
   is written beside it, and the old engine is closed. This costs what was
   written since phase 2 (and the seed's bytes), not the file.

Deleted while copied: a record the copy holds that is deleted or superseded
before phase 3 ends gets its tombstone or new version replayed after it, and
its copied frame's payload is overwritten with zeros under a fresh CRC before
the copy is renamed (``OnlineAccess.erase``): the frame stays, dead, with the
record's type, ids and length, until the next compaction.

Crash safety: the file keeps its name and bytes until the rename, so a kill
leaves the old file or the new one, each whole; a kill before the rename
leaves a temporary sibling, which the next writable open removes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from memhop.engine.catchup import Copy
from memhop.engine.engine import Engine
from memhop.engine.frame import LENGTH_AT, LENGTH_FIELD, RECORD_HEADER_SIZE, ByteView
from memhop.engine.header import DATA_START
from memhop.engine.publish import build_beside
from memhop.engine.seed import write_seed
from memhop.engine.snapshot import MIN_SNAPSHOT_SIZE
from memhop.errors import MemHopError

__all__ = ["Hooks", "Occupancy", "compact_in_place", "occupancy"]

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


def _live_bytes(frames: float, agents: int, records: int) -> int:
    """The size of a file holding ``frames`` bytes of frames of ``records`` records of
    ``agents`` domains, and one index snapshot of them."""
    snapshot = MIN_SNAPSHOT_SIZE + _SNAPSHOT_AGENT * agents + _SNAPSHOT_ENTRY * records
    return DATA_START + round(frames) + snapshot


def occupancy(engine: Engine, *, sample: int = 0) -> Occupancy:
    """Measure the live and dead bytes of ``engine``'s file (one length read per live record).

    ``sample`` > 0 reads about that many records, evenly spread over each
    domain, and scales their frame sizes to the domain's count: an estimate
    whose cost hardly grows with the file, for a cheap policy check. It picks
    its records from the durable index as it stands and reads their lengths
    after letting the engine lock go, so writers wait neither for an fsync in
    flight nor for its reads of cold pages (the bytes of writes still waiting
    for their fsync count as dead until then).
    """
    exact = sample <= 0
    with engine.exclusive(drained=exact):
        view, size = engine.log_view()
        counts, picks = _picked(engine, sample)
        if exact:
            return _measured(size, counts, picks, view)
        # An export keeps the mapping open past the lock: a remap meanwhile (a read
        # after a write) cannot close it. Frames are never cut while the file is open.
        held = memoryview(view)
    try:
        return _measured(size, counts, picks, held)
    finally:
        held.release()


def _picked(engine: Engine, sample: int) -> tuple[list[int], list[list[int]]]:
    """Each domain's count of live records and the offsets of about ``sample`` of them in
    all (every one for 0), evenly spread; under the engine lock, so no more than that."""
    live = [by_id for by_id in engine.live_index().values() if by_id]
    total = sum(map(len, live))
    step = max(total // sample, 1) if sample > 0 else 1
    return [len(i) for i in live], [i.sample(step) for i in live]


def _measured(size: int, counts: list[int], picks: list[list[int]], view: ByteView) -> Occupancy:
    """The occupancy the picked frames' lengths give, scaled to each domain's count."""
    unpack = LENGTH_FIELD.unpack_from
    frames = 0.0
    for count, picked in zip(counts, picks, strict=True):
        if picked:
            read = sum(unpack(view, offset + LENGTH_AT)[0] for offset in picked)
            frames += (read / len(picked) + RECORD_HEADER_SIZE) * count
    live_bytes = _live_bytes(frames, len(counts), sum(counts))
    return Occupancy(file_bytes=size, live_bytes=min(live_bytes, size))


def _no_pause() -> None:
    """The pacer of a compaction nobody paces."""


def _nothing(_: Engine) -> None:
    """The hook of a compaction nobody follows."""


@dataclass(frozen=True, slots=True)
class Hooks:
    """What the caller of ``compact_in_place`` adds to it.

    ``pace`` runs between chunks of phases 1 and 2, holding nothing: it may
    sleep to let calls in flight have the interpreter, or raise to stop the
    compaction (nothing is replaced). ``hold`` is entered for phase 3, before
    the engine lock: what else must wait for the swap. ``swapped`` is called
    under it once the copy has the file's name, with the new engine.
    """

    pace: Callable[[], None] = _no_pause
    hold: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext
    swapped: Callable[[Engine], None] = _nothing


def compact_in_place(engine: Engine, path: str, hooks: Hooks | None = None) -> Engine:
    """Replace the file at ``path`` (``engine``'s, absolute) by its live records; return it, open.

    Writes go on during phases 1 and 2 and wait only for phase 3 (see the
    module). On success ``engine`` is closed and the returned engine, holding
    the file lock, is the file's.
    On failure (a record that will not read, a full disk, a pacer that
    raised) ``engine`` is untouched and still open, and no temporary file is
    left. The caller has checked that ``path`` still names ``engine``'s file.
    """
    hooks = hooks or Hooks()
    copies: list[Copy] = []
    with contextlib.ExitStack() as after, contextlib.ExitStack() as held:

        def fill(dest: Engine) -> None:
            # Once made, the copy replaces the file even if the dead bytes it met are
            # fewer than the estimate that started it: dropping it would waste its bytes,
            # and the same estimate would start another at the next pass.
            copy = Copy(engine, dest, hooks.pace)
            copy.copy()
            copy.settle()
            held.enter_context(hooks.hold())
            held.enter_context(engine.exclusive())
            copy.finish()
            copies.append(copy)

        mode = engine.permission_bits()
        fresh = build_beside(path, fill, mode=mode, replace=True, what="compact in place")
        seed = copies[0].seed
        if seed is not None:  # the copy's own, as of its checkpoint (the old one went with it)
            write_seed(path, *seed, mode)
        fresh.tail_bytes_cut = engine.tail_bytes_cut  # what this file's open cut, still
        hooks.swapped(fresh)
        # Everything acknowledged is in the copy, which has the name now: the old
        # file needs no checkpoint, and a failure to unlock it changes nothing. Its map,
        # pinned, keeps the old inode open until the hold is over: freeing its blocks
        # costs milliseconds a 100 MB.
        after.enter_context(memoryview(engine.log_view()[0]))
        with contextlib.suppress(MemHopError):
            engine.close_without_checkpoint()
    return fresh
