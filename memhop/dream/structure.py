"""The association layer (dream.md §4.7): index rebuild, L1 nodes, edges, rebuild, decay.

None of these stages asks a model, so each runs whole under one hold of the
domain lock (the lock is released between stages). Every enumeration is
ascending by id and every pair is visited as (lower id, higher id), so two
runs over copies of one file write the same nodes and edges in the same order.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Set

from memhop.dream.env import Held
from memhop.ids import l1_edge_id, scene_node_id
from memhop.index.l2meta import L2Meta
from memhop.layers import scene, topic
from memhop.records import SceneEdge, SceneNode

__all__ = [
    "EDGE_REMOVE_THRESHOLD",
    "L1_EDGE_MIN_SIMILARITY",
    "LAMBDA_EDGE",
    "LAMBDA_NODE",
    "MAX_EMOTIONAL_SLOWDOWN",
    "MIN_EDGE_NODES",
    "NEW_NODE_IMPORTANCE",
    "NODE_PRUNE_EDGES_THRESHOLD",
    "NODE_REMOVE_THRESHOLD",
    "build_edges",
    "decay_network",
    "hours_between",
    "jaccard",
    "node_lambda",
    "rebuild_from_l2",
    "rebuild_index",
    "sync_nodes",
]

LAMBDA_NODE = 0.01  # per hour
LAMBDA_EDGE = 0.02  # per hour
NODE_REMOVE_THRESHOLD = 0.05
NODE_PRUNE_EDGES_THRESHOLD = 0.15
EDGE_REMOVE_THRESHOLD = 0.05
MIN_EDGE_NODES = 2
L1_EDGE_MIN_SIMILARITY = 0.15
NEW_NODE_IMPORTANCE = 1.0
NEUTRAL_VALENCE = 0.5
MAX_EMOTIONAL_SLOWDOWN = 0.9
_MS_PER_HOUR = 3_600_000
_LISTED_DEPTH = 2


# ---- pure math ---------------------------------------------------------------------------


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
    union = len(a | b)
    return len(a & b) / union if union else 0.0


# ---- index_rebuild, l1_nodes ----------------------------------------------------------


def rebuild_index(held: Held) -> L2Meta:
    """Rebuild the topic mirror from every topic record and install it at once."""
    rebuilt = L2Meta.from_topics(topic.all_topics_strict(held.engine, held.agent_id))
    held.mirrors.topics = rebuilt
    return rebuilt


def sync_nodes(held: Held, now: int) -> set[int]:
    """One node per scene over its depth <= 2 topics; return the node ids written.

    A node whose sorted topic list is unchanged is left alone. A new node
    starts at importance 1.0; an existing one keeps importance and emotion.
    """
    by_scene: dict[int, list[int]] = {}
    for row in topic.all_topics_strict(held.engine, held.agent_id):
        if row.depth <= _LISTED_DEPTH:
            by_scene.setdefault(row.scene_id, []).append(row.id)
    written: list[SceneNode] = []
    for scene_id in sorted(by_scene):
        node_id = scene_node_id(scene_id)
        wanted = tuple(sorted(by_scene[scene_id]))
        node = scene.get_scene_node_optional(held.engine, held.agent_id, node_id)
        if node is not None and tuple(sorted(node.topic_ids)) == wanted:
            continue
        if node is None:
            node = SceneNode(id_hash=node_id, importance=NEW_NODE_IMPORTANCE, created_at=now)
        written.append(
            dataclasses.replace(node, scene_id=scene_id, topic_ids=wanted, updated_at=now)
        )
    if written:
        scene.put_scene_nodes(held.engine, held.agent_id, written)
    return {n.id_hash for n in written}


# ---- l1_hyperedges ---------------------------------------------------------------------


def _keyword_set(held: Held, node: SceneNode) -> frozenset[str]:
    found: set[str] = set()
    for topic_id in node.topic_ids:
        row = topic.get_topic_optional(held.engine, held.agent_id, topic_id)
        if row is not None:
            found.update(k.lower() for k in row.fused_keywords)
    return frozenset(found)


def _add_edge_id(node: SceneNode, edge_id: int) -> SceneNode:
    if edge_id in node.edge_ids:
        return node
    return dataclasses.replace(node, edge_ids=(*node.edge_ids, edge_id))


def build_edges(held: Held, touched: Set[int], now: int) -> int:
    """Pairwise edges between nodes whose keyword sets overlap (Jaccard >= 0.15).

    A missing edge is created at the similarity. An existing one is raised only
    when the new similarity is higher and an endpoint was touched by this
    pass's node sync (unchanged evidence never undoes decay). Returns edges written.
    """
    nodes = {n.id_hash: n for n in scene.list_scene_nodes(held.engine, held.agent_id)}
    if len(nodes) < MIN_EDGE_NODES:
        return 0
    sets = {node_id: _keyword_set(held, node) for node_id, node in sorted(nodes.items())}
    inverted: dict[str, list[int]] = {}
    for node_id, words in sets.items():
        for word in words:
            inverted.setdefault(word, []).append(node_id)
    pairs: set[tuple[int, int]] = set()
    for holders in inverted.values():
        ordered = sorted(holders)
        pairs.update((a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :])
    edges: list[SceneEdge] = []
    changed: dict[int, SceneNode] = {}
    for low, high in sorted(pairs):
        similarity = jaccard(sets[low], sets[high])
        if similarity < L1_EDGE_MIN_SIMILARITY:
            continue
        edge_id = l1_edge_id(low, high)
        edge = scene.get_scene_edge_optional(held.engine, held.agent_id, edge_id)
        if edge is None:
            edge = SceneEdge(
                id_hash=edge_id, node_ids=(low, high), weight=similarity, created_at=now
            )
        elif similarity <= edge.weight or not ({low, high} & touched):
            continue
        else:
            edge = dataclasses.replace(edge, weight=similarity)
        edges.append(edge)
        for node_id in (low, high):
            changed[node_id] = _add_edge_id(changed.get(node_id, nodes[node_id]), edge_id)
    if edges:
        scene.put_scene_edges(held.engine, held.agent_id, edges)
    dirty = [n for i, n in sorted(changed.items()) if n != nodes[i]]
    if dirty:
        scene.put_scene_nodes(held.engine, held.agent_id, dirty)
    return len(edges)


# ---- shared edge surgery ------------------------------------------------------------------


class _Graph:
    """Nodes and edges read once, changed in memory, written back by ``commit``."""

    def __init__(self, held: Held, nodes: Iterable[SceneNode]) -> None:
        self.held = held
        self.nodes = {n.id_hash: n for n in nodes}
        self.original = dict(self.nodes)
        self.edges: dict[int, SceneEdge | None] = {}
        self.written_edges: set[int] = set()
        self.dead_nodes: set[int] = set()
        self.dead_edges: set[int] = set()

    def edge(self, edge_id: int) -> SceneEdge | None:
        if edge_id not in self.edges:
            self.edges[edge_id] = scene.get_scene_edge_optional(
                self.held.engine, self.held.agent_id, edge_id
            )
        return self.edges[edge_id]

    def put_edge(self, edge: SceneEdge) -> None:
        self.edges[edge.id_hash] = edge
        self.written_edges.add(edge.id_hash)

    def unlink_edge(self, edge_id: int, members: Iterable[int]) -> None:
        for node_id in members:
            node = self.nodes.get(node_id)
            if node is not None and edge_id in node.edge_ids:
                kept = tuple(e for e in node.edge_ids if e != edge_id)
                self.nodes[node_id] = dataclasses.replace(node, edge_ids=kept)

    def delete_edge(self, edge_id: int, members: Iterable[int]) -> None:
        self.unlink_edge(edge_id, members)
        self.edges[edge_id] = None
        self.written_edges.discard(edge_id)
        self.dead_edges.add(edge_id)

    def detach(self, node_id: int, edge_ids: Iterable[int]) -> int:
        """Take ``node_id`` out of its edges; an edge left under 2 members goes (counted)."""
        removed = 0
        for edge_id in edge_ids:
            edge = self.edge(edge_id)
            if edge is None:
                continue
            members = tuple(m for m in edge.node_ids if m != node_id)
            if len(members) < MIN_EDGE_NODES:
                self.delete_edge(edge_id, members)
                removed += 1
            elif members != edge.node_ids:
                self.put_edge(dataclasses.replace(edge, node_ids=members))
        return removed

    def delete_node(self, node_id: int) -> None:
        self.nodes.pop(node_id, None)
        self.dead_nodes.add(node_id)

    def commit(self) -> None:
        engine, agent = self.held.engine, self.held.agent_id
        nodes = [n for i, n in sorted(self.nodes.items()) if self.original.get(i) != n]
        edges = [
            e for i, e in sorted(self.edges.items()) if e is not None and i in self.written_edges
        ]
        if nodes:
            scene.put_scene_nodes(engine, agent, nodes)
        if edges:
            scene.put_scene_edges(engine, agent, edges)
        if self.dead_edges:
            scene.delete_scene_edges(engine, agent, sorted(self.dead_edges))
        if self.dead_nodes:
            scene.delete_scene_nodes(engine, agent, sorted(self.dead_nodes))


# ---- l1_rebuild ------------------------------------------------------------------------


def _is_stale(held: Held, meta: L2Meta, node: SceneNode) -> bool:
    if not node.topic_ids or node.topic_ids[0] == 0:
        return True
    first = node.topic_ids[0]
    if topic.get_topic_optional(held.engine, held.agent_id, first) is None:
        return True
    cached = meta.get(first)
    if cached is None or cached.depth <= _LISTED_DEPTH:
        return False
    if cached.depth == _LISTED_DEPTH + 1 and cached.parent_id is not None:
        parent = meta.get(cached.parent_id)
        return parent is None or parent.depth > _LISTED_DEPTH
    return True


def rebuild_from_l2(held: Held) -> tuple[int, int]:
    """Delete nodes whose topics are gone or sunk too deep; return (nodes, edges) removed.

    Every node is judged before anything is deleted, so a read failure changes nothing.
    """
    nodes = scene.list_scene_nodes(held.engine, held.agent_id)
    meta = held.mirrors.topics
    stale = [n for n in nodes if _is_stale(held, meta, n)]
    if not stale:
        return 0, 0
    graph = _Graph(held, nodes)
    edges_removed = 0
    for node in stale:
        edges_removed += graph.detach(node.id_hash, node.edge_ids)
        graph.delete_node(node.id_hash)
    graph.commit()
    return len(stale), edges_removed


# ---- l1_decay ------------------------------------------------------------------------------


def decay_network(held: Held, now: int) -> tuple[int, int]:
    """Decay every node and edge to ``now``; return (nodes, edges) removed.

    Node: importance x e^(-lambda*dt), lambda from ``node_lambda``; below 0.05
    the node goes, below 0.15 it leaves all its edges; its clock moves to now.
    Edge: weight x e^(-0.02*dt) since its last decay; members gone are dropped;
    under 2 members or under 0.05 the edge goes.
    """
    meta = held.mirrors.topics
    graph = _Graph(held, scene.list_scene_nodes(held.engine, held.agent_id))
    nodes_removed = edges_removed = 0
    detach: list[tuple[int, tuple[int, ...]]] = []
    for node_id, node in sorted(graph.nodes.items()):
        first = meta.get(node.topic_ids[0]) if node.topic_ids else None
        if first is not None and first.depth > _LISTED_DEPTH:
            continue
        rate = node_lambda(node.valence, node.arousal)
        importance = node.importance * math.exp(-rate * hours_between(node.updated_at, now))
        if importance < NODE_REMOVE_THRESHOLD:
            graph.delete_node(node_id)
            nodes_removed += 1
            continue
        edge_ids = node.edge_ids
        if importance < NODE_PRUNE_EDGES_THRESHOLD:
            detach.append((node_id, node.edge_ids))
            edge_ids = ()
        graph.nodes[node_id] = dataclasses.replace(
            node, importance=importance, updated_at=now, edge_ids=edge_ids
        )
    for node_id, edge_ids in detach:
        edges_removed += graph.detach(node_id, edge_ids)
    for edge in scene.list_scene_edges(held.engine, held.agent_id):
        current = graph.edges.setdefault(edge.id_hash, edge)
        if current is None:
            continue
        base = current.last_decay_at or current.created_at
        weight = current.weight * math.exp(-LAMBDA_EDGE * hours_between(base, now))
        members = tuple(m for m in current.node_ids if m in graph.nodes)
        if len(members) < MIN_EDGE_NODES or weight < EDGE_REMOVE_THRESHOLD:
            graph.delete_edge(edge.id_hash, members)
            edges_removed += 1
            continue
        graph.put_edge(
            dataclasses.replace(current, node_ids=members, weight=weight, last_decay_at=now)
        )
    graph.commit()
    return nodes_removed, edges_removed
