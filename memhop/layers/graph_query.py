"""L3 (graph layer), pure half: the ImportL3 planner and the edge-kind check.

No engine here. ``memhop.layers.graph`` loads the pool with strict scans,
hands it to ``plan_import`` and writes the plan; keeping the decisions pure
lets every import case be tested without a file. Ids are ints; hex is the
facade's. This module must not import ``graph`` (layer modules never import
each other), so ``graph`` re-exports what callers need from here.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace

from memhop.errors import InvalidQueryError
from memhop.ids import format_id, graph_edge_id, graph_id, graph_node_id
from memhop.records.codes import GraphEdgeKind
from memhop.records.graph import HypergraphEdge, HypergraphNode, HypergraphSlot

IMPORT_MODES = ("skip", "merge", "overwrite")
EDGE_KINDS = frozenset(int(k) for k in GraphEdgeKind)
L3Record = HypergraphSlot | HypergraphNode | HypergraphEdge
_EdgeKey = tuple[tuple[int, ...], int]


@dataclass(frozen=True, slots=True)
class Relation:
    """One hyperedge over the importing item plus ``titles``, of ``kind``."""

    titles: tuple[str, ...]
    kind: int = GraphEdgeKind.RELATED


@dataclass(frozen=True, slots=True)
class ImportItem:
    """One node to import into the graph its ``domain`` label routes to."""

    title: str
    domain: str
    node_type: str = ""
    content: str = ""
    keywords: tuple[str, ...] = ()
    source_ref: str = ""
    related: tuple[Relation, ...] = ()


@dataclass(frozen=True, slots=True)
class ImportContext:
    """The pool before an import: every slot, node and edge, and every live id."""

    slots: Sequence[HypergraphSlot]
    nodes: Sequence[HypergraphNode]
    edges: Sequence[HypergraphEdge]
    taken: Collection[int]


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """What one import writes and what it reports (ids as ints)."""

    graph_ids: tuple[int, ...]
    new_graphs: tuple[HypergraphSlot, ...]
    nodes: tuple[HypergraphNode, ...]
    edges: tuple[HypergraphEdge, ...]
    stamps: tuple[HypergraphSlot, ...]
    created_ids: tuple[int, ...]
    updated_ids: tuple[int, ...]
    skipped_count: int
    errors: tuple[str, ...]

    @property
    def edges_created(self) -> int:
        return len(self.edges)

    def records(self) -> list[tuple[int, L3Record]]:
        """Return the writes in an order whose every prefix is consistent after a crash.

        New slots precede their nodes, nodes precede the edges naming them, and
        the clock stamps of existing graphs come last.
        """
        ordered: list[L3Record] = [*self.new_graphs, *self.nodes, *self.edges, *self.stamps]
        return [(r.id_hash, r) for r in ordered]


def check_import(items: Sequence[ImportItem], mode: str) -> None:
    """Refuse the whole batch (InvalidQueryError) before anything is read or written."""
    if mode not in IMPORT_MODES:
        msg = f"import mode must be one of skip, merge, overwrite; got {str(mode)!r}"
        raise InvalidQueryError(msg)
    if not items:
        msg = "import: no items"
        raise InvalidQueryError(msg)
    for i, item in enumerate(items):
        if not item.title:
            msg = f"import: item {i} has no title"
            raise InvalidQueryError(msg)
        if not item.domain:
            msg = f"import: item {item.title!r} has no domain"
            raise InvalidQueryError(msg)


def route_label(slots: Iterable[HypergraphSlot], label: str) -> HypergraphSlot | None:
    """Return the graph ``label`` names: a current name first, else the id ``graph_id(label)``.

    Two slots may carry one name in an old file; the one whose id derives from
    the label wins, then the smaller id, so a label routes the same on every run.
    """
    derived = graph_id(label)
    pool = list(slots)
    named = [s for s in pool if s.name == label]
    if named:
        return min(named, key=lambda s: (s.id_hash != derived, s.id_hash))
    return next((s for s in pool if s.id_hash == derived), None)


def merge_content(old: str, new: str) -> str:
    """Grow ``old`` only by what it does not already contain."""
    if not new or new in old:
        return old
    if not old or old in new:
        return new
    return f"{old}\n{new}"


def merge_node(node: HypergraphNode, item: ImportItem, now: int) -> HypergraphNode:
    """Fold ``item`` in: empty values keep, keywords union (stored order first), content grows."""
    return replace(
        node,
        node_type=item.node_type or node.node_type,
        content=merge_content(node.content, item.content),
        keywords=tuple(dict.fromkeys((*node.keywords, *item.keywords))),
        source_ref=item.source_ref or node.source_ref,
        updated_at=now,
    )


def overwrite_node(node: HypergraphNode, item: ImportItem, now: int) -> HypergraphNode:
    """Replace the mutable fields wholesale; an empty ``source_ref`` clears it."""
    return replace(
        node,
        node_type=item.node_type,
        content=item.content,
        keywords=tuple(item.keywords),
        source_ref=item.source_ref or None,
        updated_at=now,
    )


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _address_taken(id_hash: int) -> str:
    return (
        f"record {format_id(id_hash)} already holds this address: "
        "a domain label or node title may not name another record's id"
    )


class _Planner:
    """One import's working state; ``plan_import`` is its only user."""

    def __init__(self, ctx: ImportContext, mode: str, now: int) -> None:
        self.ctx, self.mode, self.now = ctx, mode, now
        self.planned: set[int] = set()  # ids this batch claims, on top of ctx.taken
        self.titles: dict[int, dict[str, HypergraphNode]] = {}
        for node in ctx.nodes:
            self.titles.setdefault(node.graph_id, {})[node.title] = node
        self.keys: dict[int, set[_EdgeKey]] = {}
        for edge in ctx.edges:
            key = (tuple(sorted(edge.node_ids)), int(edge.kind))
            self.keys.setdefault(edge.graph_id, set()).add(key)
        self.routes: dict[str, int] = {}
        self.unroutable: dict[str, str] = {}
        self.new_graphs: list[HypergraphSlot] = []
        self.writes: dict[int, HypergraphNode] = {}  # insertion order = first write
        self.edges: list[HypergraphEdge] = []
        self.touched: set[int] = set()
        self.changed: set[int] = set()
        self.created: list[int] = []
        self.updated: list[int] = []
        self.errors: list[str] = []
        self.skipped = 0

    def taken(self, id_hash: int) -> bool:
        return id_hash in self.planned or id_hash in self.ctx.taken

    def graph_for(self, label: str) -> int | None:
        if label in self.routes:
            return self.routes[label]
        if label in self.unroutable:
            return None
        slot = route_label(self.ctx.slots, label)
        if slot is None:
            gid = graph_id(label)
            if self.taken(gid):
                self.unroutable[label] = _address_taken(gid)
                return None
            slot = HypergraphSlot(id_hash=gid, name=label, created_at=self.now, updated_at=self.now)
            self.new_graphs.append(slot)
            self.planned.add(gid)
        self.routes[label] = slot.id_hash
        return slot.id_hash

    def import_node(self, item: ImportItem) -> None:
        gid = self.graph_for(item.domain)
        if gid is None:
            self.errors.append(f"{item.title}: {self.unroutable[item.domain]}")
            return
        self.touched.add(gid)
        titles = self.titles.setdefault(gid, {})
        current = titles.get(item.title)
        if current is None:
            nid = graph_node_id(gid, item.title)
            if self.taken(nid):
                self.errors.append(f"{item.title}: {_address_taken(nid)}")
                return
            node = overwrite_node(
                HypergraphNode(id_hash=nid, graph_id=gid, title=item.title, created_at=self.now),
                item,
                self.now,
            )
            self.created.append(nid)
        elif self.mode == "skip":
            self.skipped += 1  # a node the graph holds stays exactly as stored
            return
        else:
            fold = merge_node if self.mode == "merge" else overwrite_node
            node = fold(current, item, self.now)
            self.updated.append(node.id_hash)
        titles[item.title] = node
        self.writes[node.id_hash] = node
        self.planned.add(node.id_hash)
        self.changed.add(gid)

    def members(self, gid: int, source: str, rel: Relation) -> tuple[int, ...] | str:
        """Return the sorted member ids, or the reason the relation names no edge."""
        titles = self.titles.get(gid, {})
        if int(rel.kind) not in EDGE_KINDS:
            return f"invalid edge kind {int(rel.kind)}"
        if not rel.titles:
            return "no target node named"
        if source not in titles:
            return f"source node {_quote(source)} was not imported"
        seen = {source}
        ids = [titles[source].id_hash]
        for target in rel.titles:
            if not target:
                return "empty target title"
            if target == source:
                return "self-referencing target"
            if target in seen:
                return f"target {_quote(target)} named twice"
            if target not in titles:
                return f"target node {_quote(target)} not found"
            seen.add(target)
            ids.append(titles[target].id_hash)
        return tuple(sorted(ids))

    def import_relations(self, item: ImportItem) -> None:
        gid = self.routes.get(item.domain)
        if gid is None:
            return  # the node pass already reported why this label has no graph
        keys = self.keys.setdefault(gid, set())
        for rel in item.related:
            where = f"{item.title}: relation [{' '.join(rel.titles)}]"
            members = self.members(gid, item.title, rel)
            if isinstance(members, str):
                self.errors.append(f"{where}: {members}")
                continue
            key = (members, int(rel.kind))
            if key in keys:
                continue  # restating a fact the graph holds is a no-op
            eid = graph_edge_id(gid, members, rel.kind)
            if self.taken(eid):
                self.errors.append(f"{where}: {_address_taken(eid)}")
                continue
            kind = GraphEdgeKind(int(rel.kind))
            edge = HypergraphEdge(
                id_hash=eid, graph_id=gid, kind=kind, node_ids=members, created_at=self.now
            )
            self.edges.append(edge)
            keys.add(key)
            self.planned.add(eid)
            self.changed.add(gid)

    def plan(self) -> ImportPlan:
        existing = {s.id_hash: s for s in self.ctx.slots}
        stamps = tuple(
            replace(existing[gid], updated_at=self.now)
            for gid in sorted(self.changed)
            if gid in existing
        )
        return ImportPlan(
            graph_ids=tuple(sorted(self.touched)),
            new_graphs=tuple(self.new_graphs),
            nodes=tuple(self.writes.values()),
            edges=tuple(self.edges),
            stamps=stamps,
            created_ids=tuple(self.created),
            updated_ids=tuple(self.updated),
            skipped_count=self.skipped,
            errors=tuple(self.errors),
        )


def plan_import(items: Sequence[ImportItem], mode: str, ctx: ImportContext, now: int) -> ImportPlan:
    """Decide one import (api.md §10.1) without touching a file.

    Runs ``check_import`` first. Nodes go in item order; relations are resolved
    in a second pass, so a target may come later in the batch, and they are
    declared even for skipped nodes. A relation is resolved within its item's
    graph: a target not titled there after the node pass, an undefined kind, a
    self target, or a member address held by another record is one error line
    and no edge. An existing graph is stamped only when this plan writes to it.
    """
    check_import(items, mode)
    planner = _Planner(ctx, mode, now)
    for item in items:
        planner.import_node(item)
    for item in items:
        planner.import_relations(item)
    return planner.plan()


def check_edge_kinds(kinds: Iterable[int]) -> frozenset[int]:
    """Return ``kinds`` as a set; InvalidQueryError for a value outside 0..5."""
    wanted = frozenset(int(k) for k in kinds)
    bad = sorted(wanted - EDGE_KINDS)
    if bad:
        msg = f"unknown edge kind {bad[0]}"
        raise InvalidQueryError(msg)
    return wanted
