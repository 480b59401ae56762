"""Commits: when an appended frame counts as durable, and which thread pays for the fsync.

A writer appends under the engine lock, then waits for an fsync that covers
its bytes. The first waiter that finds no fsync in flight leads: it takes the
I/O lock, lets go of the engine lock, fsyncs, takes the engine lock back and
releases every waiter whose bytes that fsync covered. Writers on different
domains therefore share fsyncs, and none holds the engine lock while the disk
works. Index changes wait in a queue and are applied in log order once their
bytes are durable, so a reader never sees a record a crash could take back,
and a later write of an id always wins over an earlier one.

Two per-thread modes skip the wait: inside ``group()`` writes are visible at
once and the block's exit pays one fsync for all of them; inside ``deferred()``
they are visible at once and the next fsync of the file, whoever makes it,
covers them (an fsync flushes the whole file, and frames are only appended).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from memhop.engine.storefile import StoreFile
from memhop.engine.writes import LogWriter
from memhop.errors import ClosedError, StorageIOError
from memhop.frozen import quick_init


@dataclass(slots=True)
class _Mode:
    """One thread's modes: how deep in ``group``/``deferred``/``held`` blocks, what it owes."""

    group: int = 0
    deferred: int = 0
    held: int = 0
    owed: int = 0  # the end of the last write a group block has yet to make durable


class _ThreadModes(threading.local):
    """Each thread's ``_Mode``, made on the thread's first use. A write reads the modes
    once through the thread-local and then from a plain object: each read of a
    thread-local attribute looks the thread's own dict up first, three a write before."""

    def __init__(self) -> None:
        self.mode = _Mode()


@quick_init
@dataclass(frozen=True, slots=True)
class _Group:
    """``Commits.group()``: a class, not a generator, and built in C (``quick_init``),
    since every turn enters one."""

    _threads: _ThreadModes
    _commits: Commits

    def __enter__(self) -> None:
        self._threads.mode.group += 1

    def __exit__(self, *_: object) -> None:
        # Runs when the block raises too: what it wrote is made durable either way.
        mode = self._threads.mode
        mode.group -= 1
        if not mode.group and mode.owed:
            owed, mode.owed = mode.owed, 0
            self._commits.settle_group(owed)


@quick_init
@dataclass(frozen=True, slots=True)
class _Counted:
    """A per-thread depth counter as a context (``deferred()``, ``held()``)."""

    _threads: _ThreadModes
    _name: str

    def __enter__(self) -> None:
        mode = self._threads.mode
        setattr(mode, self._name, getattr(mode, self._name) + 1)

    def __exit__(self, *_: object) -> None:
        mode = self._threads.mode
        setattr(mode, self._name, getattr(mode, self._name) - 1)


class Commits:
    """The engine's fsync schedule; every method but the contexts runs under the engine lock."""

    def __init__(self, lock: threading.RLock, log: LogWriter, file: StoreFile) -> None:
        self._lock = lock
        self._done = threading.Condition(lock)
        self._sleepers = 0  # threads in ``_done.wait()``: a lone writer skips the notify
        # Held across an fsync made outside the engine lock, so a close or a
        # file swap (which hold the engine lock) can wait for it to finish.
        self._io = threading.Lock()
        self._log = log
        self._file = file
        self._leading = False
        self._closed = False
        self._waiting: deque[tuple[int, Callable[[], None]]] = deque()
        self._threads = _ThreadModes()

    # ---- per-thread modes ---------------------------------------------------------------

    def group(self) -> AbstractContextManager[None]:
        """Defer this thread's fsyncs in the block; the outermost exit makes them durable.

        The exit syncs even when the block raises, so what was written before a
        failure is as durable as if each write had synced.
        """
        return _Group(self._threads, self)

    def settle_group(self, owed: int) -> None:
        """Make a group block's writes durable, up to the end of its last one."""
        with self._lock:
            self.wait_durable(owed, "sync")

    def deferred(self) -> AbstractContextManager[None]:
        """Let this thread's writes in the block return without an fsync of their own."""
        return _Counted(self._threads, "deferred")

    def held(self) -> AbstractContextManager[None]:
        """Mark the engine lock as held across calls (``Engine.exclusive``): syncs stay inline."""
        return _Counted(self._threads, "held")

    # ---- the write path -----------------------------------------------------------------

    def commit(self, end: int, apply: Callable[[], None], what: str) -> None:
        """Settle a write whose bytes end at ``end``: apply ``apply`` once they are durable.

        In ``group()`` or ``deferred()`` the change is applied now and the
        fsync comes later. StorageIOError when the fsync fails (the change is
        then never applied, and the writer refuses later writes).
        """
        mode = self._threads.mode
        if mode.group or mode.deferred:
            self.apply_waiting()
            apply()
            if mode.group:
                mode.owed = max(mode.owed, end)
            return
        waiting = self._waiting
        waiting.append((end, apply))  # queued even when led at once: a close drains the queue
        if not (self._leading or mode.held):
            # No fsync in flight: this write leads one at once (``wait_durable``'s first
            # step, its checks made by the write's own under the same hold of the lock).
            self._lead(what)
            return
        self.wait_durable(end, what, mode)
        if waiting:  # an fsync made before this write's bytes may already have covered them
            self.apply_waiting(self._file.durable_end)

    def wait_durable(self, end: int, what: str, mode: _Mode | None = None) -> None:
        """Return once the file is durable up to ``end``, leading an fsync if none is in flight
        (``mode``: this thread's, when the caller has it)."""
        if mode is None:
            mode = self._threads.mode
        while self._file.durable_end < end:
            if self._closed:
                msg = "engine is closed"
                raise ClosedError(msg)
            failure = self._log.failure
            if failure is not None:
                msg = f"{what}: an earlier fsync failed, so this write is not durable"
                raise StorageIOError(msg) from failure
            if mode.held:
                self._lead(what, holding=True)
            elif self._leading:
                self._sleepers += 1
                try:
                    self._done.wait()
                finally:
                    self._sleepers -= 1
            else:
                self._lead(what)

    def _lead(self, what: str, *, holding: bool = False) -> None:
        """Fsync, without the engine lock unless ``holding`` (``Engine.exclusive``), then apply
        the changes it made durable (none when it failed) and wake every waiter."""
        file = self._file
        target = file.size
        ok = False
        try:
            if holding:  # nobody can look in while the lock is held: no fsync to announce
                self._log.sync(what)
            else:
                self._leading = True
                self._io.acquire()  # before the engine lock goes: a close waits for this fsync
                self._lock.release()
                try:
                    self._log.sync(what)
                finally:
                    # Let go of the I/O lock first: a close or a drain holds the engine
                    # lock while it waits for this one.
                    self._io.release()
                    self._lock.acquire()
            ok = True
        finally:
            if not holding:
                self._leading = False
            if ok:
                if target > file.durable_end:
                    file.durable_end = target
                upto, waiting = file.durable_end, self._waiting
                while waiting and waiting[0][0] <= upto:  # ``apply_waiting``, on every write's path
                    waiting.popleft()[1]()
            else:
                self._waiting.clear()  # never applied: none of those writes was acknowledged
            if self._sleepers:
                self._done.notify_all()

    def apply_waiting(self, upto: float = float("inf")) -> None:
        """Apply the queued changes whose bytes end at or before ``upto``, in log order.

        Without ``upto``, all of them: a write that must be seen at once comes after them.
        """
        waiting = self._waiting
        while waiting and waiting[0][0] <= upto:
            waiting.popleft()[1]()

    def drain(self) -> None:
        """Make every waiting write durable and applied, with no fsync left in flight.

        For a checkpoint, a close or a file swap: they need the index to match
        the log and the descriptor to be idle.
        """
        with self._io:
            pass  # an fsync in flight has finished; none can start while we hold the lock
        if self._waiting and self._log.failure is None:
            self._lead("sync", holding=True)

    def close(self) -> None:
        """Drain, then refuse every later wait (the descriptor is about to go)."""
        self.drain()
        self._closed = True
        if self._sleepers:
            self._done.notify_all()
