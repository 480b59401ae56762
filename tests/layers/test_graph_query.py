"""L3 pure logic: the ImportL3 planner, the subgraph walk, the node filter (no file)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from memhop.errors import InvalidQueryError, NotFoundError
from memhop.ids import graph_edge_id, graph_id, graph_node_id
from memhop.layers.graph import filter_nodes, subgraph
from memhop.layers.graph_query import (
    ImportContext,
    ImportItem,
    ImportPlan,
    Relation,
    check_edge_kinds,
    merge_content,
    plan_import,
    route_label,
)
from memhop.records.codes import GraphEdgeKind as K
from memhop.records.graph import HypergraphEdge, HypergraphNode, HypergraphSlot

NOW = 5_000
G = graph_id("proj")
SLOT = HypergraphSlot(id_hash=G, name="proj", created_at=1, updated_at=1)


def node(title: str, gid: int = G, **fields: object) -> HypergraphNode:
    return HypergraphNode(
        id_hash=graph_node_id(gid, title),
        graph_id=gid,
        title=title,
        created_at=1,
        updated_at=1,
        **fields,  # type: ignore[arg-type]
    )


def edge(gid: int, members: Sequence[HypergraphNode], kind: int = K.RELATED) -> HypergraphEdge:
    ids = tuple(sorted(n.id_hash for n in members))
    return HypergraphEdge(
        id_hash=graph_edge_id(gid, ids, kind), graph_id=gid, kind=kind, node_ids=ids
    )


def ctx(
    slots: Sequence[HypergraphSlot] = (SLOT,),
    nodes: Sequence[HypergraphNode] = (),
    edges: Sequence[HypergraphEdge] = (),
    extra_taken: Sequence[int] = (),
) -> ImportContext:
    taken = {s.id_hash for s in slots} | {n.id_hash for n in nodes} | {e.id_hash for e in edges}
    return ImportContext(slots, nodes, edges, frozenset(taken | set(extra_taken)))


def item(title: str, domain: str = "proj", **fields: object) -> ImportItem:
    return ImportItem(title=title, domain=domain, **fields)  # type: ignore[arg-type]


def written(plan: ImportPlan) -> dict[str, HypergraphNode]:
    return {n.title: n for n in plan.nodes}


# ---- the pre-check -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("items", "mode", "needle"),
    [
        ([item("a")], "Skip", "skip, merge, overwrite; got 'Skip'"),
        ([item("a")], "replace", "got 'replace'"),
        ([], "skip", "no items"),
        ([item("a"), item("")], "merge", "item 1 has no title"),
        ([item("a"), item("b", domain="")], "overwrite", "'b' has no domain"),
    ],
)
def test_a_malformed_batch_is_refused_whole(
    items: list[ImportItem], mode: str, needle: str
) -> None:
    with pytest.raises(InvalidQueryError, match=needle) as info:
        plan_import(items, mode, ctx(), NOW)
    assert info.value.code == 1003


def test_the_pre_check_passes_a_wellformed_batch() -> None:
    """Positive control for the refusals above: the same shapes, filled in, plan."""
    plan = plan_import([item("a"), item("b")], "overwrite", ctx(), NOW)
    assert len(plan.created_ids) == 2
    assert plan.errors == ()


# ---- modes -------------------------------------------------------------------------------


def test_skip_leaves_an_existing_node_and_creates_a_new_one() -> None:
    old = node("a", content="kept")
    plan = plan_import([item("a", content="new"), item("b")], "skip", ctx(nodes=[old]), NOW)
    assert plan.skipped_count == 1
    assert plan.updated_ids == ()
    assert plan.created_ids == (graph_node_id(G, "b"),)
    assert set(written(plan)) == {"b"}
    assert plan.graph_ids == (G,)


def test_skip_over_nothing_new_writes_nothing_and_stamps_nothing() -> None:
    plan = plan_import([item("a")], "skip", ctx(nodes=[node("a")]), NOW)
    assert plan.records() == []
    assert plan.graph_ids == (G,)  # the label still reports its graph


def test_merge_folds_fields_in() -> None:
    old = node("a", node_type="concept", content="alpha", keywords=("x", "y"), source_ref="doc:1")
    plan = plan_import(
        [item("a", content="beta", keywords=("y", "z"))], "merge", ctx(nodes=[old]), NOW
    )
    got = written(plan)["a"]
    assert got.node_type == "concept"  # empty imported value keeps the current one
    assert got.content == "alpha\nbeta"
    assert got.keywords == ("x", "y", "z")
    assert got.source_ref == "doc:1"
    assert (got.id_hash, got.created_at, got.updated_at) == (old.id_hash, 1, NOW)
    assert plan.updated_ids == (old.id_hash,)
    assert plan.created_ids == ()


def test_merge_replaces_with_nonempty_values() -> None:
    old = node("a", node_type="concept", source_ref="doc:1")
    plan = plan_import(
        [item("a", node_type="package", source_ref="doc:2")], "merge", ctx(nodes=[old]), NOW
    )
    got = written(plan)["a"]
    assert (got.node_type, got.source_ref) == ("package", "doc:2")


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        ("alpha", "", "alpha"),
        ("", "beta", "beta"),
        ("alpha beta", "beta", "alpha beta"),
        ("beta", "alpha beta", "alpha beta"),
        ("alpha", "alpha", "alpha"),
        ("alpha", "beta", "alpha\nbeta"),
    ],
)
def test_merged_content_grows_only_by_what_it_lacks(old: str, new: str, want: str) -> None:
    assert merge_content(old, new) == want


def test_overwrite_replaces_wholesale_and_an_empty_source_ref_clears() -> None:
    old = node("a", node_type="concept", content="alpha", keywords=("x",), source_ref="doc:1")
    plan = plan_import([item("a", keywords=("z",))], "overwrite", ctx(nodes=[old]), NOW)
    got = written(plan)["a"]
    assert (got.node_type, got.content, got.keywords, got.source_ref) == ("", "", ("z",), None)
    assert got.created_at == 1


def test_a_title_twice_in_one_batch_is_created_then_folded() -> None:
    plan = plan_import([item("a", content="one"), item("a", content="two")], "merge", ctx(), NOW)
    assert plan.created_ids == plan.updated_ids == (graph_node_id(G, "a"),)
    assert [n.content for n in plan.nodes] == ["one\ntwo"]


def test_a_new_node_is_written_with_its_fields() -> None:
    plan = plan_import(
        [item("a", node_type="t", content="c", keywords=("k",), source_ref="")],
        "skip",
        ctx(),
        NOW,
    )
    got = written(plan)["a"]
    assert (got.graph_id, got.node_type, got.content, got.keywords) == (G, "t", "c", ("k",))
    assert got.source_ref is None  # never stored empty
    assert got.created_at == got.updated_at == NOW


# ---- graph routing -----------------------------------------------------------------------


def test_a_new_label_makes_a_new_graph_at_its_hash() -> None:
    plan = plan_import([item("a", domain="fresh"), item("b", domain="fresh")], "skip", ctx(), NOW)
    fresh = graph_id("fresh")
    assert [s.id_hash for s in plan.new_graphs] == [fresh]
    assert plan.new_graphs[0].name == "fresh"
    assert plan.graph_ids == (fresh,)
    assert {n.graph_id for n in plan.nodes} == {fresh}
    assert plan.stamps == ()  # a new slot already carries the batch's clock


def test_a_renamed_graph_routes_under_both_labels() -> None:
    renamed = HypergraphSlot(id_hash=G, name="engine", created_at=1, updated_at=1)
    plan = plan_import(
        [item("a", domain="proj"), item("b", domain="engine")], "skip", ctx([renamed]), NOW
    )
    assert plan.graph_ids == (G,)
    assert plan.new_graphs == ()


def test_a_current_name_wins_over_a_label_hash() -> None:
    moved = HypergraphSlot(id_hash=G, name="elsewhere")
    other = HypergraphSlot(id_hash=12345, name="proj")
    assert route_label([moved, other], "proj") == other
    twin = HypergraphSlot(id_hash=G, name="proj")
    assert route_label([other, twin], "proj") == twin  # the derived id owns a shared name
    assert route_label([moved], "nothing") is None


def test_an_occupied_graph_address_is_an_error_per_item() -> None:
    squatter = graph_id("taken")
    plan = plan_import(
        [item("a", domain="taken"), item("b", domain="taken"), item("c")],
        "skip",
        ctx(extra_taken=[squatter]),
        NOW,
    )
    assert len(plan.errors) == 2
    assert all("already holds this address" in e for e in plan.errors)
    assert plan.new_graphs == ()
    assert plan.graph_ids == (G,)  # the healthy item still went in
    assert set(written(plan)) == {"c"}


def test_an_occupied_node_address_is_an_error() -> None:
    plan = plan_import([item("a")], "skip", ctx(extra_taken=[graph_node_id(G, "a")]), NOW)
    assert plan.nodes == ()
    assert plan.errors[0].startswith("a: record ")


# ---- relations ---------------------------------------------------------------------------


def test_a_relation_may_name_a_later_item_and_spans_all_members() -> None:
    items = [item("a", related=(Relation(("b", "c"), K.DEPENDENCY),)), item("b"), item("c")]
    plan = plan_import(items, "skip", ctx(), NOW)
    assert plan.errors == ()
    (only,) = plan.edges
    ids = sorted(graph_node_id(G, t) for t in "abc")
    assert only.node_ids == tuple(ids)
    assert (only.kind, only.graph_id, only.created_at) == (K.DEPENDENCY, G, NOW)
    assert only.id_hash == graph_edge_id(G, ids, K.DEPENDENCY)
    assert plan.edges_created == 1


def test_restating_a_fact_from_another_anchor_is_a_no_op() -> None:
    a, b, c = node("a"), node("b"), node("c")
    held = edge(G, [a, b, c], K.DEPENDENCY)
    items = [
        item("b", related=(Relation(("c", "a"), K.DEPENDENCY), Relation(("c",), K.PART_OF))),
    ]
    plan = plan_import(items, "skip", ctx(nodes=[a, b, c], edges=[held]), NOW)
    assert plan.errors == ()
    assert [(e.kind, e.node_ids) for e in plan.edges] == [
        (K.PART_OF, tuple(sorted((b.id_hash, c.id_hash))))
    ]
    assert plan.skipped_count == 1  # relations are declared even for a skipped node
    assert [s.updated_at for s in plan.stamps] == [NOW]  # an edge was written: stamp


def test_the_same_relation_twice_in_one_batch_makes_one_edge() -> None:
    items = [item("a", related=(Relation(("b",)),)), item("b", related=(Relation(("a",)),))]
    assert plan_import(items, "skip", ctx(), NOW).edges_created == 1


@pytest.mark.parametrize(
    ("relation", "reason"),
    [
        (Relation(("ghost",)), 'target node "ghost" not found'),
        (Relation(("other",)), 'target node "other" not found'),  # lives in another graph
        (Relation(("a",)), "self-referencing target"),
        (Relation(()), "no target node named"),
        (Relation(("b", "b")), 'target "b" named twice'),
        (Relation(("",)), "empty target title"),
        (Relation(("b",), 6), "invalid edge kind 6"),
    ],
)
def test_an_unlinkable_relation_is_reported_and_the_node_still_imported(
    relation: Relation, reason: str
) -> None:
    other = graph_id("other-graph")
    context = ctx(
        slots=[SLOT, HypergraphSlot(id_hash=other, name="other-graph")],
        nodes=[node("other", gid=other)],
    )
    plan = plan_import([item("a", related=(relation,)), item("b")], "skip", context, NOW)
    assert plan.edges == ()
    assert plan.errors == (f"a: relation [{' '.join(relation.titles)}]: {reason}",)
    assert set(written(plan)) == {"a", "b"}


def test_a_relation_whose_source_failed_to_import_is_reported() -> None:
    items = [item("a", related=(Relation(("b",)),)), item("b")]
    plan = plan_import(items, "skip", ctx(extra_taken=[graph_node_id(G, "a")]), NOW)
    assert plan.edges == ()
    assert any('source node "a" was not imported' in e for e in plan.errors)


# ---- write order and stamps --------------------------------------------------------------


def test_records_put_slots_before_nodes_before_edges_before_stamps() -> None:
    items = [
        item("a", domain="fresh", related=(Relation(("b",)),)),
        item("b", domain="fresh"),
        item("c", domain="proj"),
    ]
    plan = plan_import(items, "skip", ctx(), NOW)
    kinds = [type(r).__name__ for _, r in plan.records()]
    assert kinds == [
        "HypergraphSlot",
        "HypergraphNode",
        "HypergraphNode",
        "HypergraphNode",
        "HypergraphEdge",
        "HypergraphSlot",
    ]
    assert [s.id_hash for s in plan.stamps] == [G]
    assert plan.stamps[0].created_at == 1  # a stamp moves only the clock
    assert all(i == r.id_hash for i, r in plan.records())


# ---- subgraph ----------------------------------------------------------------------------

A, B, C, D = (node(t) for t in "abcd")
CHAIN = [edge(G, [A, B]), edge(G, [B, C]), edge(G, [C, D])]


def titles(nodes: Sequence[HypergraphNode]) -> list[str]:
    return sorted(n.title for n in nodes)


@pytest.mark.parametrize(
    ("start", "depth", "want"),
    [
        (A, 0, "abcd"),
        (A, 1, "ab"),
        (A, 2, "abc"),
        (A, 3, "abcd"),
        (A, 99, "abcd"),
        (A, -1, "abcd"),
        (C, 1, "bcd"),
        (D, 1, "cd"),
    ],
)
def test_depth_counts_hops_and_zero_means_no_bound(
    start: HypergraphNode, depth: int, want: str
) -> None:
    got = subgraph([A, B, C, D], CHAIN, start.id_hash, depth)
    assert titles(got.nodes) == list(want)
    returned = {n.id_hash for n in got.nodes}
    assert all(returned.issuperset(e.node_ids) for e in got.edges)
    assert len(got.edges) == len(want) - 1


def test_a_hyperedge_crossing_the_bound_is_left_out_whole() -> None:
    core, util, deep, side = (node(t) for t in ("core", "util", "deep", "side"))
    edges = [edge(G, [core, util], K.DEPENDENCY), edge(G, [util, deep, side], K.PART_OF)]
    nodes = [core, util, deep, side]
    near = subgraph(nodes, edges, core.id_hash, 1)
    assert titles(near.nodes) == ["core", "util"]
    assert [len(e.node_ids) for e in near.edges] == [2]
    far = subgraph(nodes, edges, core.id_hash, 2)
    assert titles(far.nodes) == ["core", "deep", "side", "util"]
    assert sorted(len(e.node_ids) for e in far.edges) == [2, 3]


@pytest.mark.parametrize(
    ("start", "kinds", "want"),
    [
        (A, [K.RELATED], "ab"),
        (A, [K.DEPENDENCY], "a"),
        (C, [K.DEPENDENCY], "bc"),
        (C, [K.RELATED], "cd"),
        (A, [K.RELATED, K.DEPENDENCY], "abcd"),
        (A, [], "abcd"),
    ],
)
def test_the_kind_filter_decides_which_hops_exist(
    start: HypergraphNode, kinds: list[int], want: str
) -> None:
    mixed = [edge(G, [A, B]), edge(G, [B, C], K.DEPENDENCY), edge(G, [C, D])]
    got = subgraph([A, B, C, D], mixed, start.id_hash, 0, kinds)
    assert titles(got.nodes) == list(want)
    assert all(not kinds or e.kind in kinds for e in got.edges)


def test_an_undefined_kind_is_refused_not_answered_empty() -> None:
    with pytest.raises(InvalidQueryError, match="unknown edge kind 6"):
        subgraph([A, B], CHAIN, A.id_hash, 0, [K.RELATED, 6])
    with pytest.raises(InvalidQueryError):
        check_edge_kinds([-1])
    assert check_edge_kinds(list(K)) == frozenset(range(6))


def test_a_missing_start_is_not_found() -> None:
    with pytest.raises(NotFoundError):
        subgraph([A, B], CHAIN, C.id_hash, 0)


def test_cycles_end() -> None:
    ring = [edge(G, [A, B]), edge(G, [B, C]), edge(G, [C, A]), edge(G, [A, B], K.CAUSAL)]
    got = subgraph([A, B, C], ring, A.id_hash, 0)
    assert titles(got.nodes) == ["a", "b", "c"]
    assert [e.id_hash for e in got.edges] == sorted(e.id_hash for e in ring)


def test_an_id_with_no_node_record_is_not_a_hop() -> None:
    ghost = node("ghost")
    edges = [edge(G, [A, ghost]), edge(G, [ghost, B])]
    got = subgraph([A, B], edges, A.id_hash, 0)
    assert titles(got.nodes) == ["a"]
    assert got.edges == ()


# ---- node filter -------------------------------------------------------------------------


def test_filter_conditions_and_together() -> None:
    go = node("Go memory", node_type="concept", keywords=("HAPPENS-before",))
    rust = node("Rust", node_type="concept", content="ownership")
    doc = node("doc", node_type="file", content="go vet")
    nodes = sorted([go, rust, doc], key=lambda n: n.id_hash)
    assert titles(filter_nodes(nodes, keyword="GO")) == ["Go memory", "doc"]
    assert titles(filter_nodes(nodes, keyword="happens")) == ["Go memory"]
    assert titles(filter_nodes(nodes, keyword="go", node_type="concept")) == ["Go memory"]
    assert titles(filter_nodes(nodes, ids=[rust.id_hash, 42])) == ["Rust"]
    assert filter_nodes(nodes, ids=[rust.id_hash], keyword="go") == []
    assert filter_nodes(nodes) == nodes
    assert filter_nodes(nodes, limit=2) == nodes[:2]
    assert filter_nodes(nodes, limit=-1) == nodes
