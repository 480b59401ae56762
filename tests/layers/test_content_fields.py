"""The domain load's readers (content fields, topic rows): equal to a full decode of each record."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memhop.engine import Engine, create_engine
from memhop.errors import DeserializationError
from memhop.index.l4 import L4Index
from memhop.layers import archive
from memhop.layers.content_fields import all_content_fields
from memhop.layers.topic_rows import all_topic_rows
from memhop.records import ArchiveSlot, RecordType, SlotHeader, TopicSlot

AGENT = 0
_RUNS = itertools.count()
_ONE_PATH = [HealthCheck.function_scoped_fixture]  # each example makes its own file beside it
OTHER_AGENT = 0x77

_slots = st.builds(
    ArchiveSlot,
    id_hash=st.just(0),
    kind=st.integers(0, 255),
    seq=st.integers(0, 2**64 - 1),
    content_type=st.integers(0, 255),
    role=st.integers(0, 255),
    topic_id=st.integers(1, 2**64 - 1),
    event_type=st.text(max_size=12),
    node_seq=st.integers(0, 2**32 - 1),
    created_at=st.integers(-(2**63), 2**63 - 1),
    content=st.text(max_size=40),
)


def _decoded(engine: Engine, agent_id: int) -> list[ArchiveSlot]:
    """Every content record decoded in full, addressed by its record id."""
    return [
        dataclasses.replace(ArchiveSlot.from_json(engine.read(agent_id, i).payload), id_hash=i)
        for i in engine.ids_of_type(agent_id, RecordType.ARCHIVE)
    ]


@settings(max_examples=25, deadline=None, suppress_health_check=_ONE_PATH)
@given(slots=st.lists(_slots, min_size=1, max_size=6))
def test_fields_equal_a_full_decode_of_every_record(
    meh_path: str, slots: list[ArchiveSlot]
) -> None:
    engine = create_engine(f"{meh_path}.{next(_RUNS)}")
    try:
        archive.write_contents(engine, AGENT, slots)
        archive.write_contents(engine, OTHER_AGENT, slots[:1])
        fields = all_content_fields(engine, AGENT)
        decoded = _decoded(engine, AGENT)
        assert fields == [SlotHeader.of(s) for s in decoded]
        assert len(fields) == len({(s.topic_id, s.seq) for s in slots})  # positive control
        built = L4Index.from_fields(all_content_fields(engine, AGENT))
        assert built == L4Index.from_records(decoded)
    finally:
        engine.close()


def test_payloads_in_another_shape_are_decoded_in_full(engine: Engine) -> None:
    """Whitespace, another key order and a repeated key (Go keeps the last) all read as Go reads."""
    shaped = [
        (0x11, b'{ "id_hash":1,"kind":1,"seq":3,"content_type":0,"role":0,"topic_id":9,'
         b'"created_at":5,"content":"x"}'),
        (0x12, b'{"kind":1,"id_hash":1,"seq":4,"content_type":0,"role":0,"topic_id":9,'
         b'"created_at":5,"content":"x"}'),
        (0x13, b'{"id_hash":1,"kind":0,"seq":5,"content_type":0,"role":0,"topic_id":9,'
         b'"created_at":5,"content":"x","seq":6}'),
        (0x14, b'{"id_hash":1,"kind":0,"seq":7,"content_type":0,"role":2,"topic_id":9,'
         b'"created_at":-0,"content":"caf\\u00e9"}'),
    ]  # fmt: skip
    for id_hash, payload in shaped:
        engine.write(AGENT, RecordType.ARCHIVE, id_hash, payload)
    got = {row.id_hash: row for row in all_content_fields(engine, AGENT)}
    assert (got[0x11].seq, got[0x11].kind) == (3, 1)
    assert (got[0x12].seq, got[0x12].kind) == (4, 1)
    assert got[0x13].seq == 6  # the later key wins, as in Go
    assert (got[0x14].role, got[0x14].created_at) == (2, 0)
    for id_hash, payload in shaped:
        slot = ArchiveSlot.from_json(payload)
        assert got[id_hash] == SlotHeader.of(slot)._replace(id_hash=id_hash)


def test_a_damaged_payload_is_skipped_and_counted(engine: Engine) -> None:
    engine.write(AGENT, RecordType.ARCHIVE, 0x21, b'{"id_hash":1,"kind":"not a number"}')
    good = ArchiveSlot(id_hash=0, seq=3, topic_id=9, created_at=1, content="kept")
    archive.write_content(engine, AGENT, good)
    rows = all_content_fields(engine, AGENT)
    assert [r.seq for r in rows] == [3]  # the readable one is there
    assert engine.damage()[0] == 1


def test_topic_rows_equal_a_full_decode(engine: Engine) -> None:
    """Payloads the plain path reads and payloads it leaves to from_json (escaped text,
    another key order): every topic, ascending by id, as from_json reads it.

    What each payload reads as is pinned in tests/records/test_plain_topic.py.
    """
    topics = [
        TopicSlot(
            id=2**64 - 1, scene_id=5, depth=1, name="plain", fused_keywords=("tea",),
            user_timestamp=-(2**63), agent_timestamp=2**63 - 1,
        ),
        TopicSlot(
            id=0x31, scene_id=5, parent_id=0, depth=2, name='say "hi"',
            fused_keywords=("日本", "a\\b", ""), user_timestamp=1, agent_timestamp=2,
        ),
    ]  # fmt: skip
    for t in topics:
        engine.write(AGENT, RecordType.TOPIC, t.id, t.to_json())
    reordered = b'{"scene_id":5,"id":50,"depth":1,"user_timestamp":3,"agent_timestamp":4}'
    engine.write(AGENT, RecordType.TOPIC, 50, reordered)
    decoded = [
        TopicSlot.from_json(engine.read(AGENT, i).payload)
        for i in engine.ids_of_type(AGENT, RecordType.TOPIC)
    ]
    rows = all_topic_rows(engine, AGENT)
    assert rows == decoded
    assert [t.id for t in rows] == [0x31, 50, 2**64 - 1]  # positive control
    assert rows[0] == topics[1]


def test_a_damaged_topic_is_skipped_and_counted(engine: Engine) -> None:
    engine.write(AGENT, RecordType.TOPIC, 0x31, b'{"id":"not a number"}')
    kept = TopicSlot(id=0x32, scene_id=5, depth=1, fused_keywords=("kept",))
    engine.write(AGENT, RecordType.TOPIC, kept.id, kept.to_json())
    assert all_topic_rows(engine, AGENT) == [kept]
    assert engine.damage()[0] == 1


def test_values_out_of_range_in_the_usual_shape_are_damage_as_the_full_decode_finds(
    engine: Engine,
) -> None:
    """Each bound, one past it and at it: past is refused (and counted), at it reads."""
    content = (
        b'{"id_hash":%d,"kind":%d,"seq":%d,"content_type":0,"role":0,"topic_id":9,'
        b'"node_seq":%d,"created_at":5,"content":"x"}'
    )
    # (id_hash field, kind, seq, node_seq): one past a bound, then at it
    past = [(2**64, 0, 3, 0), (0, 256, 3, 0), (0, 0, 2**64, 0), (0, 0, 3, 2**32)]
    at = [(2**64 - 1, 0, 3, 0), (0, 255, 3, 0), (0, 0, 2**64 - 1, 0), (0, 0, 3, 2**32 - 1)]
    topic = (
        b'{"id":%d,"scene_id":1,"depth":%d,"fused_keywords":null,'
        b'"user_timestamp":%d,"agent_timestamp":0}'
    )
    # (id, depth, user_timestamp)
    topic_past = [(2**64, 1, 0), (7, 256, 0), (7, 1, 2**63)]
    topic_at = [(2**64 - 1, 1, 0), (7, 255, 0), (7, 1, 2**63 - 1)]
    for n, (bad, good) in enumerate(zip(past, at, strict=True)):
        engine.write(AGENT, RecordType.ARCHIVE, 0x40 + n, content % bad)
        engine.write(AGENT, RecordType.ARCHIVE, 0x50 + n, content % good)
    for n, (bad, good) in enumerate(zip(topic_past, topic_at, strict=True)):
        engine.write(AGENT, RecordType.TOPIC, 0x60 + n, topic % bad)
        engine.write(AGENT, RecordType.TOPIC, 0x70 + n, topic % good)
    rows = all_content_fields(engine, AGENT)
    assert [r.id_hash for r in rows] == [0x50, 0x51, 0x52, 0x53]
    assert (rows[1].kind, rows[2].seq, rows[3].node_seq) == (255, 2**64 - 1, 2**32 - 1)
    assert engine.damage()[0] == len(past)
    topics = all_topic_rows(engine, AGENT)
    assert [(t.id, t.depth, t.user_timestamp) for t in topics] == topic_at
    assert engine.damage()[0] == len(past) + len(topic_past)


def test_strings_read_as_the_full_decode_reads_them(engine: Engine) -> None:
    """Escapes of every kind read; a raw control byte or a bad escape is damage, as in Go."""
    texts = {
        0x81: rb"plain",
        0x82: rb"q\"b\\s\/\b\f\n\r\t\u00e9\uD83D\uDE00",
        0x83: rb"",
        0x84: b"raw\x01byte",
        0x85: rb"bad \x escape",
        0x86: rb"short \u00e",
    }
    for id_hash, text in texts.items():
        payload = (
            b'{"id_hash":1,"kind":0,"seq":%d,"content_type":0,"role":0,"topic_id":9,'
            b'"created_at":5,"content":"%s"}' % (id_hash, text)
        )
        engine.write(AGENT, RecordType.ARCHIVE, id_hash, payload)
    got = {row.id_hash: row for row in all_content_fields(engine, AGENT)}
    assert sorted(got) == [0x81, 0x82, 0x83]
    assert [got[i].seq for i in sorted(got)] == [0x81, 0x82, 0x83]
    assert engine.damage()[0] == 3
    for id_hash in (0x84, 0x85, 0x86):  # the full decode refuses them too
        with pytest.raises(DeserializationError):
            ArchiveSlot.from_json(engine.read(AGENT, id_hash).payload)
