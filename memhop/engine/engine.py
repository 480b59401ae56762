"""Engine: the append-only log of one ``.meh`` file and its in-memory indexes.

Two indexes are kept (``LiveIndex``): ``agent -> id hash -> frame offset``
(live records only) and ``agent -> record type -> ids``. Every mutation appends
frames through the ``LogWriter`` and changes the indexes only once an fsync
covers them (``Commits``), so an acknowledged write is on disk and a failed one
is invisible. One re-entrant lock serialises the file, but not the fsyncs:
writers from several threads wait for them without it and share them.
Enumerations copy ids under the lock and yield without it, so a caller may
read inside its loop.
"""

from __future__ import annotations

import contextlib
import logging
import struct
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from types import MappingProxyType

from memhop.engine.commits import Commits
from memhop.engine.counts import WriteCounts
from memhop.engine.damage import DamageLog
from memhop.engine.frame import (
    FLAG_DELETED,
    ByteView,
    Frame,
    decode_record,
    encode_frame,
    named_damage,
    record_payloads,
)
from memhop.engine.header import HeaderPair
from memhop.engine.index import LiveIndex, Placement
from memhop.engine.online import OnlineAccess
from memhop.engine.recovery import domain_frames_since
from memhop.engine.seed import (
    PrefixDigests,
    check_seeded_index,
    has_seed,
    worth_a_seed,
    write_seed,
)
from memhop.engine.storefile import StoreFile
from memhop.engine.writes import LogWriter, RecordEntry, encode_batch
from memhop.errors import (
    ClosedError,
    CorruptionError,
    CRCMismatchError,
    InvalidQueryError,
    NotFoundError,
    StorageIOError,
)
from memhop.intmap import NO_IDS, IntMap

log = logging.getLogger("memhop.engine")

# Records read per lock hold by ``payloads_of``: a domain's build reads every record on a
# thread of its own while turns go on, and each of a turn's writes may wait out one hold.
_READ_CHUNK = 64


class Engine:
    """An open ``.meh`` file. Build one with ``create_engine`` or ``open_engine``."""

    def __init__(
        self,
        file: StoreFile,
        headers: HeaderPair,
        index: Mapping[int, Mapping[int, int]],
        next_offset: int,
        *,
        damaged_frames: int = 0,
        unread_from: int = 0,
        digests: Mapping[int, bytes] | None = None,
    ) -> None:
        """``digests``: prefix digests the opener checked (end -> digest)."""
        self._file = file
        self._live = LiveIndex(index)
        self._log = LogWriter(file, headers, next_offset)
        self._lock = threading.RLock()
        self._pacing = threading.local()  # the pacer of a thread inside ``paced``
        self._commits = Commits(self._lock, self._log, file)
        self._closed = False
        self._damage = DamageLog(damaged_frames)
        # Where the open gave up on a damaged region too large to resync past
        # (0: it did not). Appending behind it would hide the new frames from
        # the next scan, so writes are refused.
        self._unread_from = unread_from
        self._digests = PrefixDigests(digests)
        self.index_source = "new"  # or where the open took the index: snapshot, seed, scan
        # Bytes the open cut from the tail: a torn write, or a bad last frame (not damage:
        # it cannot be told from a torn one, as in SQLite's WAL); a tombstone there is undone.
        self.tail_bytes_cut = 0
        self._index_confirmed = False  # an index from the seed, replayed once (confirm_index)
        self._writes = WriteCounts()
        self._checks = (self._check_open, self._check_writable)
        self._before_delete: Callable[[], None] | None = None  # watch_deletes

    # ---- state -------------------------------------------------------------------------

    @property
    def path(self) -> str:
        return self._file.path

    @property
    def closed(self) -> bool:
        return self._closed

    def renamed(self, path: str) -> None:
        """Record that the open file now has the name ``path`` (a crash-safe create renamed it)."""
        self._file.path = path

    def permission_bits(self) -> int:
        """Return the file's permission bits, for a copy that must keep them."""
        with self._lock:
            self._check_open()
            return self._file.permission_bits()

    @property
    def headers(self) -> HeaderPair:
        """Both header slots as last written (for inspection and tests)."""
        return self._log.headers

    @property
    def record_end(self) -> int:
        """End of the record area: where the next frame would start after a trim."""
        return self._log.record_end

    def _check_open(self) -> None:
        if self._closed:
            msg = "engine is closed"
            raise ClosedError(msg)

    @property
    def writable(self) -> bool:
        """Whether writes are taken (``_check_writable`` raises why not)."""
        return not (self._unread_from or self._log.failure is not None or self._log.exhausted)

    def _check_writable(self) -> None:
        self._check_open()
        if self._unread_from:
            msg = (
                f"writes refused: the damaged region at offset {self._unread_from} is too large"
                " to search for records after it; reads still work, and salvage copies every"
                " record that verifies to a new file"
            )
            raise CorruptionError(msg)
        self._log.check_writable()

    # ---- reads -------------------------------------------------------------------------

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
                return decode_record(self._file.view(), offset, self._file.size, agent_id, id_hash)
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
                    self._file.view(), self._file.size, agent_id, rec_type, placed, damaged
                )
            yield from found

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
        with self._lock:
            return not self._closed and id_hash in self._live.offsets.get(agent_id, NO_IDS)

    def writes(self, agent_id: int, rec_type: int) -> int:
        """Records of ``rec_type`` the domain wrote or deleted through this engine (``counts``)."""
        with self._lock:
            return self._writes.of(agent_id, rec_type)

    def ids_of_type(self, agent_id: int, rec_type: int) -> list[int]:
        """Return the live ids of one type in one domain, ascending.

        A domain's first typed question reads the type byte of each of its
        frames: 0.1-0.2 s at 4*10^5 records, so without the lock (the map of
        the file it reads is pinned), and writes meanwhile are taken in.
        """
        with self._lock:
            if self._closed:
                return []
            read = self._live.type_read(agent_id)
            if read is None:
                return self._live.ids_of_type(agent_id, rec_type, self._file)
            size = self._file.size
            view = memoryview(self._file.view())  # pins this map while it is read
        pace: Callable[[], None] = getattr(self._pacing, "pace", None) or (lambda: None)
        with view:
            types = read.types(view, size, pace)
        with self._lock:
            if self._closed:
                return []
            self._live.take_types(agent_id, read, types)
            return self._live.ids_of_type(agent_id, rec_type, self._file)

    def agents(self) -> list[int]:
        """Return the agent ids that hold at least one live record, ascending."""
        with self._lock:
            return [] if self._closed else sorted(self._live.offsets)

    def offset_of(self, agent_id: int, id_hash: int) -> int | None:
        """Return the frame offset the index holds for (agent, id), if any."""
        with self._lock:
            return self._live.offsets.get(agent_id, NO_IDS).get(id_hash)

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

    def live_index(self) -> Mapping[int, IntMap]:
        """Return the live index (agent -> id -> frame offset) itself, read-only, not a copy,
        for the engine's own bulk readers: valid until the next write (hold ``exclusive()``)."""
        with self._lock:
            self._check_open()
            return MappingProxyType(self._live.offsets)

    def prefix_digest(self, end: int) -> bytes:
        """xxh3-128 of ``[DATA_START, end)``: fixed while the file is (frames are only
        appended); InvalidQueryError for an ``end`` outside the record area."""
        return self.prefix_digests([end])[0]

    def vouch_digest(self, end: int, digest: bytes) -> None:
        """Take ``digest`` as the prefix digest up to ``end`` (a side file's, sealed): no hash."""
        with self._lock:
            self._digests.remember(end, digest)

    def prefix_digests(self, ends: Sequence[int]) -> list[bytes]:
        """``prefix_digest`` at each of ``ends`` (ascending), in one pass over the bytes."""
        with self._lock:
            self._check_open()
            return self._digests.of(self._file.view(), ends, self._log.record_end)

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

    def watch_deletes(self, before: Callable[[], None]) -> None:
        """Call ``before`` (quick, lock-free) ahead of every delete: a side file goes first."""
        self._before_delete = before

    def online(self) -> OnlineAccess:
        """Bounded steps for a compaction that runs beside the writers (``engine.online``)."""
        return OnlineAccess(self._lock, self._file, self._log, self._live, self._checks)

    def log_view(self) -> tuple[ByteView, int]:
        """Return the mapping of the file and its size, for the engine's own readers: valid
        until the next write (hold ``exclusive()``)."""
        with self._lock:
            self._check_open()
            return self._file.view(), self._file.size

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the engine lock across several calls (writes from other threads wait).

        Every write still waiting for its fsync is made durable and indexed
        first, so the live index matches the log for the whole block.
        """
        with self._lock:
            self._check_open()
            self._commits.drain()
            with self._commits.held():
                yield

    def stats(self) -> tuple[int, int]:
        """Return (file bytes, live records); a closed engine answers (0, 0)."""
        with self._lock:
            if self._closed:
                return 0, 0
            return self._file.size, self._live.count()

    def confirm_index(self, what: str) -> None:
        """Check an index taken from the seed against a replay of the log, once, before a
        compaction leaves frames behind or a checkpoint stores it (``check_seeded_index``)."""
        with self._lock:
            self._check_open()
            if self.index_source == "seed" and not self._index_confirmed:
                file, end = self._file, self._log.record_end
                check_seeded_index(file.path, file.view(), end, self._live.offsets, what)
                self._index_confirmed = True

    # ---- writes ------------------------------------------------------------------------

    def write(self, agent_id: int, rec_type: int, id_hash: int, payload: bytes) -> int:
        """Append one record durably; return its frame offset."""
        frame = encode_frame(agent_id, rec_type, 0, id_hash, payload)
        return self.append_frames(frame, [(agent_id, id_hash, rec_type, 0)])[0]

    def write_batch(self, entries: Sequence[RecordEntry], *, sync: bool = True) -> list[int]:
        """Append records with one write and one fsync; later duplicates win.

        No atomicity across the batch: a crash may leave any prefix of it.
        ``sync=False`` skips the fsync, for a file nobody relies on until a
        later checkpoint makes it durable (a compaction copy).
        """
        blob, placements = encode_batch(entries)
        return self.append_frames(blob, placements, sync=sync)

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
            base = self._log.append(blob)
            self._writes.add((p[0], p[2]) for p in placements)
            if sync:
                self._commits.commit(
                    self._file.size, lambda: self._live.put(base, placements), "sync"
                )
            else:
                self._commits.apply_waiting()
                self._live.put(base, placements)
            return [base + p[3] for p in placements]

    def load_frames(
        self, chunks: Iterable[bytes], index: Mapping[int, Mapping[int, int]], *, sync: bool = True
    ) -> None:
        """Append verified live frames to an engine that holds no records, and adopt their index.

        The bulk form of ``append_frames``, for compaction: ``chunks`` are
        written in order at the file end (``record_end`` of a fresh engine),
        and ``index`` (agent -> id -> absolute frame offset) must name every
        frame in them and only them. The caller has verified both; only the
        offset bounds are checked here (CorruptionError). ``index`` is read once
        the chunks are written (their producer may fill it), and taken over, not
        copied; the type index is built from the frames on first use.
        ``sync=False`` leaves the fsync to a later checkpoint. If a chunk cannot
        be produced or written, or an offset is out of bounds, the file is cut
        back to where it was and nothing is indexed.
        """
        with self._lock:
            self._check_writable()
            if self._live.offsets:
                msg = "load_frames needs an engine that holds no records"
                raise InvalidQueryError(msg)
            self._log.append_chunks(chunks, index, sync=sync)
            self._live.adopt(index)

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
            doomed = self._live.typed(agent_id, id_hashes, self._file)
            if not doomed:
                return 0
            stones = b"".join(encode_frame(agent_id, t, FLAG_DELETED, i, b"") for i, t in doomed)
            if self._before_delete is not None:
                self._before_delete()
            self._log.append(stones)
            self._writes.add((agent_id, t) for _, t in doomed)

            def drop() -> None:
                for id_hash, _ in doomed:
                    self._live.drop(agent_id, id_hash)

            self._commits.commit(self._file.size, drop, "sync tombstones")
            return len(doomed)

    def group_commit(self) -> AbstractContextManager[None]:
        """Let this thread's writes in the block share one fsync, made when the block exits.

        For a call that writes more than once before it answers (a turn's lines,
        then its topic row): writes in the block are readable at once, nothing
        in it is acknowledged until the block exits, and the exit syncs even
        when the block raises, so what was written before a failure is as
        durable as if each write had synced. Writes from other threads sync as
        usual (and may share that fsync).
        """
        return self._commits.group()

    def deferred(self) -> AbstractContextManager[None]:
        """Let this thread's writes in the block return without an fsync of their own.

        They are readable at once and become durable with the file's next
        fsync, whoever makes it (a later write, a group's exit, ``sync``, a
        checkpoint). A crash before that can take them back, with every write
        after them: the log loses only a suffix.
        """
        return self._commits.deferred()

    def sync(self) -> None:
        """Make everything written so far durable (one fsync, shared with other writers)."""
        with self._lock:
            self._check_open()
            self._commits.wait_durable(self._file.size, "sync")

    # ---- snapshots ---------------------------------------------------------------------

    def forget_snapshot(self) -> None:
        """Point the headers away from an unusable snapshot (Open found it damaged).

        Upstream rewrites the active slot in place; this flips to the inactive
        slot instead, so a torn write here cannot take the good header with it.
        """
        with self._lock:
            self._check_writable()
            self._log.forget_snapshot()

    def checkpoint(self, *, seed: bool = False) -> bytes:
        """Append an index snapshot at the file end, point a new header at it, return it; ``seed``
        also keeps it beside the file (``engine.seed``): never for a copy not yet renamed."""
        with self._lock:
            self._check_writable()
            self._commits.drain()
            self.confirm_index("checkpoint")  # a seed's index becomes the file's own here
            blob = self._log.checkpoint(self._live.offsets)
            if seed:
                self._seed(blob)
            return blob

    def _seed(self, snapshot: bytes) -> None:
        end = self.record_end
        if self._damage.clean and worth_a_seed(end):  # clean bytes
            digest = self.prefix_digests([end])[0]
            write_seed(self._file.path, end, digest, snapshot, self._file.permission_bits())

    # ---- closing -----------------------------------------------------------------------

    def close(self) -> None:
        """Checkpoint and release the file; a second close raises.

        No checkpoint when writes were refused, or when nothing was written
        since the last one: a look at a file must not grow it or move its mtime.
        """
        with self._lock:
            self._check_open()
            try:
                self.checkpoint_if_stale(seed=True)
            finally:
                self._release()

    def checkpoint_if_stale(self, *, seed: bool = False) -> None:
        """Checkpoint unless writes are refused or nothing was written since the last one;
        ``seed`` as ``checkpoint``, and a current snapshot without a seed gets one."""
        with self._lock:
            self._check_open()
            if not self.writable:
                return
            if not self._log.snapshot_is_current():
                self.checkpoint(seed=seed)
            elif seed and not has_seed(self._file.path):  # a compaction's copy, an older file
                self._seed(self._log.current_snapshot())

    def snapshot_seal(self) -> int:
        """The CRC of the index snapshot the file ends in, if nothing was written since; else 0.

        Such a snapshot holds every live record's offset: while the file ends
        in it, its CRC names the file's records as they were when it was written.
        """
        with self._lock:
            self._check_open()
            current = self._log.headers.current
            if not self._log.snapshot_is_current() or current.snapshot_offset != self.record_end:
                return 0
            end = current.snapshot_offset + current.snapshot_length
            return int(struct.unpack_from("<I", self._file.view(), end - 4)[0])

    def close_without_checkpoint(self) -> None:
        """Release the file as a crash would leave it: no snapshot, no header flip."""
        with self._lock:
            self._check_open()
            self._release()

    def _release(self) -> None:
        # A failed fsync here is latched and was raised to the writers that waited on it.
        with contextlib.suppress(StorageIOError):
            self._commits.close()
        self._closed = True
        self._live.clear()
        self._file.close()
