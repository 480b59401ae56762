"""Retention sweeps (dream.md §4.3): content records and plan steps past the window.

Both cover the whole domain whatever scene a pass names. Topic rows, their
keyword tracks and L3 graphs are never swept. Each sweep runs under the
domain lock and keeps the mirror it reads in step with what it deleted.
"""

from __future__ import annotations

from memhop.dream.env import Held
from memhop.layers import archive, plan

__all__ = ["DEFAULT_RETENTION_MS", "cutoff", "prune_contents", "prune_plans"]

DEFAULT_RETENTION_MS = 7 * 24 * 3_600_000


def cutoff(now_ms: int, retention_ms: int) -> int:
    """The sweep line: records stamped strictly before it go (window <= 0 means 7 days)."""
    window = retention_ms if retention_ms > 0 else DEFAULT_RETENTION_MS
    return now_ms - window


def prune_contents(held: Held, line: int) -> int:
    """Tombstone every content record created before ``line`` (open turns and summaries too)."""
    doomed = held.mirrors.contents.ids_created_before(line)
    if not doomed:
        return 0
    gone = archive.delete_contents(held.engine, held.agent_id, doomed)
    held.mirrors.contents.remove_many(doomed)
    return gone


def prune_plans(held: Held, line: int) -> int:
    """Sweep plan steps by ``plan.sweep_candidates``; one unreadable step sweeps nothing."""
    nodes = plan.all_plan_nodes_strict(held.engine, held.agent_id)
    doomed = [n.id_hash for n in plan.sweep_candidates(nodes, line)]
    if not doomed:
        return 0
    gone = plan.delete_plan_nodes(held.engine, held.agent_id, doomed)
    held.mirrors.plans.remove_many(doomed)
    return gone
