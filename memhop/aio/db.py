"""AsyncDB and ``open``: one open ``.meh`` file driven from asyncio.

The AsyncDB owns a bounded thread pool (``workers`` threads, 4 by default);
every call runs the sync call of the same name there, so the sync surface's
guarantees hold unchanged and the event loop never blocks on the file or the
model. ``close()`` refuses new calls, waits for the calls in flight, closes
the file and joins the threads; ``async with`` does it on exit.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Coroutine, Generator
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

import memhop.api
from memhop.aio.pool import DEFAULT_WORKERS, Pool
from memhop.aio.session import AsyncSession
from memhop.api import DB, Defaults, LlmConfig, Model, ProfileInput

__all__ = ["AsyncDB", "Opening", "open"]

P = ParamSpec("P")
R = TypeVar("R")


def _bridge(
    method: Callable[Concatenate[DB, P], R],
) -> Callable[Concatenate[AsyncDB, P], Coroutine[Any, Any, R]]:
    """The async twin of a DB method: same name, arguments and docstring."""
    name = method.__name__

    @functools.wraps(method)
    async def call(self: AsyncDB, /, *args: P.args, **kwargs: P.kwargs) -> R:
        bound: Callable[P, R] = getattr(self.sync, name)
        return await self._pool.run(bound, *args, **kwargs)

    call.__qualname__ = f"AsyncDB.{name}"
    return call


class AsyncDB:
    """An open memory file, awaited. ``sync`` is the DB it drives."""

    def __init__(self, db: DB, pool: Pool) -> None:
        self.sync = db
        self._pool = pool

    async def __aenter__(self) -> AsyncDB:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._pool.closed:
            await self.close()

    def __repr__(self) -> str:
        return f"<memhop.aio.AsyncDB {self.sync!r}>"

    @property
    def closed(self) -> bool:
        return self._pool.closed or self.sync.closed

    def _session(self, session: memhop.api.Session) -> AsyncSession:
        return AsyncSession(session, self._pool)

    async def primary(self) -> AsyncSession:
        """The file's primary domain (agent id 0000000000000000)."""
        return self._session(await self._pool.run(self.sync.primary))

    async def sub_agent(self, llm: LlmConfig | Model, profile: ProfileInput) -> AsyncSession:
        """The sub-agent named ``profile.name`` (created on first use), talking to ``llm``."""
        return self._session(await self._pool.run(self.sync.sub_agent, llm, profile))

    async def agent(self, llm: LlmConfig | Model, agent_id: str) -> AsyncSession:
        """Reach an existing domain by the id ``agent_id`` gave; creates nothing."""
        return self._session(await self._pool.run(self.sync.agent, llm, agent_id))

    agents = _bridge(DB.agents)
    checkpoint = _bridge(DB.checkpoint)
    compact = _bridge(DB.compact)
    compact_to = _bridge(DB.compact_to)
    salvage_to = _bridge(DB.salvage_to)
    stats = _bridge(DB.stats)

    async def close(self) -> None:
        """Refuse new calls, wait for those in flight, checkpoint and release the file.

        A second close raises ClosedError, as the sync one does. Cancelling the
        awaiting task does not stop the close: it goes on to the end.
        """
        await self._pool.shutdown(self.sync.close)


class Opening:
    """What ``open`` returns: await it for an AsyncDB, or ``async with`` it to close on exit."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        llm: LlmConfig | Model,
        defaults: Defaults | None,
        profile: ProfileInput | None,
        workers: int,
        clock: Callable[[], int] | None = None,
    ) -> None:
        self._args = (path, llm, defaults, profile)
        self._workers = workers
        self._clock = clock
        self._db: AsyncDB | None = None

    async def _open(self) -> AsyncDB:
        pool = Pool(self._workers)
        opening = pool.start(functools.partial(memhop.api.open, clock=self._clock), *self._args)
        try:
            db = await asyncio.wrap_future(opening)
        except asyncio.CancelledError:
            # The open may still finish in its thread: close what it opens, so the
            # file is not left locked by a handle nobody holds.
            pool.abandon(opening, DB.close)
            raise
        except BaseException:
            await pool.shutdown(lambda: None)
            raise
        return AsyncDB(db, pool)

    def __await__(self) -> Generator[Any, None, AsyncDB]:
        return self._open().__await__()

    async def __aenter__(self) -> AsyncDB:
        self._db = await self._open()
        return self._db

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._db is not None and not self._db.closed:
            await self._db.close()


def open(
    path: str | os.PathLike[str],
    llm: LlmConfig | Model,
    defaults: Defaults | None = None,
    profile: ProfileInput | None = None,
    *,
    workers: int = DEFAULT_WORKERS,
    clock: Callable[[], int] | None = None,
) -> Opening:
    """Open (or, with a primary profile, create) the file at ``path`` on a pool of ``workers``.

    The arguments (``clock`` included) and refusals are ``memhop.open``'s (plus ConfigError for a
    ``workers`` that is not a positive integer). Use ``db = await
    memhop.aio.open(...)`` or ``async with memhop.aio.open(...) as db``.
    """
    return Opening(path, llm, defaults, profile, workers, clock)
