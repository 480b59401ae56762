"""A domain's in-memory mirrors, and their full build from the domain's records."""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass

from memhop.engine import Engine
from memhop.index.l2meta import L2Meta
from memhop.index.l4 import L4Index
from memhop.index.plans import PlanTrees
from memhop.index.recall_state import RecallState
from memhop.layers import content_fields, plan, topic_rows

__all__ = ["Mirrors", "build_mirrors"]


@dataclass
class Mirrors:
    """The domain's in-memory mirrors, rebuilt from records when the context is made."""

    topics: L2Meta
    contents: L4Index
    plans: PlanTrees
    recall: RecallState | None = None  # built on the domain's first recall
    dream: object = None  # what Dream keeps of the domain between passes (memhop.dream.state)
    # Whether the scene map can list these topics by their addresses: not when a
    # topic's payload names another id than the one it is stored at (a foreign writer).
    mappable: bool = True


def build_mirrors(engine: Engine, agent_id: int, pace: Callable[[], None] | None = None) -> Mirrors:
    """Build a domain's mirrors from its readable records (damage is skipped and counted);
    ``pace`` is called between chunks of the work done in memory (as the engine's paced
    reads call theirs: a call beside the build takes the interpreter there)."""
    # The load makes a few objects per record and keeps most, so each full collection
    # its allocations trigger walks everything built so far: a quarter of the load's
    # CPU at 4*10^5 records. The switch is process-wide: off for the load only, back
    # on only if it was on (a load on another thread may turn it on early, and then
    # only loses the gain).
    collecting = gc.isenabled()
    gc.disable()
    try:
        ints: dict[int, int] = {}  # one int object per id or stamp, across both mirrors
        # Topics first, so a turn's lines share its row's ints; the rows each mirror
        # is built from are freed as it is built, before the collector is back on.
        # Content is read for its fields only: a scene's lines are decoded when the
        # scene is read (ctx.slots), not every line of the domain at load.
        misplaced: list[int] = []
        rows = topic_rows.all_topic_rows(engine, agent_id, ints, misplaced)
        return Mirrors(
            topics=L2Meta.from_topics(rows, pace),
            contents=L4Index.from_fields(
                content_fields.all_content_fields(engine, agent_id, ints), pace
            ),
            plans=PlanTrees.from_nodes(plan.all_plan_nodes(engine, agent_id)),
            mappable=not misplaced,
        )
    finally:
        if collecting:
            gc.enable()
