"""What a compaction that runs beside the writers needs of an open engine, each step one short hold.

An in-place compaction (``memhop.engine.inplace``) reads the log from a pinned
view of the file without the engine lock: frames are only appended, so the
bytes of the settled part of the log never change while the file is open.
It takes the lock only for steps whose cost it bounds: where the settled part
ends, which of a batch of frames are still live, and, on the copy it is
building, erasing the payloads of frames that died after they were copied.

Contract:
- ``settled`` names an end before which every frame's index change has been
  applied (a live frame is where the index says, unless a later one moved or
  deleted its record), so a reader may judge those frames by the index.
  Without ``drained`` (the caller does not hold ``Engine.exclusive``), a
  frame past the durable end may still wait for its fsync, and its index
  change with it, so the end is the durable end at most.
- ``erase`` is for a file that is nobody's data yet (a copy before it is
  renamed into place): it rewrites bytes inside the record area.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable, Iterable, Sequence

from memhop.engine.frame import RECORD_HEADER_SIZE, encode_frame
from memhop.engine.header import DATA_START
from memhop.engine.index import LiveIndex
from memhop.engine.storefile import StoreFile
from memhop.engine.writes import LogWriter
from memhop.errors import InvalidQueryError
from memhop.intmap import NO_IDS

__all__ = ["OnlineAccess"]

_HEAD = struct.Struct("<BBIQQ")


class OnlineAccess:
    """One engine's state, reached under its lock one bounded step at a time (``Engine.online``)."""

    __slots__ = ("_check_open", "_check_writable", "_file", "_live", "_lock", "_log")

    def __init__(
        self,
        lock: threading.RLock,
        file: StoreFile,
        log: LogWriter,
        live: LiveIndex,
        checks: tuple[Callable[[], None], Callable[[], None]],
    ) -> None:
        """``checks``: the engine's own (open, writable) checks."""
        self._lock, self._file, self._log, self._live = lock, file, log, live
        self._check_open, self._check_writable = checks

    def settled(self, *, drained: bool = False) -> tuple[memoryview, int]:
        """A view of the file, pinned until the caller releases it, and the settled end.

        ``drained``: the caller holds ``Engine.exclusive`` (every write is
        indexed), so the end is the record end. StorageIOError after a failed
        write or fsync (frames past the durable end may never be indexed);
        ClosedError once the engine is closed.
        """
        with self._lock:
            self._check_open()
            if self._log.failure is not None:
                self._log.check_writable()
            end = self._log.record_end
            if not drained:  # (a new file is durable to its headers, but says 0)
                end = max(min(end, self._file.durable_end), DATA_START)
            return memoryview(self._file.view()), end

    def live_among(self, frames: Sequence[tuple[int, int, int]]) -> list[bool]:
        """For each (offset, agent, id): whether the index holds that record at that offset now."""
        with self._lock:
            self._check_open()
            index = self._live.offsets
            return [index.get(agent, NO_IDS).get(i) == at for at, agent, i in frames]

    def erase(self, offsets: Iterable[int]) -> None:
        """Overwrite the payload of the dead frame at each of ``offsets`` with zeros, under a
        fresh CRC: the frame keeps its record's type, agent, id and length, and still reads.

        InvalidQueryError for an offset the index holds a record at, or one whose
        frame is a tombstone or lies past the record end. No fsync: the file's
        next one covers it (its durable end is moved back to the first offset).
        """
        with self._lock:
            self._check_writable()
            view, end, index = self._file.view(), self._log.record_end, self._live.offsets
            spots = sorted(set(offsets))
            for at in spots:
                if at + RECORD_HEADER_SIZE > end:
                    msg = f"erase: offset {at} is past the record end {end}"
                    raise InvalidQueryError(msg)
                rec_type, flags, length, agent, ident = _HEAD.unpack_from(view, at)
                if flags or index.get(agent, NO_IDS).get(ident) == at:
                    msg = f"erase: the frame at offset {at} is live or a tombstone"
                    raise InvalidQueryError(msg)
                with self._log.fatal_io():
                    self._file.write_at(at, encode_frame(agent, rec_type, 0, ident, bytes(length)))
            if spots:
                self._file.durable_end = min(self._file.durable_end, spots[0])
