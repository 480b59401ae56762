"""LogWriter: every byte the engine puts in its file, and the rules that keep it honest.

Appends land at the file end after a snapshot sitting there is cut (frames
always precede snapshots); a failed append is cut back to where the file was.
Any I/O failure latches: the writer refuses every later write until the file
is reopened. Header slots are only ever written to the inactive slot, fsynced,
then activated. Not thread-safe on its own: the engine holds its lock around
every call but ``sync``, which its commit schedule may make without it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import NamedTuple

from memhop.engine.frame import encode_frame
from memhop.engine.header import MAX_COMMIT_ID, FileHeader, HeaderPair
from memhop.engine.index import Placement
from memhop.engine.snapshot import build_snapshot
from memhop.engine.storefile import StoreFile
from memhop.errors import CorruptionError, StorageIOError
from memhop.frozen import quick_tuple

_Encoder = Callable[[Sequence["RecordEntry"]], tuple[bytes, list[Placement]] | None]
_compiled_batch: _Encoder | None
try:  # the compiled encoder (``_frames.c``), where the install built it
    from memhop.engine._frames import encode_batch as _compiled_batch
except ImportError:  # built without a C compiler (hatch_build.py says why)
    _compiled_batch = None


@quick_tuple
class RecordEntry(NamedTuple):
    """One record of a write batch (a tuple: a turn makes several, and a frozen class costs
    several times a tuple to build)."""

    agent_id: int
    rec_type: int
    id_hash: int
    payload: bytes


def encode_batch(entries: Sequence[RecordEntry]) -> tuple[bytes, list[Placement]]:
    """Encode live frames back to back; return the blob and where each frame sits in it."""
    if _compiled_batch is not None:
        done = _compiled_batch(entries)
        if done is not None:
            return done
    return python_batch(entries)


def python_batch(entries: Sequence[RecordEntry]) -> tuple[bytes, list[Placement]]:
    """``encode_batch`` in Python: the reference the compiled encoder is tested against, and
    what encodes an entry it leaves (it refuses a payload over the frame limit)."""
    frames: list[bytes] = []
    placements: list[Placement] = []
    at = 0
    for agent_id, rec_type, id_hash, payload in entries:
        frame = encode_frame(agent_id, rec_type, 0, id_hash, payload)
        placements.append((agent_id, id_hash, rec_type, at))
        frames.append(frame)
        at += len(frame)
    return b"".join(frames), placements


class LogWriter:
    """The write side of one open file: record end, header slots, fsync policy, failure latch."""

    def __init__(self, file: StoreFile, headers: HeaderPair, record_end: int) -> None:
        self._file = file
        self.record_end = record_end
        self.failure: StorageIOError | None = None
        self._adopt(headers)

    def _adopt(self, headers: HeaderPair) -> None:
        """Take ``headers`` as the pair on disk, and what every append asks of it."""
        self.headers = headers
        current = headers.current
        # Whether the active header's commit id is at the top of its range (a crafted file).
        self.exhausted = current.commit_id >= MAX_COMMIT_ID
        self._snapshot_named = current.has_snapshot  # one may sit at the tail: appends cut it

    def check_writable(self) -> None:
        """Raise StorageIOError when an earlier write or fsync failed, CorruptionError when no
        header can follow the active one (``exhausted``)."""
        if self.failure is not None:
            msg = "engine refuses writes after an earlier write or fsync failure; reopen the file"
            raise StorageIOError(msg) from self.failure
        if self.exhausted:
            # Refused before a byte changes: a write may need a header flip (a trim, a
            # checkpoint), and frames appended now could never be checkpointed.
            msg = (
                f"writes refused: {self._file.path} is exhausted, its header's commit id is"
                f" {MAX_COMMIT_ID}, the top of its range, so no later header can be written;"
                " reads still work, and compact_to or salvage_to copies the records to a new file"
            )
            raise CorruptionError(msg)

    @contextmanager
    def fatal_io(self) -> Iterator[None]:
        """Refuse every later write if the body fails with an I/O error.

        An fsync error is not retryable: the kernel may already have dropped
        the dirty pages, so a retry that succeeds proves nothing.
        """
        try:
            yield
        except StorageIOError as exc:
            self.failure = exc
            raise

    # ---- frames ------------------------------------------------------------------------

    def append(self, data: bytes) -> int:
        """Cut a tail snapshot, then append ``data`` at the file end (no fsync); return the
        offset where it starts. The engine's commit schedule (``Commits``) decides when it
        is synced.

        On failure the file is cut back to where it was and writes are refused.
        """
        if self._snapshot_named:
            self._trim_tail_snapshot()
        start = self._file.size
        try:
            self._file.write_at(start, data)
        except StorageIOError as exc:
            self.failure = exc  # as fatal_io, spelt out: this is every write's hot path
            try:
                self._file.truncate(start)
            except StorageIOError as cut:
                # Keep the write's own cause; the failed undo rides along.
                exc.add_note(f"cutting the file back to {start} also failed: {cut!r}")
                raise exc from exc.__cause__
            raise
        # Frames now in the file must not sit past the record end if their fsync
        # fails and a later checkpoint records it.
        self.record_end = self._file.size
        return start

    def append_chunks(
        self, chunks: Iterable[bytes], offsets: Mapping[int, Mapping[int, int]], *, sync: bool
    ) -> None:
        """Append ``chunks`` in order, checking that ``offsets`` all lie inside them.

        If a chunk cannot be produced or written, or an offset is out of
        bounds (CorruptionError), the file is cut back to where it was.
        """
        self._trim_tail_snapshot()
        base = self._file.size
        try:
            for chunk in chunks:
                self.append(chunk)  # the snapshot is cut already: each lands at the end
            end = self._file.size
            spans = [ids.values() for ids in offsets.values() if ids]
            if spans and not (base <= min(map(min, spans)) and max(map(max, spans)) < end):
                msg = f"load_frames: an index offset lies outside the frames [{base}, {end})"
                raise CorruptionError(msg)
        except BaseException:
            if self.failure is None:  # the chunks or the index failed, not the disk
                with self.fatal_io():
                    self._file.truncate(base)
                self.record_end = base
            raise
        if sync and end > base:
            self.sync()

    def sync(self, what: str = "sync") -> None:
        """Fsync the file; a failure refuses later writes. Safe without the engine lock."""
        try:
            self._file.sync(what)
        except StorageIOError as exc:
            self.failure = exc
            raise

    # ---- headers and snapshots ---------------------------------------------------------

    def _flip_header(self, header: FileHeader) -> None:
        """Write ``header`` (the next generation, made before any byte of the change was
        written) to the inactive slot, fsync, then activate it."""
        self._file.write_at(self.headers.inactive_offset, header.to_bytes())
        self._file.sync("sync header")
        self._adopt(self.headers.flipped_to(header))

    def _trim_tail_snapshot(self) -> None:
        """Cut a snapshot sitting at the file end so frames always precede snapshots."""
        current = self.headers.current
        if not current.has_snapshot:
            return
        if current.snapshot_offset + current.snapshot_length != self._file.size:
            return  # a legacy non-tail snapshot stays where it is
        header = current.next_generation(snapshot_offset=0, snapshot_length=0)
        with self.fatal_io():
            self._file.truncate(self.record_end)
            self._flip_header(header)

    def forget_snapshot(self) -> None:
        """Flip to a header that names no snapshot."""
        header = self.headers.current.next_generation(snapshot_offset=0, snapshot_length=0)
        with self.fatal_io():
            self._flip_header(header)

    def snapshot_is_current(self) -> bool:
        """Whether the active snapshot sits at the file end, so nothing was written since it.

        Every append cuts a tail snapshot first, so one still at the tail holds
        exactly the live index: a close then has nothing to add.
        """
        current = self.headers.current
        return (
            current.has_snapshot
            and current.snapshot_offset + current.snapshot_length == self._file.size
            and current.record_end == self.record_end
        )

    def current_snapshot(self) -> bytes:
        """The bytes of the snapshot the active header names (the caller knows it is sound)."""
        current = self.headers.current
        start = current.snapshot_offset
        return bytes(self._file.view()[start : start + current.snapshot_length])

    def checkpoint(self, offsets: Mapping[int, Mapping[int, int]]) -> bytes:
        """Append a snapshot of ``offsets`` at the file end and point a new header at it;
        return the snapshot."""
        blob = build_snapshot(offsets)
        at = self._file.size
        header = self.headers.current.next_generation(
            snapshot_offset=at,
            snapshot_length=len(blob),
            record_count=sum(len(ids) for ids in offsets.values()),
            record_end=self.record_end,
        )
        with self.fatal_io():
            self._file.write_at(at, blob)
            self._file.sync("sync snapshot")
            self._flip_header(header)
        return blob
