"""Engine: the append-only log of one ``.meh`` file and its in-memory indexes.

Two indexes are kept: ``agent -> id hash -> frame offset`` (live records only)
and ``agent -> record type -> ids``. Every mutation appends frames, fsyncs, and
only then changes the indexes, so an acknowledged write is on disk and a failed
one is invisible. One re-entrant lock serialises the file; enumerations copy
ids under it and yield without it, so a caller may read inside its loop.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import MappingProxyType

from memhop.engine.frame import FLAG_DELETED, ByteView, Frame, decode_frame, encode_frame
from memhop.engine.header import HeaderPair
from memhop.engine.recovery import group_by_type
from memhop.engine.snapshot import Index, build_snapshot
from memhop.engine.storefile import StoreFile
from memhop.errors import (
    ClosedError,
    CorruptionError,
    InvalidQueryError,
    NotFoundError,
    StorageIOError,
)

TypeIndex = dict[int, dict[int, set[int]]]
Placement = tuple[int, int, int, int]
"""Where a frame of an appended blob belongs: (agent id, id hash, record type, offset in blob)."""


@dataclass(frozen=True, slots=True)
class RecordEntry:
    """One record of a write batch."""

    agent_id: int
    rec_type: int
    id_hash: int
    payload: bytes


class Engine:
    """An open ``.meh`` file. Build one with ``create_engine`` or ``open_engine``."""

    def __init__(
        self, file: StoreFile, headers: HeaderPair, index: Index, next_offset: int
    ) -> None:
        self._file = file
        self._headers = headers
        self._index = index
        # Built per domain on first use (``_types_of``): an open reads no
        # frame, and a session pays only for the domains it touches.
        self._types: TypeIndex = {}
        self._next = next_offset
        self._lock = threading.RLock()
        self._closed = False
        self._failure: StorageIOError | None = None
        # Per thread: how deep in group_commit() blocks, and whether a write
        # inside them still owes its fsync.
        self._group = threading.local()

    # ---- state -------------------------------------------------------------------------

    @property
    def path(self) -> str:
        return self._file.path

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def headers(self) -> HeaderPair:
        """Both header slots as last written (for inspection and tests)."""
        return self._headers

    @property
    def record_end(self) -> int:
        """End of the record area: where the next frame would start after a trim."""
        return self._next

    def _check_open(self) -> None:
        if self._closed:
            msg = "engine is closed"
            raise ClosedError(msg)

    def _check_writable(self) -> None:
        self._check_open()
        if self._failure is not None:
            msg = "engine refuses writes after an earlier write or fsync failure; reopen the file"
            raise StorageIOError(msg) from self._failure

    # ---- reads -------------------------------------------------------------------------

    def read(self, agent_id: int, id_hash: int) -> Frame:
        """Return the live frame of (agent, id).

        NotFoundError only when the index holds no such record; an index entry
        the log does not hold is CorruptionError, a bad frame CRCMismatchError.
        """
        with self._lock:
            self._check_open()
            offset = self._index.get(agent_id, {}).get(id_hash)
            if offset is None:
                msg = "record not found"
                raise NotFoundError(msg)
            frame = decode_frame(self._file.view(), offset, self._file.size)
            if frame is None:
                msg = "the index names a record the record area does not hold"
                raise CorruptionError(msg)
            return frame

    def contains(self, agent_id: int, id_hash: int) -> bool:
        with self._lock:
            return not self._closed and id_hash in self._index.get(agent_id, {})

    def ids_of_type(self, agent_id: int, rec_type: int) -> list[int]:
        """Return the live ids of one type in one domain, ascending."""
        with self._lock:
            if self._closed:
                return []
            return sorted(self._types_of(agent_id).get(rec_type, ()))

    def agents(self) -> list[int]:
        """Return the agent ids that hold at least one live record, ascending."""
        with self._lock:
            return [] if self._closed else sorted(self._index)

    def offset_of(self, agent_id: int, id_hash: int) -> int | None:
        """Return the frame offset the index holds for (agent, id), if any."""
        with self._lock:
            return self._index.get(agent_id, {}).get(id_hash)

    def all_ids(self, agent_id: int) -> list[int]:
        """Return every live id of one domain, ascending."""
        with self._lock:
            return [] if self._closed else sorted(self._index.get(agent_id, {}))

    def live_in_log_order(self) -> list[tuple[int, int, int]]:
        """Return (offset, agent, id) of every live record, in the order the log holds them."""
        with self._lock:
            if self._closed:
                return []
            return sorted(
                (offset, agent, id_hash)
                for agent, ids in self._index.items()
                for id_hash, offset in ids.items()
            )

    def live_index(self) -> Mapping[int, Mapping[int, int]]:
        """Return the live index (agent -> id -> frame offset) itself, read-only, not a copy.

        For the engine's own bulk readers (compaction). Valid until the next
        write; hold ``exclusive()`` while using it.
        """
        with self._lock:
            self._check_open()
            return MappingProxyType(self._index)

    def log_view(self) -> tuple[ByteView, int]:
        """Return the mapping of the file and its size, for the engine's own readers.

        Valid until the next write; hold ``exclusive()`` while using it.
        """
        with self._lock:
            self._check_open()
            return self._file.view(), self._file.size

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the engine lock across several calls (writes from other threads wait)."""
        with self._lock:
            self._check_open()
            yield

    def stats(self) -> tuple[int, int]:
        """Return (file bytes, live records); a closed engine answers (0, 0)."""
        with self._lock:
            if self._closed:
                return 0, 0
            return self._file.size, sum(len(ids) for ids in self._index.values())

    # ---- writes ------------------------------------------------------------------------

    def write(self, agent_id: int, rec_type: int, id_hash: int, payload: bytes) -> int:
        """Append one record durably; return its frame offset."""
        return self.write_batch([RecordEntry(agent_id, rec_type, id_hash, payload)])[0]

    def write_batch(self, entries: Sequence[RecordEntry], *, sync: bool = True) -> list[int]:
        """Append records with one write and one fsync; later duplicates win.

        No atomicity across the batch: a crash may leave any prefix of it.
        ``sync=False`` skips the fsync, for a file nobody relies on until a
        later checkpoint makes it durable (a compaction copy).
        """
        frames: list[bytes] = []
        placements: list[Placement] = []
        at = 0
        for e in entries:
            frame = encode_frame(e.agent_id, e.rec_type, 0, e.id_hash, e.payload)
            placements.append((e.agent_id, e.id_hash, e.rec_type, at))
            frames.append(frame)
            at += len(frame)
        return self.append_frames(b"".join(frames), placements, sync=sync)

    def append_frames(
        self, blob: bytes, placements: Sequence[Placement], *, sync: bool = True
    ) -> list[int]:
        """Append already-encoded live frames; return their absolute offsets.

        ``placements`` names each frame in ``blob``: (agent, id, type, offset
        within the blob). Compaction uses this to copy verified frames verbatim.
        """
        with self._lock:
            if not placements:
                self._check_open()
                return []
            self._check_writable()
            self._trim_tail_snapshot()
            base = self._file.size
            self._append(blob, "sync" if sync else None)
            self._index_put(base, placements)
            return [base + p[3] for p in placements]

    def load_frames(self, chunks: Iterable[bytes], index: Index, *, sync: bool = True) -> None:
        """Append verified live frames to an engine that holds no records, and adopt their index.

        The bulk form of ``append_frames``, for compaction: ``chunks`` are
        written in order at the file end (``record_end`` of a fresh engine),
        and ``index`` (agent -> id -> absolute frame offset) must name every
        frame in them and only them. The caller has verified both; only the
        offset bounds are checked here (CorruptionError). ``index`` is taken
        over, not copied, and the type index is built from the frames on first
        use. ``sync=False`` leaves the fsync to a later checkpoint. If a chunk
        cannot be produced or written, or an offset is out of bounds, the file
        is cut back to where it was and nothing is indexed.
        """
        with self._lock:
            self._check_writable()
            if self._index:
                msg = "load_frames needs an engine that holds no records"
                raise InvalidQueryError(msg)
            self._trim_tail_snapshot()
            base = self._file.size
            try:
                for chunk in chunks:
                    self._append(chunk, None)
                end = self._file.size
                offsets = [ids.values() for ids in index.values() if ids]
                if offsets and not (
                    base <= min(map(min, offsets)) and max(map(max, offsets)) < end
                ):
                    msg = f"load_frames: an index offset lies outside the frames [{base}, {end})"
                    raise CorruptionError(msg)
            except BaseException:
                if self._failure is None:  # the chunks or the index failed, not the disk
                    with self._fatal_io():
                        self._file.truncate(base)
                    self._next = base
                raise
            if sync and end > base:
                with self._fatal_io():
                    self._file.sync("sync")
            self._index = {agent: ids for agent, ids in index.items() if ids}
            self._types = {}

    def delete(self, agent_id: int, id_hash: int) -> bool:
        """Tombstone one record; False when it was not live."""
        return self.delete_batch(agent_id, [id_hash]) > 0

    def delete_batch(self, agent_id: int, id_hashes: Iterable[int]) -> int:
        """Tombstone the live ids among ``id_hashes`` in one domain; return how many.

        Absent ids are skipped; with none live the file is not touched. The
        deleted payload bytes stay in the file until compaction.
        """
        with self._lock:
            self._check_writable()
            live = self._index.get(agent_id, {})
            view = self._file.view()
            doomed: list[tuple[int, int]] = []
            for id_hash in id_hashes:
                offset = live.get(id_hash)
                if offset is not None:
                    rec_type = view[offset] if offset < self._file.size else 0
                    doomed.append((id_hash, rec_type))
            if not doomed:
                return 0
            self._trim_tail_snapshot()
            stones = b"".join(encode_frame(agent_id, t, FLAG_DELETED, i, b"") for i, t in doomed)
            self._append(stones, "sync tombstones")
            for id_hash, _ in doomed:
                self._index_drop(agent_id, id_hash)
            return len(doomed)

    def _append(self, data: bytes, what: str | None) -> None:
        """Append ``data`` at the file end and fsync (unless ``what`` is None).

        On failure the file is cut back to where it was and writes are refused.
        """
        start = self._file.size
        with self._fatal_io():
            try:
                self._file.write_at(start, data)
            except StorageIOError as exc:
                try:
                    self._file.truncate(start)
                except StorageIOError as cut:
                    # Keep the write's own cause; the failed undo rides along.
                    exc.add_note(f"cutting the file back to {start} also failed: {cut!r}")
                    raise exc from exc.__cause__
                raise
            # Moved before the fsync: frames now in the file must not sit past
            # the record end if the fsync fails and a later checkpoint records it.
            self._next = self._file.size
            if what is None:
                return
            if getattr(self._group, "depth", 0):
                self._group.owed = True  # the block's exit syncs for it
            else:
                self._file.sync(what)

    @contextmanager
    def _fatal_io(self) -> Iterator[None]:
        """Refuse every later write if the body fails with an I/O error.

        An fsync error is not retryable: the kernel may already have dropped
        the dirty pages, so a retry that succeeds proves nothing.
        """
        try:
            yield
        except StorageIOError as exc:
            self._failure = exc
            raise

    def _types_of(self, agent_id: int) -> dict[int, set[int]]:
        """Return the domain's type index, building it from the frames' type bytes once."""
        by_type = self._types.get(agent_id)
        if by_type is None:
            ids = self._index.get(agent_id, {})
            by_type = group_by_type(self._file.view(), self._file.size, ids)
            self._types[agent_id] = by_type
        return by_type

    @contextmanager
    def group_commit(self) -> Iterator[None]:
        """Let this thread's writes in the block share one fsync, made when the block exits.

        For a call that writes more than once before it answers (a turn's lines,
        then its topic row): nothing in the block is acknowledged until the
        block exits, and the exit syncs even when the block raises, so what was
        written before a failure is as durable as if each write had synced.
        Writes from other threads sync as usual.
        """
        depth = getattr(self._group, "depth", 0)
        self._group.depth = depth + 1
        try:
            yield
        finally:
            self._group.depth = depth
            if depth == 0 and getattr(self._group, "owed", False):
                self._group.owed = False
                with self._lock, self._fatal_io():
                    self._check_open()
                    self._file.sync("sync")

    def _index_put(self, base: int, placements: Sequence[Placement]) -> None:
        """Index appended frames in order (later duplicates win); the hot path of every write."""
        index, types = self._index, self._types
        for agent_id, id_hash, rec_type, rel in placements:
            ids = index.get(agent_id)
            if ids is None:  # a new domain: its (empty) type index is complete
                ids = index[agent_id] = {}
                types[agent_id] = {}
            by_type = types.get(agent_id)
            if by_type is not None:  # else it is built from the frames on first use
                if id_hash in ids:  # an overwrite may change the record's type
                    for stale in by_type.values():
                        stale.discard(id_hash)
                members = by_type.get(rec_type)
                if members is None:
                    members = by_type[rec_type] = set()
                members.add(id_hash)
            ids[id_hash] = base + rel

    def _index_drop(self, agent_id: int, id_hash: int) -> None:
        ids = self._index.get(agent_id)
        if ids is None or ids.pop(id_hash, None) is None:
            return
        by_type = self._types.get(agent_id, {})
        for rec_type in list(by_type):
            by_type[rec_type].discard(id_hash)
            if not by_type[rec_type]:
                del by_type[rec_type]
        if not ids:
            del self._index[agent_id]
            self._types.pop(agent_id, None)

    # ---- headers and snapshots ---------------------------------------------------------

    def _flip_header(self, **changes: int) -> None:
        """Write the next header generation to the inactive slot, fsync, then activate it."""
        header = self._headers.current.next_generation(**changes)
        self._file.write_at(self._headers.inactive_offset, header.to_bytes())
        self._file.sync("sync header")
        self._headers = self._headers.flipped_to(header)

    def _trim_tail_snapshot(self) -> None:
        """Cut a snapshot sitting at the file end so frames always precede snapshots."""
        current = self._headers.current
        if not current.has_snapshot:
            return
        if current.snapshot_offset + current.snapshot_length != self._file.size:
            return  # a legacy non-tail snapshot stays where it is
        with self._fatal_io():
            self._file.truncate(self._next)
            self._flip_header(snapshot_offset=0, snapshot_length=0)

    def forget_snapshot(self) -> None:
        """Point the headers away from an unusable snapshot (Open found it damaged).

        Upstream rewrites the active slot in place; this flips to the inactive
        slot instead, so a torn write here cannot take the good header with it.
        """
        with self._lock:
            self._check_writable()
            with self._fatal_io():
                self._flip_header(snapshot_offset=0, snapshot_length=0)

    def checkpoint(self) -> None:
        """Append an index snapshot at the file end and point a new header at it."""
        with self._lock:
            self._check_writable()
            blob = build_snapshot(self._index)
            at = self._file.size
            with self._fatal_io():
                self._file.write_at(at, blob)
                self._file.sync("sync snapshot")
                self._flip_header(
                    snapshot_offset=at,
                    snapshot_length=len(blob),
                    record_count=sum(len(ids) for ids in self._index.values()),
                    record_end=self._next,
                )

    # ---- closing -----------------------------------------------------------------------

    def close(self) -> None:
        """Checkpoint (unless writes were refused) and release the file; a second close raises."""
        with self._lock:
            self._check_open()
            try:
                if self._failure is None:
                    self.checkpoint()
            finally:
                self._release()

    def close_without_checkpoint(self) -> None:
        """Release the file as a crash would leave it: no snapshot, no header flip."""
        with self._lock:
            self._check_open()
            self._release()

    def _release(self) -> None:
        self._closed = True
        self._index, self._types = {}, {}
        self._file.close()
