"""Record -> result conversions of the graph layers: L1 scene nodes and L3 graphs.

Contract: pure functions, as ``_mapping`` states (ids become 16-hex strings,
order is kept as given).
"""

from __future__ import annotations

from collections.abc import Iterable

import memhop.records as rec
from memhop.api._mapping import hexes
from memhop.api.results_graph import (
    HypergraphEdge,
    HypergraphNode,
    HypergraphSlot,
    L3Graph,
    L3ImportResult,
    L3Subgraph,
    SceneNodeView,
)
from memhop.ids import format_id

__all__ = [
    "hypergraph_edge",
    "hypergraph_node",
    "hypergraph_slot",
    "l3_graph",
    "l3_import_result",
    "l3_subgraph",
    "scene_node_view",
]

# ---- L1 -------------------------------------------------------------------------------------


def scene_node_view(node: rec.SceneNode) -> SceneNodeView:
    """A scene's L1 node."""
    return SceneNodeView(
        id=format_id(node.id_hash),
        scene_id=format_id(node.scene_id),
        topic_ids=hexes(node.topic_ids),
        edge_ids=hexes(node.edge_ids),
        importance=node.importance,
        valence=node.valence,
        arousal=node.arousal,
        emotion_set=node.emotion_set,
        created_at=node.created_at,
        updated_at=node.updated_at,
    )


# ---- L3 -------------------------------------------------------------------------------------


def hypergraph_slot(slot: rec.HypergraphSlot) -> HypergraphSlot:
    return HypergraphSlot(
        id=format_id(slot.id_hash),
        name=slot.name,
        created_at=slot.created_at,
        updated_at=slot.updated_at,
    )


def hypergraph_node(node: rec.HypergraphNode) -> HypergraphNode:
    """An L3 node; a nil and an empty ``source_ref`` both read as ""."""
    return HypergraphNode(
        id=format_id(node.id_hash),
        graph_id=format_id(node.graph_id),
        title=node.title,
        node_type=node.node_type,
        content=node.content,
        keywords=node.keywords,
        source_ref=node.source_ref or "",
        created_at=node.created_at,
        updated_at=node.updated_at,
    )


def hypergraph_edge(edge: rec.HypergraphEdge) -> HypergraphEdge:
    return HypergraphEdge(
        id=format_id(edge.id_hash),
        graph_id=format_id(edge.graph_id),
        kind=edge.kind,
        node_ids=hexes(edge.node_ids),
        created_at=edge.created_at,
    )


def l3_graph(
    slot: rec.HypergraphSlot,
    nodes: Iterable[rec.HypergraphNode],
    edges: Iterable[rec.HypergraphEdge],
) -> L3Graph:
    return L3Graph(
        slot=hypergraph_slot(slot),
        nodes=tuple(hypergraph_node(n) for n in nodes),
        edges=tuple(hypergraph_edge(e) for e in edges),
    )


def l3_subgraph(
    nodes: Iterable[rec.HypergraphNode], edges: Iterable[rec.HypergraphEdge]
) -> L3Subgraph:
    return L3Subgraph(
        nodes=tuple(hypergraph_node(n) for n in nodes),
        edges=tuple(hypergraph_edge(e) for e in edges),
    )


def l3_import_result(
    *,
    graph_ids: Iterable[int],
    created_ids: Iterable[int],
    updated_ids: Iterable[int],
    skipped_count: int,
    edges_created: int,
    errors: Iterable[str],
) -> L3ImportResult:
    return L3ImportResult(
        graph_ids=hexes(graph_ids),
        created_ids=hexes(created_ids),
        updated_ids=hexes(updated_ids),
        skipped_count=skipped_count,
        edges_created=edges_created,
        errors=tuple(errors),
    )
