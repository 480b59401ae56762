"""Golden payload bytes for every record type, key order and omitempty included."""

from __future__ import annotations

from typing import Any

import pytest

from memhop import records as r
from memhop.errors import SerializationError
from memhop.records import (
    ArchiveSlot,
    EmotionScore,
    HypergraphEdge,
    HypergraphNode,
    HypergraphSlot,
    MBTIScore,
    PlanNode,
    ProfileSlot,
    RegistryName,
    SceneEdge,
    SceneNode,
    SceneSlot,
    TopicSlot,
)

BIG = 2**64 - 1  # above 2**53: must survive without passing through a float

GOLDEN: list[tuple[Any, bytes]] = [
    (
        ProfileSlot(
            name="Ada",
            role="coder",
            personality="calm",
            emotion_state=EmotionScore(valence=0.8, arousal=0.6, dominance=0.5),
            mbti=MBTIScore(i_e=0.2, n_s=0.3, t_f=-0.1, j_p=0.4),
            preferences={"tone": "dry", "lang": "en"},
            agent_type=r.AgentType.SUB,
            updated_at_ms=1700000000000,
        ),
        b'{"name":"Ada","role":"coder","personality":"calm",'
        b'"emotion_state":{"valence":0.8,"arousal":0.6,"dominance":0.5},'
        b'"mbti":{"i_e":0.2,"n_s":0.3,"t_f":-0.1,"j_p":0.4},'
        b'"preferences":{"lang":"en","tone":"dry"},"agent_type":1,"updated_at_ms":1700000000000}',
    ),
    (
        ProfileSlot(),
        b'{"name":"","role":"","personality":"",'
        b'"emotion_state":{"valence":0,"arousal":0,"dominance":0},'
        b'"mbti":{"i_e":0,"n_s":0,"t_f":0,"j_p":0},'
        b'"preferences":{},"agent_type":0,"updated_at_ms":0}',
    ),
    (
        SceneNode(
            id_hash=BIG,
            scene_id=7,
            topic_ids=(1, BIG),
            importance=0.5,
            valence=0.0,
            arousal=1.0,
            emotion_set=True,
            created_at=10,
            updated_at=20,
            edge_ids=(3,),
        ),
        b'{"id_hash":18446744073709551615,"scene_id":7,"topic_ids":[1,18446744073709551615],'
        b'"importance":0.5,"valence":0,"arousal":1,"emotion_set":true,"created_at":10,'
        b'"updated_at":20,"edge_ids":[3]}',
    ),
    (
        SceneNode(id_hash=1),
        b'{"id_hash":1,"scene_id":0,"topic_ids":[],"importance":0,"valence":0,"arousal":0,'
        b'"created_at":0,"updated_at":0,"edge_ids":[]}',
    ),
    (
        SceneEdge(id_hash=9, node_ids=(1, 2), weight=0.25, created_at=5, last_decay_at=6),
        b'{"id_hash":9,"node_ids":[1,2],"weight":0.25,"created_at":5,"last_decay_at":6}',
    ),
    (
        SceneSlot(
            scene_id=BIG,
            scene_name="session:ffffffffffffffff",
            turn_seq=3,
            last_used_at=99,
            l3_id=4,
        ),
        b'{"scene_id":18446744073709551615,"scene_name":"session:ffffffffffffffff",'
        b'"turn_seq":3,"last_used_at":99,"l3_id":4}',
    ),
    (
        SceneSlot(scene_id=1, scene_name="s"),
        b'{"scene_id":1,"scene_name":"s","l3_id":0}',
    ),
    (
        TopicSlot(
            id=BIG,
            scene_id=2,
            parent_id=3,
            depth=2,
            name="Rust <lifetimes>",
            fused_keywords=("borrow", "生命周期"),
            user_timestamp=100,
            agent_timestamp=101,
        ),
        b'{"id":18446744073709551615,"scene_id":2,"parent_id":3,"depth":2,'
        b'"name":"Rust \\u003clifetimes\\u003e","fused_keywords":["borrow","'
        + "生命周期".encode()
        + b'"],"user_timestamp":100,"agent_timestamp":101}',
    ),
    (
        TopicSlot(id=1, scene_id=2, depth=1),
        b'{"id":1,"scene_id":2,"depth":1,"fused_keywords":[],"user_timestamp":0,'
        b'"agent_timestamp":0}',
    ),
    (
        TopicSlot(id=1, parent_id=0, depth=2),
        b'{"id":1,"scene_id":0,"parent_id":0,"depth":2,"fused_keywords":[],'
        b'"user_timestamp":0,"agent_timestamp":0}',
    ),
    (
        HypergraphSlot(id_hash=5, name="notes", created_at=1, updated_at=2),
        b'{"id_hash":5,"name":"notes","created_at":1,"updated_at":2}',
    ),
    (
        HypergraphNode(
            id_hash=6,
            graph_id=5,
            title="T",
            node_type="concept",
            content="c&d",
            keywords=("k",),
            source_ref="doc.md",
            created_at=1,
            updated_at=2,
        ),
        b'{"id_hash":6,"graph_id":5,"title":"T","node_type":"concept","content":"c\\u0026d",'
        b'"keywords":["k"],"source_ref":"doc.md","created_at":1,"updated_at":2}',
    ),
    (
        HypergraphNode(id_hash=6),
        b'{"id_hash":6,"graph_id":0,"title":"","node_type":"","content":"","keywords":[],'
        b'"created_at":0,"updated_at":0}',
    ),
    (
        HypergraphEdge(
            id_hash=7, graph_id=5, kind=r.GraphEdgeKind.PART_OF, node_ids=(1, 2, 3), created_at=9
        ),
        b'{"id_hash":7,"graph_id":5,"kind":2,"node_ids":[1,2,3],"created_at":9}',
    ),
    (
        ArchiveSlot(
            id_hash=8,
            kind=r.ArchiveKind.EVENT,
            seq=3,
            content_type=r.ContentType.OTHER,
            role=r.ArchiveRole.USER,
            topic_id=BIG,
            event_type="tool_call",
            node_seq=2,
            created_at=-5,
            content="ran\ttests",
        ),
        b'{"id_hash":8,"kind":1,"seq":3,"content_type":255,"role":0,'
        b'"topic_id":18446744073709551615,"event_type":"tool_call","node_seq":2,'
        b'"created_at":-5,"content":"ran\\ttests"}',
    ),
    (
        ArchiveSlot(id_hash=8, seq=r.SEQ_AGENT, role=r.ArchiveRole.AGENT, content="hi"),
        b'{"id_hash":8,"kind":0,"seq":2,"content_type":0,"role":1,"topic_id":0,'
        b'"created_at":0,"content":"hi"}',
    ),
    (
        PlanNode(
            id_hash=10,
            topic_id=11,
            seq=2,
            parent_seq=1,
            status=r.PlanStatusCode.DONE,
            title="write tests",
            summary="done",
            summary_folded=True,
            created_at=1,
            finished_at=2,
            updated_at=3,
        ),
        b'{"id_hash":10,"topic_id":11,"seq":2,"parent_seq":1,"status":1,"title":"write tests",'
        b'"summary":"done","summary_folded":true,"created_at":1,"finished_at":2,"updated_at":3}',
    ),
    (
        PlanNode(id_hash=10, topic_id=11, seq=1),
        b'{"id_hash":10,"topic_id":11,"seq":1,"parent_seq":0,"status":0,"created_at":0,'
        b'"updated_at":0}',
    ),
    (RegistryName(name="worker"), b'"worker"'),
    (RegistryName(name="a<b>"), b'"a\\u003cb\\u003e"'),
]


@pytest.mark.parametrize(("record", "payload"), GOLDEN, ids=lambda v: type(v).__name__)
def test_golden_payload_bytes(record: Any, payload: bytes) -> None:
    assert record.to_json() == payload
    assert type(record).from_json(payload) == record


def test_every_record_type_has_a_golden_payload() -> None:
    covered = {type(record).RECORD_TYPE for record, _ in GOLDEN}
    assert covered == set(r.RecordType)


def test_unnamed_topic_has_no_name_key() -> None:
    assert b'"name"' not in TopicSlot(id=1, depth=1).to_json()
    assert b'"name":"n"' in TopicSlot(id=1, depth=1, name="n").to_json()


def test_root_topic_has_no_parent_key() -> None:
    assert b"parent_id" not in TopicSlot(id=1, depth=1).to_json()


def test_mbti_type_is_never_stored() -> None:
    slot = ProfileSlot(mbti=MBTIScore(i_e=1.0, n_s=1.0, t_f=1.0, j_p=1.0))
    assert slot.mbti.type == "ESFP"
    assert b'"type"' not in slot.to_json()


def test_stored_mbti_type_is_ignored_and_rederived_from_the_axes() -> None:
    payload = b'{"mbti":{"i_e":0.5,"n_s":0.1,"t_f":0.9,"j_p":0.2,"type":"INTJ"}}'
    assert ProfileSlot.from_json(payload).mbti.type == "ESFP"


@pytest.mark.parametrize(
    ("axes", "word"),
    [
        ((0.0, 0.0, 0.0, 0.0), ""),
        ((0.2, 0.3, -0.1, 0.4), "ESTP"),
        ((-1.0, -1.0, -1.0, -1.0), "INTJ"),
        ((0.0, -0.5, 0.5, 0.0), "XNFX"),
        ((-0.0, 0.0, 0.0, 1e-300), "XXXP"),
    ],
)
def test_derive_mbti_type(axes: tuple[float, float, float, float], word: str) -> None:
    i_e, n_s, t_f, j_p = axes
    score = MBTIScore(i_e=i_e, n_s=n_s, t_f=t_f, j_p=j_p)
    assert r.derive_mbti_type(score) == word
    assert score.type == word


def test_profile_preferences_are_a_private_read_only_copy() -> None:
    prefs = {"a": "1"}
    slot = ProfileSlot(preferences=prefs)
    prefs["b"] = "2"
    assert dict(slot.preferences) == {"a": "1"}
    with pytest.raises(TypeError):
        slot.preferences["c"] = "3"  # type: ignore[index]
    assert hash(slot) == hash(ProfileSlot(preferences={"a": "1"}))


def test_records_are_frozen_and_keyword_only() -> None:
    topic = TopicSlot(id=1)
    with pytest.raises(AttributeError):
        topic.depth = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        TopicSlot(1)  # type: ignore[misc]


@pytest.mark.parametrize(
    "record",
    [
        TopicSlot(id=-1),
        TopicSlot(id=1, depth=256),
        ProfileSlot(emotion_state=EmotionScore(valence=float("nan"))),
        PlanNode(id_hash=1, seq=2**32),
        SceneNode(id_hash=1, topic_ids=(2**64,)),
    ],
    ids=lambda v: type(v).__name__,
)
def test_values_go_cannot_hold_refuse_to_encode(record: Any) -> None:
    with pytest.raises(SerializationError) as info:
        record.to_json()
    assert f"marshal {type(record).__name__}" in str(info.value)
