"""l1_decay, scheduled by threshold crossings, decides what decaying every node and edge on
every pass decides.

memhop looks at a node or an edge only when its value crosses a threshold and stores a value
only with a decision; upstream decays and stores every node and edge on every pass. A reference
model here does the latter over the same random layer and passes; after every pass both must
hold the same nodes and edges, the same memberships, and the same values decayed to the pass.
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop.dream import decay, l1domain, structure
from memhop.engine import create_engine
from memhop.layers import scene
from memhop.records import SceneEdge, SceneNode
from tests.dream.conftest import NOW, Domain

HOUR = 3_600_000


@dataclass
class RefNode:
    importance: float
    clock: int
    valence: float
    arousal: float
    edges: set[int] = field(default_factory=set)


@dataclass
class RefEdge:
    weight: float
    clock: int
    members: tuple[int, ...]


def reference_pass(nodes: dict[int, RefNode], edges: dict[int, RefEdge], now: int) -> None:
    """Upstream's decay: every node, then the detachments, then every edge; all stored.

    With memhop's one departure (``structure.decay_network``): a node below 0.05 is kept
    (upstream deletes it, and its next pass makes it again at 1.0). An edge below 0.05 is
    kept only while its members' words still weigh 0.15; these nodes hold no words, so
    every such edge goes, as upstream's does.
    """
    detach: list[tuple[int, set[int]]] = []
    for node_id in sorted(nodes):
        node = nodes[node_id]
        rate = decay.node_lambda(node.valence, node.arousal)
        value = node.importance * math.exp(-rate * decay.hours_between(node.clock, now))
        if value < decay.NODE_PRUNE_EDGES_THRESHOLD:
            detach.append((node_id, node.edges))
            node.edges = set()
        node.importance, node.clock = value, now
    for node_id, edge_ids in detach:
        for edge_id in edge_ids:
            _drop_member(nodes, edges, edge_id, node_id)
    for edge_id in sorted(edges):
        edge = edges[edge_id]
        weight = edge.weight * math.exp(-decay.LAMBDA_EDGE * decay.hours_between(edge.clock, now))
        members = tuple(m for m in edge.members if m in nodes)
        if len(members) < structure.MIN_EDGE_NODES or weight < decay.EDGE_REMOVE_THRESHOLD:
            del edges[edge_id]
            for member in members:
                nodes[member].edges.discard(edge_id)
        else:
            edge.weight, edge.clock, edge.members = weight, now, members


def _drop_member(
    nodes: dict[int, RefNode], edges: dict[int, RefEdge], edge_id: int, node_id: int
) -> None:
    edge = edges.get(edge_id)
    if edge is None:
        return
    members = tuple(m for m in edge.members if m != node_id)
    if len(members) < structure.MIN_EDGE_NODES:
        del edges[edge_id]
        for member in members:
            if member in nodes:
                nodes[member].edges.discard(edge_id)
    else:
        edge.members = members


IMPORTANCE = st.sampled_from((1.0, 0.9, 0.5, 0.3, 0.2, 0.16, 0.12, 0.08, 0.051))
WEIGHT = st.sampled_from((1.0, 0.6, 1 / 3, 0.2, 0.15, 0.08))
EMOTION = st.sampled_from((0.0, 0.5, 1.0))
NODE = st.tuples(IMPORTANCE, EMOTION, EMOTION, st.integers(0, 48))
LAYER = st.tuples(
    st.lists(NODE, min_size=2, max_size=7),
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), WEIGHT, st.integers(0, 48))),
)
PASSES = st.lists(st.integers(1, 80), min_size=1, max_size=8)  # hours between passes


@given(
    layer=LAYER,
    gaps=PASSES,
    limit=st.sampled_from((None, 1, 2, 3)),
    words=st.sampled_from((1, structure.DECAY_WORDS)),
)
def test_scheduled_decay_decides_what_decaying_everything_every_pass_decides(
    layer: tuple[list[tuple[float, float, float, int]], list[tuple[int, int, float, int]]],
    gaps: list[int],
    limit: int | None,
    words: int,
) -> None:
    """Each pass as the reference decides it, whether the due nodes are looked at in one
    hold or ``limit`` a hold (the stage's bounded holds: the first pass after an open
    finds every node due), and the faint edges judged ``words`` nodes' sets a hold."""
    drawn_nodes, drawn_edges = layer
    nodes: list[SceneNode] = []
    ref_nodes: dict[int, RefNode] = {}
    for i, (importance, valence, arousal, age) in enumerate(drawn_nodes):
        node_id = 1000 + i
        clock = NOW - age * HOUR
        nodes.append(
            SceneNode(
                id_hash=node_id,
                scene_id=10 + i,
                topic_ids=(50 + i,),  # no such topic: never a deep node
                importance=importance,
                valence=valence,
                arousal=arousal,
                created_at=clock,
                updated_at=clock,
            )
        )
        ref_nodes[node_id] = RefNode(importance, clock, valence, arousal)
    edges: list[SceneEdge] = []
    ref_edges: dict[int, RefEdge] = {}
    for a, b, weight, age in drawn_edges:
        low, high = sorted((1000 + a % len(nodes), 1000 + b % len(nodes)))
        edge_id = 5000 + 10 * low + high
        if low == high or edge_id in ref_edges:
            continue
        clock = NOW - age * HOUR
        edges.append(
            SceneEdge(id_hash=edge_id, node_ids=(low, high), weight=weight, created_at=clock)
        )
        ref_edges[edge_id] = RefEdge(weight, clock, (low, high))
        ref_nodes[low].edges.add(edge_id)
        ref_nodes[high].edges.add(edge_id)
    linked = {n.id_hash: sorted(ref_nodes[n.id_hash].edges) for n in nodes}
    nodes = [dataclasses.replace(n, edge_ids=tuple(linked[n.id_hash])) for n in nodes]
    with tempfile.TemporaryDirectory() as tmp:
        dom = Domain(create_engine(str(Path(tmp) / "d.meh")))
        try:
            scene.put_scene_nodes(dom.engine, 0, nodes)
            scene.put_scene_edges(dom.engine, 0, edges)
            now = NOW
            budget = mock.patch.object(structure, "DECAY_WORDS", words)
            for gap in gaps:
                now += gap * HOUR
                more = True
                while more:
                    with dom.hold() as held, budget:
                        structure.decay_network(held, now, limit)
                        more = l1domain.decay_pending(held, now)
                reference_pass(ref_nodes, ref_edges, now)
                _agree(dom, ref_nodes, ref_edges, now)
        finally:
            dom.engine.close()


def _agree(
    dom: Domain, ref_nodes: dict[int, RefNode], ref_edges: dict[int, RefEdge], now: int
) -> None:
    stored_nodes = {n.id_hash: n for n in scene.list_scene_nodes(dom.engine, 0)}
    stored_edges = {e.id_hash: e for e in scene.list_scene_edges(dom.engine, 0)}
    assert stored_nodes.keys() == ref_nodes.keys()
    assert stored_edges.keys() == ref_edges.keys()
    for node_id, node in stored_nodes.items():
        ref = ref_nodes[node_id]
        assert set(node.edge_ids) == ref.edges
        assert decay.node_importance_at(node, now) == pytest.approx(ref.importance, rel=1e-9)
    for edge_id, edge in stored_edges.items():
        ref = ref_edges[edge_id]
        assert edge.node_ids == ref.members
        assert decay.edge_weight_at(edge, now) == pytest.approx(ref.weight, rel=1e-9)
