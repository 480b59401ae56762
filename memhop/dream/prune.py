"""Retention sweeps (dream.md §4.3): content records and plan steps past the window.

Both cover the whole domain whatever scene a pass names. Topic rows, their
keyword tracks and L3 graphs are never swept. Each sweep runs under the
domain lock and keeps the mirror it reads in step with what it deleted. The
content sweep looks only at the turns whose rows crossed the line, or that
changed, since the last (``retention``), a bounded number per hold.

Beyond upstream, retention never takes the only words: an original line or
event past the window goes only once its turn is *carried*, i.e. folded
under a Dream row that still exists (``sweep_unfolded`` restores upstream's
sweep of everything past the window). Slots of a topic that is not listed
(a turn still open, or one never closed) are carried by nothing and stay.
"""

from __future__ import annotations

from dataclasses import dataclass

from memhop.dream.env import Held
from memhop.dream.retention import SWEEP_BUDGET
from memhop.dream.state import state_of
from memhop.index.l2meta import L2Meta
from memhop.layers import archive, plan

__all__ = ["DEFAULT_RETENTION_MS", "ContentSweep", "cutoff", "prune_contents", "prune_plans"]

DEFAULT_RETENTION_MS = 7 * 24 * 3_600_000


def cutoff(now_ms: int, retention_ms: int) -> int:
    """The sweep line: records stamped strictly before it go (window <= 0 means 7 days)."""
    window = retention_ms if retention_ms > 0 else DEFAULT_RETENTION_MS
    return now_ms - window


@dataclass(frozen=True, slots=True)
class ContentSweep:
    """What one hold of the content sweep did: records tombstoned, rows past the window
    kept (as of then), and whether the sweep is done."""

    pruned: int = 0
    kept_unfolded: int = 0
    done: bool = True


def carried(topics: L2Meta, topic_id: int) -> bool:
    """True when the topic is folded under a Dream row that still exists.

    Walks the parent chain to a surface (depth-1) row; a chain that breaks
    (a parent deleted) or never leaves the surface carries nothing.
    """
    row = topics.get(topic_id)
    seen: set[int] = set()
    while row is not None and row.parent_id is not None and row.id not in seen:
        seen.add(row.id)
        row = topics.get(row.parent_id)
        if row is not None and row.depth == 1 and row.parent_id is None:
            return True
    return False


def prune_contents(
    held: Held, line: int, *, sweep_unfolded: bool = False, budget: int = SWEEP_BUDGET
) -> ContentSweep:
    """Tombstone content records created before ``line`` whose turn is carried (or all of
    them), judging about ``budget`` topics of those whose rows crossed the line since the
    last sweep (``retention``); call again until ``done``."""
    topics, contents = held.mirrors.topics, held.mirrors.contents
    queue = state_of(held).retention
    step = queue.take(
        topics,
        contents,
        line,
        lambda topic_id: carried(topics, topic_id),
        sweep_unfolded=sweep_unfolded,
        budget=budget,
    )
    gone = 0
    if step.doomed:
        gone = archive.delete_contents(held.engine, held.agent_id, step.doomed)
        contents.remove_many(step.doomed)
    return ContentSweep(gone, queue.kept, step.done)


def prune_plans(held: Held, line: int) -> int:
    """Sweep plan steps by ``plan.sweep_candidates``; one unreadable step sweeps nothing."""
    nodes = plan.all_plan_nodes_strict(held.engine, held.agent_id)
    doomed = [n.id_hash for n in plan.sweep_candidates(nodes, line)]
    if not doomed:
        return 0
    gone = plan.delete_plan_nodes(held.engine, held.agent_id, doomed)
    held.mirrors.plans.remove_many(doomed)
    return gone
