"""AsyncSession: one domain of an AsyncDB, every Session method as ``async def``.

Each method runs the sync method of the same name, with the same arguments,
on the AsyncDB's thread pool, so every guarantee of the sync surface holds
(validation before writing, one lock per domain, whole turns). ``dispatch``
runs a model's tool call (``memhop.tools.dispatch``) the same way.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Concatenate, ParamSpec, TypeVar

from memhop.aio.pool import Pool
from memhop.api import DreamReport, Session
from memhop.tools import dispatch

__all__ = ["AsyncSession"]

P = ParamSpec("P")
R = TypeVar("R")


def _bridge(
    method: Callable[Concatenate[Session, P], R],
) -> Callable[Concatenate[AsyncSession, P], Coroutine[Any, Any, R]]:
    """The async twin of a Session method: same name, arguments and docstring."""
    name = method.__name__

    @functools.wraps(method)
    async def call(self: AsyncSession, /, *args: P.args, **kwargs: P.kwargs) -> R:
        bound: Callable[P, R] = getattr(self.sync, name)
        return await self._pool.run(bound, *args, **kwargs)

    call.__qualname__ = f"AsyncSession.{name}"
    return call


class AsyncSession:
    """One domain's memory, awaited. Get one from ``AsyncDB.primary()``, ``sub_agent()``
    or ``agent()``; ``sync`` is the Session it drives.
    """

    def __init__(self, session: Session, pool: Pool) -> None:
        self.sync = session
        self._pool = pool

    @property
    def agent_id(self) -> str:
        """The domain's id as 16 hex digits (the primary is all zeros); works after close."""
        return self.sync.agent_id

    def __repr__(self) -> str:
        return f"<memhop.aio.AsyncSession agent_id={self.agent_id}>"

    async def dispatch(
        self, name: str, arguments: str | Mapping[str, Any] | None, *, now_ms: int | None = None
    ) -> dict[str, Any]:
        """Run one model tool call (``memhop.tools.dispatch``) on the pool."""
        return await self._pool.run(dispatch, self.sync, name, arguments, now_ms=now_ms)

    # the turn loop and the reads
    search = _bridge(Session.search)
    append_archive = _bridge(Session.append_archive)
    update = _bridge(Session.update)
    scene_context = _bridge(Session.scene_context)
    list_scenes = _bridge(Session.list_scenes)
    search_l4 = _bridge(Session.search_l4)
    recall = _bridge(Session.recall)
    get_l0 = _bridge(Session.get_l0)
    update_l0 = _bridge(Session.update_l0)
    # plans, the graph, Dream
    plan_node_add = _bridge(Session.plan_node_add)
    plan_node_update = _bridge(Session.plan_node_update)
    plan_state = _bridge(Session.plan_state)
    list_l1 = _bridge(Session.list_l1)
    get_l3 = _bridge(Session.get_l3)
    list_l3 = _bridge(Session.list_l3)
    import_l3 = _bridge(Session.import_l3)
    query_l3_nodes = _bridge(Session.query_l3_nodes)
    query_l3_subgraph = _bridge(Session.query_l3_subgraph)
    update_l3 = _bridge(Session.update_l3)
    delete_l3 = _bridge(Session.delete_l3)

    async def dream(
        self, scene_id: str = "", *, cancel: threading.Event | None = None
    ) -> DreamReport:
        """Run one Dream pass over this domain now (``Session.dream``) and return its report.

        Without a ``cancel`` event of the caller's, cancelling the awaiting task
        stops the pass at its next stage boundary (each stage is applied whole
        or not at all), as ``cancel.set()`` would.
        """
        stop = cancel if cancel is not None else threading.Event()
        running = asyncio.wrap_future(self._pool.start(self.sync.dream, scene_id, cancel=stop))
        try:
            return await running
        except asyncio.CancelledError:
            if cancel is None:
                stop.set()
            raise

    # administration (host code only)
    update_scene = _bridge(Session.update_scene)
    rename_topic = _bridge(Session.rename_topic)
    merge_scenes = _bridge(Session.merge_scenes)
    delete_scene = _bridge(Session.delete_scene)
    delete_topic = _bridge(Session.delete_topic)
    purge_scene = _bridge(Session.purge_scene)
    purge_topic = _bridge(Session.purge_topic)
