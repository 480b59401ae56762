"""L3 (graph layer): graphs, nodes and hyperedges in the file-wide shared pool.

Every record lives in the domain ``ids.SHARED_POOL_AGENT_ID``, whatever
domain asked; these functions address it themselves. The ImportL3 planner is
pure and lives in ``graph_query`` (import its types from there); the subgraph
walk and the node filter at the end of this module are pure too.

Contract:
- A graph's id is ``graph_id(label)`` at creation and survives a rename; a
  label routes by a graph's current name first, else by ``graph_id(label)``.
- A create refuses an id that already holds any record in the pool
  (InvalidQueryError): every L3 id derives from host text, and the typed
  readers would answer such a collision "not found", which must not license
  a write.
- Listings are strict and ascending by id; an edge's identity is its sorted
  member set plus its kind.

Traps: scene anchors naming a deleted graph are the scene layer's business.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from memhop.engine import Engine
from memhop.errors import InvalidQueryError, NotFoundError
from memhop.ids import SHARED_POOL_AGENT_ID, format_id, graph_edge_id, graph_id, graph_node_id
from memhop.layers import codec
from memhop.layers.graph_query import (
    ImportContext,
    ImportItem,
    ImportPlan,
    check_edge_kinds,
    check_import,
    plan_import,
    route_label,
)
from memhop.records.codes import GraphEdgeKind
from memhop.records.graph import HypergraphEdge, HypergraphNode, HypergraphSlot

POOL = SHARED_POOL_AGENT_ID

_M = TypeVar("_M", HypergraphNode, HypergraphEdge)


def require_free(engine: Engine, id_hash: int) -> None:
    """Raise InvalidQueryError when ``id_hash`` holds any live record in the pool."""
    if engine.contains(POOL, id_hash):
        msg = (
            f"record {format_id(id_hash)} already holds this address: "
            "a domain label or node title may not name another record's id"
        )
        raise InvalidQueryError(msg)


# ---- graphs ------------------------------------------------------------------------------


def get_graph_optional(engine: Engine, gid: int) -> HypergraphSlot | None:
    """Return the graph slot at ``gid``, or None when absent or not a graph."""
    return codec.read_optional(engine, POOL, gid, HypergraphSlot)


def list_graphs(engine: Engine) -> list[HypergraphSlot]:
    """Return every graph slot of the pool, ascending by id; strict."""
    return [slot for _, slot in codec.collect_strict(engine, POOL, HypergraphSlot)]


def find_graph_by_label(engine: Engine, label: str) -> HypergraphSlot | None:
    """Return the graph ``label`` routes to (current name, else ``graph_id(label)``); strict.

    The scan is strict because its answer decides whether an import creates a
    graph: a slot that will not read may carry the label.
    """
    return route_label(list_graphs(engine), label)


def create_graph(engine: Engine, label: str, now: int) -> HypergraphSlot:
    """Write a new graph named ``label`` at ``graph_id(label)``.

    InvalidQueryError for an empty label or an id that already holds any record.
    """
    if not label:
        msg = "a graph needs a non-empty label"
        raise InvalidQueryError(msg)
    gid = graph_id(label)
    require_free(engine, gid)
    slot = HypergraphSlot(id_hash=gid, name=label, created_at=now, updated_at=now)
    codec.write(engine, POOL, gid, slot)
    return slot


def rename_graph(engine: Engine, gid: int, name: str, now: int) -> HypergraphSlot:
    """Relabel a graph, keeping its id; return the slot as stored.

    InvalidQueryError for an empty name or one another graph carries;
    NotFoundError when ``gid`` is no graph. The same name writes nothing.
    """
    if not name:
        msg = "a graph name must not be empty"
        raise InvalidQueryError(msg)
    slot = codec.read(engine, POOL, gid, HypergraphSlot)
    if slot.name == name:
        return slot
    # Strict: an unreadable slot may hold the name, and two slots under one
    # label would make imports route ambiguously.
    for other in list_graphs(engine):
        if other.id_hash != gid and other.name == name:
            msg = f"graph {format_id(other.id_hash)} already carries the label {name!r}"
            raise InvalidQueryError(msg)
    renamed = replace(slot, name=name, updated_at=now)
    codec.write(engine, POOL, gid, renamed)
    return renamed


def _members(engine: Engine, gid: int, cls: type[_M]) -> list[tuple[int, _M]]:
    return [(i, r) for i, r in codec.collect_strict(engine, POOL, cls) if r.graph_id == gid]


def delete_graph(engine: Engine, gid: int) -> int:
    """Tombstone a graph's slot, nodes and edges in one batch; return how many went.

    Both scans are strict and finish before the first tombstone, so an
    unreadable member refuses the delete instead of outliving its graph. An id
    that holds no graph slot loses only the members naming it.
    """
    doomed = [i for i, _ in _members(engine, gid, HypergraphNode)]
    doomed += [i for i, _ in _members(engine, gid, HypergraphEdge)]
    if get_graph_optional(engine, gid) is not None:
        doomed.append(gid)
    return engine.delete_batch(POOL, doomed)


# ---- nodes and edges ---------------------------------------------------------------------


def node_id_for(graph: int, title: str) -> int:
    """Return the id of the node titled ``title`` in ``graph``."""
    return graph_node_id(graph, title)


def graph_nodes(engine: Engine, gid: int) -> list[HypergraphNode]:
    """Return one graph's nodes, ascending by id; strict."""
    return [node for _, node in _members(engine, gid, HypergraphNode)]


def graph_edges(engine: Engine, gid: int) -> list[HypergraphEdge]:
    """Return one graph's edges, ascending by id; strict."""
    return [edge for _, edge in _members(engine, gid, HypergraphEdge)]


def get_node_optional(engine: Engine, node_id: int) -> HypergraphNode | None:
    """Return the node at ``node_id`` (of any graph), or None when absent or not a node."""
    return codec.read_optional(engine, POOL, node_id, HypergraphNode)


def put_node(engine: Engine, node: HypergraphNode) -> None:
    """Write (or overwrite) one node at its own id; no address check."""
    codec.write(engine, POOL, node.id_hash, node)


def put_nodes(engine: Engine, nodes: Sequence[HypergraphNode]) -> None:
    """Write nodes with one fsync; no address check."""
    if nodes:
        codec.write_many(engine, POOL, [(n.id_hash, n) for n in nodes])


def put_edge(engine: Engine, gid: int, node_ids: Iterable[int], kind: int, now: int) -> bool:
    """Write the edge of ``kind`` over the member set; False when it already exists.

    Members are stored ascending. InvalidQueryError for an undefined kind,
    fewer than two distinct members, a repeated member, or an address another
    record holds. Members are not checked against the graph.
    """
    given = list(node_ids)
    check_edge_kinds([kind])
    members = tuple(sorted(set(given)))
    if len(members) < 2 or len(members) != len(given):
        msg = "an edge needs two or more distinct members"
        raise InvalidQueryError(msg)
    eid = graph_edge_id(gid, members, kind)
    stored = codec.read_optional(engine, POOL, eid, HypergraphEdge)
    if (
        stored is not None
        and stored.graph_id == gid
        and int(stored.kind) == int(kind)
        and tuple(sorted(stored.node_ids)) == members
    ):
        return False
    require_free(engine, eid)
    edge = HypergraphEdge(
        id_hash=eid, graph_id=gid, kind=GraphEdgeKind(int(kind)), node_ids=members, created_at=now
    )
    codec.write(engine, POOL, eid, edge)
    return True


# ---- import ------------------------------------------------------------------------------


def import_context(engine: Engine) -> ImportContext:
    """Load what ``plan_import`` decides on: every slot, node and edge (strict), every id."""
    return ImportContext(
        slots=list_graphs(engine),
        nodes=[n for _, n in codec.collect_strict(engine, POOL, HypergraphNode)],
        edges=[e for _, e in codec.collect_strict(engine, POOL, HypergraphEdge)],
        taken=frozenset(engine.all_ids(POOL)),
    )


def apply_import(engine: Engine, plan: ImportPlan) -> None:
    """Write a plan's records with one fsync (slots, nodes, edges, then clock stamps)."""
    records = plan.records()
    if records:
        codec.write_many(engine, POOL, records)


def import_items(engine: Engine, items: Sequence[ImportItem], mode: str, now: int) -> ImportPlan:
    """Check, load, plan and apply one import; return the plan as its report.

    A refused batch (``check_import``) or a strict scan that fails writes nothing.
    """
    check_import(items, mode)
    plan = plan_import(items, mode, import_context(engine), now)
    apply_import(engine, plan)
    return plan


# ---- pure reads over one graph's loaded records -------------------------------------------


@dataclass(frozen=True, slots=True)
class Subgraph:
    """Visited nodes and the walkable edges wholly inside them, each ascending by id."""

    nodes: tuple[HypergraphNode, ...]
    edges: tuple[HypergraphEdge, ...]


def subgraph(
    nodes: Iterable[HypergraphNode],
    edges: Iterable[HypergraphEdge],
    start: int,
    max_depth: int,
    kinds: Iterable[int] = (),
) -> Subgraph:
    """Walk one graph breadth-first from ``start`` (api.md §10.5).

    ``kinds`` (empty = all) decides which hops exist, so an edge of another
    kind neither carries the walk nor is listed; an undefined kind is
    InvalidQueryError, checked first. ``max_depth`` counts hops and ``<= 0`` is
    unbounded; each node is visited once, so cycles end. A start absent from
    ``nodes`` is NotFoundError. An edge crossing the bound is left out whole.
    """
    wanted = check_edge_kinds(kinds)
    by_id = {n.id_hash: n for n in nodes}
    if start not in by_id:
        msg = "start node not found"
        raise NotFoundError(msg)
    walkable = [e for e in edges if e.node_ids and (not wanted or int(e.kind) in wanted)]
    adjacent: dict[int, set[int]] = {}
    for edge in walkable:
        for member in edge.node_ids:
            adjacent.setdefault(member, set()).update(edge.node_ids)
    visited = {start}
    frontier = [start]
    depth = 0
    while frontier and (max_depth <= 0 or depth < max_depth):
        # An id no node record holds is not a hop: walking through it would
        # return nodes whose only link to the start is left out of the answer.
        reached = [
            n for cur in frontier for n in adjacent.get(cur, ()) if n not in visited and n in by_id
        ]
        visited.update(reached)
        frontier = list(dict.fromkeys(reached))
        depth += 1
    found = sorted((by_id[i] for i in visited), key=lambda n: n.id_hash)
    returned = {n.id_hash for n in found}
    kept = sorted((e for e in walkable if returned.issuperset(e.node_ids)), key=lambda e: e.id_hash)
    return Subgraph(nodes=tuple(found), edges=tuple(kept))


def filter_nodes(
    nodes: Iterable[HypergraphNode],
    *,
    ids: Collection[int] = (),
    keyword: str = "",
    node_type: str = "",
    limit: int = 0,
) -> list[HypergraphNode]:
    """Keep the nodes meeting every set condition, in input order; ``limit <= 0`` is no cap.

    ``keyword`` is a case-insensitive substring of the title, the content or
    any one keyword; ``ids`` outside the input are simply not selected.
    """
    needle = keyword.lower()
    wanted = set(ids)
    out: list[HypergraphNode] = []
    for node in nodes:
        if wanted and node.id_hash not in wanted:
            continue
        if node_type and node.node_type != node_type:
            continue
        hay = (node.title, node.content, *node.keywords)
        if needle and not any(needle in h.lower() for h in hay):
            continue
        out.append(node)
        if 0 < limit <= len(out):
            break
    return out
