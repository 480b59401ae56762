"""The open ``.meh`` file: descriptor, exclusive lock, read-only mapping, durable writes.

Writes go through ordinary file writes; the mapping is only for reads and is
refreshed lazily when a read needs bytes past it. Every OS failure becomes a
``StorageIOError`` naming what was being done.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import secrets
import sys
from collections.abc import Iterable
from typing import BinaryIO

import portalocker

from memhop.errors import StorageIOError

LOCK_MESSAGE = "database already open by another instance"
TEMP_SUFFIX = ".memhop-tmp"
TOKEN_BYTES = 6  # random bytes in a temporary name
# Files memhop keeps beside ``<file>``, each written only by the holder of
# ``<file>``'s lock: the index seed (engine.seed), the scene map (domain.map_file) and
# the recall file (domain.recall_file).
SEED_SUFFIX = ".seed"
SCENE_MAP_SUFFIX = ".scenemap"
RECALL_SUFFIX = ".recall"
SIDECAR_SUFFIXES = (SEED_SUFFIX, SCENE_MAP_SUFFIX, RECALL_SUFFIX)


def _write_some(handle: BinaryIO, data: bytes | memoryview, offset: int) -> int:
    """Write a prefix of ``data`` at ``offset``; return how much (every write of a store
    file comes here: the seam a test injects write faults at)."""
    return os.pwrite(handle.fileno(), data, offset)  # one call: no seek, no file position


if not hasattr(os, "pwrite"):  # pragma: no cover - Windows has no pwrite

    def _write_some(handle: BinaryIO, data: bytes | memoryview, offset: int) -> int:
        handle.seek(offset)  # the engine's lock keeps the position this write's
        return handle.write(data) or 0


def temp_sibling(target: str) -> str:
    """Return an unused-looking temporary name in ``target``'s directory."""
    folder, name = os.path.split(os.path.abspath(target))
    return os.path.join(folder, f".{name}.{secrets.token_hex(TOKEN_BYTES)}{TEMP_SUFFIX}")


def replace_side_file(target: str, chunks: Iterable[bytes], mode: int) -> None:
    """Write ``chunks`` to a temporary sibling and rename it over ``target`` (no fsync).

    A reader sees the old file or the new one, whole. On an OSError (raised)
    the temporary file is removed; ``target`` is as it was.
    """
    tmp = temp_sibling(target)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def append_side_file(target: str, data: bytes) -> None:
    """Append ``data`` to the existing ``target`` (no fsync; FileNotFoundError when it is
    gone). For records that check themselves: a torn append is a tail a reader refuses;
    the bytes before it, and a mapping of them, do not change."""
    fd = os.open(target, os.O_WRONLY | os.O_APPEND)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def mapped_side_file(f: BinaryIO) -> bytes | mmap.mmap:
    """A side file's bytes: mapped, so a reader brings in only the pages it uses.

    Read whole where a mapped file could not be replaced or deleted while a map of
    it lives (Windows), or when it is empty (nothing to map). A side file is never
    written in place (a new one is renamed over it, or bytes appended past its end),
    so the mapping cannot change.
    """
    if sys.platform == "win32" or os.fstat(f.fileno()).st_size == 0:
        return f.read()
    return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def remove_side_file(target: str) -> None:
    """Delete ``target`` if it exists (an OSError other than its absence is raised)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(target)


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
        """Write all of ``data`` at ``offset``; the file size follows."""
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
        if end > self.size:
            self.size = end

    def sync(self, what: str = "sync") -> None:
        """Flush to stable storage; ``what`` names the step in the error."""
        try:
            fsync_file(self._handle.fileno())
        except OSError as exc:
            raise StorageIOError(what) from exc

    def truncate(self, size: int) -> None:
        """Cut the file to ``size`` bytes and make it durable (unmapping first, for Windows)."""
        self._drop_map()
        try:
            self._handle.truncate(size)
        except OSError as exc:
            msg = f"truncate {self.path} to {size}"
            raise StorageIOError(msg) from exc
        self.size = size
        self.sync("sync after truncate")
        self.durable_end = size

    def close(self) -> None:
        """Unmap, unlock and close; safe to call on a half-opened file."""
        self._drop_map()
        try:
            portalocker.unlock(self._handle)
        except (portalocker.exceptions.LockException, OSError) as exc:
            self._handle.close()
            msg = "unlock file"
            raise StorageIOError(msg) from exc
        self._handle.close()
