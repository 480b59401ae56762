"""Recall in a warm domain: the saved state, kept current through the scene views.

A warm domain (``memhop.domain.warm``) serves its scenes from the scene map
while its full build runs. Its first recall need not wait for that build
when the recall file (``memhop.domain.recall_file``) holds its state: the
state is taken from the file, what the log gained since and what the views
took since are redone over the views of their scenes, and the hits are read
from the views of theirs. Once the build is adopted, it takes the state over
(``DomainContext._adopt``) with every change the views took noted again.

A change whose scene no view can answer (a turn that never closed, written
before a crash) is left to the full build, and that recall waits for it.
"""

from __future__ import annotations

from memhop.domain import recall_file
from memhop.domain.context import DomainContext
from memhop.engine import Engine
from memhop.errors import CRCMismatchError
from memhop.index.recall_state import RecallState
from memhop.root.recall_docs import Refresh
from memhop.root.recall_index import built_state, follow_open_turn

__all__ = ["closing_state", "current"]


def current(engine: Engine, ctx: DomainContext) -> Refresh | None:
    """The warm domain's recall state over its views, brought up to date; None when
    the domain is not warm, or its recall must wait for the full build."""
    if ctx.settled_mirrors() is not None:  # the build is done: it is taken, and serves
        return None
    warm = ctx.warm
    if warm is None or warm.recall_refused:
        return None
    state = warm.recall
    if state is None:
        saved = ctx.saved_recall()
        resumed = None if saved is None else recall_file.resumed(engine, saved)
        if resumed is None:
            warm.recall_refused = True
            return None
        state, tail = resumed
        warm.recall = state
        warm.watch_views()  # what the views took before now is in the log, so in the tail
        changed = tail.topic_scenes()
    else:
        changed = dict(warm.drain_views())
    scenes = {topic: scene for topic, scene in changed.items() if scene is not None}
    topics = set(changed)
    follow_open_turn(ctx, state, topics, scenes)
    refresh = Refresh(engine, ctx, state, scenes)
    if any(refresh.topic_scene(t) is None for t in topics):
        # The full build redoes them all (``build_step``), and recall waits for it.
        state.pending.append(sorted(topics))
        warm.recall_refused = True
        return None
    if topics:
        refresh.run(topics)
    return refresh


def closing_state(engine: Engine, ctx: DomainContext) -> RecallState | None:
    """The domain's recall state to save as the file closes, brought up to date, whether
    its full build is done or its views still serve it; None when it has none to save.
    The close drops the open turn: so does the state (its events go where a build from
    the records puts them)."""
    ctx.open_turn = None
    try:
        if ctx.settled_mirrors() is None:  # a state taken this session only: none is read now
            taken = ctx.warm is not None and ctx.warm.recall is not None
            refresh = current(engine, ctx) if taken else None
            state = None if refresh is None else refresh.state
        else:
            state = built_state(engine, ctx)
    except CRCMismatchError:  # read back, and damaged: the file forgets it
        return None
    return state if state is not None and state.storable else None
