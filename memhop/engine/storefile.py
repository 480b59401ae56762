"""The open ``.meh`` file: descriptor, exclusive lock, mappings, durable writes.

Reads go through a read-only mapping, refreshed lazily when a read needs bytes
past it. An append lands in the *room*: a writable mapping of a reserve the
file is extended by past its last frame, a megabyte at a time, so a frame costs
a copy rather than a write call. The reserve starts with a fence (bytes no frame
begins with) followed by zeros, and is cut when the file closes; a crash leaves
it behind, and the open that follows cuts it (``recovery``), as MemHop's cuts
any damaged tail. Other writes (headers, frames erased in place) are ordinary
file writes. Every OS failure becomes a ``StorageIOError`` naming what was done.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import sys
from typing import BinaryIO

import portalocker

from memhop.errors import StorageIOError

LOCK_MESSAGE = "database already open by another instance"
ROOM_BYTES = 1 << 20
"""How far past its last frame the file is extended at a time, for appends to land in."""
_LARGE = ROOM_BYTES // 2  # an append past this is written through (``write_at``)
_POPULATE_WRITE = 23  # Linux's MADV_POPULATE_WRITE (5.14 on), which Python 3.11 does not name
FENCE = b"\xff" * 26
"""What the reserve starts with: a frame header's length, no frame's first bytes (its length
field claims 4 GiB), so a scan that meets it stops there, in MemHop as in memhop; zeros
right after a frame would read to MemHop as the end of the log, and it appends at the end
of the file, past them."""
_FENCE_SIZE = len(FENCE)


def _write_some(handle: BinaryIO, data: bytes | memoryview, offset: int) -> int:
    """Write a prefix of ``data`` at ``offset``; return how much (every write of a store
    file comes here: the seam a test injects write faults at)."""
    return os.pwrite(handle.fileno(), data, offset)  # one call: no seek, no file position


if not hasattr(os, "pwrite"):  # pragma: no cover - Windows has no pwrite

    def _write_some(handle: BinaryIO, data: bytes | memoryview, offset: int) -> int:
        handle.seek(offset)  # the engine's lock keeps the position this write's
        return handle.write(data) or 0


def _extend(fd: int, offset: int, length: int) -> None:
    """Grow the file to ``offset + length`` with its blocks taken now, so that a copy into
    the room never meets a full disk (a fault there would kill the process)."""
    os.posix_fallocate(fd, offset, length)


def os_reason(exc: OSError, path: str) -> str:
    """Why ``path`` could not be opened or created, in words a user can act on.

    A missing parent directory is named, since the OS's "No such file or
    directory" reads as if the file itself were the problem.
    """
    folder = os.path.dirname(path) or os.curdir
    if isinstance(exc, FileNotFoundError) and not os.path.isdir(folder):
        return f"the directory {folder} does not exist"
    return exc.strerror or str(exc)


def fsync_file(fd: int) -> None:
    """Flush a file to stable storage (``F_FULLFSYNC`` on macOS, as Go's ``File.Sync``)."""
    if sys.platform == "darwin":  # pragma: no cover - exercised on macOS only
        import fcntl

        fcntl.fcntl(fd, fcntl.F_FULLFSYNC)
    else:
        os.fsync(fd)


def fsync_directory(path: str) -> None:
    """Make a new directory entry durable; a no-op where directories cannot be opened."""
    if sys.platform == "win32":  # pragma: no cover - Windows has no directory fsync
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        fsync_file(fd)
    finally:
        os.close(fd)


class StoreFile:
    """One locked, mapped file; not thread-safe on its own (the engine serialises it)."""

    def __init__(self, path: str, handle: BinaryIO) -> None:
        self.path = path
        self._handle = handle
        self._map: mmap.mmap | None = None
        self._mapped = 0
        self.size = os.fstat(handle.fileno()).st_size
        # The room: a writable mapping of [_room_start, _room_end), the file's bytes
        # past ``size`` up to ``_extent`` (its length on disk) being the reserve.
        self._room: mmap.mmap | None = None
        self._room_start = self._room_end = 0
        self._extent = self.size
        # Where blocks cannot be taken ahead (no posix_fallocate: macOS, Windows; or a file
        # system that refuses it), every append is written through.
        self._roomy = hasattr(os, "posix_fallocate")
        # How far the file is known durable: all of it at the open, and all of
        # it after a truncate (which syncs); the engine's fsyncs move it on.
        self.durable_end = self.size

    @classmethod
    def open(cls, path: str, *, create: bool) -> StoreFile:
        """Open read-write and take the exclusive lock before anything touches the file.

        ``create`` makes the file if it is absent but never truncates it: a
        create refused by the lock must leave the holder's bytes alone.
        """
        flags = os.O_RDWR | (os.O_CREAT if create else 0) | getattr(os, "O_BINARY", 0)
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as exc:
            msg = f"cannot open {path}: {os_reason(exc, path)}"
            raise StorageIOError(msg) from exc
        return cls._locked(path, fd)

    @classmethod
    def create_new(
        cls, path: str, mode: int, *, exact: bool, shown: str | None = None
    ) -> StoreFile:
        """Create ``path``, which must not exist, locked; ``exact`` sets ``mode`` past the umask.

        ``shown`` is the name a refusal gives: the file the user asked for,
        when ``path`` is a temporary sibling built to be renamed into it.
        """
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
        try:
            fd = os.open(path, flags, mode)
        except OSError as exc:
            named = path if shown is None else shown
            msg = f"cannot create {named}: {os_reason(exc, named)}"
            raise StorageIOError(msg) from exc
        if exact and hasattr(os, "fchmod"):
            try:
                os.fchmod(fd, mode)
            except OSError as exc:
                os.close(fd)
                msg = f"chmod {path}"
                raise StorageIOError(msg) from exc
        return cls._locked(path, fd)

    @classmethod
    def _locked(cls, path: str, fd: int) -> StoreFile:
        handle = os.fdopen(fd, "r+b", buffering=0)
        try:
            portalocker.lock(handle, portalocker.LOCK_EX | portalocker.LOCK_NB)
        except (portalocker.exceptions.LockException, OSError) as exc:
            handle.close()
            raise StorageIOError(LOCK_MESSAGE) from exc
        return cls(path, handle)

    def permission_bits(self) -> int:
        """Return the file's permission bits (as ``chmod`` takes them)."""
        try:
            return os.fstat(self._handle.fileno()).st_mode & 0o7777
        except OSError as exc:
            msg = f"stat {self.path}"
            raise StorageIOError(msg) from exc

    def view(self) -> mmap.mmap | bytes:
        """Return a mapping covering the whole file as it is now."""
        if self.size == 0:
            return b""
        if self._map is None or self._mapped != self.size:
            try:
                fresh = mmap.mmap(self._handle.fileno(), self.size, access=mmap.ACCESS_READ)
            except (OSError, ValueError) as exc:
                msg = f"mmap {self.path}"
                raise StorageIOError(msg) from exc
            self._drop_map()
            self._map, self._mapped = fresh, self.size
        return self._map

    def view_to(self, end: int) -> mmap.mmap | bytes:
        """A mapping covering at least the first ``end`` bytes: the one made last when it
        does, else ``view()``. A frame starting inside a mapping ends inside it (the file
        grows by whole writes, and a cut drops the mapping), so a read of a frame asks for
        its header: remapping a file that grew since, on every read after a write,
        unmapped and faulted in again what earlier reads had touched."""
        held = self._map
        if held is not None and end <= self._mapped:
            return held
        return self.view()

    def _drop_map(self) -> None:
        if self._map is not None:
            # A caller may still hold a view; the map then goes when it does.
            with contextlib.suppress(BufferError):
                self._map.close()
            self._map, self._mapped = None, 0

    def write_at(self, offset: int, data: bytes) -> None:
        """Write all of ``data`` at ``offset``; the file size follows. An append is copied
        into the room (made, or made larger, first) where the system gives one; a large
        one (a compaction's blob, an index snapshot) is written through, as mapping and
        populating its pages would cost more than the one write call it saves."""
        size = len(data)
        end = offset + size
        if offset == self.size and self._roomy and size <= _LARGE:
            room = self._room
            if room is None or end + _FENCE_SIZE > self._room_end:
                room = self._make_room(end + _FENCE_SIZE)
            if room is not None:
                stop = end - self._room_start
                # The fence past the frames first: a crash between the two copies leaves
                # a damaged frame before a fence, never zeros right after a whole frame.
                room[stop : stop + _FENCE_SIZE] = FENCE
                room[stop - size : stop] = data
                self.size = end
                return
        if offset == self.size and self._extent > end:
            self._write_through(end, FENCE)  # the reserve left past it keeps its fence, first
        self._write_through(offset, data)
        self.size = max(self.size, end)

    def _make_room(self, need: int) -> mmap.mmap | None:
        """Map a room from the page ``size`` is on to past ``need``, extending the file first:
        the fence written at ``size`` (an ordinary write: its failure is the append's), then
        the rest of the reserve. None when the system gives no room: the append is written
        through (and fails there if the disk is full)."""
        start = self.size - self.size % mmap.ALLOCATIONGRANULARITY
        self._write_through(self.size, FENCE)
        try:
            self._reserve(need + -need % mmap.PAGESIZE)
            room = mmap.mmap(self._handle.fileno(), self._extent - start, offset=start)
        except (OSError, ValueError) as exc:
            if not isinstance(exc, OSError) or exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                self._roomy = False  # not a full disk: this file system gives no room
            return None
        if sys.platform == "linux":
            # The room's pages made writable in one call, not faulted in one copy at a time
            # (2-3% of a turn); an older kernel refuses it, and the copies fault them in.
            with contextlib.suppress(OSError):
                room.madvise(_POPULATE_WRITE)
        self._drop_room()
        self._room, self._room_start, self._room_end = room, start, self._extent
        return room

    def _reserve(self, least: int) -> None:
        """Extend the file to a megabyte past ``size``, or, when the disk has no more, to
        ``least`` (past what it is already)."""
        end = max(least, self.size + ROOM_BYTES)
        if end <= self._extent:
            return
        fd = self._handle.fileno()
        try:
            _extend(fd, self._extent, end - self._extent)
        except OSError:
            if least <= self._extent:
                return
            if end == least:
                raise
            end = least
            _extend(fd, self._extent, end - self._extent)
        self._extent = end

    def _drop_room(self) -> None:
        if self._room is not None:
            self._room.close()
            self._room = None
            self._room_start = self._room_end = 0

    def _write_through(self, offset: int, data: bytes) -> None:
        """Write all of ``data`` at ``offset`` with write calls."""
        size = len(data)
        end = offset + size
        try:
            written = _write_some(self._handle, data, offset)
            if written < size:  # a short write: the rest from where it stopped
                view = memoryview(data)[written:]
                while view:
                    offset += written
                    written = _write_some(self._handle, view, offset)
                    if not written:
                        msg = "short write"
                        raise OSError(msg)
                    view = view[written:]
        except OSError as exc:
            msg = f"write {self.path}"
            raise StorageIOError(msg) from exc
        self._extent = max(self._extent, end)

    def sync(self, what: str = "sync") -> None:
        """Flush to stable storage; ``what`` names the step in the error."""
        try:
            if self._room is not None and sys.platform != "linux":
                self._room.flush()  # Linux's fsync takes a mapping's copies; others want msync
            fsync_file(self._handle.fileno())
        except OSError as exc:
            raise StorageIOError(what) from exc

    def truncate(self, size: int) -> None:
        """Cut the file to ``size`` bytes and make it durable (unmapping first, for Windows)."""
        self._drop_map()
        self._drop_room()
        try:
            self._handle.truncate(size)
        except OSError as exc:
            msg = f"truncate {self.path} to {size}"
            raise StorageIOError(msg) from exc
        self.size = self._extent = size
        self.sync("sync after truncate")
        self.durable_end = size

    def close(self) -> None:
        """Cut the reserve, unmap, unlock and close; safe to call on a half-opened file.
        The cut is not synced: a reserve that outlives a crash is cut by the next open."""
        self._drop_map()
        self._drop_room()
        try:
            if self._extent > self.size:
                self._handle.truncate(self.size)
                self._extent = self.size
        except OSError as exc:
            self._handle.close()
            msg = f"cut the reserve of {self.path} at {self.size}"
            raise StorageIOError(msg) from exc
        try:
            portalocker.unlock(self._handle)
        except (portalocker.exceptions.LockException, OSError) as exc:
            self._handle.close()
            msg = "unlock file"
            raise StorageIOError(msg) from exc
        self._handle.close()
