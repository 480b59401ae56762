"""G05/G06: walking and querying one L3 graph (api.md §10.4, §10.5; tests.md G)."""

from __future__ import annotations

from typing import Any

import memhop

from .conftest import Mem, assert_scoped, refused

DEP = memhop.GraphEdgeKind.DEPENDENCY
PART = memhop.GraphEdgeKind.PART_OF


def item(title: str, domain: str = "proj", **fields: Any) -> dict[str, Any]:
    return {"title": title, "domain": domain, **fields}


def titles(nodes: Any) -> set[str]:
    return {n.title for n in nodes}


# ---- subgraph: G05 / G06 and its refusals ----------------------------------------------------


def chain(me: memhop.Session) -> tuple[str, dict[str, str]]:
    result = me.import_l3(
        [
            item("a", related=[{"titles": ["b"]}]),
            item("b", related=[{"titles": ["c"]}]),
            item("c", related=[{"titles": ["d"]}]),
            item("d"),
        ],
        "overwrite",
    )
    g = result.graph_ids[0]
    return g, {n.title: n.id for n in me.get_l3(g).nodes}


def test_g06_depth_counts_hops_and_zero_means_no_bound(mem: Mem) -> None:
    g, ids = chain(mem.primary())
    me = mem.settle().primary()

    def walk(start: str, depth: int) -> set[str]:
        sub = me.query_l3_subgraph(g, ids[start], depth)
        returned = {n.id for n in sub.nodes}
        assert all(set(e.node_ids) <= returned for e in sub.edges)
        return titles(sub.nodes)

    whole = me.query_l3_subgraph(g, ids["a"], 0)
    assert (len(whole.nodes), len(whole.edges)) == (4, 3)
    assert walk("a", 1) == {"a", "b"}
    assert walk("a", 2) == {"a", "b", "c"}
    for depth in (3, 99, -1):
        assert walk("a", depth) == {"a", "b", "c", "d"}
    assert walk("c", 1) == {"b", "c", "d"}
    assert walk("d", 1) == {"c", "d"}


def test_g05_subgraph_edges_name_only_nodes_it_returns(db: memhop.DB) -> None:
    me = db.primary()
    result = me.import_l3(
        [
            item("core", related=[{"titles": ["util"], "kind": DEP}]),
            item("util", related=[{"titles": ["deep", "side"], "kind": PART}]),
            item("deep"),
            item("side"),
        ],
        "skip",
    )
    g = result.graph_ids[0]
    core = next(n.id for n in me.get_l3(g).nodes if n.title == "core")
    near = me.query_l3_subgraph(g, core, 1)
    assert titles(near.nodes) == {"core", "util"}
    assert [len(e.node_ids) for e in near.edges] == [2]
    for depth in (0, 2, 4):
        far = me.query_l3_subgraph(g, core, depth)
        assert titles(far.nodes) == {"core", "deep", "side", "util"}
        assert sorted(len(e.node_ids) for e in far.edges) == [2, 3]
    # the kind filter decides which hops exist
    only_dep = me.query_l3_subgraph(g, core, 0, [DEP])
    assert titles(only_dep.nodes) == {"core", "util"}
    assert {int(e.kind) for e in only_dep.edges} == {int(DEP)}
    assert_scoped(
        me.query_l3_subgraph(g, core, 0, [memhop.GraphEdgeKind.CAUSAL]).edges, far.edges, "kinds"
    )


def test_subgraph_refusals(db: memhop.DB) -> None:
    me = db.primary()
    g, ids = chain(me)
    other = me.import_l3([item("x", "other")], "skip")
    with refused(db, memhop.InvalidQueryError, 1003, "kind"):
        me.query_l3_subgraph(g, ids["a"], 1, [6])
    with refused(db, memhop.InvalidQueryError, 1003):
        me.query_l3_subgraph(g, ids["a"], 1, "01")  # type: ignore[arg-type]
    with refused(db, memhop.InvalidQueryError, 1003):
        me.query_l3_subgraph(g, other.created_ids[0])  # a start node of another graph
    with refused(db, memhop.NotFoundError, 3001):
        me.query_l3_subgraph(g, "bbbbbbbbbbbbbbbb")
    with refused(db, memhop.NotFoundError, 3001):
        me.query_l3_subgraph(g, g)  # the graph's own id is no node
    assert len(me.query_l3_subgraph(g, ids["a"], 1, [0, 5]).nodes) == 2  # control


def test_query_l3_nodes_conditions_and_limit(db: memhop.DB) -> None:
    me = db.primary()
    result = me.import_l3(
        [
            item("alpha", node_type="file", content="reads Config"),
            item("beta", node_type="file", keywords=["CONFIG"]),
            item("gamma", node_type="concept", content="config too"),
            item("delta", node_type="concept"),
        ],
        "skip",
    )
    g = result.graph_ids[0]
    every = me.query_l3_nodes(g)
    assert [n.id for n in every] == sorted(n.id for n in every)
    assert titles(me.query_l3_nodes(g, keyword="config")) == {"alpha", "beta", "gamma"}
    assert titles(me.query_l3_nodes(g, keyword="config", node_type="file")) == {"alpha", "beta"}
    assert me.query_l3_nodes(g, limit=2) == every[:2]
    assert me.query_l3_nodes(g, limit=-1) == every
    delta = next(n.id for n in every if n.title == "delta")
    assert_scoped(
        me.query_l3_nodes(g, ids=[delta], keyword="config"),
        me.query_l3_nodes(g, ids=[delta]),
        "ids AND keyword",
    )
