"""The recall state of a domain, built on its first recall and kept current after.

The recall mirror (``index.recall``) is built on a domain's first recall,
or taken from the recall file the last close saved when the file still
vouches for it (``memhop.domain.recall_file``), and then kept current from the
topic and content mirrors' journals: a recall redoes only the rows and events
whose topics changed since the last one (``memhop.root.recall_docs``, which
also says what a document holds), so no call scans the domain. A mirror
installed whole (Dream's ``index_rebuild`` when the records disagree with the
mirror, which a healthy file never shows) has no journal of what it
replaced: the next recall builds the index again.
"""

from __future__ import annotations

import time

from memhop.domain import recall_file
from memhop.domain.context import DomainContext
from memhop.engine import Engine
from memhop.index.recall_state import RecallState
from memhop.root.recall_docs import Refresh

__all__ = [
    "BUILD_STEP_S",
    "STEP_PAUSE_S",
    "UPKEEP_STEP_S",
    "between_steps",
    "build_step",
    "built_state",
    "current",
    "current_state",
    "follow_open_turn",
    "queue_changes",
    "ready",
]

BUILD_STEP_S = 0.010
"""How long one step of a first build of the recall index holds the domain lock, about."""
UPKEEP_STEP_S = 0.001
"""The same for a step of background upkeep (a pass's changes, ``recall_upkeep``): one unit
past it, as a Dream pass's hold, since no call of the host's waits for it to end."""
STEP_PAUSE_S = 0.0002
"""The pause between two steps: long enough for a call waiting on the lock to take it."""
_TOPICS_PER_UNIT = 256  # topics of one scene (or with no listed row) in one unit of the build
# Topics a Dream pass changed, in one unit: each is its row redone with its neighbours, a
# row 0.1-5 ms at 60,000 turns (a Dream row of a long scene, 1,200 terms, 3-5 ms), and a
# step ends after its first unit past its budget (256 topics a unit made a hold of 23 ms
# of CPU after a whole pass; eight with steps of BUILD_STEP_S, holds of 13-19 ms; four,
# units of up to 16 ms: eleven rows redone).
_CHANGES_PER_UNIT = 2


def _start(engine: Engine, ctx: DomainContext) -> RecallState:
    """A state whose build is still to do, in units of at most ``_TOPICS_PER_UNIT`` topics.

    The state the last close saved, when the file still vouches for it, with
    the topics written since as what is left to do; else a new state, its
    units a scene's topics (and the topics holding content under no listed
    row: an open turn's events, a turn never closed).
    """
    mirrors = ctx.mirrors
    mirrors.topics.journal.drain()  # watched from here: what changes meanwhile is redone
    mirrors.contents.journal.drain()
    saved = ctx.saved_recall()
    resumed = None if saved is None else recall_file.resumed(engine, saved)
    if resumed is not None:
        state, tail = resumed
        state.pending = _units([sorted(tail.topic_scenes())])
        mirrors.recall = state
        return state
    topics = mirrors.topics
    units = [sorted(set(mirrors.contents.topics()) - set(topics.topic_ids()))]
    units += [[t.id for t in topics.topics_of_scene(s)] for s in sorted(topics.scenes())]
    state = mirrors.recall = RecallState(pending=_units(units))
    return state


def _units(units: list[list[int]], size: int = _TOPICS_PER_UNIT) -> list[list[int]]:
    return [u[i : i + size] for u in units for i in range(0, len(u), size)]


def _replaced(ctx: DomainContext) -> bool:
    """Whether a mirror was installed whole since the last recall (Dream rebuilds the topic
    mirror when it disagrees with the records): what changed before then is unknown."""
    mirrors = ctx.mirrors
    return not (mirrors.topics.journal.watching and mirrors.contents.journal.watching)


def build_step(engine: Engine, ctx: DomainContext, step_s: float | None = None) -> bool:
    """Index the domain for recall for about ``step_s`` (``BUILD_STEP_S``) of one hold; True
    once what is left is what changed since (``current_state`` takes it in one hold).

    A domain's first recall indexes every row and event: seconds at 10^5 turns. Run
    in steps, each under its own hold of the domain lock (``recall_in_steps``), it
    lets the domain's turns go on meanwhile; the mirrors' journals note what they
    change, and that is redone at the end.
    """
    state = ctx.mirrors.recall
    if state is None or _replaced(ctx):
        state = _start(engine, ctx)
    if not state.pending:
        return True
    refresh = Refresh(engine, ctx, state)
    budget = BUILD_STEP_S if step_s is None else step_s
    started = time.perf_counter()
    while True:  # a unit at least, then as many as fit the step
        refresh.run(set(state.pending.pop()))
        if not state.pending or time.perf_counter() - started >= budget:
            return not state.pending


def queue_changes(ctx: DomainContext) -> bool:
    """Make what the mirrors' journals noted since the last recall units of the index's
    build, for ``build_step`` to take a hold at a time (a Dream pass, as it ends). False
    when there is nothing to do: no change, or no index built to keep current."""
    if not ready(ctx):
        return False
    mirrors = ctx.mirrors
    changed = mirrors.topics.journal.drain() | mirrors.contents.journal.drain()
    if changed and mirrors.recall is not None:
        mirrors.recall.pending += _units([sorted(changed)], _CHANGES_PER_UNIT)
    return bool(changed)


def between_steps() -> None:
    """The pause between two steps of a build, the lock free: a call waiting for it takes it."""
    time.sleep(STEP_PAUSE_S)


def current(engine: Engine, ctx: DomainContext) -> Refresh:
    """The domain's recall state over its full mirrors, built on first use and brought up
    to date; returned in the pass that did it, which reads its rows for an answer."""
    mirrors = ctx.mirrors
    state = mirrors.recall
    if state is None or _replaced(ctx):
        state = _start(engine, ctx)
    while state.pending:  # called without the steps: the whole build in this hold
        build_step(engine, ctx)
    changed = mirrors.topics.journal.drain() | mirrors.contents.journal.drain()
    refresh = Refresh(engine, ctx, state)
    follow_open_turn(ctx, state, changed, refresh.scenes)
    if changed:
        refresh.run(changed)
    return refresh


def current_state(engine: Engine, ctx: DomainContext) -> RecallState:
    """The domain's recall state, built on first use and brought up to date (``current``)."""
    return current(engine, ctx).state


def follow_open_turn(
    ctx: DomainContext, state: RecallState, changed: set[int], scenes: dict[int, int]
) -> None:
    """Note the turn open now; add the one open before to ``changed`` (and its scene to
    ``scenes``): its events were indexed under its scene, and no journal notes a turn
    dropped unclosed, so once it is no longer open its events are redone. A changed topic
    that is the open turn's is in the open turn's scene (no row of it is written yet: a
    warm domain's first recall after a new scene's event would not know where it is)."""
    turn = ctx.open_turn
    open_topic, open_scene = (turn.topic_id, turn.scene_id) if turn is not None else (0, 0)
    if state.open_topic != open_topic:
        if state.open_topic:
            changed.add(state.open_topic)
            scenes.setdefault(state.open_topic, state.open_scene)
        state.open_topic, state.open_scene = open_topic, open_scene
    if open_topic in changed:
        scenes.setdefault(open_topic, open_scene)


def ready(ctx: DomainContext) -> bool:
    """Whether the domain is built and so is its recall index, in full (no state, its
    build pending, or a mirror installed whole since: not ready); takes a finished build."""
    mirrors = ctx.settled_mirrors()
    return not (
        mirrors is None or mirrors.recall is None or mirrors.recall.pending or _replaced(ctx)
    )


def built_state(engine: Engine, ctx: DomainContext) -> RecallState | None:
    """The built domain's recall state brought up to date; None unless ``ready``."""
    return current_state(engine, ctx) if ready(ctx) else None
