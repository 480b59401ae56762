"""L2Meta, the per-domain topic cache (api.md §5.1 step 5, §9.2; dream.md §4.7 index_rebuild)."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from memhop.engine import create_engine, open_engine
from memhop.ids import fused_topic_id, turn_topic_id
from memhop.index.l2meta import L2Meta, ListingRow
from memhop.layers.topic import (
    MAX_DEPTH,
    all_topics_strict,
    closure,
    delete_topics,
    rename_topic,
    retarget_topics,
    sink_members,
    write_fused_parent,
)
from memhop.records import TopicSlot
from tests.writes import write_turn_topic

AGENT = 0
SCENE = 0x5C_E4E0_0000_0001
SCENE_B = 0x5C_E4E0_0000_0002


def _slot(
    tid: int, ts: int, depth: int = 1, parent: int | None = None, scene: int = SCENE
) -> TopicSlot:
    return TopicSlot(id=tid, scene_id=scene, parent_id=parent, depth=depth, user_timestamp=ts)


def _all_cached(meta: L2Meta) -> list[TopicSlot]:
    return [t for scene in meta.scenes() for t in meta.topics_of_scene(scene)]


def test_rebuilt_mirror_equals_the_incrementally_maintained_one(meh_path: str) -> None:
    engine = create_engine(meh_path)
    meta = L2Meta()
    turns: list[TopicSlot] = []
    for scene in (SCENE, SCENE_B):
        for seq in range(1, 5):
            tid = turn_topic_id(scene, seq)
            topic = write_turn_topic(engine, AGENT, scene, tid, [f"k{seq}"], 100 * seq, 100 * seq)
            meta.put(topic)
            turns.append(topic)
    a_turns = [t for t in turns if t.scene_id == SCENE]
    members = [t.id for t in a_turns[:2]]
    parent = fused_topic_id(SCENE, 100, 200, members)
    meta.put(write_fused_parent(engine, AGENT, SCENE, parent, ["fused"], 100, 200))
    for topic in sink_members(engine, AGENT, parent, members):
        assert topic.depth < MAX_DEPTH
        meta.put(topic)
    meta.put(rename_topic(engine, AGENT, a_turns[0].id, "host name")[0])
    # A replayed turn keeps its folded position; the mirror takes the stored record.
    meta.put(write_turn_topic(engine, AGENT, SCENE, a_turns[1].id, ["replayed"], 150, 250))
    doomed = closure(all_topics_strict(engine, AGENT), a_turns[3].id)
    delete_topics(engine, AGENT, doomed)
    meta.remove(doomed)
    b_topics = [t for t in all_topics_strict(engine, AGENT) if t.scene_id == SCENE_B]
    retarget_topics(engine, AGENT, b_topics, SCENE)
    assert meta.retarget(SCENE_B, SCENE) == len(b_topics)
    engine.close()

    reopened = open_engine(meh_path)
    try:
        rebuilt = L2Meta.from_topics(all_topics_strict(reopened, AGENT))
    finally:
        reopened.close()
    assert rebuilt == meta
    assert rebuilt.surface(SCENE) == meta.surface(SCENE)
    assert rebuilt.listing(SCENE) == meta.listing(SCENE)
    assert meta.scenes() == [SCENE]
    assert len(meta) == 8 - 1 + 1  # eight turns, one deleted, one fused parent
    # Negative control: a mirror that missed one write is not equal.
    stale = L2Meta.from_topics(t for t in _all_cached(meta) if t.id != a_turns[0].id)
    assert stale != meta


def test_surface_is_depth_one_in_turn_order_and_per_scene() -> None:
    meta = L2Meta.from_topics(
        [
            _slot(0x30, 300),
            _slot(0x10, 100),
            _slot(0x22, 200),
            _slot(0x21, 200),  # same timestamp: the smaller id first
            _slot(0x05, 50, depth=2, parent=0x10),
            _slot(0x40, 10, scene=SCENE_B),
        ]
    )
    assert [t.id for t in meta.surface(SCENE)] == [0x10, 0x21, 0x22, 0x30]
    assert meta.surface_count(SCENE) == 4
    assert [t.id for t in meta.surface(SCENE_B)] == [0x40]
    assert meta.surface(0x999) == []
    assert meta.surface_count(0x999) == 0


def test_listing_orders_shallower_first_and_counts_listed_children() -> None:
    meta = L2Meta.from_topics(
        [
            _slot(0x01, 100),  # fused parent of 0x02 and 0x03
            _slot(0x02, 100, depth=2, parent=0x01),  # same timestamp, deeper: after its parent
            _slot(0x03, 150, depth=2, parent=0x01),
            _slot(0x04, 120, depth=3, parent=0x02),  # too deep to list or to count
            _slot(0x05, 90),
            _slot(0x06, 95, depth=2, parent=0x77),  # parent not in this scene's listing
        ]
    )
    rows = meta.listing(SCENE)
    assert [(r.topic.id, r.child_count) for r in rows] == [
        (0x05, 0),
        (0x06, 0),
        (0x01, 2),
        (0x02, 0),
        (0x03, 0),
    ]
    assert all(isinstance(r, ListingRow) for r in rows)
    # The surface agrees with the listing's depth-1 rows, row for row.
    assert [r.topic for r in rows if r.topic.depth == 1] == meta.surface(SCENE)


def test_put_remove_retarget_keep_the_scene_index_consistent() -> None:
    meta = L2Meta()
    meta.put(_slot(0x1, 10))
    meta.put(_slot(0x2, 20))
    assert meta.scene_of(0x1) == SCENE
    assert meta.get(0x2) == _slot(0x2, 20)
    assert 0x2 in meta

    meta.put(_slot(0x2, 20, scene=SCENE_B))  # moved between scenes
    assert [t.id for t in meta.topics_of_scene(SCENE)] == [0x1]
    assert [t.id for t in meta.topics_of_scene(SCENE_B)] == [0x2]

    assert meta.remove([0x1, 0x99]) == 1
    assert meta.get(0x1) is None
    assert meta.scene_of(0x1) is None
    assert meta.scenes() == [SCENE_B]  # an emptied scene leaves no entry behind

    assert meta.retarget(SCENE_B, SCENE) == 1
    assert meta.retarget(SCENE_B, SCENE) == 0
    assert meta.retarget(SCENE, SCENE) == 0
    assert meta.get(0x2) == _slot(0x2, 20)
    assert meta.topics_of_scene(SCENE_B) == []
    assert meta == L2Meta.from_topics([_slot(0x2, 20)])
    assert meta != "not a mirror"
    assert "1 topics" in repr(meta)


def test_answers_are_copies() -> None:
    meta = L2Meta.from_topics([_slot(0x1, 10)])
    meta.surface(SCENE).clear()
    meta.topics_of_scene(SCENE).clear()
    assert [t.id for t in meta.surface(SCENE)] == [0x1]


def test_put_returns_the_row_it_holds() -> None:
    meta = L2Meta()
    first = TopicSlot(id=0x1, scene_id=SCENE, depth=1, fused_keywords=("mel", "trip"))
    meta.put(first)
    # An equal keyword that is another str object: the cache holds its pooled copy.
    again = "".join(["me", "l"])
    second = TopicSlot(id=0x2, scene_id=SCENE, depth=1, fused_keywords=(again,))
    held = meta.put(second)
    assert held == second
    assert held is meta.get(0x2)
    assert held.fused_keywords[0] is first.fused_keywords[0]
    assert second.fused_keywords[0] is not first.fused_keywords[0]


_topics = st.lists(
    st.builds(
        lambda tid, ts, depth, parent, scene: dataclasses.replace(
            _slot(tid, ts, depth=depth, scene=scene), parent_id=parent
        ),
        tid=st.integers(1, 40),
        ts=st.integers(0, 5),
        depth=st.integers(1, 4),
        parent=st.none() | st.integers(1, 40),
        scene=st.sampled_from([SCENE, SCENE_B]),
    ),
    max_size=40,
)


@given(_topics)
def test_listing_property(topics: list[TopicSlot]) -> None:
    meta = L2Meta.from_topics(topics)
    latest = {t.id: t for t in topics}  # a later duplicate id wins, as in from_topics
    for scene in (SCENE, SCENE_B):
        rows = meta.listing(scene)
        listed = [r.topic for r in rows]
        expected = {i for i, t in latest.items() if t.scene_id == scene and t.depth <= 2}
        assert sorted(t.id for t in listed) == sorted(expected)  # each exactly once
        keys = [(t.user_timestamp, t.depth, t.id) for t in listed]
        assert keys == sorted(keys)
        for row in rows:
            children = [t for t in listed if t.parent_id == row.topic.id]
            assert row.child_count == len(children)
        surface = meta.surface(scene)
        assert surface == [t for t in listed if t.depth == 1]
