"""EngineState: what one open ``.meh`` holds, and the checks every ``Engine`` call starts with.

The seam the parts of ``Engine`` share: ``EngineReads``, ``EngineMutations``
and ``EngineCheckpoints`` each extend it with one concern and reach the file,
the log, the indexes and the lock only through the attributes set here.
Nothing here reads a frame or writes a byte.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from memhop.engine.commits import Commits
from memhop.engine.damage import DamageLog
from memhop.engine.header import HeaderPair
from memhop.engine.index import LiveIndex
from memhop.engine.seed import PrefixDigests
from memhop.engine.storefile import StoreFile
from memhop.engine.writes import LogWriter
from memhop.errors import ClosedError, CorruptionError

__all__ = ["EngineState"]


class EngineState:
    """An open file's parts: its file, log writer, live index, lock, commits and counters."""

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
        self._checks = (self._check_open, self._check_writable)
        self._before_delete: Callable[[], None] | None = None  # watch_deletes

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
        # One test on every write's path, ``writable``'s spelt out (a property's call costs
        # as much as the test again); the refusal says which rule refused.
        log = self._log
        if self._closed or self._unread_from or log.failure is not None or log.exhausted:
            self._refuse_write()

    def _refuse_write(self) -> None:
        self._check_open()
        if self._unread_from:
            msg = (
                f"writes refused: the damaged region at offset {self._unread_from} is too large"
                " to search for records after it; reads still work, and salvage copies every"
                " record that verifies to a new file"
            )
            raise CorruptionError(msg)
        self._log.check_writable()
