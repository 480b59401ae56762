"""EngineCheckpoints: storing the live index in the file and beside it, and closing.

A checkpoint appends an index snapshot at the file end and points a new header
at it, so the next open reads no frame; a close makes one unless nothing was
written since the last, and keeps a copy beside the file (``engine.seed``) for
an open after a kill. The prefix digests name the record area's bytes up to an
end, which is what a seed is checked by; an index taken from a seed is replayed
against the log once (``confirm_index``) before anything stores or relies on it.
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Sequence

from memhop.engine.seed import check_seeded_index, has_seed, worth_a_seed, write_seed
from memhop.engine.state import EngineState
from memhop.errors import StorageIOError

__all__ = ["EngineCheckpoints"]


class EngineCheckpoints(EngineState):
    """Checkpoints, seeds, prefix digests and closing for ``Engine``."""

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

    def confirm_index(self, what: str) -> None:
        """Check an index taken from the seed against a replay of the log, once, before a
        compaction leaves frames behind or a checkpoint stores it (``check_seeded_index``)."""
        with self._lock:
            self._check_open()
            if self.index_source == "seed" and not self._index_confirmed:
                file, end = self._file, self._log.record_end
                check_seeded_index(file.path, file.view(), end, self._live.offsets, what)
                self._index_confirmed = True

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
