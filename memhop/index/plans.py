"""L5 mirror: each turn's plan tree, for the open turn's reads and checks.

Responsibility: answer "which ordinal comes next", "is step N live", "what
does the tree look like" and "is this tree still in flight" without touching
the file. The retention sweep deliberately does not use this mirror: it scans
the engine strictly.

Contract:
- Keyed by the record's id (the address it is stored at); one (topic, seq)
  holds one step, and a later ``put`` replaces an earlier one there.
- ``tree`` lists as roots the steps whose parent is 0 or absent (a swept or
  damaged parent leaves its children visible), children ordered by seq.
- Per-topic answers cost time proportional to that topic's steps.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memhop.index.slots import TopicSeqStore
from memhop.records import PlanNode, PlanStatusCode

__all__ = ["PlanBranch", "PlanForest", "PlanTrees"]


@dataclass(frozen=True, slots=True)
class PlanBranch:
    """One step and its sub-steps, ordered by seq."""

    node: PlanNode
    children: tuple[PlanBranch, ...]


@dataclass(frozen=True, slots=True)
class PlanForest:
    """A turn's plan: its roots and the counts over every step."""

    roots: tuple[PlanBranch, ...]
    done_count: int
    total_count: int


class PlanTrees(TopicSeqStore[PlanNode]):
    """Plan steps of one domain, grouped by turn topic."""

    @classmethod
    def from_nodes(cls, nodes: Iterable[PlanNode]) -> PlanTrees:
        """Build the mirror from steps read back from the engine."""
        return cls._built(nodes)

    # ---- updates (remove, remove_many, remove_topic: TopicSeqStore) -------------------

    def put(self, node: PlanNode) -> None:
        """Record a step just written; it replaces whatever held its id or its (topic, seq)."""
        self._put(node)

    # ---- reads (len, topics, highest_seq: TopicSeqStore) -----------------------------

    def node(self, topic_id: int, seq: int) -> PlanNode | None:
        """The step ``seq`` of the turn, or None."""
        id_hash = self._id_at(topic_id, seq)
        return None if id_hash is None else self._by_id[id_hash]

    def nodes_of(self, topic_id: int) -> list[PlanNode]:
        """The turn's steps in seq order."""
        return self._entries_of(topic_id)

    def has_live_step(self, topic_id: int, seq: int) -> bool:
        """True when the turn's tree holds step ``seq`` (a swept step is absent)."""
        return self._id_at(topic_id, seq) is not None

    def next_seq(self, topic_id: int) -> int:
        """1 + the highest live ordinal (1 for a turn without steps).

        The root also skips ordinals named by the turn's surviving events.
        """
        return self.highest_seq(topic_id) + 1

    def last_active(self, topic_id: int) -> int:
        """The newest ``updated_at`` of the turn's steps; 0 when it has none."""
        return max((n.updated_at for n in self.nodes_of(topic_id)), default=0)

    def has_non_done(self, topic_id: int) -> bool:
        """True when some step of the turn is not done (in progress, failed or undefined)."""
        return any(n.status != PlanStatusCode.DONE for n in self.nodes_of(topic_id))

    def done_count(self, topic_id: int) -> int:
        return sum(1 for n in self.nodes_of(topic_id) if n.status == PlanStatusCode.DONE)

    def total_count(self, topic_id: int) -> int:
        return len(self._topics.get(topic_id, ()))

    def subtree_seqs(self, topic_id: int, seq: int) -> set[int]:
        """Step ``seq`` and every step below it; empty when the step is absent."""
        children = self._children(topic_id)
        if not self.has_live_step(topic_id, seq):
            return set()
        found = {seq}
        stack = [seq]
        while stack:
            for child in children.get(stack.pop(), ()):
                if child.seq not in found:  # a damaged parent loop must not spin
                    found.add(child.seq)
                    stack.append(child.seq)
        return found

    def tree(self, topic_id: int) -> PlanForest:
        """The turn's forest: roots and children ordered by seq, counts over every step."""
        nodes = self.nodes_of(topic_id)
        seqs = {n.seq for n in nodes}
        children = self._children(topic_id)
        placed: set[int] = set()
        roots = [
            _branch(n, children, placed)
            for n in nodes
            if n.parent_seq == 0 or n.parent_seq not in seqs
        ]
        # Steps caught in a parent loop reach no root; list them rather than lose them.
        roots += [_branch(n, children, placed) for n in nodes if n.seq not in placed]
        done = sum(1 for n in nodes if n.status == PlanStatusCode.DONE)
        return PlanForest(tuple(roots), done, len(nodes))

    def _children(self, topic_id: int) -> dict[int, list[PlanNode]]:
        """Parent seq -> children in seq order, for one turn."""
        children: dict[int, list[PlanNode]] = {}
        for node in self.nodes_of(topic_id):
            children.setdefault(node.parent_seq, []).append(node)
        return children

    # ---- comparison --------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        return self._same_entries(other) if isinstance(other, PlanTrees) else NotImplemented

    def __repr__(self) -> str:
        return f"PlanTrees(topics={len(self._topics)}, steps={len(self._by_id)})"


def _branch(root: PlanNode, children: dict[int, list[PlanNode]], placed: set[int]) -> PlanBranch:
    """Build ``root``'s branch without recursion, so a deep chain of steps cannot overflow."""
    placed.add(root.seq)
    order: list[tuple[PlanNode, list[PlanNode]]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        kids = [c for c in children.get(node.seq, ()) if c.seq not in placed]
        placed.update(c.seq for c in kids)
        order.append((node, kids))
        stack.extend(kids)
    built: dict[int, PlanBranch] = {}
    # Children are pushed after their parent, so reversed order builds them first.
    for node, kids in reversed(order):
        built[node.seq] = PlanBranch(node, tuple(built.pop(c.seq) for c in kids))
    return built[root.seq]
