"""The sync and the async face behind one sync-looking interface, so a journey is written once.

``AsyncFace`` wraps an AsyncDB or AsyncSession: each method call runs the
coroutine to completion on the face's own event loop (``asyncio.Runner``), and
a returned AsyncSession comes back wrapped too. Errors surface as raised, so a
journey sees the same exceptions through both faces.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import memhop
import memhop.aio


class AsyncFace:
    def __init__(self, runner: asyncio.Runner, target: Any) -> None:
        self._runner = runner
        self._target = target

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            result = self._runner.run(attr(*args, **kwargs))
            if isinstance(result, memhop.aio.AsyncSession):
                return AsyncFace(self._runner, result)
            return result

        return call


Opener = Callable[..., Any]


@contextmanager
def sync_opener() -> Iterator[Opener]:
    opened: list[memhop.DB] = []

    def open_sync(*args: Any, **kwargs: Any) -> memhop.DB:
        opened.append(memhop.open(*args, **kwargs))
        return opened[-1]

    try:
        yield open_sync
    finally:  # a failed journey still releases its files
        for db in opened:
            if not db.closed:
                db.close()


@contextmanager
def async_opener() -> Iterator[Opener]:
    opened: list[memhop.aio.AsyncDB] = []
    with asyncio.Runner() as runner:

        def open_async(*args: Any, **kwargs: Any) -> AsyncFace:
            async def opening() -> memhop.aio.AsyncDB:
                return await memhop.aio.open(*args, workers=2, **kwargs)

            opened.append(runner.run(opening()))
            return AsyncFace(runner, opened[-1])

        try:
            yield open_async
        finally:  # a failed journey still releases its files and joins its threads
            for db in opened:
                if not db.closed:
                    runner.run(db.close())


FACES = {"sync": sync_opener, "async": async_opener}
