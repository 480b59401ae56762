"""EngineReads: every question about an open file's records, answered from the live index.

A record is read where the index says its frame is, and checked there
(``decode_record``): a frame that fails is CorruptionError or CRCMismatchError,
counted as damage, never "not found". Enumerations copy ids under the lock and
yield without it, so a caller may read inside its loop; bulk reads take the
lock a chunk at a time, so a writer waits out one chunk at most. The views at
the end (``live_index``, ``frames_since``, ``log_view``, ``online``) are for the
engine's own compaction and catch-up.
"""

from __future__ import annotations

import mmap
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import MappingProxyType

from memhop.engine.frame import (
    RECORD_HEADER_SIZE,
    ByteView,
    Frame,
    decode_record,
    frame_end,
    named_damage,
    record_payloads,
)
from memhop.engine.online import OnlineAccess
from memhop.engine.recovery import domain_frames_since
from memhop.engine.state import EngineState
from memhop.errors import CorruptionError, CRCMismatchError, NotFoundError
from memhop.intmap import NO_IDS, IntMap

__all__ = ["EngineReads"]

# Records read per lock hold by ``payloads_of``: a domain's build reads every record on a
# thread of its own while turns go on, and each of a turn's writes may wait out one hold.
_READ_CHUNK = 64
# Type tags read per lock hold by a domain's first typed question: about a millisecond.
TYPE_STEP = 16_384


class EngineReads(EngineState):
    """The read side of ``Engine``: lookups, enumerations, bulk reads, damage counts."""

    def read(self, agent_id: int, id_hash: int) -> Frame:
        """Return the live frame of (agent, id).

        NotFoundError only when the index holds no such record. A frame that
        fails a check (``decode_record``: its CRC, the frame limit, or being
        another record's) is CRCMismatchError or CorruptionError naming the
        record and its offset, and is counted as a damaged record.
        """
        with self._lock:
            self._check_open()
            offset = self._live.offsets.get(agent_id, NO_IDS).get(id_hash)
            if offset is None:
                msg = "record not found"
                raise NotFoundError(msg)
            try:
                file = self._file
                view = file.view_to(offset + RECORD_HEADER_SIZE)
                if len(view) < file.size and frame_end(view, offset) > len(view):
                    view = file.view()  # a length past the mapping: only damage says so
                return decode_record(view, offset, file.size, agent_id, id_hash)
            except (CorruptionError, CRCMismatchError) as exc:
                self._damage.note(agent_id, id_hash, offset, exc)
                raise named_damage(exc, agent_id, id_hash, offset) from exc

    def payloads_of_type(self, agent_id: int, rec_type: int) -> Iterator[tuple[int, bytes]]:
        """(id, payload) of every live record of one type in one domain, ascending by id.

        What ``read`` of each id of ``ids_of_type`` gives, with the same checks,
        read a chunk of ids per lock hold: a frame that fails a check is skipped
        and counted as a damaged record, as ``read`` counts it; a record gone
        since the listing, or now of another type, is skipped. ClosedError when
        the engine closes part way.
        """
        return self.payloads_of(agent_id, rec_type, self.ids_of_type(agent_id, rec_type))

    def payloads_of(
        self, agent_id: int, rec_type: int, ids: Sequence[int]
    ) -> Iterator[tuple[int, bytes]]:
        """(id, payload) of each live record of one type among ``ids``, in their order.

        As ``payloads_of_type``: an absent id, or one of another type, is
        skipped; a damaged frame is skipped and counted.
        """

        def damaged(id_hash: int, offset: int, exc: Exception) -> None:
            self._damage.note(agent_id, id_hash, offset, exc)

        pace: Callable[[], None] | None = getattr(self._pacing, "pace", None)
        for at in range(0, len(ids), _READ_CHUNK):
            if at and pace is not None:
                pace()
            with self._lock:
                self._check_open()
                offsets = self._live.offsets.get(agent_id, NO_IDS)
                placed = [
                    (i, offset)
                    for i in ids[at : at + _READ_CHUNK]
                    if (offset := offsets.get(i)) is not None
                ]
                found = record_payloads(
                    self._view_of(placed), self._file.size, agent_id, rec_type, placed, damaged
                )
            yield from found

    def _view_of(self, placed: Sequence[tuple[int, int]]) -> mmap.mmap | bytes:
        """A mapping holding the frames at ``placed``: the last one made when it does (as
        ``read`` takes it). A file that grew since is not mapped again for frames written
        before (after every write, a remap unmapped and faulted in again what earlier
        reads had touched); a length past the mapping, which only damage gives, is read
        in a mapping of the whole file, where it is judged as ever."""
        file = self._file
        if not placed:
            return file.view()
        view = file.view_to(max(offset for _, offset in placed) + RECORD_HEADER_SIZE)
        if len(view) < file.size and any(frame_end(view, o) > len(view) for _, o in placed):
            return file.view()
        return view

    @contextmanager
    def paced(self, pace: Callable[[], None]) -> Iterator[None]:
        """Within: this thread's bulk reads call ``pace`` between chunks, outside the lock.

        For a read that may run long beside other calls (a domain's build):
        ``pace`` may sleep to let them have the interpreter.
        """
        held = getattr(self._pacing, "pace", None)
        self._pacing.pace = pace
        try:
            yield
        finally:
            self._pacing.pace = held

    def note_damaged(self, agent_id: int, id_hash: int, reason: Exception) -> None:
        """Count a live record whose frame read but whose payload will not decode."""
        with self._lock:
            offset = self._live.offsets.get(agent_id, NO_IDS).get(id_hash)
            if offset is not None:
                self._damage.note(agent_id, id_hash, offset, reason)

    def damage(self) -> tuple[int, int]:
        """Return (damaged live records met by reads, damaged frames skipped by the open).

        A damaged record that was since overwritten or deleted is no longer counted.
        """
        with self._lock:
            return self._damage.counts(self._live.offsets)

    def contains(self, agent_id: int, id_hash: int) -> bool:
        # acquire/release, not ``with``: a turn asks a few times, and on 3.11 a ``with`` on
        # a lock costs twice the two calls (it binds both methods and packs the exit's args).
        lock = self._lock
        lock.acquire()
        try:
            return not self._closed and id_hash in self._live.offsets.get(agent_id, NO_IDS)
        finally:
            lock.release()

    def writes(self, agent_id: int, rec_type: int) -> int:
        """Records of ``rec_type`` the domain wrote or deleted through this engine, counted as
        each change reached the index (``LiveIndex.changes_of``)."""
        with self._lock:
            return self._live.changes_of(agent_id, rec_type)

    def changes(self) -> int:
        """Records written or deleted through this engine, every domain and type together."""
        with self._lock:
            return self._live.changes()

    def ids_of_type(self, agent_id: int, rec_type: int, *, recurring: bool = False) -> list[int]:
        """Return the live ids of one type in one domain, ascending.

        A domain's first typed question reads the type byte of each of its
        frames (0.1-0.2 s at 4*10^5 records): ``TYPE_STEP`` entries a hold of
        the lock, pacing between holds, so writes go on meanwhile. Each later
        one scans the domain's tags (3 ms at 4*10^5 records) unless it is
        ``recurring``: its answer is kept current from then on, and the next
        costs a copy of the ids it lists (for the few, rare types a background
        pass lists on every pass).
        """
        while True:
            with self._lock:
                if self._closed:
                    return []
                if self._live.type_some(agent_id, self._file, TYPE_STEP):
                    return self._live.ids_of_type(
                        agent_id, rec_type, self._file, recurring=recurring
                    )
            pace: Callable[[], None] | None = getattr(self._pacing, "pace", None)
            if pace is not None:
                pace()
            else:
                time.sleep(0)  # a writer waiting for the lock takes it between two steps

    def agents(self) -> list[int]:
        """Return the agent ids that hold at least one live record, ascending."""
        with self._lock:
            return [] if self._closed else sorted(self._live.offsets)

    def offset_of(self, agent_id: int, id_hash: int) -> int | None:
        """Return the frame offset the index holds for (agent, id), if any."""
        lock = self._lock
        lock.acquire()  # not ``with``: see ``contains``
        try:
            return self._live.offsets.get(agent_id, NO_IDS).get(id_hash)
        finally:
            lock.release()

    def offsets_of(self, agent_id: int, ids: Iterable[int]) -> list[int | None]:
        """``offset_of`` of each of ``ids``, in their order, under one hold of the lock."""
        with self._lock:
            get = self._live.offsets.get(agent_id, NO_IDS).get
            return [get(i) for i in ids]

    def all_ids(self, agent_id: int) -> list[int]:
        """Return every live id of one domain, ascending."""
        with self._lock:
            return [] if self._closed else sorted(self._live.offsets.get(agent_id, NO_IDS))

    def live_in_log_order(self) -> list[tuple[int, int, int]]:
        """Return (offset, agent, id) of every live record, in the order the log holds them."""
        with self._lock:
            if self._closed:
                return []
            return sorted(
                (offset, agent, id_hash)
                for agent, ids in self._live.offsets.items()
                for id_hash, offset in ids.items()
            )

    def stats(self) -> tuple[int, int]:
        """Return (file bytes, live records); a closed engine answers (0, 0)."""
        with self._lock:
            if self._closed:
                return 0, 0
            return self._file.size, self._live.count()

    # ---- the engine's own readers ------------------------------------------------------

    def live_index(self) -> Mapping[int, IntMap]:
        """Return the live index (agent -> id -> frame offset) itself, read-only, not a copy,
        for the engine's own bulk readers: valid until the next write (hold ``exclusive()``)."""
        with self._lock:
            self._check_open()
            return MappingProxyType(self._live.offsets)

    def frames_since(
        self, agent_id: int, start: int, *, tombstones: bool = False
    ) -> list[tuple[int, int, int]]:
        """Return (offset, type, id) of the domain's live frames from ``start`` on, in log order
        (``tombstones``: its tombstones instead).

        Live: where the index holds its id now (a frame superseded or deleted
        since, or not yet covered by an fsync, is left out). CorruptionError
        (or CRCMismatchError) when ``start`` is not a frame boundary before the
        record end, or a frame from there on fails its checks.
        """
        with self._lock:
            self._check_open()
            live = None if tombstones else self._live.offsets.get(agent_id, NO_IDS)
            return domain_frames_since(
                self._file.view(), start, self._log.record_end, agent_id, live
            )

    def log_view(self) -> tuple[ByteView, int]:
        """Return the mapping of the file and its size, for the engine's own readers: valid
        until the next write (hold ``exclusive()``)."""
        with self._lock:
            self._check_open()
            return self._file.view(), self._file.size

    def online(self) -> OnlineAccess:
        """Bounded steps for a compaction that runs beside the writers (``engine.online``)."""
        return OnlineAccess(self._lock, self._file, self._log, self._live, self._checks)
