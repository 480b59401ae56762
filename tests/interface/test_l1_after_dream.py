"""F: the L1 association layer after Dream (api.md §8, dream.md §4.7; tests.md F01-F05, K14).

Public ``memhop`` names only and only ids the library returned. Keywords are chosen per
turn: ``LocalModel`` takes them from the words of the text, ``FakeModel`` answers the list
the test sets on ``keywords`` before the turn closes. Every negative has its control.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest

import memhop

from .conftest import FakeModel, Mem, assert_scoped, open_new, turn

NODE_KEYS = {
    "id",
    "scene_id",
    "topic_ids",
    "edge_ids",
    "importance",
    "valence",
    "arousal",
    "emotion_set",
    "created_at",
    "updated_at",
}
SHARED = "retries backoff jitter"
DISJOINT = "zebra giraffe savanna"


def say(session: memhop.Session, i: int, text: str, **search: Any) -> memhop.TopicSlot:
    """One LocalModel turn whose keywords are the words of ``text``."""
    _, closed = turn(session, i, input=text, output=text, **search)
    return closed


def fake_turn(
    session: memhop.Session, model: FakeModel, i: int, keywords: Sequence[str], **search: Any
) -> memhop.TopicSlot:
    """One turn whose keywords are exactly ``keywords`` (the FakeModel answers them)."""
    model.keywords = tuple(keywords)
    _, closed = turn(session, i, input=f"turn {i}", **search)
    assert closed.fused_keywords == tuple(keywords)
    return closed


def by_scene(session: memhop.Session) -> dict[str, memhop.SceneNodeView]:
    return {n.scene_id: n for n in session.list_l1()}


def snapshot(session: memhop.Session) -> list[dict[str, Any]]:
    return [n.to_dict() for n in session.list_l1()]


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class FoldModel(FakeModel):
    """A FakeModel whose consolidate folds the first two listed rows into one summary."""

    def consolidate(self, topics: Any, floor: int, *, cancel: threading.Event | None = None) -> Any:
        self._count("consolidate")
        if len(topics) < 2:
            return ()
        ids = (topics[0].id, topics[1].id)
        return (memhop.llm.Group(member_ids=ids, summary="两轮合并的摘要"),)


# ---- F01: one node per settled scene, ordered, with its topics and edges ----------------------


def test_f01_dream_builds_one_node_per_scene_with_settled_turns(mem: Mem) -> None:
    me = mem.primary()
    a1 = say(me, 0, SHARED, new_scene=True)
    a2 = say(me, 1, SHARED)
    b1 = say(me, 2, SHARED, new_scene=True)
    b2 = say(me, 3, SHARED)
    c1 = say(me, 4, DISJOINT, new_scene=True)
    assert me.list_l1() == []  # nothing before the Dream
    report = me.dream()
    assert (report.l1_nodes_added, report.l1_edges_added) == (3, 1)
    assert (report.l1_nodes_removed, report.l1_edges_removed) == (0, 0)
    me.search(new_scene=True)  # a fourth scene whose only turn never settles

    db = mem.settle()
    me = db.primary()
    assert len(me.list_scenes()) == 4  # control: the unsettled scene exists
    nodes = me.list_l1()
    assert [n.id for n in nodes] == sorted(n.id for n in nodes)
    assert len({n.id for n in nodes}) == 3
    assert {n.scene_id for n in nodes} == {a1.scene_id, b1.scene_id, c1.scene_id}
    node = by_scene(me)
    assert node[a1.scene_id].topic_ids == tuple(sorted((a1.id, a2.id)))
    assert node[b1.scene_id].topic_ids == tuple(sorted((b1.id, b2.id)))
    assert node[c1.scene_id].topic_ids == (c1.id,)
    for n in nodes:
        assert set(n.to_dict()) == NODE_KEYS  # F05: no dominance
        assert 0.99 < n.importance <= 1.0  # a fresh node, one decay already applied
        assert 0 < n.created_at <= n.updated_at
        assert 0.0 <= n.valence <= 1.0
        assert 0.0 <= n.arousal <= 1.0
    # a and b share keywords: one edge both name; c shares none: no edge (same pass)
    (edge,) = node[a1.scene_id].edge_ids
    assert node[b1.scene_id].edge_ids == (edge,)
    assert_scoped(node[c1.scene_id].edge_ids, node[a1.scene_id].edge_ids, "disjoint scene's edges")
    assert me.list_l1() == nodes  # a repeatable read


def test_f01_topic_ids_are_a_snapshot_until_the_next_dream(mem: Mem) -> None:
    me = mem.primary()
    a1 = say(me, 0, SHARED, new_scene=True)
    a2 = say(me, 1, SHARED)
    b1 = say(me, 2, SHARED, new_scene=True)
    say(me, 3, SHARED)
    me.dream()

    db = mem.settle()
    me = db.primary()
    before = snapshot(me)
    first = by_scene(me)[a1.scene_id].topic_ids[0]
    assert first in (a1.id, a2.id)
    me.delete_topic(first)
    assert snapshot(me) == before  # a snapshot: the deleted topic stays listed
    me.dream()
    node = by_scene(me)
    assert node[a1.scene_id].topic_ids == tuple({a1.id, a2.id} - {first})
    assert len(node) == 2
    (last,) = node[a1.scene_id].topic_ids
    me.delete_topic(last)
    report = me.dream()
    assert report.l1_nodes_removed == 1
    node = by_scene(me)
    assert_scoped(
        [s for s in node if s == a1.scene_id], [s for s in node if s == b1.scene_id], "a1"
    )
    assert len(node) == 1
    assert me.scene_context(a1.scene_id).topics == ()  # the scene itself persists
    assert [s.scene_id for s in me.list_scenes()].count(a1.scene_id) == 1


# ---- l1_hyperedges: Jaccard >= 0.15 over the lowercased keyword sets --------------------------


def test_edges_need_a_jaccard_of_at_least_0_15(fake_mem: Mem) -> None:
    me, model = fake_mem.primary(), fake_mem.model
    assert isinstance(model, FakeModel)
    a = [f"a{i}" for i in range(9)]
    b = [f"b{i}" for i in range(8)]
    c = [f"c{i}" for i in range(9)]
    d = [f"d{i}" for i in range(9)]
    # A and B: 3 shared of 20 (0.15 exactly), the case differs, spread over two turns each
    ta = fake_turn(me, model, 0, ["Pipe", "QUEUE", "ring", *a[:4]], new_scene=True)
    fake_turn(me, model, 1, a[4:])
    tb = fake_turn(me, model, 2, ["pipe", "queue", "Ring", *b[:4]], new_scene=True)
    fake_turn(me, model, 3, b[4:])
    # C and D: 3 shared of 21 (0.142...) - they overlap, but below the threshold
    tc = fake_turn(me, model, 4, ["x", "y", "z", *c], new_scene=True)
    td = fake_turn(me, model, 5, ["x", "y", "z", *d], new_scene=True)
    # E shares nothing with anyone
    te = fake_turn(me, model, 6, ["lonely", "island"], new_scene=True)
    report = me.dream()
    assert report.l1_edges_added == 1

    db = fake_mem.settle()
    me = db.primary()
    node = by_scene(me)
    assert len(node) == 5
    (edge,) = node[ta.scene_id].edge_ids
    assert node[tb.scene_id].edge_ids == (edge,)
    assert_scoped(node[tc.scene_id].edge_ids, node[ta.scene_id].edge_ids, "C at 3/21")
    assert_scoped(node[td.scene_id].edge_ids, node[tb.scene_id].edge_ids, "D at 3/21")
    assert_scoped(node[te.scene_id].edge_ids, node[ta.scene_id].edge_ids, "E, disjoint")


def test_every_edge_is_listed_by_both_its_nodes(mem: Mem) -> None:
    """Scenes that each link to all before them (a hub's list grows by one a pass, which
    memhop keeps in memory until it has grown by half): ``list_l1`` lists each edge on
    both its nodes, in this session and after a reopen."""
    me = mem.primary()
    for i in range(6):
        say(me, i, SHARED, new_scene=True)
        me.dream()
    for reopened in (False, True):
        nodes = (mem.settle().primary() if reopened else me).list_l1()
        assert len(nodes) == 6
        listed: dict[str, int] = {}
        for node in nodes:
            for edge in node.edge_ids:
                listed[edge] = listed.get(edge, 0) + 1
        assert len(listed) == 15  # every pair of six scenes sharing their words
        assert set(listed.values()) == {2}


# ---- per domain -----------------------------------------------------------------------------


def test_l1_is_per_domain(mem: Mem) -> None:
    me = mem.primary()
    sub = mem.sub("l1-helper")
    a = say(me, 0, SHARED, new_scene=True)
    b = say(me, 1, SHARED, new_scene=True)
    s = say(sub, 2, SHARED, new_scene=True)  # the same words, in another domain
    me.dream()
    sub_id = sub.agent_id

    db = mem.settle()
    me, sub = db.primary(), mem.session(sub_id)
    assert_scoped(sub.list_l1(), me.list_l1(), "sub-agent before its own Dream")
    assert {n.scene_id for n in me.list_l1()} == {a.scene_id, b.scene_id}
    before = snapshot(me)
    assert sub.dream().l1_nodes_added == 1
    (mine,) = sub.list_l1()
    assert (mine.scene_id, mine.topic_ids) == (s.scene_id, (s.id,))
    # no edge across domains although the keywords match; the primary's pair has one
    assert_scoped(mine.edge_ids, by_scene(me)[a.scene_id].edge_ids, "cross-domain edge")
    assert snapshot(me) == before  # the sub-agent's Dream left the primary's layer alone


# ---- admin: delete_scene and merge_scenes (F02, F03) ------------------------------------------


def test_f03_delete_scene_drops_its_node_immediately(mem: Mem) -> None:
    me = mem.primary()
    s0 = say(me, 0, SHARED, new_scene=True)
    for i in (1, 2):
        say(me, i, SHARED)
    s1 = say(me, 3, SHARED, new_scene=True)
    for i in (4, 5):
        say(me, i, SHARED)
    me.dream()

    db = mem.settle()
    me = db.primary()
    node = by_scene(me)
    assert set(node) == {s0.scene_id, s1.scene_id}
    (edge,) = node[s0.scene_id].edge_ids
    assert node[s1.scene_id].edge_ids == (edge,)
    survivor = node[s1.scene_id]
    me.delete_scene(s0.scene_id)
    with pytest.raises(memhop.NotFoundError):
        me.scene_context(s0.scene_id)
    assert me.scene_context(s1.scene_id).topics  # control: the other scene reads
    (left,) = me.list_l1()  # no Dream ran: the node went with the scene
    assert left.scene_id == s1.scene_id
    assert left.topic_ids == survivor.topic_ids
    assert left.edge_ids == (edge,)  # the documented dangling window until the next Dream
    report = me.dream()
    assert report.l1_edges_removed == 1
    (left,) = me.list_l1()
    assert left.scene_id == s1.scene_id
    assert edge not in left.edge_ids


def test_f02_merge_drops_the_swallowed_node_and_keeps_host_labels(meh_path: str) -> None:
    defaults = memhop.Defaults(scene_dream_topic_threshold=-1, dream_compress_min_topics=2)
    db = open_new(meh_path, FoldModel(), defaults=defaults)
    try:
        me = db.primary()
        item = memhop.L3ImportItem(title="帧格式", domain="项目", node_type="concept", content="x")
        (graph,) = me.import_l3([item], "skip").graph_ids
        p1 = say(me, 0, SHARED, new_scene=True, l3_id=graph)
        p2 = say(me, 1, SHARED)
        q1 = say(me, 2, SHARED, new_scene=True)
        q2 = say(me, 3, SHARED)
        me.rename_topic(p1.id, "帧格式那一轮")
        me.update_scene(p1.scene_id, name="锚在项目域的那段对话")
        me.update_scene(q1.scene_id, name="另一段对话")
        scenes = me.list_scenes()
        names = {r.topic_id: r.name for r in me.scene_context(p1.scene_id).topics}
        assert names[p1.id] == "帧格式那一轮"

        report = me.dream()
        assert report.l2_topics_compressed > 0
        node = by_scene(me)
        assert set(node) == {p1.scene_id, q1.scene_id}
        listed = {r.topic_id for r in me.scene_context(p1.scene_id).topics}
        assert {p1.id, p2.id} < listed  # the fold added a parent row
        assert set(node[p1.scene_id].topic_ids) == listed  # every depth <= 2 row
        assert me.list_scenes() == scenes  # the Dream left every host label alone
        after = {r.topic_id: r.name for r in me.scene_context(p1.scene_id).topics}
        assert {t: after[t] for t in names} == names

        kept = node[p1.scene_id]
        me.merge_scenes(p1.scene_id, [q1.scene_id])
        (left,) = me.list_l1()  # no Dream ran: the swallowed node is gone, the other stays
        assert (left.id, left.scene_id) == (kept.id, p1.scene_id)
        (anchored,) = me.list_scenes(graph)
        assert (anchored.scene_id, anchored.scene_name) == (p1.scene_id, "锚在项目域的那段对话")
        assert len(me.list_scenes()) == 1
        me.dream()
        (left,) = me.list_l1()
        assert {q1.id, q2.id} <= set(left.topic_ids)  # the moved turns, after the next Dream
        assert set(left.topic_ids) == {r.topic_id for r in me.scene_context(p1.scene_id).topics}
        me.delete_scene(p1.scene_id)
        assert me.list_l1() == []
    finally:
        db.close()


# ---- decay and persistence ------------------------------------------------------------------


def test_importance_only_falls_across_passes(db: memhop.DB) -> None:
    me = db.primary()
    a = say(me, 0, SHARED, new_scene=True)
    b = say(me, 1, DISJOINT, new_scene=True)
    me.dream()
    first = by_scene(me)
    time.sleep(0.005)
    a2 = say(me, 2, SHARED, scene_id=a.scene_id)  # a's topic set changes: re-synced
    me.dream()
    second = by_scene(me)
    assert first[a.scene_id].topic_ids == (a.id,)
    assert second[a.scene_id].topic_ids == tuple(sorted((a.id, a2.id)))  # control: re-synced
    assert second[b.scene_id].topic_ids == (b.id,)
    for scene in (a.scene_id, b.scene_id):
        assert second[scene].id == first[scene].id
        assert second[scene].created_at == first[scene].created_at
        assert second[scene].updated_at >= first[scene].updated_at
        assert 0.99 < second[scene].importance <= first[scene].importance


def test_the_layer_survives_close_and_reopen(meh_path: str) -> None:
    db = open_new(meh_path)
    me = db.primary()
    say(me, 0, SHARED, new_scene=True)
    say(me, 1, SHARED, new_scene=True)
    say(me, 2, DISJOINT, new_scene=True)
    sub = db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="l1-reopen"))
    say(sub, 3, SHARED, new_scene=True)
    me.dream()
    sub.dream()
    before = (snapshot(me), snapshot(sub))
    sub_id = sub.agent_id
    assert len(before[0]) == 3
    assert len(before[1]) == 1
    assert any(n["edge_ids"] for n in before[0])
    db.close()
    again = memhop.open(meh_path, memhop.LocalModel())
    try:
        after = (
            snapshot(again.primary()),
            snapshot(again.agent(memhop.LocalModel(), sub_id)),
        )
        assert after == before
    finally:
        again.close()


# ---- K14: swept records stay swept across a reopen ------------------------------------------


def test_k14_swept_records_stay_swept_across_reopen(meh_path: str) -> None:
    # no clock can be injected through the public surface: a 1 ms window and a real 20 ms wait
    db = open_new(  # upstream's sweep: every original past the window
        meh_path, defaults=memhop.Defaults(content_retention_ms=1, sweep_unfolded=True)
    )
    try:
        me = db.primary()
        me.search(new_scene=True)
        first = me.update(input="turn one asks", output="turn one answers", created_at=now_ms())
        me.search()
        step = me.plan_node_add(0, "查一下")
        me.plan_node_update(step, status="done", summary="查到了")
        assert me.plan_state().done_count == 1
        second = me.update(input="turn two asks", output="turn two answers", created_at=now_ms())
        assert len(me.search_l4(topic_id=first.id)) == 2  # control: the lines are stored
        assert len(me.search_l4(topic_id=second.id)) == 2
        time.sleep(0.02)
        report = me.dream()
        assert (report.l4_records_pruned, report.l5_nodes_pruned) == (4, 1)
        assert me.search_l4() == []
        assert {r.topic_id for r in me.scene_context().topics} == {first.id, second.id}
        live = db.stats().record_count
    finally:
        db.close()
    again = memhop.open(meh_path, memhop.LocalModel())
    try:
        assert again.stats().record_count == live
        assert again.primary().search_l4() == []
    finally:
        again.close()
