"""Packed scenes in the topic cache: ``topic_pack`` and L2Meta's hot/packed split.

The cache answers the same whichever scenes are packed: every operation sequence
is run on a cache that keeps one scene as records (everything else packed) and on
one that keeps them all, against a plain dict of the rows.
"""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop.index.l2meta import L2Meta
from memhop.index.topic_pack import PackedTopics, pack
from memhop.records import TopicSlot

SCENES = [0x5C_0001, 0x5C_0002, 0x5C_0003]

_topic = st.builds(
    TopicSlot,
    id=st.integers(1, 30),
    scene_id=st.sampled_from(SCENES),
    parent_id=st.none() | st.integers(0, 30),
    depth=st.integers(0, 4),
    name=st.sampled_from(["", "", "trip", "Ünïcode"]),
    fused_keywords=st.lists(st.sampled_from(["mel", "trip", "paint", "x"]), max_size=3).map(tuple),
    user_timestamp=st.integers(-(2**63), 2**63 - 1),
    agent_timestamp=st.integers(-5, 5),
)


def test_pack_round_trips_rows_and_tells_none_from_a_present_zero() -> None:
    rows = [
        TopicSlot(id=2**64 - 1, scene_id=7, parent_id=0, depth=255, user_timestamp=-(2**63)),
        TopicSlot(id=5, scene_id=7, parent_id=None, depth=1, fused_keywords=("a", "b")),
        TopicSlot(id=9, scene_id=7, parent_id=5, depth=2, name="fused", agent_timestamp=2**63 - 1),
    ]
    packed = pack(7, rows)
    assert packed.rows() == sorted(rows, key=lambda t: t.id)
    assert packed.row(2**64 - 1) == rows[0]
    assert packed.row(2**64 - 1).parent_id == 0
    assert packed.row(5) == rows[1]
    assert packed.row(5).parent_id is None
    assert packed.row(6) is None  # between two packed ids: absent, not a neighbour
    assert all(packed.holds(t) for t in rows)
    assert not packed.holds(dataclasses.replace(rows[2], name="other"))
    assert not packed.holds(dataclasses.replace(rows[1], parent_id=0))
    assert not packed.holds(dataclasses.replace(rows[1], scene_id=8))
    assert packed.loose is None
    assert len(packed) == 3


def test_rows_past_the_fixed_widths_are_kept_whole() -> None:
    wide = TopicSlot(id=3, scene_id=7, depth=1, user_timestamp=2**64)  # not an i64
    plain = TopicSlot(id=4, scene_id=7, depth=1, user_timestamp=10)
    packed = pack(7, [plain, wide])
    assert packed.rows() == [wide, plain]  # still ascending by id
    assert packed.row(3) is wide
    assert packed.holds(wide)
    assert packed.row(4) == plain
    assert len(packed) == 2


def test_pack_refuses_a_row_of_another_scene() -> None:
    with pytest.raises(ValueError, match="of scene 8, not 7"):
        pack(7, [TopicSlot(id=1, scene_id=8)])
    assert len(pack(7, [TopicSlot(id=1, scene_id=7)])) == 1  # its own scene packs


def test_a_packed_scene_is_no_object_the_collector_walks() -> None:
    rows = [
        TopicSlot(id=5, scene_id=7, depth=1, fused_keywords=("mel", "trip")),
        TopicSlot(id=6, scene_id=7, parent_id=5, depth=2, name="fused"),
    ]
    state = pack(7, rows).state
    # A tuple leaves the collector's view once its items have: its keywords' tuple at the
    # first collection, the state at the next (as young collections do in a long run).
    gc.collect()
    gc.collect()
    assert not gc.is_tracked(state)
    assert PackedTopics(state).rows() == rows  # the state alone holds the rows
    # Control: a row kept whole is an object, so its scene's state stays in view.
    wide = pack(7, [*rows, TopicSlot(id=9, scene_id=7, user_timestamp=2**64)]).state
    gc.collect()
    gc.collect()
    assert gc.is_tracked(wide)


def test_hot_scenes_must_be_positive() -> None:
    with pytest.raises(ValueError, match="hot_scenes must be at least 1"):
        L2Meta(hot_scenes=0)
    assert len(L2Meta(hot_scenes=1)) == 0


_COUNTED = (0x7E57_0001, 0x7E57_0002, 0x7E57_0003)


def _counted_topics() -> Iterator[TopicSlot]:
    for i in range(3_000):
        yield TopicSlot(id=i, scene_id=_COUNTED[i % 3], depth=1, fused_keywords=("mel",))


def _records_held() -> int:
    gc.collect()
    return sum(type(o) is TopicSlot and o.scene_id in _COUNTED for o in gc.get_objects())


def test_a_packed_domain_keeps_no_record_a_row() -> None:
    packed = L2Meta.from_topics(_counted_topics())
    assert _records_held() == 0
    assert len(packed) == 3_000
    assert packed.get(4) == TopicSlot(id=4, scene_id=_COUNTED[1], depth=1, fused_keywords=("mel",))
    for scene in _COUNTED:  # a read builds its answer and leaves the scene packed
        assert len(packed.surface(scene)) == 1_000
    assert _records_held() == 0
    # Writing to the scenes makes their rows records again while the cache keeps them
    # (so the counts above are no blind probe): all three here, then the last one.
    held = L2Meta.from_topics(_counted_topics(), hot_scenes=3)
    for scene in _COUNTED:
        held.put(held.topics_of_scene(scene)[0])
    assert _records_held() == 3_000
    del held
    one = L2Meta.from_topics(_counted_topics(), hot_scenes=1)
    for scene in _COUNTED:
        one.put(one.topics_of_scene(scene)[0])
    assert _records_held() == 1_000
    assert one == packed


def _reference(ops: list[tuple[str, TopicSlot]]) -> dict[int, TopicSlot]:
    rows: dict[int, TopicSlot] = {}
    for op, topic in ops:
        if op == "put":
            rows[topic.id] = topic
        elif op == "remove":
            rows.pop(topic.id, None)
        else:  # retarget: every row of topic's scene moves to SCENES[0]
            for tid, row in list(rows.items()):
                if row.scene_id == topic.scene_id:
                    rows[tid] = dataclasses.replace(row, scene_id=SCENES[0])
    return rows


def _apply(meta: L2Meta, ops: list[tuple[str, TopicSlot]]) -> None:
    for op, topic in ops:
        if op == "put":
            meta.put(topic)
        elif op == "remove":
            meta.remove([topic.id])
        else:
            meta.retarget(topic.scene_id, SCENES[0])
        meta.surface(topic.scene_id)  # a read between writes answers from either form


@given(
    st.lists(_topic, max_size=20),
    st.lists(st.tuples(st.sampled_from(["put", "put", "remove", "retarget"]), _topic), max_size=30),
)
def test_packed_and_unpacked_caches_answer_alike(
    start: list[TopicSlot], ops: list[tuple[str, TopicSlot]]
) -> None:
    expected = _reference([("put", t) for t in start] + ops)
    caches = [L2Meta.from_topics(start, hot_scenes=n) for n in (1, 2, 64)]
    for meta in caches:
        _apply(meta, ops)
    first = caches[0]
    for meta in caches:
        assert meta == first
        assert len(meta) == len(expected)
        assert meta.topic_ids() == sorted(expected)
        for tid, row in expected.items():
            assert meta.get(tid) == row
            assert meta.holds(row)
            assert meta.scene_of(tid) == row.scene_id
            assert meta.keywords(tid) == row.fused_keywords
            assert meta.placement(tid) == (row.depth, row.parent_id)
            assert not meta.holds(dataclasses.replace(row, depth=row.depth + 1))
        assert meta.get(31) is None
        assert meta.keywords(31) is None
        assert meta.placement(31) is None
        assert not meta.holds(TopicSlot(id=31))
        assert meta.scenes() == sorted({t.scene_id for t in expected.values()})
        for scene in SCENES:
            mine = sorted((t for t in expected.values() if t.scene_id == scene), key=lambda t: t.id)
            assert meta.topics_of_scene(scene) == mine
            assert sorted(meta.scene_row_ids(scene)) == [t.id for t in mine]
            assert meta.scene_row_ids(scene) == {t.id for t in mine}
            surface = sorted(
                (t for t in mine if t.depth == 1), key=lambda t: (t.user_timestamp, t.id)
            )
            assert meta.surface(scene) == surface
            assert meta.surface_count(scene) == len(surface)
            assert [r.topic for r in meta.listing(scene)] == sorted(
                (t for t in mine if t.depth <= 2),
                key=lambda t: (t.user_timestamp, t.depth, t.id),
            )
            kids = {
                p: sorted(t.id for t in mine if t.parent_id == p)
                for p in {t.parent_id for t in mine}
                if p is not None and p in {t.id for t in mine}
            }
            got = meta.children_in_scene(scene)
            assert {p: sorted(t.id for t in rows) for p, rows in got.items()} == kids
            for row in mine:  # one row's children, the scene's others not built
                by_one = meta.children_of(scene, row.id)
                assert sorted(by_one, key=lambda t: t.id) == [
                    t for t in mine if t.parent_id == row.id
                ]
            assert meta.children_of(scene, 31) == []  # control above: 31 is no row


def test_a_rows_children_are_found_by_its_parent_field_only() -> None:
    # Row 8's stamps hold the bytes of "parent 5, present" at an offset that is no row's
    # parent field: only the rows whose own parent is 5 are its children.
    lookalike = int.from_bytes(bytes([5, 0, 0, 0, 0, 0, 0, 0]), "little")
    rows = [
        TopicSlot(id=5, scene_id=7, depth=1),
        TopicSlot(id=6, scene_id=7, parent_id=5, depth=2),
        TopicSlot(id=8, scene_id=7, depth=1, user_timestamp=lookalike, agent_timestamp=1),
        TopicSlot(id=9, scene_id=7, parent_id=5, depth=2, user_timestamp=2**64),  # kept whole
    ]
    packed = pack(7, rows)
    assert packed.loose is not None  # control: row 9 is held whole, row 8 packed
    assert sorted(t.id for t in packed.children(5)) == [6, 9]
    assert packed.children(8) == []
    assert packed.children(2**64) == []  # past a stored id: none, not an error
