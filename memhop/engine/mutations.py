"""EngineMutations: appending records and tombstones, and when they count as written.

Every mutation appends frames through the ``LogWriter`` and changes the live
index only once an fsync covers them (``Commits``), so an acknowledged write is
on disk and a failed one is invisible; writers on several threads share those
fsyncs, made without the engine lock. ``group_commit`` and ``deferred`` let a
thread's writes share or skip their own; ``exclusive`` settles every waiting
write and holds the lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import partial

from memhop.engine.frame import FLAG_DELETED, encode_frame
from memhop.engine.index import Placement
from memhop.engine.state import EngineState
from memhop.engine.writes import RecordEntry, encode_batch
from memhop.errors import InvalidQueryError

__all__ = ["EngineMutations"]


class EngineMutations(EngineState):
    """The write side of ``Engine``: records in, tombstones, commit modes, exclusive holds."""

    def write(self, agent_id: int, rec_type: int, id_hash: int, payload: bytes) -> int:
        """Append one record durably; return its frame offset."""
        # A batch of one: its frame is encoded by the batch encoder (in C where built).
        return self.write_batch([RecordEntry(agent_id, rec_type, id_hash, payload)])[0]

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
        lock = self._lock
        lock.acquire()  # not ``with``: see ``EngineReads.contains``
        try:
            if not placements:
                self._check_open()
                return []
            self._check_writable()
            base = self._log.append(blob)
            if sync:
                self._commits.commit(
                    self._file.size, partial(self._live.put, base, placements), "sync"
                )
            else:
                self._commits.apply_waiting()
                self._live.put(base, placements)
            if len(placements) == 1:  # a turn's write: no comprehension made (a function, on 3.11)
                return [base + placements[0][3]]
            return [base + p[3] for p in placements]
        finally:
            lock.release()

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

    def delete_batch(
        self, agent_id: int, id_hashes: Iterable[int], rec_type: int | None = None
    ) -> int:
        """Tombstone the live ids among ``id_hashes`` in one domain (of ``rec_type`` only,
        when given); return how many.

        Absent ids are skipped; with none live the file is not touched. The
        deleted payload bytes stay in the file until compaction.
        """
        with self._lock:
            self._check_writable()
            doomed = self._live.typed(agent_id, id_hashes, self._file)
            if rec_type is not None:
                doomed = [(i, t) for i, t in doomed if t == rec_type]
            if not doomed:
                return 0
            stones = b"".join(encode_frame(agent_id, t, FLAG_DELETED, i, b"") for i, t in doomed)
            if self._before_delete is not None:
                self._before_delete()
            self._log.append(stones)

            def drop() -> None:
                for id_hash, rec_type in doomed:
                    self._live.drop(agent_id, id_hash, rec_type)

            self._commits.commit(self._file.size, drop, "sync tombstones")
            return len(doomed)

    def watch_deletes(self, before: Callable[[], None]) -> None:
        """Call ``before`` (quick, lock-free) ahead of every delete: a side file goes first."""
        self._before_delete = before

    # ---- fsyncs and holds --------------------------------------------------------------

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

    @contextmanager
    def exclusive(self, *, drained: bool = True) -> Iterator[None]:
        """Hold the engine lock across several calls (writes from other threads wait).

        Every write still waiting for its fsync is made durable and indexed
        first, so the live index matches the log for the whole block; with
        ``drained`` False the block reads the index as it stands (the durable
        records) and waits on no disk: for an estimate, which must not hold
        every writer while an fsync in flight ends.
        """
        with self._lock:
            self._check_open()
            if drained:
                self._commits.drain()
            with self._commits.held():
                yield
