"""Decoding follows Go's Unmarshal: what it accepts, what it refuses."""

from __future__ import annotations

import math
from typing import Any

import pytest

from memhop.errors import DeserializationError
from memhop.records import (
    ArchiveKind,
    ArchiveRole,
    ArchiveSlot,
    ContentType,
    GraphEdgeKind,
    HypergraphEdge,
    HypergraphNode,
    PlanNode,
    PlanStatusCode,
    ProfileSlot,
    RegistryName,
    SceneEdge,
    SceneNode,
    TopicSlot,
)


def test_null_and_empty_array_both_read_as_an_empty_collection() -> None:
    for payload in (b'{"id_hash":1,"topic_ids":null,"edge_ids":[]}', b'{"id_hash":1}'):
        node = SceneNode.from_json(payload)
        assert node.topic_ids == ()
        assert node.edge_ids == ()
    assert TopicSlot.from_json(b'{"id":1,"fused_keywords":null}').fused_keywords == ()
    assert dict(ProfileSlot.from_json(b'{"preferences":null}').preferences) == {}
    assert HypergraphNode.from_json(b'{"id_hash":1,"keywords":null}').keywords == ()


def test_unknown_keys_are_ignored_and_missing_keys_are_zero() -> None:
    topic = TopicSlot.from_json(b'{"id":5,"surprise":{"nested":[1,2]},"weight":1.5}')
    assert topic == TopicSlot(id=5)


def test_keys_match_case_insensitively_as_in_go() -> None:
    topic = TopicSlot.from_json(b'{"ID":5,"Scene_Id":6,"DEPTH":1,"Name":"n"}')
    assert topic == TopicSlot(id=5, scene_id=6, depth=1, name="n")
    # Go's folding also maps U+017F (long s) to s and U+212A (Kelvin) to k.
    assert TopicSlot.from_json('{"id":1,"ſcene_id":7}'.encode()).scene_id == 7
    node = HypergraphNode.from_json('{"id_hash":1,"\u212aeywords":["x"]}'.encode())
    assert node.keywords == ("x",)
    # Full case folding is not Go's: the "fi" ligature does not match "fi".
    assert PlanNode.from_json('{"id_hash":1,"\ufb01nished_at":4}'.encode()).finished_at == 0


def test_a_later_duplicate_key_wins_but_null_leaves_a_scalar_alone() -> None:
    assert TopicSlot.from_json(b'{"id":1,"name":"a","NAME":"b"}').name == "b"
    assert TopicSlot.from_json(b'{"id":1,"name":"a","name":null}').name == "a"
    # A null pointer or slice is reset to nil, unlike a scalar.
    assert TopicSlot.from_json(b'{"id":1,"parent_id":3,"parent_id":null}').parent_id is None
    assert TopicSlot.from_json(b'{"id":1,"fused_keywords":["a"],"fused_keywords":null}') == (
        TopicSlot(id=1)
    )


def test_repeated_map_and_struct_values_merge_as_in_go() -> None:
    slot = ProfileSlot.from_json(
        b'{"preferences":{"a":"1"},"preferences":{"b":"2"},'
        b'"mbti":{"i_e":1},"mbti":{"n_s":-1},"mbti":null}'
    )
    assert dict(slot.preferences) == {"a": "1", "b": "2"}
    assert (slot.mbti.i_e, slot.mbti.n_s) == (1.0, -1.0)


def test_null_elements_read_as_zero_values() -> None:
    assert SceneEdge.from_json(b'{"id_hash":1,"node_ids":[4,null,5]}').node_ids == (4, 0, 5)
    assert TopicSlot.from_json(b'{"id":1,"fused_keywords":["a",null]}').fused_keywords == ("a", "")
    assert dict(ProfileSlot.from_json(b'{"preferences":{"k":null}}').preferences) == {"k": ""}


def test_a_null_payload_reads_as_the_zero_record() -> None:
    assert TopicSlot.from_json(b"null") == TopicSlot(id=0)
    assert RegistryName.from_json(b"null") == RegistryName(name="")


def test_ids_above_2_53_keep_every_bit() -> None:
    big = 2**64 - 1
    odd = 2**53 + 1  # not representable as a float
    node = SceneNode.from_json(f'{{"id_hash":{big},"topic_ids":[{odd},{big}]}}'.encode())
    assert node.id_hash == big
    assert node.topic_ids == (odd, big)


def test_float_fields_accept_integer_literals() -> None:
    node = SceneNode.from_json(b'{"id_hash":1,"importance":1,"valence":-0,"arousal":2.5e-1}')
    assert node.importance == 1.0
    assert isinstance(node.importance, float)
    assert math.copysign(1.0, node.valence) == -1.0
    assert node.arousal == 0.25


def test_int64_fields_take_negative_values_and_minus_zero() -> None:
    assert ArchiveSlot.from_json(b'{"id_hash":1,"created_at":-9223372036854775808}').created_at == (
        -(2**63)
    )
    assert ArchiveSlot.from_json(b'{"id_hash":1,"created_at":-0}').created_at == 0


def test_known_enum_numbers_read_as_members_and_unknown_stay_ints() -> None:
    slot = ArchiveSlot.from_json(b'{"id_hash":1,"kind":1,"content_type":255,"role":3}')
    assert slot.kind is ArchiveKind.EVENT
    assert slot.content_type is ContentType.OTHER
    assert slot.role is ArchiveRole.DREAM
    odd = ArchiveSlot.from_json(b'{"id_hash":1,"kind":2,"content_type":6,"role":4}')
    for value, number in ((odd.kind, 2), (odd.content_type, 6), (odd.role, 4)):
        assert type(value) is int
        assert value == number
    plan = PlanNode.from_json(b'{"id_hash":1,"status":3}')
    assert type(plan.status) is int
    assert PlanNode.from_json(b'{"id_hash":1,"status":2}').status is PlanStatusCode.FAILED
    edge = HypergraphEdge.from_json(b'{"id_hash":1,"kind":9}')
    assert type(edge.kind) is int
    assert HypergraphEdge.from_json(b'{"id_hash":1,"kind":5}').kind is GraphEdgeKind.CUSTOM
    assert type(ProfileSlot.from_json(b'{"agent_type":7}').agent_type) is int
    # An unknown number is written back unchanged.
    assert b'"kind":2' in odd.to_json()


def test_invalid_utf8_and_lone_surrogates_read_as_replacement_runes() -> None:
    assert RegistryName.from_json(b'"a\xffb"').name == "a\ufffdb"
    # One U+FFFD per bad byte, as Go's decoder does.
    assert RegistryName.from_json(b'"\xe2\x82"').name == "\ufffd\ufffd"
    assert RegistryName.from_json(b'"\\ud800x"').name == "\ufffdx"
    assert RegistryName.from_json(b'"\\ud83d\\ude00"').name == "😀"


@pytest.mark.parametrize(
    ("record", "payload"),
    [
        (TopicSlot, b'{"id":1.0}'),
        (TopicSlot, b'{"id":1e3}'),
        (TopicSlot, b'{"id":"1"}'),
        (TopicSlot, b'{"id":-1}'),
        (TopicSlot, b'{"id":-0}'),
        (TopicSlot, b'{"id":18446744073709551616}'),
        (TopicSlot, b'{"id":true}'),
        (TopicSlot, b'{"depth":256}'),
        (TopicSlot, b'{"parent_id":"x"}'),
        (TopicSlot, b'{"fused_keywords":"a"}'),
        (TopicSlot, b'{"fused_keywords":[1]}'),
        (TopicSlot, b'{"name":5}'),
        (TopicSlot, b'{"id":1'),
        (TopicSlot, b""),
        (TopicSlot, b"[]"),
        (TopicSlot, b'"topic"'),
        (TopicSlot, b'{"id":1} x'),
        (TopicSlot, b"\xef\xbb\xbf{}"),
        (TopicSlot, b'{"id":1,}'),
        (ArchiveSlot, b'{"node_seq":4294967296}'),
        (ArchiveSlot, b'{"created_at":9223372036854775808}'),
        (PlanNode, b'{"summary_folded":1}'),
        (SceneNode, b'{"importance":"0.5"}'),
        (SceneNode, b'{"importance":NaN}'),
        (SceneNode, b'{"importance":Infinity}'),
        (SceneNode, b'{"importance":1e400}'),
        (SceneNode, b'{"topic_ids":{"a":1}}'),
        (ProfileSlot, b'{"preferences":{"a":1}}'),
        (ProfileSlot, b'{"preferences":["a"]}'),
        (ProfileSlot, b'{"mbti":[0.1]}'),
        (ProfileSlot, b'{"emotion_state":{"valence":"high"}}'),
        (RegistryName, b"42"),
        (RegistryName, b'{"name":"w"}'),
        (RegistryName, b'"unterminated'),
    ],
)
def test_malformed_payloads_raise_deserialization_error(record: Any, payload: bytes) -> None:
    record.from_json(b"{}" if record is not RegistryName else b'"ok"')  # positive control
    with pytest.raises(DeserializationError) as info:
        record.from_json(payload)
    assert f"unmarshal {record.__name__}" in str(info.value)
    assert info.value.code == 5007
