"""L3 graph layer over a real file: the shared pool, addresses, identity, strict scans."""

from __future__ import annotations

import pytest

from memhop.engine import RECORD_HEADER_SIZE, Engine, open_engine
from memhop.errors import CRCMismatchError, InvalidQueryError, NotFoundError
from memhop.ids import PRIMARY_AGENT_ID, graph_id, graph_node_id
from memhop.layers import graph as g
from memhop.layers.graph_query import ImportItem, Relation
from memhop.records.codes import GraphEdgeKind as K
from memhop.records.codes import RecordType
from memhop.records.graph import HypergraphNode
from tests.faults import flip_byte

POOL = 0x4C33000000000000
L3_TYPES = (RecordType.GRAPH_SLOT, RecordType.GRAPH_NODE, RecordType.GRAPH_EDGE)


def item(title: str, domain: str = "proj", *related: Relation, **fields: object) -> ImportItem:
    return ImportItem(title=title, domain=domain, related=related, **fields)  # type: ignore[arg-type]


def rel(*titles: str, kind: int = K.RELATED) -> Relation:
    return Relation(titles, kind)


def edge_set(engine: Engine, gid: int) -> set[tuple[int, tuple[str, ...]]]:
    by_id = {n.id_hash: n.title for n in g.graph_nodes(engine, gid)}
    return {
        (e.kind, tuple(sorted(by_id[i] for i in e.node_ids))) for e in g.graph_edges(engine, gid)
    }


def test_graphs_live_in_the_shared_pool(engine: Engine) -> None:
    assert g.POOL == POOL
    plan = g.import_items(engine, [item("a", "proj", rel("b")), item("b")], "skip", 10)
    assert plan.errors == ()
    assert engine.agents() == [POOL]
    for rec_type in L3_TYPES:
        assert engine.ids_of_type(PRIMARY_AGENT_ID, rec_type) == []
        assert engine.ids_of_type(POOL, rec_type) != []  # positive control
    assert engine.ids_of_type(POOL, RecordType.GRAPH_SLOT) == [graph_id("proj")]


def test_create_refuses_an_occupied_address(engine: Engine) -> None:
    squat = graph_id("taken")
    g.put_node(engine, HypergraphNode(id_hash=squat, graph_id=1, title="squatter"))
    with pytest.raises(InvalidQueryError, match="already holds this address") as info:
        g.create_graph(engine, "taken", 1)
    assert info.value.code == 1003
    assert g.get_graph_optional(engine, squat) is None
    assert g.get_node_optional(engine, squat) is not None  # the squatter is untouched
    slot = g.create_graph(engine, "free", 7)  # positive control
    assert (slot.id_hash, slot.name, slot.created_at, slot.updated_at) == (
        graph_id("free"),
        "free",
        7,
        7,
    )
    assert g.get_graph_optional(engine, slot.id_hash) == slot
    with pytest.raises(InvalidQueryError):
        g.create_graph(engine, "free", 8)  # a graph is a record too
    with pytest.raises(InvalidQueryError):
        g.create_graph(engine, "", 8)


def test_rename_keeps_the_id_and_both_labels_find_it(engine: Engine) -> None:
    gid = g.create_graph(engine, "memhop", 1).id_hash
    g.create_graph(engine, "other", 1)
    renamed = g.rename_graph(engine, gid, "记忆引擎项目", 5)
    assert (renamed.id_hash, renamed.name, renamed.created_at, renamed.updated_at) == (
        gid,
        "记忆引擎项目",
        1,
        5,
    )
    assert g.get_graph_optional(engine, gid) == renamed
    for label in ("memhop", "记忆引擎项目"):
        found = g.find_graph_by_label(engine, label)
        assert found is not None
        assert found.id_hash == gid
    assert g.find_graph_by_label(engine, "nobody") is None
    plan = g.import_items(engine, [item("a", "memhop"), item("b", "记忆引擎项目")], "skip", 6)
    assert plan.graph_ids == (gid,)
    assert len(g.list_graphs(engine)) == 2
    assert len(g.graph_nodes(engine, gid)) == 2


def test_rename_refusals_and_the_same_label_writes_nothing(engine: Engine) -> None:
    gid = g.create_graph(engine, "one", 1).id_hash
    g.create_graph(engine, "two", 1)
    end = engine.record_end
    assert g.rename_graph(engine, gid, "one", 9).updated_at == 1
    assert engine.record_end == end
    with pytest.raises(InvalidQueryError, match="already carries the label"):
        g.rename_graph(engine, gid, "two", 9)
    with pytest.raises(InvalidQueryError):
        g.rename_graph(engine, gid, "", 9)
    with pytest.raises(NotFoundError):
        g.rename_graph(engine, graph_id("absent"), "x", 9)
    g.import_items(engine, [item("n", "one")], "skip", 2)
    with pytest.raises(NotFoundError):
        g.rename_graph(engine, graph_node_id(gid, "n"), "x", 9)  # a node id is no graph
    assert engine.record_end > end
    assert g.get_graph_optional(engine, gid) is not None


def test_edge_identity_is_sorted_members_plus_kind(engine: Engine) -> None:
    gid = g.create_graph(engine, "proj", 1).id_hash
    a, b = graph_node_id(gid, "a"), graph_node_id(gid, "b")
    assert g.put_edge(engine, gid, [b, a], K.RELATED, 2) is True
    end = engine.record_end
    assert g.put_edge(engine, gid, [a, b], K.RELATED, 3) is False
    assert engine.record_end == end  # an existing edge is not written again
    assert g.put_edge(engine, gid, [a, b], K.CAUSAL, 4) is True
    edges = g.graph_edges(engine, gid)
    assert sorted(e.kind for e in edges) == [K.RELATED, K.CAUSAL]
    assert all(e.node_ids == tuple(sorted((a, b))) for e in edges)
    assert [e.id_hash for e in edges] == sorted(e.id_hash for e in edges)
    for bad in ([a], [a, a, b], []):
        with pytest.raises(InvalidQueryError):
            g.put_edge(engine, gid, bad, K.RELATED, 5)
    with pytest.raises(InvalidQueryError):
        g.put_edge(engine, gid, [a, b], 6, 5)


def test_delete_graph_takes_its_members_and_nothing_else(engine: Engine) -> None:
    items = [item("a", "doomed", rel("b")), item("b", "doomed"), item("c", "doomed", rel("a", "b"))]
    items += [item("x", "kept", rel("y")), item("y", "kept")]
    g.import_items(engine, items, "skip", 1)
    doomed, kept = graph_id("doomed"), graph_id("kept")
    assert len(g.graph_nodes(engine, doomed)) == 3
    assert g.delete_graph(engine, doomed) == 3 + 2 + 1
    assert g.get_graph_optional(engine, doomed) is None
    assert g.graph_nodes(engine, doomed) == []
    assert g.graph_edges(engine, doomed) == []
    assert [s.id_hash for s in g.list_graphs(engine)] == [kept]  # positive control
    assert len(g.graph_nodes(engine, kept)) == 2
    assert len(g.graph_edges(engine, kept)) == 1
    assert g.delete_graph(engine, doomed) == 0


def test_a_node_id_given_to_delete_graph_is_not_tombstoned(engine: Engine) -> None:
    g.import_items(engine, [item("a")], "skip", 1)
    nid = graph_node_id(graph_id("proj"), "a")
    assert g.delete_graph(engine, nid) == 0
    assert g.get_node_optional(engine, nid) is not None


def test_reads_of_the_wrong_type_or_absent_ids_are_none(engine: Engine) -> None:
    gid = g.create_graph(engine, "proj", 1).id_hash
    assert g.get_node_optional(engine, gid) is None
    assert g.get_graph_optional(engine, 12345) is None
    assert g.node_id_for(gid, "t") == graph_node_id(gid, "t")


def test_put_nodes_writes_a_batch(engine: Engine) -> None:
    gid = g.create_graph(engine, "proj", 1).id_hash
    nodes = [HypergraphNode(id_hash=g.node_id_for(gid, t), graph_id=gid, title=t) for t in "cab"]
    g.put_nodes(engine, nodes)
    g.put_nodes(engine, [])
    assert [n.id_hash for n in g.graph_nodes(engine, gid)] == sorted(n.id_hash for n in nodes)


def _damage_node(meh_path: str, engine: Engine, node_id: int) -> Engine:
    offset = engine.offset_of(POOL, node_id)
    assert offset is not None
    engine.close()
    flip_byte(meh_path, offset + RECORD_HEADER_SIZE + 3)
    return open_engine(meh_path)


def test_strict_scans_raise_on_a_damaged_record(meh_path: str, engine: Engine) -> None:
    g.import_items(engine, [item("a", "proj", rel("b")), item("b")], "skip", 1)
    gid = graph_id("proj")
    bad = _damage_node(meh_path, engine, graph_node_id(gid, "a"))
    try:
        for scan in (g.graph_nodes, g.delete_graph):
            with pytest.raises(CRCMismatchError, match="will not read"):
                scan(bad, gid)
        with pytest.raises(CRCMismatchError):
            g.import_items(bad, [item("c")], "skip", 2)
        with pytest.raises(CRCMismatchError):
            g.get_node_optional(bad, graph_node_id(gid, "a"))
        assert g.get_graph_optional(bad, gid) is not None  # the delete stopped before writing
        assert len(g.graph_edges(bad, gid)) == 1  # positive control: the edges still read
        assert g.get_node_optional(bad, graph_node_id(gid, "absent")) is None
        assert [s.name for s in g.list_graphs(bad)] == ["proj"]
    finally:
        bad.close()


def test_a_damaged_slot_stops_listing_and_label_lookup(meh_path: str, engine: Engine) -> None:
    gid = g.create_graph(engine, "proj", 1).id_hash
    bad = _damage_node(meh_path, engine, gid)
    try:
        with pytest.raises(CRCMismatchError):
            g.list_graphs(bad)
        with pytest.raises(CRCMismatchError):
            g.find_graph_by_label(bad, "proj")
        with pytest.raises(CRCMismatchError):
            g.rename_graph(bad, gid, "x", 2)
    finally:
        bad.close()


def test_relation_identity_survivesreopen(meh_path: str, engine: Engine) -> None:
    first = g.import_items(
        engine,
        [item("A", "p", rel("B", "C", kind=K.DEPENDENCY)), item("B", "p"), item("C", "p")],
        "skip",
        1,
    )
    assert (first.edges_created, first.errors) == (1, ())
    second = g.import_items(
        engine,
        [item("B", "p", rel("C", "A", kind=K.DEPENDENCY), rel("C", kind=K.PART_OF))],
        "skip",
        2,
    )
    assert (second.edges_created, second.errors) == (1, ())
    third = g.import_items(engine, [item("C", "p", rel("A", kind=K.DEPENDENCY))], "skip", 3)
    assert third.edges_created == 1
    gid = graph_id("p")
    want = {(K.PART_OF, ("B", "C")), (K.DEPENDENCY, ("A", "B", "C")), (K.DEPENDENCY, ("A", "C"))}
    assert edge_set(engine, gid) == want
    nodes_before = g.graph_nodes(engine, gid)
    engine.close()
    reopened = open_engine(meh_path)
    try:
        again = g.import_items(
            reopened, [item("A", "p", rel("C", "B", kind=K.DEPENDENCY))], "skip", 4
        )
        assert (again.edges_created, again.errors, again.skipped_count) == (0, (), 1)
        assert edge_set(reopened, gid) == want
        assert g.graph_nodes(reopened, gid) == nodes_before
        assert [s.id_hash for s in g.list_graphs(reopened)] == [gid]
    finally:
        reopened.close()


def test_the_graph_clock_moves_only_when_the_graph_is_written(engine: Engine) -> None:
    g.import_items(engine, [item("a")], "skip", 1)
    gid = graph_id("proj")
    end = engine.record_end
    g.import_items(engine, [item("a")], "skip", 2)
    assert engine.record_end == end  # nothing new: nothing written
    slot = g.get_graph_optional(engine, gid)
    assert slot is not None
    assert slot.updated_at == 1
    g.import_items(engine, [item("a", content="more")], "merge", 3)
    slot = g.get_graph_optional(engine, gid)
    assert slot is not None
    assert (slot.created_at, slot.updated_at) == (1, 3)
    (node,) = g.graph_nodes(engine, gid)
    assert (node.content, node.created_at, node.updated_at) == ("more", 1, 3)


def test_a_refused_batch_writes_nothing(engine: Engine) -> None:
    end = engine.record_end
    with pytest.raises(InvalidQueryError):
        g.import_items(engine, [item("a"), item("b", "")], "skip", 1)
    with pytest.raises(InvalidQueryError):
        g.import_items(engine, [item("a")], "upsert", 1)
    assert engine.record_end == end
    assert engine.agents() == []
