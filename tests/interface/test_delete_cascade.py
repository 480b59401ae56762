"""D, L: delete_topic and delete_scene take their whole closure (api.md §9.6, §9.7).

Also the storage side of deleting (tests.md L13-L15): tombstones are appended, the
live count falls and stays fallen across a reopen, and a compacted copy no longer
holds the deleted text. Public names only; every id is one the library returned.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import memhop

from .conftest import TS, Mem, assert_scoped, footprint, open_new, refused, turn

IQ = memhop.InvalidQueryError
NF = memhop.NotFoundError
EVENT = memhop.ArchiveKind.EVENT


def requires(*names: str) -> None:
    """Skip until the session grows the named methods (other areas of the port)."""
    missing = [n for n in names if not hasattr(memhop.Session, n)]
    if missing:
        pytest.skip(f"Session has no {', '.join(missing)} yet")


def event(me: memhop.Session, content: str, stamp: int, node_seq: int = 0) -> int:
    return me.append_archive(
        content=content, created_at=stamp, kind=EVENT, event_type="tool_call", node_seq=node_seq
    )


def ids_of(rows: Any) -> list[str]:
    return [r.id for r in rows]


# ---- D04: delete a topic, then a scene -----------------------------------------------------


def test_d04_delete_topic_and_scene(mem: Mem) -> None:
    me = mem.primary()
    keep_a, a = turn(me, 0, new_scene=True)
    _, b = turn(me, 1)
    drop, c = turn(me, 2, new_scene=True)
    keep, gone = keep_a.scene.scene_id, drop.scene.scene_id
    db = mem.settle()
    me = db.primary()
    b_lines = ids_of(me.search_l4(topic_id=b.id))
    c_lines = ids_of(me.search_l4(topic_id=c.id))
    assert (len(b_lines), len(c_lines)) == (2, 2)
    me.delete_topic(b.id)
    db = mem.settle()
    me = db.primary()
    assert_scoped(me.search_l4(ids=b_lines), me.search_l4(ids=c_lines), "deleted topic's lines")
    assert ids_of(me.search(scene_id=keep).topics) == [a.id]
    with refused(db, NF, 3001):
        me.delete_topic(b.id)
    scenes = len(me.list_scenes())
    me.delete_scene(gone)
    db = mem.settle()
    me = db.primary()
    assert len(me.list_scenes()) == scenes - 1
    with refused(db, NF, 3001):
        me.search(scene_id=gone)
    assert_scoped(me.search_l4(ids=c_lines), me.search_l4(topic_id=a.id), "deleted scene's lines")
    with refused(db, NF, 3001):
        me.delete_scene(gone)
    assert me.search(scene_id=keep).scene.scene_id == keep


def test_delete_refusals_have_a_control(mem: Mem) -> None:
    me, alpha = mem.primary(), mem.sub("alpha")
    opened, closed = turn(me, 0, new_scene=True)
    theirs, their_topic = turn(alpha, 0)
    db = mem.settle()
    me = db.primary()
    still_open = me.search(scene_id=opened.scene.scene_id).new_topic_id
    with refused(db, IQ, 1003, "topic id 0000000000000000 is reserved"):
        me.delete_topic("0" * 16)
    for bad in ("", "abc", "g" * 16, 7):
        with refused(db, IQ, 1003):
            me.delete_topic(bad)  # type: ignore[arg-type]
        with refused(db, IQ, 1003):
            me.delete_scene(bad)  # type: ignore[arg-type]
    with refused(db, NF, 3001):
        me.delete_topic("7777777777777777")
    with refused(db, NF, 3001):  # minted but never closed: no topic row yet
        me.delete_topic(still_open)
    with refused(db, NF, 3001):
        me.delete_topic(their_topic.id)
    with refused(db, NF, 3001):
        me.delete_scene(theirs.scene.scene_id)
    with refused(db, NF, 3001):
        me.delete_scene("7777777777777777")
    with refused(db, NF, 3001):  # well formed, and never a scene
        me.delete_scene("0" * 16)
    me.delete_topic(closed.id)  # control
    assert me.search_l4(topic_id=closed.id) == []
    assert len(mem.session(alpha.agent_id).search_l4(topic_id=their_topic.id)) == 2


# ---- the open turn and the current scene -----------------------------------------------------


def test_delete_topic_forgets_the_open_turn_only_when_it_goes(db: memhop.DB) -> None:
    me = db.primary()
    _, first = turn(me, 0, new_scene=True)
    opened = me.search()
    me.update(input="second", output="closed but still open", created_at=TS + 1)
    me.delete_topic(first.id)  # not the open turn: it closes again (a replay)
    again = me.update(input="second", output="replayed", created_at=TS + 2)
    assert again.id == opened.new_topic_id
    me.delete_topic(again.id)
    with refused(db, IQ, 1003, "no turn is open"):
        me.update(input="late", created_at=TS + 3)
    with refused(db, IQ, 1003, "no turn is open"):
        event(me, "late", TS + 3)
    assert me.search().scene.scene_id == opened.scene.scene_id
    assert me.search_l4(topic_id=again.id) == []


def test_d09_a_deleted_scene_closes_the_writes_on_it(mem: Mem) -> None:
    requires("plan_node_add", "plan_state")
    me = mem.primary()
    live, _ = turn(me, 0, new_scene=True)
    doomed = me.search(new_scene=True)
    event(me, "doing it", TS + 1)
    me.plan_node_add(0, "step one")
    db = mem.db
    me.delete_scene(doomed.scene.scene_id)
    with refused(db, IQ, 1003):
        me.update(input="q", output="a", created_at=TS + 2)
    with refused(db, IQ, 1003):
        event(me, "late", TS + 2)
    with refused(db, IQ, 1003):
        me.plan_node_add(0, "late step")
    with pytest.raises(IQ):
        me.plan_state()
    reopened = me.search()
    assert reopened.scene.scene_id == live.scene.scene_id != doomed.scene.scene_id
    assert me.plan_state().total_count == 0
    me.plan_node_add(0, "control")
    assert me.plan_state().total_count == 1
    db = mem.settle()
    me = db.primary()
    assert_scoped(
        me.search_l4(topic_id=doomed.new_topic_id), me.search_l4(keyword="question"), "abandoned"
    )


# ---- D10, D11: plans and folded subtrees go with the topic -----------------------------------


def test_d10_delete_topic_takes_the_plan_tree_too(mem: Mem) -> None:
    requires("plan_node_add", "plan_state")
    me = mem.primary()
    opened = me.search(new_scene=True)
    root = me.plan_node_add(0, "root")
    leaf = me.plan_node_add(root, "leaf")
    event(me, "root work", TS + 1, node_seq=root)
    event(me, "leaf work", TS + 2, node_seq=leaf)
    closed = me.update(input="plan it", output="planned", created_at=TS + 3)
    assert len(me.search_l4(topic_id=closed.id, node_seq=root)) == 2
    assert me.plan_state().total_count == 2
    db = mem.settle()
    me = db.primary()
    records = db.stats().record_count
    me.delete_topic(opened.new_topic_id)
    assert db.stats().record_count <= records - 6
    db = mem.settle()
    me = db.primary()
    assert me.search_l4(topic_id=closed.id) == []
    assert db.stats().record_count <= records - 6


def _folding_db(path: str) -> memhop.DB:
    knobs = memhop.Defaults(scene_dream_topic_threshold=-1, dream_compress_min_topics=2)
    return open_new(path, defaults=knobs)


def test_d11_delete_topic_takes_a_fused_groups_subtree(tmp_path: Path) -> None:
    requires("dream")
    db = _folding_db(str(tmp_path / "fold.meh"))
    try:
        me = db.primary()
        scene = ""
        for i in range(4):
            opened = me.search()
            scene = opened.scene.scene_id
            me.update(input="重构 代码 测试", output="重构 代码 测试", created_at=TS + 1000 * i)
        me.dream(scene)
        rows = me.scene_context().topics
        groups = [r for r in rows if r.child_count > 0 and r.depth == 1]
        assert groups
        assert any(r.depth > 1 for r in rows)
        records = db.stats().record_count
        for group in groups:
            me.delete_topic(group.topic_id)
        after = me.scene_context().topics
        assert not [r for r in after if r.child_count > 0]
        assert not [r for r in after if r.depth > 1]
        assert db.stats().record_count < records
    finally:
        db.close()


# ---- a deleted scene leaves only the profile --------------------------------------------------


def test_delete_scene_takes_every_turn_it_opened(mem: Mem) -> None:
    me = mem.primary()
    opened, _ = turn(me, 0, new_scene=True)
    turn(me, 1)
    abandoned = me.search()  # opened, fed, never closed
    event(me, "abandoned work", TS + 5)
    me.search()  # and the open turn on it, also fed
    event(me, "open work", TS + 6)
    db = mem.settle()
    me = db.primary()
    assert len(me.search_l4(topic_id=abandoned.new_topic_id)) == 1
    me.delete_scene(opened.scene.scene_id)
    db = mem.settle()
    me = db.primary()
    assert me.list_scenes() == []
    assert me.search_l4() == []
    assert db.stats().record_count == 1  # the profile
    assert me.get_l0().name == "test-primary"


# ---- L15: stats reconcile after deletes -------------------------------------------------------


def _three_scenes(me: memhop.Session) -> tuple[list[str], list[str]]:
    scenes, topics = [], []
    for i in range(3):
        opened, closed = turn(me, i, new_scene=True)
        scenes.append(opened.scene.scene_id)
        topics.append(closed.id)
    return scenes, topics


@pytest.mark.parametrize("change", ["nothing", "delete_topic", "delete_scene", "merge_scenes"])
def test_l15_deleted_records_stay_deleted_across_reopen(meh_path: str, change: str) -> None:
    db = open_new(meh_path)
    me = db.primary()
    scenes, topics = _three_scenes(me)
    bytes_before, records_before = footprint(db)
    if change == "delete_topic":
        me.delete_topic(topics[0])
    elif change == "delete_scene":
        me.delete_scene(scenes[1])
    elif change == "merge_scenes":
        me.merge_scenes(scenes[0], [scenes[2]])
    file_bytes, records = footprint(db)
    if change == "nothing":
        assert (file_bytes, records) == (bytes_before, records_before)
    else:
        assert records < records_before
        assert file_bytes > bytes_before  # tombstones are appended
    live = [(s.scene_id, s.scene_name) for s in me.list_scenes()]
    lines = ids_of(me.search_l4())
    db.close()
    db = memhop.open(meh_path, memhop.LocalModel())
    try:
        me = db.primary()
        assert db.stats().record_count == records
        assert [(s.scene_id, s.scene_name) for s in me.list_scenes()] == live
        assert ids_of(me.search_l4()) == lines
    finally:
        db.close()


# ---- L13, L14: compaction drops what was deleted ---------------------------------------------


def test_compaction_drops_the_deleted_text(tmp_path: Path) -> None:
    path, copy = str(tmp_path / "live.meh"), str(tmp_path / "copy.meh")
    db = open_new(path)
    try:
        me = db.primary()
        _, doomed = turn(me, 0, input="SENTINEL-DEAD-4711", output="gone", new_scene=True)
        kept_scene, kept = turn(me, 1, input="SENTINEL-LIVE-4711", output="kept", new_scene=True)
        me.delete_topic(doomed.id)
        raw = Path(path).read_bytes()
        assert b"SENTINEL-DEAD-4711" in raw  # a tombstone hides, it does not erase
        assert b"SENTINEL-LIVE-4711" in raw
        db.compact_to(copy)
        compacted = Path(copy).read_bytes()
        assert b"SENTINEL-DEAD-4711" not in compacted
        assert b"SENTINEL-LIVE-4711" in compacted
    finally:
        db.close()
    with memhop.open(copy, memhop.LocalModel()) as twin:
        rows = twin.primary().scene_context(kept_scene.scene.scene_id).topics
        assert ids_of(twin.primary().search_l4(topic_id=doomed.id)) == []
        assert [r.topic_id for r in rows] == [kept.id]


def test_l13_compact_to_after_delete_scene(tmp_path: Path) -> None:
    requires("import_l3", "list_l3", "query_l3_nodes")
    path, copy = str(tmp_path / "live.meh"), str(tmp_path / "copy.meh")
    db = open_new(path)
    try:
        me = db.primary()
        opened, _ = turn(me, 0, new_scene=True)
        item = memhop.L3ImportItem(title="retry", domain="memhop", node_type="concept")
        [graph] = me.import_l3([item], "skip").graph_ids
        me.delete_scene(opened.scene.scene_id)
        with pytest.raises(memhop.MemHopError):
            db.compact_to(path)
        db.compact_to(copy)
        with pytest.raises(memhop.MemHopError):
            db.compact_to(copy)
        assert me.list_scenes() == []
        assert [g.id for g in me.list_l3()] == [graph]
    finally:
        db.close()
    with memhop.open(copy, memhop.LocalModel()) as twin:
        me = twin.primary()
        assert me.list_scenes() == []
        assert [g.id for g in me.list_l3()] == [graph]
        assert len(me.query_l3_nodes(graph)) == 1
        with pytest.raises(NF):
            me.search(scene_id=opened.scene.scene_id)


def _snapshot(me: memhop.Session) -> Any:
    scenes = me.list_scenes()
    return (
        [s.to_dict() for s in scenes],
        [me.scene_context(s.scene_id).to_dict() for s in scenes],
        [r.to_dict() for r in me.search_l4()],
        me.get_l0().to_dict(),
    )


def test_l14_a_compacted_copy_answers_identically(tmp_path: Path) -> None:
    path, copy = str(tmp_path / "live.meh"), str(tmp_path / "copy.meh")
    db = open_new(path)
    try:
        me = db.primary()
        worker = db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="worker"))
        scenes, topics = _three_scenes(me)
        turn(worker, 0, input="worker q", output="worker a", outcome="answered")
        me.delete_scene(scenes[1])
        me.delete_topic(topics[2])
        live = footprint(db)
        before = (_snapshot(me), _snapshot(worker))
        db.compact_to(copy)
    finally:
        db.close()
    with memhop.open(copy, memhop.LocalModel()) as twin:
        file_bytes, records = footprint(twin)
        assert records == live[1]
        assert file_bytes < live[0]
        worker = twin.agent(memhop.LocalModel(), worker.agent_id)
        assert (_snapshot(twin.primary()), _snapshot(worker)) == before
