"""Dream passes of one domain: in the foreground (``Session.dream``) and in the background.

Background scheduling (api.md §17): after ``update`` lands a topic, if the
scene's depth-1 count is above ``scene_dream_topic_threshold`` (> 0), a pass
scoped to that scene starts on a thread of its own (``dream_threads``: one per
(domain, scene), a few per domain in flight, the others waiting their turn).
Beyond upstream, ``search`` starts one too (``after_search``), at a host's
natural cadence: for the scene it leaves, folded toward
``settled_scene_floor``, and for the current scene when the domain comes
back after ``agent_idle_ttl_ms`` without a turn, folded toward
``dream_compress_min_topics`` (a scene per conversation session seldom grows
past the threshold, so without this its memory would never be folded); such a
pass waits ``SEARCH_GRACE_S`` first, the host's next calls running without it. A
background pass runs the whole pipeline at most once per ``SWEEP_INTERVAL_MS``
per domain and otherwise only folds its scene (beyond upstream: a whole pass
costs what the domain holds, and there is one for every scene that grows).
Its failures are logged at WARNING, except closed/cancelled, which are
silent; nothing reaches the host.

Cancellation: every pass reads as cancelled once the file starts closing
(``closing``); a foreground pass also when the host's ``cancel`` event is
set. The root's ``close`` sets ``closing``, then joins the background threads
(``DreamThreads.close_and_join``) before its domain-lock barrier.

Pause: an in-place compaction pauses scheduling (``pause``/``resume``); a
pass asked for meanwhile starts on resume. Every pass, foreground or not,
asks the dead-bytes policy (``Root.compact_if_due``) once it returns, which
measures again once enough changed since it last did.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from memhop import dream
from memhop.config import Defaults
from memhop.domain.context import DomainContext
from memhop.dream import HOLD_S, AnyEvent, DreamEnv, DreamReport, DreamStage, Held, run_dream
from memhop.engine import Engine
from memhop.errors import ClosedError, MemHopError, OperationCancelledError
from memhop.root import recall_upkeep
from memhop.root.dream_threads import DreamThreads
from memhop.root.heap import HeapTrim

__all__ = [
    "SWEEP_INTERVAL_MS",
    "DreamReport",
    "DreamStage",
    "DreamThreads",
    "after_search",
    "after_update",
    "flush",
    "rebased",
    "run_pass",
]

log = logging.getLogger("memhop.dream")

HANDOVER_S = 0.005  # the longest a pass waits for a call that waited for its hold
PAUSE_S = 0.0002  # how often it looks whether that call has the lock
PACE_MAX_S = 0.05  # the longest a pass rests after one hold while the host's calls come
PACE_AFTER_S = 0.1
"""A pass rests between holds only once its holds took this long in all: a warm whole pass
(26 ms of CPU at 10^5 turns) never does, a reopened domain's first (seconds) soon does."""
SWEEP_INTERVAL_MS = 3_600_000
"""A background pass runs the domain-wide stages at most this often per domain (beyond upstream).

In between, it consolidates its scene only: the sweeps, the L1 stages and
distillation each cost what the whole domain holds, and a pass is scheduled
for every scene that grows past the threshold."""


class Root(Protocol):
    """What a pass needs of the open file (``memhop.root.root.Root`` provides it).

    A protocol, not an import: the root composes Dream, Dream does not know the root.
    """

    engine: Engine
    defaults: Defaults
    clock: Callable[[], int]
    closing: threading.Event
    dreams: DreamThreads
    heap: HeapTrim

    def domain(
        self, agent_id: int, *, background: bool = ...
    ) -> AbstractContextManager[DomainContext]: ...

    def compact_if_due(self, *, after_pass: bool = False) -> None: ...

    def context(self, agent_id: int) -> DomainContext: ...


@dataclass(slots=True)
class PassHolds:
    """How long one pass has held its domain's lock so far, and the host's calls it saw
    (``DomainContext.host_calls``) as its last hold ended."""

    held_s: float = 0.0
    calls: int = 0


@contextlib.contextmanager
def _hold(root: Root, agent_id: int, spent: PassHolds) -> Iterator[Held]:
    """Take the domain lock for a stage; a file that is closing reads as a cancellation.

    The stage's writes are readable at once and made durable by one fsync after
    the lock is let go (also when the stage raises; none when it wrote nothing),
    so a turn waiting for the lock never waits on the disk for Dream. A crash
    before that fsync loses a suffix of the log: derived rows the pass writes
    again, never a host's write.
    """
    entered = wrote = False
    ctx = None
    began = 0.0
    try:
        _hand_over(root.context(agent_id))  # a call already waiting goes first
        with root.domain(agent_id, background=True) as ctx:
            entered = True
            began = time.monotonic()
            engine = root.engine
            start = engine.stats()[0]
            try:
                with engine.deferred():
                    yield Held(engine, agent_id, ctx.mirrors, ctx.dream_declined, began + HOLD_S)
            finally:
                # A hold that appended nothing syncs nothing: the turn's own bytes wait
                # for the turn's next fsync, not for one of Dream's.
                wrote = engine.stats()[0] != start
    except ClosedError as exc:
        if not entered:
            _closing(root, exc)
        raise
    finally:
        if ctx is not None:
            held_s = time.monotonic() - began
            _hand_over(ctx)
            if wrote:
                _sync(root)
            if not root.closing.is_set():
                _pace(ctx, held_s, spent)


def _hand_over(ctx: DomainContext) -> None:
    """A call waits for the lock: let it take it before a hold of a pass does (up to
    ``HANDOVER_S``: its thread may wait for a core first)."""
    if not ctx.lock_wanted:
        return
    deadline = time.monotonic() + HANDOVER_S
    while ctx.lock_wanted and time.monotonic() < deadline:
        time.sleep(PAUSE_S)


def _pace(ctx: DomainContext, held_s: float, spent: PassHolds) -> None:
    """Once a pass's holds passed ``PACE_AFTER_S`` and while the host's calls come, rest
    as long as the hold just ended took (up to ``PACE_MAX_S``): a pass catching up (a
    reopened domain's first) took hold after hold and most of the interpreter, and a turn
    beside it waited up to 0.2 s. Resting, it takes about half the time while the host is
    busy, and all of it when not. A short pass does not rest: spread out, it would be
    beside more turns."""
    spent.held_s += held_s
    calls = ctx.host_calls
    came, spent.calls = calls != spent.calls, calls
    if came and spent.held_s >= PACE_AFTER_S:
        time.sleep(min(held_s, PACE_MAX_S))


def _sync(root: Root) -> None:
    """Make what a hold wrote durable (the engine in use now: a compaction copied it there)."""
    try:
        root.engine.sync()
    except ClosedError as exc:  # the close's checkpoint made it durable
        _closing(root, exc)
        raise


def _closing(root: Root, exc: ClosedError) -> None:
    """A file that is closing reads as a cancellation of the pass."""
    if root.closing.is_set():
        msg = "dream: cancelled: the file is closing"
        raise OperationCancelledError(msg) from exc


def run_pass(
    root: Root,
    agent_id: int,
    scene_id: int,
    cancel: threading.Event | None,
    *,
    background: bool = False,
    floor: int | None = None,
) -> tuple[DreamReport, MemHopError | None]:
    """Run one pass of ``agent_id`` (``scene_id`` 0 = every scene); return report and error.

    A foreground pass is whole. A background one is whole when the domain's
    last whole pass began ``SWEEP_INTERVAL_MS`` or longer ago (or never, since
    the domain was loaded) and no whole pass of the domain runs now; otherwise
    it only consolidates its scene. ``floor`` is the surface consolidation
    folds toward (None: ``dream_compress_min_topics``).
    """
    with root.domain(agent_id, background=True) as ctx:
        model = ctx.model
        now, last = root.clock(), ctx.dream_swept_at
        due = not last or now - last >= SWEEP_INTERVAL_MS
        # A whole pass that outlasts a scene (a reopened domain's first, at 10^5 turns)
        # is not joined by another: each would redo the cold reads the first makes.
        sweep = not background or (due and not ctx.dream_sweeping)
        if sweep:
            ctx.dream_swept_at = now
            ctx.dream_sweeping += 1
        spent = PassHolds(calls=ctx.host_calls)
    env = DreamEnv(
        agent_id=agent_id,
        hold=functools.partial(_hold, root, agent_id, spent),
        model=model,
        clock=root.clock,
        floor=root.defaults.dream_compress_min_topics if floor is None else floor,
        retention_ms=root.defaults.content_retention_ms,
        cancel=AnyEvent(cancel, root.closing),
        sweep_unfolded=root.defaults.sweep_unfolded,
    )
    try:
        outcome = run_dream(env, scene_id, sweep=sweep)
    finally:
        if sweep:
            with ctx.lock:  # this context's count, even if the file closes meanwhile
                ctx.dream_sweeping -= 1
    recall_upkeep.take_changes(root, agent_id)  # not left to the host's next recall
    # The sweeps may have left dead bytes past the policy's ratio; no lock is held here.
    root.compact_if_due(after_pass=True)
    root.heap.after_work()  # what the pass (and a compaction) freed goes back to the system
    return outcome


SEARCH_GRACE_S = 0.05
"""How long a pass that ``search`` starts waits before it begins: the calls a host makes
right after its search (a recall, the turn's events) run without it. A first recall at
10^5 turns took 11 ms beside such a pass, 4 ms alone (4.5 ms of its own CPU either way)."""


def _background(
    root: Root, agent_id: int, scene_id: int, floor: int | None = None, grace: float = 0.0
) -> None:
    if grace and root.closing.wait(grace):
        return  # the file closes: a pass not begun is dropped, as one not yet started
    try:
        _, error = run_pass(root, agent_id, scene_id, None, background=True, floor=floor)
    except MemHopError as exc:  # the domain went away or the file closed before the pass
        error = exc
    except Exception:
        log.exception("dream: background pass of %016x failed", agent_id)
        return
    if error is None or isinstance(error, ClosedError | OperationCancelledError):
        return
    log.warning("dream: background pass of %016x scene %016x failed: %s", agent_id, scene_id, error)


def after_update(root: Root, agent_id: int, scene_id: int, surface_count: int) -> None:
    """Called by ``update`` under the domain lock once a topic landed: maybe start a pass."""
    threshold = root.defaults.scene_dream_topic_threshold
    if threshold <= 0 or surface_count <= threshold or root.closing.is_set():
        return
    root.dreams.start(agent_id, scene_id, lambda: _background(root, agent_id, scene_id))


def after_search(root: Root, agent_id: int, scene_id: int, left: bool, idle_ms: int) -> None:
    """Called by ``search`` under the domain lock once a turn is open, with the scene that
    was current before it: start its pass if the host left it, or came back to it after
    ``agent_idle_ttl_ms`` or more (see the module)."""
    defaults = root.defaults
    if (
        defaults.scene_dream_topic_threshold <= 0
        or defaults.settled_scene_floor < 0
        or root.closing.is_set()
    ):
        return
    if left:
        floor = defaults.settled_scene_floor
    elif 0 < defaults.agent_idle_ttl_ms <= idle_ms:
        floor = defaults.dream_compress_min_topics
    else:
        return
    root.dreams.start(
        agent_id,
        scene_id,
        lambda: _background(root, agent_id, scene_id, floor, SEARCH_GRACE_S),
    )


def flush(engine: Engine, ctx: DomainContext) -> None:
    """Store what Dream keeps of the domain in memory only (called holding its lock; a
    domain whose mirrors are not built has nothing there). A failure is logged: what it
    held is found again from the stored edges at the next load."""
    mirrors = ctx.settled_mirrors()
    if mirrors is None:
        return
    try:
        dream.flush(Held(engine, ctx.agent_id, mirrors, ctx.dream_declined))
    except MemHopError as exc:
        log.warning("dream: the association layer of %016x was not stored: %s", ctx.agent_id, exc)


def rebased(engine: Engine, ctx: DomainContext) -> None:
    """A compaction's copy, ``engine``, takes the file's name (called while every call of
    the file waits): Dream's copies of the domain follow it without reading it again."""
    mirrors = ctx.settled_mirrors()
    if mirrors is not None:
        dream.rebase(Held(engine, ctx.agent_id, mirrors, ctx.dream_declined))
