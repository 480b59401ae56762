"""Decay and similarity of the association layer: pure functions of a node's or an edge's fields.

A node's importance and an edge's weight decay exponentially from their clock
(a node's ``updated_at``; an edge's ``last_decay_at``, else ``created_at``),
so any pass computes them exactly whenever it runs. What a decay decides
(a node leaves its edges below 0.15; an edge goes below 0.05 unless its
members still weigh 0.15 on their words) happens when a value crosses a
threshold, and ``node_due`` and ``edge_due`` say when that is; nothing is
stored back for the decay alone (beyond upstream, which rewrites every node
and edge on every pass).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Set

from memhop.records import SceneEdge, SceneNode

__all__ = [
    "DISTILL_SAMPLE_LAMBDA",
    "EDGE_REMOVE_THRESHOLD",
    "L1_EDGE_MIN_SIMILARITY",
    "LAMBDA_EDGE",
    "LAMBDA_NODE",
    "MAX_EMOTIONAL_SLOWDOWN",
    "NEUTRAL_VALENCE",
    "NODE_PRUNE_EDGES_THRESHOLD",
    "NODE_REMOVE_THRESHOLD",
    "edge_clock",
    "edge_due",
    "edge_due_at",
    "edge_weight_at",
    "faint_at",
    "hours_between",
    "jaccard",
    "node_due",
    "node_importance_at",
    "node_lambda",
    "relinks",
    "sample_rank_key",
    "similar_pairs",
]

LAMBDA_NODE = 0.01  # per hour
LAMBDA_EDGE = 0.02  # per hour
DISTILL_SAMPLE_LAMBDA = 0.01  # per hour: distillation's discount of a node since it changed
NODE_REMOVE_THRESHOLD = 0.05  # upstream deletes a node below it; memhop keeps the node
NODE_PRUNE_EDGES_THRESHOLD = 0.15
EDGE_REMOVE_THRESHOLD = 0.05
L1_EDGE_MIN_SIMILARITY = 0.15  # the Jaccard of two nodes' keyword sets an edge needs
NEUTRAL_VALENCE = 0.5
MAX_EMOTIONAL_SLOWDOWN = 0.9
_MS_PER_HOUR = 3_600_000


def hours_between(earlier_ms: int, now_ms: int) -> float:
    """Hours from ``earlier_ms`` to ``now_ms``; never negative."""
    return max(now_ms - earlier_ms, 0) / _MS_PER_HOUR


def node_lambda(valence: float, arousal: float, base: float = LAMBDA_NODE) -> float:
    """A node's decay rate: intense memories (far from neutral, aroused) fade up to 10x slower."""
    strength = min(abs(valence - NEUTRAL_VALENCE) * 2, 1.0)
    activation = min(max(arousal, 0.0), 1.0)
    if math.isnan(strength) or math.isnan(activation):
        return base
    return base * (1 - MAX_EMOTIONAL_SLOWDOWN * strength * activation)


def jaccard(a: Set[str], b: Set[str]) -> float:
    shared = len(a & b)
    union = len(a) + len(b) - shared
    return shared / union if union else 0.0


def similar_pairs(sets: Mapping[int, Set[str]], floor: float) -> Iterator[tuple[int, int, float]]:
    """Every pair ``low < high`` of keys whose sets' ``jaccard`` is at least ``floor`` (> 0),
    with that similarity, ascending by (low, high).

    The same pairs and values as ``jaccard`` over every pair, at a fraction of
    its cost: each set becomes an integer with a bit per word, so the shared
    count of a pair is one AND and a bit count.
    """
    bit_of: dict[str, int] = {}
    held: list[tuple[int, int, int]] = []  # (key, bits, size) of each non-empty set
    for key in sorted(sets):
        words = sets[key]
        if words:
            bits = 0
            for word in words:
                bits |= 1 << bit_of.setdefault(word, len(bit_of))
            held.append((key, bits, len(words)))
    for i, (low, low_bits, low_size) in enumerate(held):
        for high, high_bits, high_size in held[i + 1 :]:
            shared = (low_bits & high_bits).bit_count()
            if shared:
                similarity = shared / (low_size + high_size - shared)
                if similarity >= floor:
                    yield low, high, similarity


def node_importance_at(node: SceneNode, now: int) -> float:
    """The node's importance decayed from its clock (``updated_at``) to ``now``."""
    rate = node_lambda(node.valence, node.arousal)
    return node.importance * math.exp(-rate * hours_between(node.updated_at, now))


def edge_clock(edge: SceneEdge) -> int:
    return edge.last_decay_at or edge.created_at


def relinks(node: SceneNode, clock: int) -> bool:
    """Whether ``node``, a member of an edge with decay clock ``clock`` that it does not
    list, takes the edge into its list: when made at or before that clock (its longer list
    was not stored); one made after it (deleted and made again) lists none of the edges of
    the one before, as upstream's does not, until the edge is written again."""
    return node.created_at <= clock


def edge_weight_at(edge: SceneEdge, now: int) -> float:
    """The edge's weight decayed from its clock (last decay, else creation) to ``now``."""
    return edge.weight * math.exp(-LAMBDA_EDGE * hours_between(edge_clock(edge), now))


def sample_rank_key(node: SceneNode) -> float:
    """An order key for distillation's rank, ``importance x e^(-0.01 x hours since
    updated_at)`` (``DISTILL_SAMPLE_LAMBDA``), whenever it is taken.

    The factor of "now" is the same for every node, so ranking by this key ranks by
    that value whenever it is taken: the order changes only when a node is written.
    """
    if not node.importance > 0:  # NaN too
        return -math.inf
    return math.log(node.importance) + DISTILL_SAMPLE_LAMBDA * node.updated_at / _MS_PER_HOUR


def edge_due(edge: SceneEdge) -> int:
    """When a decay must next look at the edge: when its weight falls below 0.05."""
    return edge_due_at(edge.weight, edge_clock(edge))


def edge_due_at(weight: float, clock: int) -> int:
    """``edge_due`` of an edge stored with ``weight`` and decay clock ``clock``."""
    return _crossing(weight, EDGE_REMOVE_THRESHOLD, LAMBDA_EDGE, clock)


def node_due(node: SceneNode) -> int | None:
    """When a decay must next look at the node: when its importance falls below 0.15 while
    it has edges (it leaves them); None for a node without edges, which decay leaves as it
    is (a faded node is kept: see ``structure.decay_network``)."""
    return faint_at(node) if node.edge_ids else None


def faint_at(node: SceneNode) -> int:
    """When the node's importance falls below 0.15: from then on it takes no edge."""
    rate = node_lambda(node.valence, node.arousal)
    return _crossing(node.importance, NODE_PRUNE_EDGES_THRESHOLD, rate, node.updated_at)


def _crossing(value: float, floor: float, rate: float, clock: int) -> int:
    """When ``value``, decaying at ``rate`` an hour from ``clock``, falls below ``floor``
    (0, at once, if it is not above it: even with its clock ahead of now)."""
    if not floor < value < math.inf:  # NaN and infinity too (a crafted file): look at it now
        return 0
    # Floored: a visit a little early decides on the exact value and reschedules.
    return clock + math.floor(math.log(value / floor) / rate * _MS_PER_HOUR)
