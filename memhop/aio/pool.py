"""The bounded thread pool an AsyncDB owns: every sync call of the async face runs here.

A call is submitted whole and awaited through ``asyncio.wrap_future``. When
the awaiting task is cancelled, a call still queued is dropped (it never
ran); a call already running completes in its thread, as the sync call it
is, and only its result is discarded. ``shutdown`` refuses new calls, waits
for every call in flight, runs the last one (the file's close) and joins the
threads.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from memhop.errors import ClosedError, ConfigError

__all__ = ["DEFAULT_WORKERS", "Pool"]

P = ParamSpec("P")
R = TypeVar("R")

DEFAULT_WORKERS = 4
"""Threads per AsyncDB unless ``open(..., workers=)`` says otherwise."""


def _then(pending: list[concurrent.futures.Future[Any]], last: Callable[[], R]) -> R:
    concurrent.futures.wait(pending)
    return last()


class Pool:
    """``workers`` threads (named ``memhop-aio``) and the calls in flight on them."""

    def __init__(self, workers: int) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            msg = f"workers must be a positive integer, got {workers!r}"
            raise ConfigError(msg)
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="memhop-aio"
        )
        self._lock = threading.Lock()
        self._pending: set[concurrent.futures.Future[Any]] = set()
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def _settle(self, future: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._pending.discard(future)

    def start(
        self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs
    ) -> concurrent.futures.Future[R]:
        """Queue ``fn(*args, **kwargs)``; ClosedError once the pool is shut."""
        with self._lock:
            if self._closed:
                msg = "the database is closed"
                raise ClosedError(msg)
            future = self._executor.submit(fn, *args, **kwargs)
            self._pending.add(future)
        future.add_done_callback(self._settle)
        return future

    async def run(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """Run ``fn(*args, **kwargs)`` on a pool thread and return its result."""
        return await asyncio.wrap_future(self.start(fn, *args, **kwargs))

    async def shutdown(self, last: Callable[[], R]) -> R:
        """Refuse new calls, wait for those in flight, run ``last`` and join the threads.

        Cancelling the awaiting task does not stop the shutdown: it goes on to the end.
        """
        with self._lock:
            if self._closed:
                msg = "the database is closed"
                raise ClosedError(msg)
            self._closed = True
            pending = list(self._pending)
            final = self._executor.submit(_then, pending, last)
        try:
            return await asyncio.shield(asyncio.wrap_future(final))
        finally:
            if final.done():
                self._executor.shutdown(wait=True)  # the threads are idle: this is a join
            else:
                final.add_done_callback(lambda _: self._executor.shutdown(wait=False))

    def abandon(self, opening: concurrent.futures.Future[Any], undo: Callable[[Any], None]) -> None:
        """After a cancelled open: ``undo`` its result once it arrives, then stop the threads."""
        with self._lock:
            self._closed = True
        self._executor.submit(_undo_when_done, opening, undo)
        self._executor.shutdown(wait=False)


def _undo_when_done(opening: concurrent.futures.Future[Any], undo: Callable[[Any], None]) -> None:
    try:
        value = opening.result()
    except BaseException:  # the open itself failed: nothing was left open
        return
    undo(value)
