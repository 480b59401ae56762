"""L3 over the file-wide shared pool, and the L1 read of one domain.

Every L3 call takes the caller's domain lock (``AgentOps.run``) and, inside
it, ``Root.pool_lock``: the pool is one for every domain of the file, so its
reads and writes are serialized across domains while each caller still waits
for its own domain's work. Lock order: domain lock, pool lock, engine lock.

``delete_l3`` is the one call that reaches past its caller: after the graph
is gone it clears the anchor in every domain's scenes. It releases the
caller's lock first and then holds each domain in turn (``Root.exclusive_domain``),
never two at once, so it cannot deadlock with a call running in any domain.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from memhop.domain.context import DomainContext
from memhop.engine import Engine
from memhop.errors import InvalidQueryError, NotFoundError
from memhop.ids import SHARED_POOL_AGENT_ID, format_id
from memhop.layers import graph, scene
from memhop.layers.graph_query import (
    ImportItem,
    ImportPlan,
    Relation,
    check_edge_kinds,
    check_import,
)
from memhop.records import HypergraphEdge, HypergraphNode, HypergraphSlot, SceneNode
from memhop.root import dreams
from memhop.root.ops import AgentOps
from memhop.root.root import Root

__all__ = [
    "GraphView",
    "ImportItem",
    "ImportPlan",
    "Relation",
    "delete_l3",
    "detach_anchors",
    "get_l3",
    "import_l3",
    "list_l1",
    "list_l3",
    "query_l3_nodes",
    "query_l3_subgraph",
    "update_l3",
]


@dataclass(frozen=True, slots=True)
class GraphView:
    """One graph whole: its slot, nodes and edges (each ascending by id)."""

    slot: HypergraphSlot
    nodes: tuple[HypergraphNode, ...]
    edges: tuple[HypergraphEdge, ...]


def list_l1(engine: Engine, ctx: DomainContext) -> list[SceneNode]:
    """The domain's L1 scene nodes ascending by id, as stored once Dream has stored what it
    held in memory; [] before any Dream; strict."""
    dreams.flush(engine, ctx)
    return scene.list_scene_nodes(engine, ctx.agent_id)


def _graph_view(engine: Engine, gid: int) -> GraphView:
    slot = graph.get_graph_optional(engine, gid)
    if slot is None:
        msg = f"graph {format_id(gid)} not found"
        raise NotFoundError(msg)
    return GraphView(
        slot, tuple(graph.graph_nodes(engine, gid)), tuple(graph.graph_edges(engine, gid))
    )


# ---- each runs under the caller's domain lock, then the pool lock -------------------------


def import_l3(ops: AgentOps, items: Sequence[ImportItem], mode: str) -> ImportPlan:
    """Import a batch into the graphs its domain labels route to (api.md §10.1).

    A malformed batch (mode, no items, a blank title or domain) is refused
    whole before the pool is read; per-item failures are the plan's errors.
    """
    check_import(items, mode)

    def run(engine: Engine, ctx: DomainContext) -> ImportPlan:
        with ops.root.pool_lock:
            return graph.import_items(engine, items, mode, ops.now())

    return ops.run(run)


def get_l3(ops: AgentOps, gid: int) -> GraphView:
    """One graph whole; NotFoundError for an id holding no graph (a node's id included)."""

    def run(engine: Engine, ctx: DomainContext) -> GraphView:
        with ops.root.pool_lock:
            return _graph_view(engine, gid)

    return ops.run(run)


def list_l3(ops: AgentOps) -> list[HypergraphSlot]:
    """Every graph of the file, ascending by id."""

    def run(engine: Engine, ctx: DomainContext) -> list[HypergraphSlot]:
        with ops.root.pool_lock:
            return graph.list_graphs(engine)

    return ops.run(run)


def query_l3_nodes(
    ops: AgentOps, gid: int, ids: Collection[int], keyword: str, node_type: str, limit: int
) -> list[HypergraphNode]:
    """The graph's nodes meeting every set condition, ascending by id; ``limit`` keeps the first.

    A graph id naming no graph is an absence: the answer is empty.
    """

    def run(engine: Engine, ctx: DomainContext) -> list[HypergraphNode]:
        with ops.root.pool_lock:
            nodes = graph.graph_nodes(engine, gid)
        return graph.filter_nodes(nodes, ids=ids, keyword=keyword, node_type=node_type, limit=limit)

    return ops.run(run)


def query_l3_subgraph(
    ops: AgentOps, gid: int, start: int, max_depth: int, kinds: Collection[int]
) -> graph.Subgraph:
    """Walk the graph breadth-first from ``start`` (api.md §10.5).

    InvalidQueryError for an undefined edge kind or a start node of another
    graph; NotFoundError when no node holds ``start``.
    """
    check_edge_kinds(kinds)

    def run(engine: Engine, ctx: DomainContext) -> graph.Subgraph:
        with ops.root.pool_lock:
            node = graph.get_node_optional(engine, start)
            if node is None:
                msg = f"start node {format_id(start)} not found"
                raise NotFoundError(msg)
            if node.graph_id != gid:
                msg = "start node does not belong to the requested graph"
                raise InvalidQueryError(msg)
            nodes = graph.graph_nodes(engine, gid)
            edges = graph.graph_edges(engine, gid)
        return graph.subgraph(nodes, edges, start, max_depth, kinds)

    return ops.run(run)


def update_l3(ops: AgentOps, gid: int, name: str) -> GraphView:
    """Relabel a graph, keeping its id (both labels keep routing); return it whole.

    InvalidQueryError for a blank name or one another graph carries;
    NotFoundError for an id holding no graph. The same name writes nothing.
    """

    def run(engine: Engine, ctx: DomainContext) -> GraphView:
        with ops.root.pool_lock:
            if graph.get_graph_optional(engine, gid) is None and name:
                msg = f"graph {format_id(gid)} not found"
                raise NotFoundError(msg)
            graph.rename_graph(engine, gid, name, ops.now())
            return _graph_view(engine, gid)

    return ops.run(run)


# ---- delete: the caller's domain, then every domain one at a time -------------------------


def delete_l3(ops: AgentOps, gid: int) -> None:
    """Delete a graph (slot, nodes, edges), then clear its anchor in every domain.

    NotFoundError for an id holding no graph, so deleting twice is refused.
    The member scans are strict: an unreadable node refuses before the first
    tombstone. Scenes survive, unanchored; idle-reclaimed and never-reached
    domains are detached too.
    """

    def run(engine: Engine, ctx: DomainContext) -> None:
        with ops.root.pool_lock:
            if graph.get_graph_optional(engine, gid) is None:
                msg = f"graph {format_id(gid)} not found"
                raise NotFoundError(msg)
            graph.delete_graph(engine, gid)

    ops.run(run)
    detach_anchors(ops.root, gid)
    ops.root.compact_if_due()


def detach_anchors(root: Root, gid: int) -> int:
    """Clear anchor ``gid`` from every scene of every domain; return how many scenes changed.

    Holds one domain at a time and no domain lock on entry. A domain where an
    import has meanwhile recreated the graph (same label, same id) keeps its
    anchors: they name a live graph again.
    """
    cleared = 0
    with root.pool_lock:  # an in-place compaction holds it while it replaces the engine
        agents = sorted(set(root.engine.agents()) - {SHARED_POOL_AGENT_ID})
    for agent_id in agents:
        with root.exclusive_domain(agent_id):
            anchored = scene.list_scenes(root.engine, agent_id, gid)
            if not anchored:
                continue
            with root.pool_lock:
                if graph.get_graph_optional(root.engine, gid) is not None:
                    continue
                for slot in anchored:
                    scene.put_scene(root.engine, agent_id, replace(slot, l3_id=0))
                    cleared += 1
    return cleared
