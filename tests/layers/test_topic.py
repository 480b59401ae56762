"""L2 topic layer (api.md §5.3, §9.4-9.6; dream.md §4.5 steps 6-8) over real .meh files."""

from __future__ import annotations

import pytest

from memhop.engine import RECORD_HEADER_SIZE, Engine, open_engine
from memhop.errors import (
    Code,
    CRCMismatchError,
    InvalidQueryError,
    MemHopError,
    NotFoundError,
    StorageIOError,
    code_of,
)
from memhop.ids import fused_topic_id, turn_topic_id
from memhop.layers import codec
from memhop.layers.topic import (
    MAX_DEPTH,
    all_topics_strict,
    closure,
    delete_topics,
    get_topic_optional,
    read_topic_lenient,
    rename_topic,
    restore_sunk,
    retarget_topics,
    sink_members,
    write_fused_parent,
)
from memhop.records import RecordType, SceneSlot, TopicSlot
from tests.faults import file_size, flip_byte
from tests.writes import write_turn_topic

AGENT = 0
OTHER_AGENT = 0x1234_5678_9ABC_DEF0
SCENE = 0x5C_E4E0_0000_0001
SCENE_B = 0x5C_E4E0_0000_0002


def _turn(engine: Engine, seq: int, ts: int, scene: int = SCENE, agent: int = AGENT) -> TopicSlot:
    tid = turn_topic_id(scene, seq)
    return write_turn_topic(engine, agent, scene, tid, [f"kw{seq}"], ts, ts + 500)


def _damage(engine: Engine, meh_path: str, topic_id: int) -> Engine:
    """Close, flip one payload byte of ``topic_id`` on disk, and reopen (index from snapshot)."""
    offset = engine.offset_of(AGENT, topic_id)
    assert offset is not None
    engine.close()
    flip_byte(meh_path, offset + RECORD_HEADER_SIZE + 3)
    return open_engine(meh_path)


# ---- reads ------------------------------------------------------------------------------


def test_new_turn_topic_is_a_parentless_surface_row(engine: Engine) -> None:
    tid = turn_topic_id(SCENE, 1)
    stored = write_turn_topic(engine, AGENT, SCENE, tid, ["登录", "password"], 1000, 2000)
    assert stored == TopicSlot(
        id=tid,
        scene_id=SCENE,
        depth=1,
        fused_keywords=("登录", "password"),
        user_timestamp=1000,
        agent_timestamp=2000,
    )
    assert stored.parent_id is None
    assert stored.name == ""
    assert get_topic_optional(engine, AGENT, tid) == stored
    assert read_topic_lenient(engine, AGENT, tid) == stored


def test_optional_and_lenient_reads_tell_absent_foreign_and_unreadable_apart(
    engine: Engine, meh_path: str
) -> None:
    topic = _turn(engine, 1, 1000)
    foreign = 0xF0F0_0000_0000_0001
    codec.write(engine, AGENT, foreign, SceneSlot(scene_id=foreign, scene_name="not a topic"))
    absent = 0xAB5E_0000_0000_0001

    assert get_topic_optional(engine, AGENT, absent) is None
    assert get_topic_optional(engine, AGENT, foreign) is None
    with pytest.raises(NotFoundError):
        read_topic_lenient(engine, AGENT, absent)
    assert read_topic_lenient(engine, AGENT, foreign) is None
    assert read_topic_lenient(engine, AGENT, topic.id) == topic  # positive control

    engine = _damage(engine, meh_path, topic.id)
    try:
        with pytest.raises(CRCMismatchError):
            get_topic_optional(engine, AGENT, topic.id)
        with pytest.raises(CRCMismatchError):
            read_topic_lenient(engine, AGENT, topic.id)
    finally:
        engine.close()


# ---- turn topic replay ------------------------------------------------------------------


def test_replay_keeps_name_and_position_and_refreshes_track_and_bounds(
    engine: Engine, meh_path: str
) -> None:
    turn = _turn(engine, 1, 1000)
    _turn(engine, 2, 3000)
    parent = fused_topic_id(SCENE, 1000, 3500, [turn.id, turn_topic_id(SCENE, 2)])
    write_fused_parent(engine, AGENT, SCENE, parent, ["summary"], 1000, 3500)
    sink_members(engine, AGENT, parent, [turn.id, turn_topic_id(SCENE, 2)])
    rename_topic(engine, AGENT, turn.id, "the login bug")

    replayed = write_turn_topic(engine, AGENT, SCENE, turn.id, ["fresh", "track"], 900, 4000)

    assert replayed.name == "the login bug"
    assert replayed.depth == 2
    assert replayed.parent_id == parent
    assert replayed.fused_keywords == ("fresh", "track")
    assert (replayed.user_timestamp, replayed.agent_timestamp) == (900, 4000)
    engine.close()
    reopened = open_engine(meh_path)
    try:
        assert get_topic_optional(reopened, AGENT, turn.id) == replayed
    finally:
        reopened.close()


def test_replay_over_an_unreadable_topic_refuses_with_its_code(
    engine: Engine, meh_path: str
) -> None:
    turn = _turn(engine, 1, 1000)
    engine = _damage(engine, meh_path, turn.id)
    try:
        size = file_size(meh_path)
        with pytest.raises(MemHopError) as info:
            write_turn_topic(engine, AGENT, SCENE, turn.id, ["again"], 1000, 1500)
        assert info.value.code == Code.CRC_MISMATCH
        assert file_size(meh_path) == size  # nothing overwritten
        # Positive control: another turn of the same file still writes.
        assert _turn(engine, 2, 2000).depth == 1
    finally:
        engine.close()


# ---- sink and restore -------------------------------------------------------------------


def test_sink_then_restore_round_trips(engine: Engine) -> None:
    members = [_turn(engine, s, 1000 * s) for s in (1, 2, 3)]
    ids = [m.id for m in members]
    parent = fused_topic_id(SCENE, 1000, 3500, ids)
    fused = write_fused_parent(engine, AGENT, SCENE, parent, ["group"], 1000, 3500)
    assert (fused.depth, fused.parent_id, fused.name) == (1, None, "")

    sunk = sink_members(engine, AGENT, parent, [*ids, ids[0]])  # an echoed duplicate moves once
    assert [t.id for t in sunk] == ids
    for before, after in zip(members, sunk, strict=True):
        assert after.depth == 2
        assert after.parent_id == parent
        assert (after.name, after.fused_keywords) == (before.name, before.fused_keywords)
        assert get_topic_optional(engine, AGENT, before.id) == after

    restored = restore_sunk(engine, AGENT, parent, ids)
    assert restored == members
    assert [get_topic_optional(engine, AGENT, i) for i in ids] == members


def test_restore_touches_only_members_of_this_parent(engine: Engine) -> None:
    a, b = _turn(engine, 1, 1000), _turn(engine, 2, 2000)
    other_parent = 0x0717_0000_0000_0001
    sink_members(engine, AGENT, 0xAAAA, [a.id])
    sink_members(engine, AGENT, other_parent, [b.id])

    restored = restore_sunk(engine, AGENT, 0xAAAA, [a.id, b.id, 0xDEAD])
    assert [t.id for t in restored] == [a.id]
    assert get_topic_optional(engine, AGENT, a.id) == a
    b_now = get_topic_optional(engine, AGENT, b.id)
    assert b_now is not None
    assert (b_now.depth, b_now.parent_id) == (2, other_parent)


def test_sink_to_max_depth_deletes_instead(engine: Engine) -> None:
    deep = TopicSlot(id=0xD33, scene_id=SCENE, parent_id=0x0D, depth=3, user_timestamp=5)
    codec.write(engine, AGENT, deep.id, deep)
    shallow = _turn(engine, 1, 1000)

    sunk = sink_members(engine, AGENT, 0xF00D, [deep.id, shallow.id, 0xAB5E])  # 0xAB5E: absent

    assert [(t.id, t.depth) for t in sunk] == [(deep.id, MAX_DEPTH), (shallow.id, 2)]
    assert not engine.contains(AGENT, deep.id)
    assert get_topic_optional(engine, AGENT, deep.id) is None
    shallow_now = get_topic_optional(engine, AGENT, shallow.id)
    assert shallow_now is not None
    assert (shallow_now.depth, shallow_now.parent_id) == (2, 0xF00D)


def test_sink_refuses_before_writing_when_a_member_is_unreadable(
    engine: Engine, meh_path: str
) -> None:
    a, b, c = (_turn(engine, s, 1000 * s) for s in (1, 2, 3))
    engine = _damage(engine, meh_path, b.id)
    try:
        size = file_size(meh_path)
        with pytest.raises(StorageIOError) as info:
            sink_members(engine, AGENT, 0xF00D, [a.id, b.id, c.id])
        assert info.value.code == Code.IO
        assert f"{b.id:016x}" in str(info.value)
        assert isinstance(info.value.__cause__, CRCMismatchError)
        assert file_size(meh_path) == size
        assert get_topic_optional(engine, AGENT, a.id) == a
        assert get_topic_optional(engine, AGENT, c.id) == c

        # Positive control: the same sink over readable members works.
        sunk = sink_members(engine, AGENT, 0xF00D, [a.id, c.id])
        assert [(t.id, t.depth) for t in sunk] == [(a.id, 2), (c.id, 2)]
        assert file_size(meh_path) > size
    finally:
        engine.close()


def test_sink_refuses_a_member_that_is_not_a_topic(engine: Engine, meh_path: str) -> None:
    a = _turn(engine, 1, 1000)
    foreign = 0xF0F0
    codec.write(engine, AGENT, foreign, SceneSlot(scene_id=foreign))
    size = file_size(meh_path)
    with pytest.raises(StorageIOError, match="not a topic"):
        sink_members(engine, AGENT, 0xF00D, [a.id, foreign])
    assert file_size(meh_path) == size
    assert get_topic_optional(engine, AGENT, a.id) == a


# ---- rename, retarget -------------------------------------------------------------------


def test_rename_writes_only_the_name_and_a_same_name_writes_nothing(
    engine: Engine, meh_path: str
) -> None:
    turn = _turn(engine, 1, 1000)
    sink_members(engine, AGENT, 0xF00D, [turn.id])
    before = file_size(meh_path)

    renamed, changed = rename_topic(engine, AGENT, turn.id, "billing")
    assert changed
    assert file_size(meh_path) > before
    stored = get_topic_optional(engine, AGENT, turn.id)
    assert stored == renamed
    assert (renamed.name, renamed.depth, renamed.parent_id) == ("billing", 2, 0xF00D)
    assert renamed.fused_keywords == turn.fused_keywords

    after = file_size(meh_path)
    again, changed = rename_topic(engine, AGENT, turn.id, "billing")
    assert not changed
    assert again == renamed
    assert file_size(meh_path) == after


def test_rename_refuses_absent_and_empty_names_and_creates_nothing(engine: Engine) -> None:
    turn = _turn(engine, 1, 1000)
    with pytest.raises(NotFoundError):
        rename_topic(engine, AGENT, 0xAB5E, "x")
    assert not engine.contains(AGENT, 0xAB5E)
    with pytest.raises(InvalidQueryError):
        rename_topic(engine, AGENT, turn.id, "")
    assert get_topic_optional(engine, AGENT, turn.id) == turn


def test_retarget_moves_scene_and_keeps_everything_else(engine: Engine, meh_path: str) -> None:
    a, b = _turn(engine, 1, 1000, SCENE_B), _turn(engine, 2, 2000, SCENE_B)
    rename_topic(engine, AGENT, a.id, "named")
    sink_members(engine, AGENT, 0xF00D, [b.id])
    topics = all_topics_strict(engine, AGENT)

    moved = retarget_topics(engine, AGENT, topics, SCENE)

    engine.close()
    reopened = open_engine(meh_path)
    try:
        now = all_topics_strict(reopened, AGENT)
        assert now == moved
        assert {t.scene_id for t in now} == {SCENE}
        for old, new in zip(topics, now, strict=True):
            assert (old.id, old.name, old.depth, old.parent_id) == (
                new.id,
                new.name,
                new.depth,
                new.parent_id,
            )
            assert (old.fused_keywords, old.user_timestamp, old.agent_timestamp) == (
                new.fused_keywords,
                new.user_timestamp,
                new.agent_timestamp,
            )
    finally:
        reopened.close()


# ---- enumeration, closure, delete -------------------------------------------------------


def test_all_topics_strict_is_ascending_and_aborts_on_an_unreadable_record(
    engine: Engine, meh_path: str
) -> None:
    written = [_turn(engine, s, 1000 * s) for s in range(1, 6)]
    codec.write(engine, AGENT, 0x5C, SceneSlot(scene_id=0x5C))  # other types are not listed
    listed = all_topics_strict(engine, AGENT)
    assert listed == sorted(written, key=lambda t: t.id)

    victim = written[2].id
    engine = _damage(engine, meh_path, victim)
    try:
        with pytest.raises(MemHopError) as info:
            all_topics_strict(engine, AGENT)
        assert code_of(info.value) == Code.CRC_MISMATCH
        assert f"{victim:016x}" in str(info.value)
    finally:
        engine.close()


def _slot(tid: int, parent: int | None, depth: int = 2) -> TopicSlot:
    return TopicSlot(id=tid, scene_id=SCENE, parent_id=parent, depth=depth)


def test_closure_takes_a_fused_subtree() -> None:
    # p1 folded a and b; a later pass folded p1 with c under p2; d is unrelated.
    topics = [
        _slot(0xA, 0x1),
        _slot(0xB, 0x1),
        _slot(0x1, 0x2),
        _slot(0xC, 0x2),
        _slot(0x2, None, 1),
        _slot(0xD, None, 1),
    ]
    assert closure(topics, 0x2) == {0x2, 0x1, 0xA, 0xB, 0xC}
    assert closure(topics, 0x1) == {0x1, 0xA, 0xB}
    assert closure(topics, 0xA) == {0xA}
    assert closure(topics, 0xD) == {0xD}
    assert closure([], 0x9) == {0x9}


def test_closure_survives_parent_cycles() -> None:
    cyclic = [_slot(0x1, 0x2), _slot(0x2, 0x3), _slot(0x3, 0x1), _slot(0x4, 0x4), _slot(0x5, 0x3)]
    assert closure(cyclic, 0x1) == {0x1, 0x2, 0x3, 0x5}
    assert closure(cyclic, 0x4) == {0x4}


def test_delete_topics_tombstones_a_closure_and_spares_the_rest(
    engine: Engine, meh_path: str
) -> None:
    a, b, c = (_turn(engine, s, 1000 * s) for s in (1, 2, 3))
    parent = fused_topic_id(SCENE, 1000, 2500, [a.id, b.id])
    write_fused_parent(engine, AGENT, SCENE, parent, ["ab"], 1000, 2500)
    sink_members(engine, AGENT, parent, [a.id, b.id])
    foreign = 0xF0F0
    codec.write(engine, AGENT, foreign, SceneSlot(scene_id=foreign))

    doomed = closure(all_topics_strict(engine, AGENT), parent)
    assert doomed == {parent, a.id, b.id}
    assert delete_topics(engine, AGENT, [*doomed, 0xAB5E, foreign]) == 3
    assert delete_topics(engine, AGENT, []) == 0
    assert delete_topics(engine, AGENT, doomed) == 0  # already gone

    engine.close()
    reopened = open_engine(meh_path)
    try:
        assert all_topics_strict(reopened, AGENT) == [c]
        assert reopened.contains(AGENT, foreign)  # another type at a listed id is left alone
    finally:
        reopened.close()


def test_domains_are_isolated_at_the_layer(engine: Engine) -> None:
    mine = _turn(engine, 1, 1000, agent=OTHER_AGENT)
    theirs = _turn(engine, 1, 1000, scene=SCENE_B)

    # Positive control: each domain reaches its own topic.
    assert get_topic_optional(engine, OTHER_AGENT, mine.id) == mine
    assert all_topics_strict(engine, OTHER_AGENT) == [mine]
    assert all_topics_strict(engine, AGENT) == [theirs]
    # The other domain's topic is unreachable by id and absent from enumeration.
    assert get_topic_optional(engine, AGENT, mine.id) is None
    with pytest.raises(NotFoundError):
        rename_topic(engine, AGENT, mine.id, "stolen")
    assert sink_members(engine, AGENT, 0xF00D, [mine.id]) == []
    assert delete_topics(engine, AGENT, [mine.id]) == 0
    assert get_topic_optional(engine, OTHER_AGENT, mine.id) == mine
    assert engine.ids_of_type(AGENT, RecordType.TOPIC) == [theirs.id]
