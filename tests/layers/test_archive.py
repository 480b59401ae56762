"""L4 content layer: overwrite by seq, absent vs unreadable, type and domain isolation."""

from __future__ import annotations

import pytest

from memhop.engine import RECORD_HEADER_SIZE, Engine, create_engine, open_engine
from memhop.errors import ClosedError, Code, CRCMismatchError, NotFoundError
from memhop.ids import content_id, plan_node_id
from memhop.index.l4 import L4Index
from memhop.layers import archive, codec, plan
from memhop.records import ArchiveKind, ArchiveRole, ArchiveSlot, ContentType, PlanNode
from tests.faults import flip_byte

AGENT_A = 0
AGENT_B = 0x22
TOPIC = 0x1234_5678_9ABC_DEF0


def utterance(seq: int, text: str, *, topic: int = TOPIC, at: int = 1_000) -> ArchiveSlot:
    role = ArchiveRole.AGENT if seq == 2 else ArchiveRole.USER
    return ArchiveSlot(id_hash=0, seq=seq, role=role, topic_id=topic, created_at=at, content=text)


def event(seq: int, text: str, *, topic: int = TOPIC, node_seq: int = 0) -> ArchiveSlot:
    return ArchiveSlot(
        id_hash=0,
        kind=ArchiveKind.EVENT,
        seq=seq,
        topic_id=topic,
        event_type="tool_call",
        node_seq=node_seq,
        created_at=2_000,
        content=text,
    )


def test_write_derives_the_address_from_topic_and_seq(engine: Engine) -> None:
    stored = archive.write_content(engine, AGENT_A, utterance(1, "hello"))
    assert stored.id_hash == content_id(TOPIC, 1)
    assert archive.read_slot_optional(engine, AGENT_A, TOPIC, 1) == stored
    assert engine.contains(AGENT_A, content_id(TOPIC, 1))


def test_a_second_write_at_one_seq_replaces_the_first_across_kinds(engine: Engine) -> None:
    archive.write_content(engine, AGENT_A, utterance(3, "first, an utterance"))
    archive.write_content(engine, AGENT_A, utterance(4, "neighbour"))
    replaced = archive.write_content(engine, AGENT_A, event(3, "then an event"))

    got = archive.read_slot_optional(engine, AGENT_A, TOPIC, 3)
    assert got == replaced
    assert got is not None
    assert got.kind == ArchiveKind.EVENT
    assert got.content == "then an event"
    everything = archive.all_contents(engine, AGENT_A)
    assert [s.seq for s in sorted(everything, key=lambda s: s.seq)] == [3, 4]


def test_a_batch_writes_every_slot_and_the_later_duplicate_wins(engine: Engine) -> None:
    stored = archive.write_contents(
        engine, AGENT_A, [utterance(1, "in"), utterance(2, "out"), utterance(1, "in again")]
    )
    assert [s.id_hash for s in stored] == [content_id(TOPIC, s) for s in (1, 2, 1)]
    one = archive.read_slot_optional(engine, AGENT_A, TOPIC, 1)
    assert one is not None
    assert one.content == "in again"
    assert archive.write_contents(engine, AGENT_A, []) == []


def test_reads_by_ids_are_ascending_and_skip_absent_ids(engine: Engine) -> None:
    stored = [archive.write_content(engine, AGENT_A, utterance(s, f"s{s}")) for s in (1, 2, 3)]
    wanted = [s.id_hash for s in reversed(stored)] + [content_id(TOPIC, 99)]
    got = archive.read_contents(engine, AGENT_A, wanted)
    assert [s.id_hash for s in got] == sorted(s.id_hash for s in stored)


def test_absent_is_none_and_unreadable_raises_its_code(meh_path: str) -> None:
    eng = create_engine(meh_path)
    good = archive.write_content(eng, AGENT_A, utterance(1, "stays readable"))
    rot = archive.write_content(eng, AGENT_A, utterance(2, "will rot on disk"))
    offset = eng.offset_of(AGENT_A, rot.id_hash)
    assert offset is not None
    eng.close()  # checkpoint: the reopened index comes from the snapshot, not a CRC scan
    flip_byte(meh_path, offset + RECORD_HEADER_SIZE + 5)

    eng = open_engine(meh_path)
    try:
        # Positive control: the healthy slot still reads, and absence is a plain None.
        assert archive.read_slot_optional(eng, AGENT_A, TOPIC, 1) == good
        assert archive.read_slot_optional(eng, AGENT_A, TOPIC, 7) is None
        with pytest.raises(CRCMismatchError) as one:
            archive.read_slot_optional(eng, AGENT_A, TOPIC, 2)
        assert one.value.code == Code.CRC_MISMATCH
        assert f"{rot.id_hash:016x}" in str(one.value)
        assert f"at offset {offset}" in str(one.value)
        # Listings contain the damage: the rotten slot is left out and counted once.
        assert archive.all_contents(eng, AGENT_A) == [good]
        assert archive.read_contents(eng, AGENT_A, [good.id_hash, rot.id_hash]) == [good]
        assert archive.read_contents(eng, AGENT_A, [good.id_hash]) == [good]
        assert eng.damage() == (1, 0)
    finally:
        eng.close()


def test_an_optional_read_on_a_closed_engine_raises_rather_than_answering_absent(
    meh_path: str,
) -> None:
    eng = create_engine(meh_path)
    stored = archive.write_content(eng, AGENT_A, utterance(1, "here"))
    # Positive control: while open, a present slot reads and an absent one is None.
    assert codec.read_optional(eng, AGENT_A, stored.id_hash, ArchiveSlot) == stored
    assert codec.read_optional(eng, AGENT_A, content_id(TOPIC, 9), ArchiveSlot) is None
    eng.close()
    for id_hash in (stored.id_hash, content_id(TOPIC, 9)):
        with pytest.raises(ClosedError):
            codec.read_optional(eng, AGENT_A, id_hash, ArchiveSlot)


def test_content_and_plan_node_do_not_read_as_each_other(engine: Engine) -> None:
    """storage.md §13 TestContentAndPlanNodeDoNotReadAsEachOther, at the layer level."""
    slot = archive.write_content(engine, AGENT_A, utterance(1, "content one"))
    step = plan.write_plan_node(
        engine, AGENT_A, PlanNode(id_hash=0, topic_id=TOPIC, seq=1, created_at=1, updated_at=1)
    )
    assert slot.id_hash != step.id_hash
    # Positive control: each reads as itself.
    assert archive.read_slot_optional(engine, AGENT_A, TOPIC, 1) == slot
    assert plan.get_plan_node_optional(engine, AGENT_A, TOPIC, 1) == step
    # Neither decodes as the other.
    assert codec.read_optional(engine, AGENT_A, slot.id_hash, PlanNode) is None
    assert codec.read_optional(engine, AGENT_A, step.id_hash, ArchiveSlot) is None
    with pytest.raises(NotFoundError):
        codec.read(engine, AGENT_A, step.id_hash, ArchiveSlot)
    assert archive.read_contents(engine, AGENT_A, [step.id_hash]) == []
    assert plan.read_plan_nodes_strict(engine, AGENT_A, [slot.id_hash]) == []
    assert archive.all_contents(engine, AGENT_A) == [slot]
    assert plan.read_plan_nodes_strict(engine, AGENT_A, plan.plan_node_ids(engine, AGENT_A)) == [
        step
    ]


def test_a_foreign_record_at_a_content_address_reads_as_absent(engine: Engine) -> None:
    squatter = PlanNode(id_hash=content_id(TOPIC, 5), topic_id=TOPIC, seq=5)
    codec.write(engine, AGENT_A, content_id(TOPIC, 5), squatter)
    assert archive.read_slot_optional(engine, AGENT_A, TOPIC, 5) is None
    assert archive.all_contents(engine, AGENT_A) == []
    assert plan_node_id(TOPIC, 5) != content_id(TOPIC, 5)


def test_domains_do_not_see_each_others_content(engine: Engine) -> None:
    mine = archive.write_content(engine, AGENT_A, utterance(1, "alpha only"))
    theirs = archive.write_content(engine, AGENT_B, utterance(2, "beta only"))
    # Positive control: each domain reads its own slot.
    assert archive.read_slot_optional(engine, AGENT_A, TOPIC, 1) == mine
    assert archive.all_contents(engine, AGENT_B) == [theirs]
    # Negative: the same address in the other domain is absent.
    assert archive.read_slot_optional(engine, AGENT_B, TOPIC, 1) is None
    assert archive.read_contents(engine, AGENT_B, [mine.id_hash]) == []
    assert archive.all_contents(engine, AGENT_A) == [mine]
    assert archive.delete_contents(engine, AGENT_B, [mine.id_hash]) == 0
    assert archive.read_slot_optional(engine, AGENT_A, TOPIC, 1) == mine


def test_delete_counts_live_ids_only(engine: Engine) -> None:
    kept = archive.write_content(engine, AGENT_A, utterance(1, "kept"))
    gone = archive.write_content(engine, AGENT_A, utterance(2, "gone"))
    assert archive.delete_contents(engine, AGENT_A, [gone.id_hash, content_id(TOPIC, 9)]) == 1
    assert archive.read_slot_optional(engine, AGENT_A, TOPIC, 2) is None
    assert archive.all_contents(engine, AGENT_A) == [kept]
    assert archive.delete_contents(engine, AGENT_A, [gone.id_hash]) == 0


def test_the_mirror_rebuilt_after_reopen_equals_the_incremental_one(meh_path: str) -> None:
    eng = create_engine(meh_path)
    mirror = L4Index()
    other = TOPIC + 1
    writes = [
        utterance(1, "u", at=10),
        utterance(2, "a", at=10),
        event(3, "e", node_seq=1),
        utterance(1, "u2", topic=other, at=5),
        event(3, "ev", topic=other),
        utterance(3, "overwrites the event at 3", at=30),
    ]
    for slot in writes:
        mirror.put(archive.write_content(eng, AGENT_A, slot))
    doomed = [i for i, _ in mirror.created_before(10)]
    assert doomed == [content_id(other, 1)]
    assert archive.delete_contents(eng, AGENT_A, doomed) == 1
    mirror.remove_many(doomed)
    eng.close()

    eng = open_engine(meh_path)
    try:
        rebuilt = L4Index.from_records(archive.all_contents(eng, AGENT_A))
        assert rebuilt == mirror
        assert rebuilt.next_seq(TOPIC) == 4
        assert [r.kind for r in rebuilt.slots_of(TOPIC)] == [ArchiveKind.UTTERANCE] * 3
        assert rebuilt.slots_of(other)[0].content_type == ContentType.TEXT
    finally:
        eng.close()
