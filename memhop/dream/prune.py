"""Retention sweeps (dream.md §4.3): content records and plan steps past the window.

Both cover the whole domain whatever scene a pass names. Topic rows, their
keyword tracks and L3 graphs are never swept. Each sweep runs under the
domain lock and keeps the mirror it reads in step with what it deleted. The
content sweep looks only at the turns whose rows crossed the line, or that
changed, since the last (``retention``), a bounded number per hold.

Beyond upstream, retention never takes the only words: an original line or
event past the window goes only once its turn is *carried*, i.e. folded
under a Dream row that still exists, and every word of it that carries
content (``memhop.text``) is still in what the memory keeps without it: the
turn's own keyword track, or the tracks and summaries of the Dream rows
above it (``sweep_unfolded`` restores upstream's sweep of everything past the
window). A summary that keeps only keywords therefore lets the lines go only
when they said nothing more. Slots of a topic that is not listed (a turn
still open, or one never closed) are carried by nothing and stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memhop.dream.env import Held
from memhop.dream.retention import SWEEP_BUDGET
from memhop.dream.state import state_of
from memhop.index.l2meta import L2Meta
from memhop.layers import archive, plan
from memhop.text import content_words

__all__ = [
    "DEFAULT_RETENTION_MS",
    "ContentSweep",
    "Coverage",
    "carriers",
    "cutoff",
    "prune_contents",
    "prune_plans",
]

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


def carriers(topics: L2Meta, topic_id: int) -> list[int]:
    """The Dream rows above the topic, nearest first, when the chain reaches a surface
    (depth-1, parentless) row; empty when it breaks (a parent deleted) or never leaves
    the surface: then nothing carries the topic."""
    chain: list[int] = []
    placed = topics.placement(topic_id)
    while placed is not None and placed[1] is not None and placed[1] not in chain:
        chain.append(placed[1])
        placed = topics.placement(placed[1])
        if placed == (1, None):
            return chain
    return []


def _words(text: str) -> set[str]:
    return {word.casefold() for word, carries in content_words(text) if carries}


@dataclass(slots=True)
class Coverage:
    """Which old rows of a turn the sweep may take (see the module); the words of each
    Dream row are read once per hold."""

    held: Held
    _kept: dict[int, frozenset[str]] = field(default_factory=dict)

    def sweepable(self, topic_id: int, old: list[int]) -> list[int]:
        """The rows among ``old`` (the topic's, past the line) whose words are kept."""
        chain = carriers(self.held.mirrors.topics, topic_id)
        if not chain:
            return []
        kept = self._track(topic_id).union(*(self._row(at) for at in chain))
        slots = archive.read_contents(self.held.engine, self.held.agent_id, old)
        # Unreadable rows are left alone: a sweep never decides on bytes it cannot read.
        return [s.id_hash for s in slots if _words(s.content) <= kept]

    def _track(self, topic_id: int) -> set[str]:
        keywords = self.held.mirrors.topics.keywords(topic_id) or ()
        return _words(" ".join(keywords))

    def _row(self, dream_id: int) -> frozenset[str]:
        """A Dream row's words: its track and the text of its rows (its summary)."""
        words = self._kept.get(dream_id)
        if words is None:
            held = self.held
            ids = held.mirrors.contents.ids_in(dream_id)
            summary = archive.read_contents(held.engine, held.agent_id, ids)
            words = frozenset(self._track(dream_id).union(*(_words(s.content) for s in summary)))
            self._kept[dream_id] = words
        return words


def prune_contents(
    held: Held, line: int, *, sweep_unfolded: bool = False, budget: int = SWEEP_BUDGET
) -> ContentSweep:
    """Tombstone content records created before ``line`` that the sweep may take (see the
    module; all of them with ``sweep_unfolded``), judging about ``budget`` topics of those
    whose rows crossed the line since the last sweep (``retention``); call again until
    ``done``."""
    topics, contents = held.mirrors.topics, held.mirrors.contents
    queue = state_of(held).retention
    step = queue.take(
        topics,
        contents,
        line,
        Coverage(held).sweepable,
        sweep_unfolded=sweep_unfolded,
        budget=budget,
        over=held.over,
    )
    gone = 0
    if step.doomed:
        gone = archive.delete_contents(held.engine, held.agent_id, step.doomed)
        contents.remove_many(step.doomed)
    return ContentSweep(gone, queue.kept, step.done)


def prune_plans(held: Held, line: int, ids: Sequence[int]) -> int:
    """Sweep the plan steps among ``ids`` by ``plan.sweep_candidates``; one unreadable
    step sweeps nothing. ``ids`` are listed before the hold (``plan.plan_node_ids``,
    without the lock): a step written since waits for the next sweep."""
    nodes = plan.read_plan_nodes_strict(held.engine, held.agent_id, ids)
    doomed = [n.id_hash for n in plan.sweep_candidates(nodes, line)]
    if not doomed:
        return 0
    gone = plan.delete_plan_nodes(held.engine, held.agent_id, doomed)
    held.mirrors.plans.remove_many(doomed)
    return gone
