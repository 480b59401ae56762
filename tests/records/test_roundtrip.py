"""Every record survives to_json/from_json unchanged, for any Go-representable value."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

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

u8 = st.integers(0, 2**8 - 1)
u32 = st.integers(0, 2**32 - 1)
u64 = st.integers(0, 2**64 - 1)
i64 = st.integers(-(2**63), 2**63 - 1)
f64 = st.floats(allow_nan=False, allow_infinity=False)
# Any Unicode scalar value: emoji, CJK, controls, "<&>", U+2028; no lone surrogates.
text = st.text(st.characters(codec="utf-8"))
texts = st.lists(text, max_size=4).map(tuple)
id_lists = st.lists(u64, max_size=4).map(tuple)

RECORDS: st.SearchStrategy[Any] = st.one_of(
    st.builds(
        ProfileSlot,
        name=text,
        role=text,
        personality=text,
        emotion_state=st.builds(EmotionScore, valence=f64, arousal=f64, dominance=f64),
        mbti=st.builds(MBTIScore, i_e=f64, n_s=f64, t_f=f64, j_p=f64),
        preferences=st.dictionaries(text, text, max_size=4),
        agent_type=u8,
        updated_at_ms=i64,
    ),
    st.builds(
        SceneNode,
        id_hash=u64,
        scene_id=u64,
        topic_ids=id_lists,
        importance=f64,
        valence=f64,
        arousal=f64,
        emotion_set=st.booleans(),
        created_at=i64,
        updated_at=i64,
        edge_ids=id_lists,
    ),
    st.builds(
        SceneEdge, id_hash=u64, node_ids=id_lists, weight=f64, created_at=i64, last_decay_at=i64
    ),
    st.builds(SceneSlot, scene_id=u64, scene_name=text, turn_seq=u64, last_used_at=i64, l3_id=u64),
    st.builds(
        TopicSlot,
        id=u64,
        scene_id=u64,
        parent_id=st.none() | u64,
        depth=u8,
        name=text,
        fused_keywords=texts,
        user_timestamp=i64,
        agent_timestamp=i64,
    ),
    st.builds(HypergraphSlot, id_hash=u64, name=text, created_at=i64, updated_at=i64),
    st.builds(
        HypergraphNode,
        id_hash=u64,
        graph_id=u64,
        title=text,
        node_type=text,
        content=text,
        keywords=texts,
        source_ref=st.none() | text,
        created_at=i64,
        updated_at=i64,
    ),
    st.builds(
        HypergraphEdge, id_hash=u64, graph_id=u64, kind=u8, node_ids=id_lists, created_at=i64
    ),
    st.builds(
        ArchiveSlot,
        id_hash=u64,
        kind=u8,
        seq=u64,
        content_type=u8,
        role=u8,
        topic_id=u64,
        event_type=text,
        node_seq=u32,
        created_at=i64,
        content=text,
    ),
    st.builds(
        PlanNode,
        id_hash=u64,
        topic_id=u64,
        seq=u32,
        parent_seq=u32,
        status=u8,
        title=text,
        summary=text,
        summary_folded=st.booleans(),
        created_at=i64,
        finished_at=i64,
        updated_at=i64,
    ),
    st.builds(RegistryName, name=text),
)


@given(RECORDS)
def test_every_record_round_trips(record: Any) -> None:
    payload = record.to_json()
    decoded = type(record).from_json(payload)
    assert decoded == record
    assert decoded.to_json() == payload


@given(RECORDS)
def test_payload_keys_follow_field_declaration_order(record: Any) -> None:
    parsed = json.loads(record.to_json())  # valid JSON for a standard parser too
    if isinstance(record, RegistryName):
        assert parsed == record.name
        return
    declared = [f.name for f in dataclasses.fields(record)]
    assert list(parsed) == [name for name in declared if name in parsed]
