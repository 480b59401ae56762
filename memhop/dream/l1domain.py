"""Which structure-stage cache (``l1cache``) a domain has, and when reads made without
the domain lock may stand.

Contract:
- ``of(held)`` answers the domain's cache, brought up to date with the file
  (``L1Cache.refresh``); ``checked`` is the same for one stage, and a stage
  that fails inside it leaves the domain a cold cache (``drop``): what it
  wrote is unknown.
- A cold cache may take a ``L1Cache.preloaded`` one, made without the lock
  after ``ticket``: ``of`` takes it only if no structure stage of the domain
  began since (``stages_begun``: only the stages write edges) and it was made
  from this engine.
- ``warm`` lends a warm cache to distillation (its nodes in rank order; its writes).

Traps: call under the domain lock (``Held``). A cache is held by the
domain's mirrors (``state.DreamState``) and lives as long as they do: a
domain context rebuilt from records starts cold.
"""

from __future__ import annotations

import contextlib
import heapq
from collections.abc import Iterator
from collections.abc import Set as AbstractSet

from memhop.dream.env import Held
from memhop.dream.l1cache import L1Cache
from memhop.dream.state import state_of
from memhop.errors import MemHopError

__all__ = [
    "checked",
    "decay_pending",
    "drop",
    "flush",
    "of",
    "pending_scenes",
    "rebase",
    "stages_begun",
    "ticket",
    "warm",
]


def _registered(held: Held) -> L1Cache | None:
    cache = state_of(held).l1
    return cache if cache is not None and cache.agent_id == held.agent_id else None


def pending_scenes(held: Held) -> bool:
    """Whether the domain's cache holds scenes its node stage has not synced yet (as of
    its last refresh: what turns changed since is taken in at the next stage)."""
    cache = _registered(held)
    return cache is not None and bool(cache.dirty_scenes)


def batch(pending: AbstractSet[int], limit: int | None) -> list[int]:
    """The ids a bounded stage takes of ``pending`` in one hold: the ``limit`` smallest,
    ascending (all of them when None), so its holds cover the set whatever its order."""
    return sorted(pending) if limit is None else heapq.nsmallest(limit, pending)


def stale_pending(held: Held) -> bool:
    """Whether the domain's cache holds nodes its stale check has not judged yet."""
    cache = _registered(held)
    if cache is None:
        return False
    nodes = cache.nodes
    return any(n in nodes for n in cache.restale)  # what is pending, not every node


def decay_pending(held: Held, now: int) -> bool:
    """Whether the domain's cache holds nodes or edges due by ``now`` that decay has not
    looked at."""
    cache = _registered(held)
    return cache is not None and (cache.node_due.any_due(now) or cache.edges.any_due(now))


def stages_begun(held: Held) -> int:
    """How many stages of the domain began to date (``of`` calls): equal counts at two
    moments mean that no stage wrote an edge between them."""
    return state_of(held).begun


def ticket(held: Held) -> int | None:
    """For a domain with no cache yet (its next one loads cold): the count
    ``L1Cache.preloaded`` is made against; else None. A registered cache is never cold:
    ``of`` refreshes it at once, and drops it if that fails."""
    return stages_begun(held) if _registered(held) is None else None


def _takes(held: Held, cache: L1Cache, begun: int) -> bool:
    """Whether ``cache``'s preload still stands: made from this engine for this domain,
    and no stage of the domain began since it was (so no edge was written)."""
    pre = cache.preload
    return (
        pre is not None
        and pre.begun == begun
        and cache.engine is held.engine
        and cache.agent_id == held.agent_id
    )


def of(held: Held, *, check_topics: bool = False, preload: L1Cache | None = None) -> L1Cache:
    """The domain's cache, checked against the file (see the module contract); a cold one
    takes ``preload`` (from ``L1Cache.preloaded``) if it still stands."""
    state = state_of(held)
    begun = state.begun
    state.begun = begun + 1
    cache = _registered(held)
    if cache is not None and cache.engine is not held.engine:
        cache.rebase(held.engine)
    if cache is None:
        if preload is None or not _takes(held, preload, begun):
            preload = L1Cache(held.engine, held.agent_id)
        cache = state.l1 = preload
    try:
        cache.refresh(held, check_topics=check_topics)
    except BaseException:
        drop(held)
        raise
    return cache


def warm(held: Held) -> L1Cache | None:
    """The domain's cache brought up to date, if it is warm (what changed is read); None
    when there is none (a cold load costs what a scan does) or it will not refresh."""
    if _registered(held) is None:
        return None
    try:
        return of(held)
    except MemHopError:  # ``of`` dropped the cache
        return None


@contextlib.contextmanager
def checked(
    held: Held, *, check_topics: bool = False, preload: L1Cache | None = None
) -> Iterator[L1Cache]:
    """The domain's cache (``of``) for one stage; a stage that fails leaves it to be rebuilt."""
    cache = of(held, check_topics=check_topics, preload=preload)
    try:
        yield cache
    except BaseException:
        drop(held)
        raise


def drop(held: Held) -> None:
    """Forget the domain's cache (after a failed stage: what was written is unknown)."""
    state_of(held).l1 = None


def flush(held: Held) -> None:
    """Store what a warm cache holds in memory only (``L1Cache.flush``): at a close, a
    checkpoint, or before the host lists the nodes."""
    cache = warm(held)
    if cache is not None:
        cache.flush()


def rebase(held: Held) -> None:
    """Point the domain's cache at ``held.engine``, a compaction's copy taking the file's name
    while no call of the domain runs (``L1Cache.rebase``)."""
    cache = _registered(held)
    if cache is not None:
        cache.rebase(held.engine, at_swap=True)
