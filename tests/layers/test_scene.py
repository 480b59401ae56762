"""L2 scene and L1 scene-node/edge primitives over a real engine file."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop.engine import RECORD_HEADER_SIZE, Engine, open_engine
from memhop.errors import CRCMismatchError, InvalidQueryError, NotFoundError
from memhop.ids import l1_edge_id, scene_node_id
from memhop.layers import scene
from memhop.records import ProfileSlot, RecordType, SceneEdge, SceneNode, SceneSlot
from tests.faults import flip_byte, reopen

A = 0x00000000000000AA
B = 0x00000000000000BB
S1, S2, S3 = 0x1000, 0x2000, 0x3000
GRAPH = 0x00000000000000F1
OTHER_GRAPH = 0x00000000000000F2


def _rot(engine: Engine, agent_id: int, id_hash: int) -> Engine:
    """Close (checkpointing), flip one payload byte of the record, reopen."""
    offset = engine.offset_of(agent_id, id_hash)
    assert offset is not None
    engine.close()
    flip_byte(engine.path, offset + RECORD_HEADER_SIZE + 2)
    return open_engine(engine.path)


def _sequence(values: list[int]) -> Callable[[], int]:
    it = iter(values)
    return lambda: next(it)


def _node(scene_id: int, *, topics: tuple[int, ...] = (), edges: tuple[int, ...] = ()) -> SceneNode:
    return SceneNode(
        id_hash=scene_node_id(scene_id),
        scene_id=scene_id,
        topic_ids=topics,
        importance=1.0,
        created_at=10,
        updated_at=20,
        edge_ids=edges,
    )


def _edge(a: int, b: int, weight: float = 0.5) -> SceneEdge:
    lo, hi = sorted((a, b))
    return SceneEdge(id_hash=l1_edge_id(a, b), node_ids=(lo, hi), weight=weight, created_at=5)


# ---- L2 scenes ---------------------------------------------------------------------------


def test_scene_round_trips_throughreopen(engine: Engine) -> None:
    made = scene.new_scene(S1, GRAPH, 1_000)
    assert made == SceneSlot(
        scene_id=S1, scene_name="session:0000000000001000", last_used_at=1_000, l3_id=GRAPH
    )
    scene.put_scene(engine, A, made)
    engine = reopen(engine)
    try:
        assert scene.get_scene(engine, A, S1) == made
        assert scene.get_scene_optional(engine, A, S1) == made
    finally:
        engine.close()


def test_default_scene_name_is_session_and_hex16() -> None:
    assert scene.default_scene_name(1) == "session:0000000000000001"
    assert scene.default_scene_name(2**64 - 1) == "session:ffffffffffffffff"
    assert scene.new_scene(0xABC, 0, 7).scene_name == "session:0000000000000abc"


def test_absent_scene_is_not_found_but_an_unreadable_one_is_not(engine: Engine) -> None:
    """A rotted scene raises 5004 from get and optional get; the list skips it; absent is absent."""
    scene.put_scene(engine, A, scene.new_scene(S1, 0, 1))
    scene.put_scene(engine, A, scene.new_scene(S2, 0, 2))
    engine = _rot(engine, A, S1)
    try:
        with pytest.raises(CRCMismatchError) as info:
            scene.get_scene(engine, A, S1)
        assert not isinstance(info.value, NotFoundError)
        with pytest.raises(CRCMismatchError):
            scene.get_scene_optional(engine, A, S1)
        assert [s.scene_id for s in scene.list_scenes(engine, A)] == [S2]  # damage contained
        # Positive controls: an absent id, and the healthy scene beside the rotten one.
        assert scene.get_scene_optional(engine, A, S3) is None
        with pytest.raises(NotFoundError, match="scene 0000000000003000 not found"):
            scene.get_scene(engine, A, S3)
        assert scene.get_scene(engine, A, S2).scene_id == S2
    finally:
        engine.close()


def test_a_record_of_another_type_at_a_scene_id_is_absent(engine: Engine) -> None:
    engine.write(A, RecordType.PROFILE, S1, ProfileSlot(name="x").to_json())
    assert scene.get_scene_optional(engine, A, S1) is None
    with pytest.raises(NotFoundError):
        scene.get_scene(engine, A, S1)
    assert scene.list_scenes(engine, A) == []
    assert scene.delete_scenes(engine, A, [S1]) == 0  # the profile is not a scene to delete
    assert engine.contains(A, S1)
    scene.put_scene(engine, A, scene.new_scene(S2, 0, 1))  # positive control
    assert [s.scene_id for s in scene.list_scenes(engine, A)] == [S2]


def test_scenes_are_isolated_by_domain(engine: Engine) -> None:
    """A scene of domain A is unreachable by id and absent from every list in B."""
    scene.put_scene(engine, A, scene.new_scene(S1, GRAPH, 1))
    assert scene.get_scene_optional(engine, B, S1) is None
    with pytest.raises(NotFoundError):
        scene.get_scene(engine, B, S1)
    assert scene.list_scenes(engine, B) == []
    assert scene.list_scenes(engine, B, GRAPH) == []
    assert scene.delete_scenes(engine, B, [S1]) == 0
    assert scene.current_scene(scene.list_scenes(engine, B)) is None
    # Positive control: the same reads in A find it.
    assert scene.get_scene(engine, A, S1).scene_id == S1
    assert [s.scene_id for s in scene.list_scenes(engine, A, GRAPH)] == [S1]


def test_list_scenes_is_ascending_and_filters_by_anchor(engine: Engine) -> None:
    scene.put_scene(engine, A, scene.new_scene(S3, GRAPH, 1))
    scene.put_scene(engine, A, scene.new_scene(S1, 0, 2))
    scene.put_scene(engine, A, scene.new_scene(S2, GRAPH, 3))
    scene.put_scene(engine, A, scene.new_scene(0x1500, OTHER_GRAPH, 4))
    engine = reopen(engine)
    try:
        assert [s.scene_id for s in scene.list_scenes(engine, A)] == [S1, 0x1500, S2, S3]
        assert [s.scene_id for s in scene.list_scenes(engine, A, GRAPH)] == [S2, S3]
        assert [s.scene_id for s in scene.list_scenes(engine, A, OTHER_GRAPH)] == [0x1500]
        assert [s.scene_id for s in scene.list_scenes(engine, A, 0)] == [S1]  # unanchored
        assert scene.list_scenes(engine, A, 0x99) == []
    finally:
        engine.close()


def test_put_scene_refuses_the_reserved_zero_id(engine: Engine) -> None:
    with pytest.raises(InvalidQueryError, match="reserved"):
        scene.put_scene(engine, A, SceneSlot(scene_id=0))
    assert engine.agents() == []


def test_open_turn_counts_and_keeps_the_host_fields(engine: Engine) -> None:
    """Name and anchor survive the library's counter rewrite, through a reopen."""
    renamed = SceneSlot(scene_id=S1, scene_name="trip planning", turn_seq=4, l3_id=GRAPH)
    opened = scene.open_turn(renamed, 777)
    assert opened == SceneSlot(
        scene_id=S1, scene_name="trip planning", turn_seq=5, last_used_at=777, l3_id=GRAPH
    )
    assert renamed.turn_seq == 4  # pure: the input is untouched
    scene.put_scene(engine, A, opened)
    scene.put_scene(engine, A, scene.open_turn(scene.get_scene(engine, A, S1), 778))
    engine = reopen(engine)
    try:
        got = scene.get_scene(engine, A, S1)
        assert (got.scene_name, got.l3_id, got.turn_seq, got.last_used_at) == (
            "trip planning",
            GRAPH,
            6,
            778,
        )
    finally:
        engine.close()


def test_fresh_scene_id_redraws_on_zero_and_on_any_record(engine: Engine) -> None:
    scene.put_scene(engine, A, scene.new_scene(S1, 0, 1))
    engine.write(A, RecordType.PROFILE, S2, ProfileSlot().to_json())
    engine.write(B, RecordType.SCENE, S3, scene.new_scene(S3, 0, 1).to_json())
    rand = _sequence([0, S1, S2, 0, S3, 0x4000])
    # S3 is taken only in domain B, so it is free in A.
    assert scene.fresh_scene_id(engine, A, rand) == S3
    assert scene.fresh_scene_id(engine, B, _sequence([S3, 0, 0x4000])) == 0x4000


def test_fresh_scene_id_default_rand_is_nonzero_and_free(engine: Engine) -> None:
    for _ in range(20):
        got = scene.fresh_scene_id(engine, A)
        assert 0 < got < 2**64
        assert not engine.contains(A, got)


def test_delete_scenes_counts_only_live_scenes(engine: Engine) -> None:
    for sid in (S1, S2, S3):
        scene.put_scene(engine, A, scene.new_scene(sid, 0, 1))
    assert scene.delete_scenes(engine, A, [S1, S3, S3, 0x9999]) == 2
    assert [s.scene_id for s in scene.list_scenes(engine, A)] == [S2]
    assert scene.delete_scenes(engine, A, [S1]) == 0
    assert scene.delete_scenes(engine, A, []) == 0


# ---- current scene -----------------------------------------------------------------------


def test_current_scene_prefers_last_use_then_turns_then_smallest_id() -> None:
    old = SceneSlot(scene_id=1, turn_seq=50, last_used_at=100)
    recent = SceneSlot(scene_id=9, turn_seq=1, last_used_at=200)
    assert scene.current_scene([old, recent]) == recent  # recency beats a longer counter
    tie_more_turns = SceneSlot(scene_id=8, turn_seq=3, last_used_at=200)
    assert scene.current_scene([old, recent, tie_more_turns]) == tie_more_turns
    twin = SceneSlot(scene_id=5, turn_seq=3, last_used_at=200)
    assert scene.current_scene([tie_more_turns, twin, recent]) == twin
    legacy = [SceneSlot(scene_id=7), SceneSlot(scene_id=3, turn_seq=2), SceneSlot(scene_id=2)]
    assert scene.current_scene(legacy) == legacy[1]
    assert scene.current_scene([SceneSlot(scene_id=7), SceneSlot(scene_id=2)]) == SceneSlot(
        scene_id=2
    )
    assert scene.current_scene([]) is None


SCENES = st.lists(
    st.builds(
        SceneSlot,
        scene_id=st.integers(min_value=1, max_value=2**64 - 1),
        turn_seq=st.integers(min_value=0, max_value=5),
        last_used_at=st.integers(min_value=0, max_value=5),
    ),
    max_size=12,
    unique_by=lambda s: s.scene_id,
)


@given(scenes=SCENES)
def test_current_scene_matches_a_reference_sort(scenes: list[SceneSlot]) -> None:
    ranked = sorted(scenes, key=lambda s: s.scene_id)
    ranked.sort(key=lambda s: s.turn_seq, reverse=True)
    ranked.sort(key=lambda s: s.last_used_at, reverse=True)
    expected = ranked[0] if ranked else None
    assert scene.current_scene(scenes) == expected
    assert scene.current_scene(reversed(scenes)) == expected  # input order does not matter


# ---- L1 scene nodes ----------------------------------------------------------------------


def test_scene_nodes_round_trip_in_one_batch(engine: Engine) -> None:
    nodes = [_node(S2, topics=(3, 4)), _node(S1, topics=(1,)), _node(S3)]
    scene.put_scene_nodes(engine, A, nodes)
    engine = reopen(engine)
    try:
        listed = scene.list_scene_nodes(engine, A)
        assert [n.id_hash for n in listed] == sorted(n.id_hash for n in nodes)
        assert sorted(listed, key=lambda n: n.scene_id) == sorted(nodes, key=lambda n: n.scene_id)
        assert scene.scene_node_of(engine, A, S2) == nodes[0]
        assert scene.get_scene_node_optional(engine, A, scene_node_id(S1)) == nodes[1]
        assert scene.get_scene_node_optional(engine, A, scene_node_id(0x7777)) is None
        assert scene.scene_node_of(engine, A, 0x7777) is None
    finally:
        engine.close()
    assert scene_node_id(1) == 0x578DCE214D9736C1  # storage.md §5 vector


def test_scene_nodes_are_isolated_by_domain(engine: Engine) -> None:
    scene.put_scene_nodes(engine, A, [_node(S1)])
    scene.put_scene_edges(engine, A, [_edge(1, 2)])
    assert scene.scene_node_of(engine, B, S1) is None
    assert scene.list_scene_nodes(engine, B) == []
    assert scene.list_scene_nodes_lenient(engine, B) == []
    assert scene.get_scene_edge_optional(engine, B, l1_edge_id(1, 2)) is None
    assert scene.list_scene_edges(engine, B) == []
    assert scene.delete_scene_nodes(engine, B, [scene_node_id(S1)]) == 0
    assert scene.delete_scene_edges(engine, B, [l1_edge_id(1, 2)]) == 0
    # Positive control: all of it is there in A.
    assert scene.scene_node_of(engine, A, S1) == _node(S1)
    assert scene.list_scene_nodes(engine, A) == [_node(S1)]
    assert scene.get_scene_edge_optional(engine, A, l1_edge_id(2, 1)) == _edge(1, 2)
    assert scene.list_scene_edges(engine, A) == [_edge(1, 2)]


def test_an_unreadable_node_stops_the_strict_list_but_not_the_lenient_one(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    scene.put_scene_nodes(engine, A, [_node(S1), _node(S2)])
    engine = _rot(engine, A, scene_node_id(S1))
    try:
        with pytest.raises(CRCMismatchError) as info:
            scene.scene_node_of(engine, A, S1)
        assert not isinstance(info.value, NotFoundError)
        with pytest.raises(CRCMismatchError, match="will not read"):
            scene.list_scene_nodes(engine, A)
        with caplog.at_level(logging.WARNING, logger="memhop.layers"):
            assert scene.list_scene_nodes_lenient(engine, A) == [_node(S2)]
        assert "skipping record" in caplog.text
        assert scene.scene_node_of(engine, A, S2) == _node(S2)  # positive control
        assert scene.scene_node_of(engine, A, S3) is None
    finally:
        engine.close()


def test_delete_scene_nodes_touches_only_nodes(engine: Engine) -> None:
    scene.put_scene_nodes(engine, A, [_node(S1), _node(S2)])
    stray = scene_node_id(S3)
    engine.write(A, RecordType.SCENE, stray, scene.new_scene(stray, 0, 1).to_json())
    doomed = [scene_node_id(S1), stray, scene_node_id(0x5555)]
    assert scene.delete_scene_nodes(engine, A, doomed) == 1
    assert scene.list_scene_nodes(engine, A) == [_node(S2)]
    assert scene.get_scene(engine, A, stray).scene_id == stray  # the scene was not touched


def test_a_node_id_holding_another_type_reads_as_absent(engine: Engine) -> None:
    engine.write(A, RecordType.SCENE_EDGE, scene_node_id(S1), _edge(1, 2).to_json())
    assert scene.scene_node_of(engine, A, S1) is None
    assert scene.list_scene_nodes(engine, A) == []
    assert scene.get_scene_edge_optional(engine, A, scene_node_id(S1)) == _edge(1, 2)


# ---- L1 scene edges ----------------------------------------------------------------------


def test_scene_edges_round_trip_and_delete(engine: Engine) -> None:
    n1, n2, n3 = scene_node_id(S1), scene_node_id(S2), scene_node_id(S3)
    edges = [_edge(n1, n2, 0.3), _edge(n3, n2, 0.9)]
    scene.put_scene_edges(engine, A, edges)
    engine = reopen(engine)
    try:
        listed = scene.list_scene_edges(engine, A)
        assert [e.id_hash for e in listed] == sorted(e.id_hash for e in edges)
        assert scene.get_scene_edge_optional(engine, A, l1_edge_id(n2, n1)) == edges[0]
        assert scene.delete_scene_edges(engine, A, [l1_edge_id(n1, n2), l1_edge_id(n1, n3)]) == 1
        assert scene.list_scene_edges(engine, A) == [edges[1]]
        assert scene.get_scene_edge_optional(engine, A, l1_edge_id(n1, n2)) is None
    finally:
        engine.close()


def test_an_unreadable_edge_raises_on_read_and_strict_list(engine: Engine) -> None:
    scene.put_scene_edges(engine, A, [_edge(1, 2), _edge(3, 4)])
    engine = _rot(engine, A, l1_edge_id(1, 2))
    try:
        with pytest.raises(CRCMismatchError):
            scene.get_scene_edge_optional(engine, A, l1_edge_id(1, 2))
        with pytest.raises(CRCMismatchError):
            scene.list_scene_edges(engine, A)
        assert scene.get_scene_edge_optional(engine, A, l1_edge_id(3, 4)) == _edge(3, 4)
        assert scene.get_scene_edge_optional(engine, A, l1_edge_id(5, 6)) is None
    finally:
        engine.close()
