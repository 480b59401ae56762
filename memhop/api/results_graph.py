"""Public results of the graph layers: a domain's L1 scene nodes and the shared pool's L3 graphs.

Contract: as ``results`` states for every result (upstream's JSON keys and
order in ``to_dict()``, 16-hex ids, tuples for collections, an unnamed stored
enum number kept as a plain int).
"""

from __future__ import annotations

from dataclasses import dataclass

from memhop.api.types import GraphEdgeKind, Result
from memhop.frozen import quick_init

__all__ = [
    "HypergraphEdge",
    "HypergraphNode",
    "HypergraphSlot",
    "L3Graph",
    "L3ImportResult",
    "L3Subgraph",
    "SceneNodeView",
]


# ---- L1 -----------------------------------------------------------------------------------


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SceneNodeView(Result):
    """A scene's L1 node as Dream last wrote it; ``emotion_set`` False means never stamped."""

    id: str
    scene_id: str = ""
    topic_ids: tuple[str, ...] = ()
    edge_ids: tuple[str, ...] = ()
    importance: float = 0.0
    valence: float = 0.0
    arousal: float = 0.0
    emotion_set: bool = False
    created_at: int = 0
    updated_at: int = 0


# ---- L3 -----------------------------------------------------------------------------------


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HypergraphSlot(Result):
    """An L3 graph's container; ``updated_at`` is its content-change clock."""

    id: str
    name: str = ""
    created_at: int = 0
    updated_at: int = 0


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HypergraphNode(Result):
    """An L3 node; ``source_ref`` "" (no reference) is left out of the JSON."""

    _OMITEMPTY = frozenset({"source_ref"})

    id: str
    graph_id: str = ""
    title: str = ""
    node_type: str = ""
    content: str = ""
    keywords: tuple[str, ...] = ()
    source_ref: str = ""
    created_at: int = 0
    updated_at: int = 0


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HypergraphEdge(Result):
    """An L3 hyperedge over ascending ``node_ids``; no weight."""

    id: str
    graph_id: str = ""
    kind: GraphEdgeKind | int = GraphEdgeKind.RELATED
    node_ids: tuple[str, ...] = ()
    created_at: int = 0


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class L3Graph(Result):
    """One whole graph: its slot, nodes and edges."""

    slot: HypergraphSlot
    nodes: tuple[HypergraphNode, ...] = ()
    edges: tuple[HypergraphEdge, ...] = ()


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class L3Subgraph(Result):
    """The nodes a walk reached and the edges whose every member it reached."""

    nodes: tuple[HypergraphNode, ...] = ()
    edges: tuple[HypergraphEdge, ...] = ()


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class L3ImportResult(Result):
    """What one import batch did; ``errors`` lists the per-item failures."""

    _OMITEMPTY = frozenset({"edges_created"})

    graph_ids: tuple[str, ...] = ()
    created_ids: tuple[str, ...] = ()
    updated_ids: tuple[str, ...] = ()
    skipped_count: int = 0
    edges_created: int = 0
    errors: tuple[str, ...] = ()
