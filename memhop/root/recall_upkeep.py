"""A domain's recall index kept up off the host's calls, on background threads.

Two kinds of work a host's recall would otherwise do under the domain lock:

- **The repack** (``memhop.index.recall_repack``): once removed documents
  outnumber the live ones, dropping them costs what the index holds (135-142
  ms at 10^5 documents, run inside a host's recall before this module). Asked
  for by the hold that found it due (``DomainContext.on_repack_due``), it runs
  on the domain's upkeep thread: begun in one short hold, made with no lock
  while turns go on (making way for the calls in flight, as a build does:
  ``pacing.SharedPace``), finished in another short hold that redoes only what
  changed since it began.
- **What a Dream pass changed** (``take_changes``): the pass, as it ends, brings
  the built index up to date a step a hold (``recall_index.build_step``), so the
  host's next recall does not redo the rows the pass folded (at 10^5 turns, 2.6
  of the 8.9 ms of CPU of the slowest 1% of turns).

A failure here loses nothing: the index is what it was (or, if a repack failed
while it was being taken, let go of, and indexed again from the records by the
next recall), and the next recall or close (which repacks before it saves)
does the work.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol

from memhop.domain.context import DomainContext
from memhop.engine import Engine
from memhop.errors import ClosedError, MemHopError
from memhop.index.recall import RecallIndex
from memhop.root import recall_index
from memhop.root.dream_threads import DOMAIN_UPKEEP, DreamThreads
from memhop.root.pacing import BUILD_YIELD_S, SharedPace

__all__ = ["ask_repack", "repack", "take_changes"]

log = logging.getLogger("memhop.recall")


class Root(Protocol):
    """What a Dream pass's part needs of the open file (``memhop.root.root.Root``)."""

    engine: Engine
    closing: threading.Event

    def domain(
        self, agent_id: int, *, background: bool = ...
    ) -> AbstractContextManager[DomainContext]: ...


class UpkeepRoot(Root, Protocol):
    """What a repack needs of it besides: its background threads and its way-making."""

    dreams: DreamThreads

    def make_way(self, longest: float = ...) -> None: ...


def ask_repack(root: UpkeepRoot, agent_id: int, index: RecallIndex) -> None:
    """Repack ``index``, the domain's, on its upkeep thread (called under the domain lock by
    the hold that found it due; asked again meanwhile, it runs once more, and finds it done)."""
    if not root.closing.is_set():
        root.dreams.start(agent_id, DOMAIN_UPKEEP, functools.partial(repack, root, agent_id, index))


def repack(root: UpkeepRoot, agent_id: int, index: RecallIndex) -> bool:
    """Repack ``index`` if it is still due: begun and finished in two short holds of the
    domain lock, made between them with none; True if it was taken. An index the domain
    let go of meanwhile is repacked for nothing and harms nothing."""
    try:
        with root.domain(agent_id, background=True):
            if not index.repack_due:
                return False
            job = index.begin_repack()
        job.run(_pace(root))
        with root.domain(agent_id, background=True) as ctx:
            try:
                taken = index.finish_repack(job)
            except BaseException:
                _let_go(ctx, index)  # half taken: the next recall indexes the domain again
                raise
        job.let_go()
        return taken
    except MemHopError as exc:  # the file closed, or a saved state's bytes did not check
        log.debug("recall: repack of %016x not done: %s", agent_id, exc)
    except Exception:
        log.exception("recall: repack of %016x failed", agent_id)
    return False


def _pace(root: UpkeepRoot) -> Callable[[], None]:
    """A repack's pace: calls in flight go first, as for a build (``SharedPace``); once the
    file closes, the repack stops (``ClosedError``: the close, which waits for this
    thread, repacks before it saves)."""
    shared = SharedPace(root.make_way, BUILD_YIELD_S)

    def pace() -> None:
        if root.closing.is_set():
            msg = "the file closes: its recall index's repack is dropped"
            raise ClosedError(msg)
        shared()

    return pace


def _let_go(ctx: DomainContext, index: RecallIndex) -> None:
    """Drop the domain's recall state if ``index`` is its index (called under the lock)."""
    states = (
        None if ctx.built is None else ctx.built.recall,
        None if ctx.warm is None else ctx.warm.recall,
    )
    if any(state is not None and state.index is index for state in states):
        ctx.drop_recall()


def take_changes(root: Root, agent_id: int) -> None:
    """Bring the domain's built recall index up to date with what the mirrors' journals
    noted, a step a hold (a Dream pass, as it ends). A recall meanwhile takes the steps
    left itself; a domain whose index is not built is left be (its first recall builds
    it)."""
    try:
        with root.domain(agent_id, background=True) as ctx:
            if not recall_index.queue_changes(ctx):
                return
        while not root.closing.is_set():
            with root.domain(agent_id, background=True) as ctx:
                if recall_index.build_step(root.engine, ctx, recall_index.UPKEEP_STEP_S):
                    return
            recall_index.between_steps()  # a call waiting for the lock takes it
    except MemHopError as exc:  # the file closed or the domain went: the next recall does it
        log.debug("recall: index of %016x not brought up to date: %s", agent_id, exc)
