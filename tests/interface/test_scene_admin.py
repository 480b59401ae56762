"""D: scenes on the admin face: name, anchor, rename, merge (api.md §9.3-§9.5; tests.md D).

Public names only; every id is one the library returned. Each negative read has
its positive control in the same test, and the reads run on a fresh handle and
after a close and reopen (the ``mem`` fixture).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import memhop

from .conftest import TS, Mem, assert_scoped, footprint, open_new, refused, turn

IQ = memhop.InvalidQueryError
NF = memhop.NotFoundError


def requires(*names: str) -> None:
    """Skip until the session grows the named methods (other areas of the port)."""
    missing = [n for n in names if not hasattr(memhop.Session, n)]
    if missing:
        pytest.skip(f"Session has no {', '.join(missing)} yet")


def graph(me: memhop.Session, domain: str) -> str:
    """Import one concept into a graph labelled ``domain``; return the graph id."""
    item = memhop.L3ImportItem(title=f"{domain} root", domain=domain, node_type="concept")
    result = me.import_l3([item], "overwrite")
    assert len(result.graph_ids) == 1
    return result.graph_ids[0]


def scene_ids(me: memhop.Session, l3_id: str = "") -> list[str]:
    return [s.scene_id for s in me.list_scenes(l3_id)]


# ---- D01, D17: name and anchor -------------------------------------------------------------


def test_d01_scene_name_is_set_listed_and_kept(mem: Mem) -> None:
    me = mem.primary()
    opened, _ = turn(me, 0, new_scene=True)
    scene = opened.scene.scene_id
    assert opened.scene.scene_name.startswith("session:")
    title = "重构重试策略"
    assert me.update_scene(scene, name=title).scene_name == title
    db = mem.settle()
    me = db.primary()
    assert [s.scene_name for s in me.list_scenes()] == [title]
    with refused(db, IQ, 1003, "scene name is required"):
        me.update_scene(scene, name="")
    assert me.list_scenes()[0].scene_name == title
    assert me.scene_context(scene).scene_name == title
    assert me.search(scene_id=scene).scene.scene_name == title


def test_d01_update_scene_refuses_bad_ids(mem: Mem) -> None:
    me = mem.primary()
    opened, _ = turn(me, 0, new_scene=True)
    scene = opened.scene.scene_id
    db = mem.settle()
    me = db.primary()
    with refused(db, IQ, 1003):
        me.update_scene("not-an-id", name="x")
    with refused(db, NF, 3001):
        me.update_scene("7777777777777777", name="x")
    with refused(db, NF, 3001):
        me.update_scene(scene, l3_id="7777777777777777")
    with refused(db, NF, 3001):
        me.update_scene(scene, l3_id="0" * 16)
    with refused(db, NF, 3001):
        me.update_scene("0" * 16, name="x")
    with refused(db, IQ, 1003):
        me.update_scene(scene, force=1)  # type: ignore[arg-type]
    assert me.update_scene(scene, name="control").scene_name == "control"


def test_d01_anchor_needs_force_to_move_and_none_to_clear(mem: Mem) -> None:
    requires("import_l3", "delete_l3", "get_l3")
    me = mem.primary()
    scene = me.search(new_scene=True).scene.scene_id
    g1, g2 = graph(me, "memhop"), graph(me, "other")
    assert me.update_scene(scene, l3_id=g1).l3_id == g1
    db = mem.settle()
    me = db.primary()
    assert scene_ids(me, g1) == [scene]
    with refused(db, IQ, 1003, "pass Force to re-anchor"):
        me.update_scene(scene, l3_id=g2)
    assert scene_ids(me, g1) == [scene]
    assert me.update_scene(scene, l3_id=g2, force=True).l3_id == g2
    me.delete_l3(g2)
    with pytest.raises(NF):
        me.get_l3(g2)
    assert me.update_scene(scene, l3_id=g1, force=True).l3_id == g1
    with refused(db, NF, 3001):
        me.update_scene(scene, l3_id=g2, force=True)
    assert scene_ids(me, g1) == [scene]
    cleared = me.update_scene(scene, l3_id="")
    assert cleared.l3_id == ""
    assert_scoped(scene_ids(me, g1), scene_ids(me), "anchor cleared")


def test_d17_search_anchors_the_scene_it_opens(mem: Mem) -> None:
    requires("import_l3")
    me = mem.primary()
    a, b = graph(me, "proj-a"), graph(me, "proj-b")
    scene = me.search(new_scene=True, l3_id=a).scene.scene_id
    db = mem.settle()
    me = db.primary()
    assert [s.l3_id for s in me.list_scenes(a)] == [a]
    with refused(db, IQ, 1003):
        me.update_scene(scene, l3_id=b)
    assert me.update_scene(scene, l3_id=b, force=True).l3_id == b
    assert me.update_scene(scene, l3_id="").l3_id == ""
    assert_scoped(me.list_scenes(b), me.list_scenes(), "cleared anchor")


# ---- no-op patches ---------------------------------------------------------------------------


def test_no_op_scene_and_topic_writes_append_nothing(mem: Mem) -> None:
    me = mem.primary()
    opened, closed = turn(me, 0, new_scene=True)
    scene = opened.scene.scene_id
    me.update_scene(scene, name="kept")
    me.rename_topic(closed.id, "kept too")
    db = mem.settle()
    me = db.primary()
    before = footprint(db)
    assert me.update_scene(scene).scene_name == "kept"
    assert me.update_scene(scene, name="kept").scene_name == "kept"
    assert me.update_scene(scene, l3_id="").l3_id == ""  # already unanchored
    assert me.rename_topic(closed.id, "kept too").name == "kept too"
    assert footprint(db) == before
    me.update_scene(scene, name="changed")  # control: a real change appends
    assert footprint(db)[0] > before[0]


# ---- rename_topic ----------------------------------------------------------------------------


def test_rename_topic_changes_only_the_name(mem: Mem) -> None:
    me = mem.primary()
    opened, closed = turn(me, 0, new_scene=True)
    scene = opened.scene.scene_id
    renamed = me.rename_topic(closed.id, "重试那一轮")
    assert renamed.name == "重试那一轮"
    assert (renamed.depth, renamed.parent_id) == (closed.depth, closed.parent_id)
    assert renamed.fused_keywords == closed.fused_keywords
    db = mem.settle()
    me = db.primary()
    [row] = me.scene_context(scene).topics
    assert (row.topic_id, row.name, row.keywords) == (
        closed.id,
        "重试那一轮",
        closed.fused_keywords,
    )
    [surface] = me.search(scene_id=scene).topics
    assert surface.name == "重试那一轮"


def test_rename_topic_refusals_have_a_control(mem: Mem) -> None:
    me = mem.primary()
    opened, closed = turn(me, 0, new_scene=True)
    db = mem.settle()
    me = db.primary()
    with refused(db, IQ, 1003, "topic id 0000000000000000 is reserved"):
        me.rename_topic("0" * 16, "x")
    with refused(db, IQ, 1003):
        me.rename_topic("xyz", "x")
    with refused(db, IQ, 1003):
        me.rename_topic(closed.id, "")
    with refused(db, NF, 3001):
        me.rename_topic("7777777777777777", "x")
    still_open = me.search().new_topic_id
    with refused(db, NF, 3001):  # the open turn has no topic row until it closes
        me.rename_topic(still_open, "x")
    assert me.rename_topic(closed.id, "control").name == "control"
    assert opened.scene.scene_id == me.list_scenes()[0].scene_id


def test_rename_topic_is_scoped_to_the_domain(mem: Mem) -> None:
    me, alpha = mem.primary(), mem.sub("alpha")
    _, mine = turn(me, 0)
    _, theirs = turn(alpha, 0)
    alpha_id = alpha.agent_id
    db = mem.settle()
    me, alpha = db.primary(), mem.session(alpha_id)
    with refused(db, NF, 3001):
        me.rename_topic(theirs.id, "stolen")
    assert alpha.rename_topic(theirs.id, "theirs").name == "theirs"
    assert me.rename_topic(mine.id, "mine").name == "mine"


# ---- D03, D15: merge -------------------------------------------------------------------------


def test_d03_merge_scenes_moves_the_turns_and_drops_the_secondary(mem: Mem) -> None:
    me = mem.primary()
    first, kept = turn(me, 0, new_scene=True)
    second, moved = turn(me, 1, new_scene=True)
    primary, secondary = first.scene.scene_id, second.scene.scene_id
    me.merge_scenes(primary, [secondary])
    with refused(mem.db, IQ, 1003, "no turn is open"):  # the open turn was on the secondary
        me.update(input="late", created_at=TS + 9)
    db = mem.settle()
    me = db.primary()
    assert scene_ids(me) == [primary]
    with refused(db, NF, 3001):
        me.search(scene_id=secondary)
    with refused(db, NF, 3001):
        me.scene_context(secondary)
    surface = me.search(scene_id=primary).topics
    assert sorted(t.id for t in surface) == sorted([kept.id, moved.id])
    assert all(t.scene_id == primary for t in surface)
    rows = me.scene_context(primary).topics
    assert len(rows) == 2
    assert all(len(r.messages) == 2 for r in rows)
    third, _ = turn(me, 2, new_scene=True)
    me.delete_scene(third.scene.scene_id)
    with refused(db, NF, 3001):
        me.merge_scenes(primary, [third.scene.scene_id])
    assert scene_ids(me) == [primary]
    assert len(me.scene_context(primary).topics) == 2


def test_d05_merge_keeps_each_turns_keyword_track(mem: Mem) -> None:
    me = mem.primary()
    first, _ = turn(me, 0, input="重试策略怎么配", output="指数退避", new_scene=True)
    second, swallowed = turn(me, 1, input="日志级别", output="调成 debug", new_scene=True)
    me.merge_scenes(first.scene.scene_id, [second.scene.scene_id])
    db = mem.settle()
    me = db.primary()
    with refused(db, NF, 3001):
        me.scene_context(second.scene.scene_id)
    rows = {r.topic_id: r for r in me.scene_context(first.scene.scene_id).topics}
    assert len(rows) == 2
    row = rows[swallowed.id]
    assert row.keywords == swallowed.fused_keywords
    assert (row.user_timestamp, row.agent_timestamp) == (
        swallowed.user_timestamp,
        swallowed.agent_timestamp,
    )
    assert all(r.keywords for r in rows.values())


def test_d15_merge_survives_reopen(mem: Mem) -> None:
    me = mem.primary()
    a, _ = turn(me, 0, input="alpha one", output="reply one", new_scene=True)
    turn(me, 1, input="alpha two", output="reply two")
    b, moved = turn(me, 2, input="beta three", output="reply three", new_scene=True)
    me.merge_scenes(a.scene.scene_id, [b.scene.scene_id])
    db = mem.settle()
    me = db.primary()
    assert scene_ids(me) == [a.scene.scene_id]
    with refused(db, NF, 3001):
        me.scene_context(b.scene.scene_id)
    rows = me.scene_context(a.scene.scene_id).topics
    assert len(rows) == 3
    assert all(r.keywords for r in rows)
    texts = {m.content for r in rows for m in r.messages}
    assert {"alpha one", "alpha two", "beta three"} <= texts
    assert {"reply one", "reply two", "reply three"} <= texts
    assert len(me.search_l4(topic_id=moved.id)) == 2


# ---- D06: anchors on merge -------------------------------------------------------------------


def test_d06_merge_carries_the_project_anchor(mem: Mem) -> None:
    requires("import_l3")
    me = mem.primary()
    g0, g1, g2 = (graph(me, f"proj{i}") for i in range(3))
    survivor = me.search(new_scene=True).scene.scene_id
    anchored0 = me.search(new_scene=True, l3_id=g0).scene.scene_id
    me.merge_scenes(survivor, [anchored0])
    assert scene_ids(me, g0) == [survivor]
    kept = me.search(new_scene=True, l3_id=g1).scene.scene_id
    other = me.search(new_scene=True, l3_id=g2).scene.scene_id
    me.merge_scenes(kept, [other])
    a = me.search(new_scene=True, l3_id=g0).scene.scene_id
    b = me.search(new_scene=True, l3_id=g1).scene.scene_id
    c = me.search(new_scene=True).scene.scene_id
    db = mem.settle()
    me = db.primary()
    assert scene_ids(me, g1) == sorted([kept, b])
    assert_scoped(scene_ids(me, g2), scene_ids(me, g1), "merged-away anchor")
    with refused(db, IQ, 1003):
        me.merge_scenes(c, [a, b])
    assert len(me.list_scenes()) == 5
    assert a in scene_ids(me, g0)
    assert b in scene_ids(me, g1)


# ---- D07: the open round moves with its scene ----------------------------------------------


def test_d07a_a_round_open_on_the_survivor_closes_normally(mem: Mem) -> None:
    me = mem.primary()
    other, _ = turn(me, 0, new_scene=True)
    opened = me.search(new_scene=True)
    me.append_archive(
        content="tool ran", created_at=TS + 1, kind=memhop.ArchiveKind.EVENT, event_type="tool"
    )
    me.merge_scenes(opened.scene.scene_id, [other.scene.scene_id])
    closed = me.update(input="q", output="a", created_at=TS + 2)
    assert closed.id == opened.new_topic_id
    assert closed.scene_id == opened.scene.scene_id
    db = mem.settle()
    me = db.primary()
    events = me.search_l4(topic_id=opened.new_topic_id, kind=memhop.ArchiveKind.EVENT)
    assert [e.content for e in events] == ["tool ran"]


def test_d07b_a_round_open_on_a_swallowed_scene_is_dropped(mem: Mem) -> None:
    me = mem.primary()
    survivor, _ = turn(me, 0, new_scene=True)
    abandoned = me.search(new_scene=True)
    me.append_archive(
        content="half done", created_at=TS + 1, kind=memhop.ArchiveKind.EVENT, event_type="tool"
    )
    me.merge_scenes(survivor.scene.scene_id, [abandoned.scene.scene_id])
    with refused(mem.db, IQ, 1003, "no turn is open"):
        me.update(input="q", output="a", created_at=TS + 2)
    assert me.search().scene.scene_id == survivor.scene.scene_id
    db = mem.settle()
    me = db.primary()
    assert len(me.search_l4(topic_id=abandoned.new_topic_id)) == 1


# ---- D08 and the other merge refusals --------------------------------------------------------


def test_d08_merge_refuses_a_duplicated_secondary(mem: Mem) -> None:
    me = mem.primary()
    p, s, third = (turn(me, i, new_scene=True)[0].scene.scene_id for i in range(3))
    db = mem.settle()
    me = db.primary()
    with refused(db, IQ, 1003, "listed twice"):
        me.merge_scenes(p, [s, s])
    assert len(me.list_scenes()) == 3
    me.merge_scenes(p, [s, third])
    assert scene_ids(me) == [p]


def test_merge_refusals_write_nothing(mem: Mem) -> None:
    me = mem.primary()
    p, s = (turn(me, i, new_scene=True)[0].scene.scene_id for i in range(2))
    alpha = mem.sub("alpha")
    foreign = turn(alpha, 0)[0].scene.scene_id
    db = mem.settle()
    me = db.primary()
    bad: list[tuple[type[memhop.MemHopError], int, str, Any, Any]] = [
        (IQ, 1003, "", p, []),
        (IQ, 1003, "primary", p, [p]),
        (IQ, 1003, "primary", p, [s, p]),
        (IQ, 1003, "", "nope", [s]),
        (IQ, 1003, "", p, ["nope"]),
        (IQ, 1003, "", p, s),  # a bare string is not a list
        (NF, 3001, "", p, ["7777777777777777"]),
        (NF, 3001, "", "7777777777777777", [s]),
        (NF, 3001, "", p, [foreign]),
        (NF, 3001, "", p, ["0" * 16]),
        (NF, 3001, "", "0" * 16, [s]),
    ]
    for cls, code, fragment, primary, secondaries in bad:
        with refused(db, cls, code, fragment):
            me.merge_scenes(primary, secondaries)
    assert sorted(scene_ids(me)) == sorted([p, s])
    me.merge_scenes(p, [s])
    assert scene_ids(me) == [p]


# ---- D12, D14: host fields survive the library's own rewrites (Dream) ------------------------


def _dream_db(path: str) -> memhop.DB:
    knobs = memhop.Defaults(scene_dream_topic_threshold=-1, dream_compress_min_topics=2)
    return open_new(path, defaults=knobs)


def test_d14_renaming_a_folded_turn_keeps_it_folded(tmp_path: Path) -> None:
    requires("dream")
    path = str(tmp_path / "fold.meh")
    db = _dream_db(path)
    me = db.primary()
    scene = ""
    for i in range(4):
        opened, _ = turn(me, i, input="重构 代码 测试", output="重构 代码 测试")
        scene = opened.scene.scene_id
    me.dream(scene)
    rows = me.scene_context(scene).topics
    sunk = [r for r in rows if r.depth == 2]
    parents = {r.topic_id: r.child_count for r in rows if r.child_count > 0}
    assert sunk
    assert parents
    target = sunk[0]
    renamed = me.rename_topic(target.topic_id, "被改名的那一轮")
    assert renamed.depth == 2
    assert len(renamed.fused_keywords) == len(target.keywords)
    db.close()
    db = memhop.open(path, memhop.LocalModel())
    try:
        rows = db.primary().scene_context(scene).topics
        [row] = [r for r in rows if r.topic_id == target.topic_id]
        assert (row.depth, row.name) == (2, "被改名的那一轮")
        assert {r.topic_id: r.child_count for r in rows if r.child_count > 0} == parents
    finally:
        db.close()
