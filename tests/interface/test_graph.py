"""G: the shared L3 knowledge graph (api.md §10; tests.md G, and E01/E05's L3 half)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import memhop

from .conftest import Mem, assert_id, assert_scoped, open_new, refused

DEP = memhop.GraphEdgeKind.DEPENDENCY
PART = memhop.GraphEdgeKind.PART_OF


def item(title: str, domain: str = "proj", **fields: Any) -> dict[str, Any]:
    return {"title": title, "domain": domain, **fields}


def edge_set(graph: memhop.L3Graph) -> set[str]:
    """Edges as "kind:{sorted titles}", comparable across files."""
    titles = {n.id: n.title for n in graph.nodes}
    return {
        f"{int(e.kind)}:{{{','.join(sorted(titles[i] for i in e.node_ids))}}}" for e in graph.edges
    }


def titles(nodes: Any) -> set[str]:
    return {n.title for n in nodes}


# ---- G01 / G09: import, read, query, anchor, rename, delete ----------------------------------


def test_g01_the_knowledge_graph_round_trip(mem: Mem) -> None:
    me = mem.primary()
    result = me.import_l3(
        [
            memhop.L3ImportItem(
                title="Go 内存模型",
                domain="go",
                node_type="concept",
                content="Go 内存模型定义了 happens-before 规则",
                keywords=["go", "内存"],
            )
        ],
        memhop.L3ImportMode.SKIP,
    )
    assert (len(result.created_ids), len(result.updated_ids)) == (1, 0)
    assert (result.skipped_count, result.errors, len(result.graph_ids)) == (0, (), 1)
    shape = result.to_dict()
    assert shape["errors"] == []
    assert "graph_ids" in shape
    g, node_id = result.graph_ids[0], result.created_ids[0]
    assert_id(g)
    assert_id(node_id)

    db = mem.settle()
    me = db.primary()
    assert [s.name for s in me.list_l3()] == ["go"]
    whole = me.get_l3(g)
    assert (len(whole.nodes), len(whole.edges)) == (1, 0)
    node = whole.nodes[0]
    assert (node.id, node.graph_id, node.node_type) == (node_id, g, "concept")
    assert node.title == "Go 内存模型"
    assert node.content == "Go 内存模型定义了 happens-before 规则"
    assert node.keywords == ("go", "内存")
    assert me.query_l3_nodes(g, keyword="GO") == [node]
    assert_scoped(me.query_l3_nodes(g, keyword="rust"), me.query_l3_nodes(g, keyword="内存"), "kw")
    sub = me.query_l3_subgraph(g, node_id, 2)
    assert (sub.nodes, sub.edges) == ((node,), ())

    scene = me.search(new_scene=True, l3_id=g).scene
    assert scene.l3_id == g
    assert me.list_scenes(g) == [scene]
    renamed = me.update_l3(g, "改名")
    assert (renamed.slot.id, renamed.slot.name, renamed.nodes) == (g, "改名", (node,))
    me.delete_l3(g)
    assert me.list_l3() == []
    with refused(db, memhop.NotFoundError, 3001):
        me.get_l3(g)
    with refused(db, memhop.NotFoundError, 3001):
        me.delete_l3(g)  # deleting twice
    with refused(db, memhop.NotFoundError, 3001):
        me.search(new_scene=True, l3_id=g)
    assert me.list_scenes(g) == []
    assert [s.l3_id for s in me.list_scenes()] == [""], "the scene survives, unanchored"


def test_g02_a_renamed_graph_keeps_its_id_and_both_labels_route(mem: Mem) -> None:
    me = mem.primary()
    first = me.import_l3([item("a", "memhop"), item("b", "memhop")], "skip")
    (g,) = first.graph_ids
    scene = me.search(new_scene=True, l3_id=g).scene
    renamed = me.update_l3(g, "记忆引擎项目")
    assert (renamed.slot.id, renamed.slot.name, len(renamed.nodes)) == (g, "记忆引擎项目", 2)
    stamp = renamed.slot.updated_at
    assert me.update_l3(g, "记忆引擎项目").slot.updated_at == stamp, "the same name writes nothing"

    db = mem.settle()
    me = db.primary()
    assert me.list_scenes(g) == [scene]
    assert me.import_l3([item("c", "记忆引擎项目")], "skip").graph_ids == (g,)
    assert me.import_l3([item("d", "memhop")], "skip").graph_ids == (g,)
    assert len(me.list_l3()) == 1
    assert titles(me.get_l3(g).nodes) == {"a", "b", "c", "d"}


def test_update_l3_refusals(db: memhop.DB) -> None:
    me = db.primary()
    g1 = me.import_l3([item("a", "one")], "skip").graph_ids[0]
    g2 = me.import_l3([item("b", "two")], "skip").graph_ids[0]
    with refused(db, memhop.InvalidQueryError, 1003):
        me.update_l3(g1, "")
    with refused(db, memhop.InvalidQueryError, 1003):
        me.update_l3(g1, "two")  # another graph's label
    node = me.get_l3(g1).nodes[0].id
    with refused(db, memhop.NotFoundError, 3001):
        me.update_l3(node, "a node is no graph")
    with refused(db, memhop.NotFoundError, 3001):
        me.update_l3("bbbbbbbbbbbbbbbb", "nothing here")
    assert me.update_l3(g1, "uno").slot.name == "uno"  # control
    listed = me.list_l3()
    assert [s.id for s in listed] == sorted([g1, g2])
    assert {s.id: s.name for s in listed} == {g1: "uno", g2: "two"}


@pytest.mark.parametrize("bad", ["", "zz", "0" * 16, "1" * 15, 7, None])
def test_graph_ids_are_refused_when_malformed(db: memhop.DB, bad: Any) -> None:
    me = db.primary()
    result = me.import_l3([item("a")], "skip")
    g, n = result.graph_ids[0], result.created_ids[0]
    for call in (
        lambda: me.get_l3(bad),
        lambda: me.update_l3(bad, "x"),
        lambda: me.delete_l3(bad),
        lambda: me.query_l3_nodes(bad),
        lambda: me.query_l3_subgraph(bad, n),
        lambda: me.query_l3_subgraph(g, bad),
        lambda: me.query_l3_nodes(g, ids=[bad]),
    ):
        with refused(db, memhop.InvalidQueryError, 1003):
            call()
    assert me.get_l3(g.upper()).slot.id == g  # control: input hex is case-insensitive
    assert len(me.query_l3_nodes(g, ids=[n])) == 1


def test_a_well_formed_id_naming_nothing(db: memhop.DB) -> None:
    me = db.primary()
    result = me.import_l3([item("a")], "skip")
    g, n = result.graph_ids[0], result.created_ids[0]
    with refused(db, memhop.NotFoundError, 3001):
        me.get_l3(n)  # a node's id is no graph
    with refused(db, memhop.NotFoundError, 3001):
        me.get_l3("bbbbbbbbbbbbbbbb")
    assert_scoped(me.query_l3_nodes("bbbbbbbbbbbbbbbb"), me.query_l3_nodes(g), "unknown graph")
    assert_scoped(
        me.query_l3_nodes(g, ids=["bbbbbbbbbbbbbbbb"]), me.query_l3_nodes(g, ids=[n]), "ids"
    )


# ---- import: batch pre-check, modes, relations -----------------------------------------------


@pytest.mark.parametrize(
    ("items", "mode"),
    [
        ([item("a")], "Skip"),
        ([item("a")], "replace"),
        ([], "skip"),
        ([item("a"), item("", "proj")], "skip"),
        ([item("a"), item("b", "")], "merge"),
        ([item("a", bogus=1)], "skip"),
        ([item("a", keywords="go")], "skip"),
        ("not a list", "skip"),
        ([item("a", related=[{"titles": ["b"], "kind": "sideways"}])], "skip"),
    ],
)
def test_a_malformed_batch_is_refused_whole(db: memhop.DB, items: Any, mode: Any) -> None:
    me = db.primary()
    with refused(db, memhop.InvalidQueryError, 1003):
        me.import_l3(items, mode)
    assert me.list_l3() == []
    assert len(me.import_l3([item("a")], "skip").created_ids) == 1  # control


def test_g11_import_modes(mem: Mem) -> None:
    me = mem.primary()
    base = item("n", node_type="concept", content="one", keywords=["a", "b"], source_ref="s.md:1")
    created = me.import_l3([base], "skip").created_ids
    skipped = me.import_l3([item("n", content="other", keywords=["z"])], "skip")
    assert (skipped.skipped_count, skipped.created_ids, skipped.updated_ids) == (1, (), ())
    assert skipped.graph_ids == me.import_l3([item("x")], "skip").graph_ids
    g = skipped.graph_ids[0]

    db = mem.settle()
    me = db.primary()
    (node,) = me.query_l3_nodes(g, keyword="one")
    assert (node.content, node.keywords, node.source_ref) == ("one", ("a", "b"), "s.md:1")
    merged = me.import_l3([item("n", content="two", keywords=["b", "c"])], "merge")
    assert merged.updated_ids == created
    (node,) = me.query_l3_nodes(g, ids=created)
    assert (node.node_type, node.content) == ("concept", "one\ntwo")
    assert (node.keywords, node.source_ref) == (("a", "b", "c"), "s.md:1")
    me.import_l3([item("n", content="two")], "merge")
    assert me.query_l3_nodes(g, ids=created)[0].content == "one\ntwo", "content grows only by news"
    me.import_l3([item("n", content="fresh", keywords=["q"])], "overwrite")
    (node,) = me.query_l3_nodes(g, ids=created)
    assert (node.node_type, node.content, node.keywords) == ("", "fresh", ("q",))
    assert node.source_ref == ""
    assert node.to_dict().get("source_ref") is None


def test_g04_relation_identity_ignores_order_and_anchor(mem: Mem) -> None:
    me = mem.primary()
    first = me.import_l3(
        [
            item("A", related=[memhop.L3Relation(titles=["B", "C"], kind=DEP)]),
            item("B"),
            item("C"),
        ],
        "skip",
    )
    assert (len(first.graph_ids), first.edges_created, first.errors) == (1, 1, ())
    g = first.graph_ids[0]
    again = me.import_l3(
        [item("B", related=[{"titles": ["C", "A"], "kind": 4}, {"titles": ["C"], "kind": 2}])],
        "skip",
    )
    assert (again.edges_created, again.errors) == (1, ())
    assert edge_set(me.get_l3(g)) == {"2:{B,C}", "4:{A,B,C}"}
    third = me.import_l3([item("C", related=[{"titles": ["A"], "kind": DEP}])], "skip")
    assert third.edges_created == 1
    assert edge_set(me.get_l3(g)) == {"2:{B,C}", "4:{A,B,C}", "4:{A,C}"}

    db = mem.settle()
    me = db.primary()
    restated = me.import_l3([item("A", related=[{"titles": ["C", "B"], "kind": 4}])], "skip")
    assert (restated.edges_created, restated.errors) == (0, ())
    assert edge_set(me.get_l3(g)) == {"2:{B,C}", "4:{A,B,C}", "4:{A,C}"}


def test_an_unlinkable_relation_is_one_error_line_and_the_node_still_lands(db: memhop.DB) -> None:
    me = db.primary()
    me.import_l3([item("elsewhere", "other")], "skip")
    result = me.import_l3(
        [
            item(
                "A",
                related=[
                    {"titles": ["missing"]},
                    {"titles": ["A"]},
                    {"titles": ["B"], "kind": 9},
                    {"titles": ["elsewhere"]},  # lives in another graph
                    {"titles": ["B"]},  # control: resolves
                ],
            ),
            item("B"),
        ],
        "skip",
    )
    assert len(result.created_ids) == 2
    assert result.edges_created == 1
    assert len(result.errors) == 4
    assert all(line.startswith("A: relation") for line in result.errors)


def test_g03_a_graph_copies_between_files(tmp_path: Path) -> None:
    batch = [
        item(
            "auth",
            "auth-proj",
            node_type="package",
            keywords=["login", "token"],
            related=[
                {"titles": ["login.go", "token.go"], "kind": 4},
                {"titles": ["session"], "kind": 2},
            ],
        ),
        item("login.go", "auth-proj", node_type="file"),
        item("token.go", "auth-proj", node_type="file"),
        item(
            "session",
            "auth-proj",
            node_type="concept",
            source_ref="docs/auth.md:12",
            related=[{"titles": ["auth", "token.go"], "kind": 4}],
        ),
    ]
    with open_new(str(tmp_path / "parent.meh")) as parent:
        (g,) = parent.primary().import_l3(batch, "overwrite").graph_ids
        original = parent.primary().get_l3(g)
    assert (len(original.nodes), len(original.edges)) == (4, 3)

    by_id = {n.id: n for n in original.nodes}
    related: dict[str, list[dict[str, Any]]] = {n.title: [] for n in original.nodes}
    for e in original.edges:
        members = sorted(by_id[i].title for i in e.node_ids)
        related[members[0]].append({"titles": members[1:], "kind": int(e.kind)})
    rebuilt = [
        memhop.L3ImportItem(
            title=n.title,
            domain=original.slot.name,
            node_type=n.node_type,
            content=n.content,
            keywords=n.keywords,
            source_ref=n.source_ref,
            related=[memhop.L3Relation(**r) for r in related[n.title]],
        )
        for n in original.nodes
    ]
    with open_new(str(tmp_path / "worker.meh")) as worker:
        me = worker.primary()
        assert me.list_l3() == []
        copied = me.import_l3(rebuilt, "overwrite")
        assert (copied.errors, len(copied.created_ids), copied.edges_created) == ((), 4, 3)
        copy = me.get_l3(g)
        assert (copy.slot.id, copy.slot.name) == (g, original.slot.name)

        def shape(graph: memhop.L3Graph) -> dict[str, tuple[Any, ...]]:
            return {
                n.title: (n.node_type, n.content, n.keywords, n.source_ref) for n in graph.nodes
            }

        assert shape(copy) == shape(original)
        assert edge_set(copy) == edge_set(original)
        again = me.import_l3(rebuilt, "skip")
        assert (again.skipped_count, again.edges_created) == (4, 0)
        assert (len(me.get_l3(g).nodes), len(me.get_l3(g).edges)) == (4, 3)


# ---- sharing: one pool per file, every domain ------------------------------------------------


def test_e01_e05_the_pool_is_shared_by_every_domain_of_a_file(mem: Mem) -> None:
    alpha, beta = mem.sub("alpha"), mem.sub("beta")
    ids = (mem.primary().agent_id, alpha.agent_id, beta.agent_id)
    result = alpha.import_l3([item("from alpha", "shared")], "skip")
    g = result.graph_ids[0]
    beta.search(new_scene=True, l3_id=g)

    db = mem.settle()
    primary, alpha, beta = (mem.session(i) for i in ids)
    for session in (primary, alpha, beta):
        assert [s.id for s in session.list_l3()] == [g]
        assert [n.id for n in session.query_l3_nodes(g)] == list(result.created_ids)
    assert beta.get_l3(g).slot.id == g
    assert_scoped(alpha.list_scenes(g), beta.list_scenes(g), "anchors are per domain")
    assert len(db.agents()) == 3


def test_the_pool_stays_inside_its_file(tmp_path: Path) -> None:
    with open_new(str(tmp_path / "one.meh")) as one, open_new(str(tmp_path / "two.meh")) as two:
        g = one.primary().import_l3([item("n", "same label")], "skip").graph_ids[0]
        assert_scoped(two.primary().list_l3(), one.primary().list_l3(), "second file")
        with pytest.raises(memhop.NotFoundError):
            two.primary().get_l3(g)
        # the same label in the second file derives the same id but is its own graph
        assert two.primary().import_l3([item("m", "same label")], "skip").graph_ids == (g,)
        assert titles(one.primary().get_l3(g).nodes) == {"n"}
        assert titles(two.primary().get_l3(g).nodes) == {"m"}


def test_delete_l3_detaches_the_anchor_in_every_domain(mem: Mem) -> None:
    alpha, beta = mem.sub("alpha"), mem.sub("beta")
    ids = (mem.primary().agent_id, alpha.agent_id, beta.agent_id)
    g = alpha.import_l3([item("n", "doomed")], "skip").graph_ids[0]
    keep = alpha.import_l3([item("k", "kept")], "skip").graph_ids[0]
    for session in (mem.primary(), alpha, beta):
        session.search(new_scene=True, l3_id=g)
    alpha.search(new_scene=True, l3_id=keep)

    db = mem.settle()
    primary = mem.session(ids[0])  # after a reopen the subs are not reached before the delete
    primary.delete_l3(g)
    primary, alpha, beta = (mem.session(i) for i in ids)
    for session in (primary, alpha, beta):
        assert session.list_scenes(g) == []
    assert [len(s.list_scenes()) for s in (primary, alpha, beta)] == [1, 2, 1]
    assert [s.l3_id for s in alpha.list_scenes(keep)] == [keep], "another graph's anchor stays"
    assert [g.id for g in beta.list_l3()] == [keep]
    with refused(db, memhop.NotFoundError, 3001):
        beta.search(new_scene=True, l3_id=g)


def test_g07_concurrent_imports_from_several_domains_share_one_graph(db: memhop.DB) -> None:
    sessions = [db.primary()] + [
        db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name=f"w{i}")) for i in range(4)
    ]
    results: list[memhop.L3ImportResult] = []
    failures: list[BaseException] = []
    stop = threading.Event()
    lock = threading.Lock()

    def writer(w: int, session: memhop.Session) -> None:
        try:
            batch = [item(f"node-{w}-{n}", "engine", content="content") for n in range(5)]
            got = session.import_l3([*batch, item("shared", "engine")], "skip")
            with lock:
                results.append(got)
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    def reader(session: memhop.Session) -> None:
        try:
            while not stop.is_set():
                graphs = session.list_l3()
                assert len(graphs) <= 1
                for slot in graphs:
                    session.get_l3(slot.id)
                    session.query_l3_nodes(slot.id, keyword="content")
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    readers = [threading.Thread(target=reader, args=(sessions[i],)) for i in (1, 2)]
    writers = [threading.Thread(target=writer, args=(w, s)) for w, s in enumerate(sessions)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    assert failures == []
    assert len({r.graph_ids for r in results}) == 1
    assert all(r.errors == () for r in results)
    (g,) = results[0].graph_ids
    assert len(db.primary().list_l3()) == 1
    nodes = db.primary().get_l3(g).nodes
    assert len(nodes) == 26
    assert len({n.title for n in nodes}) == 26
