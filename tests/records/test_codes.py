"""On-disk codes are pinned to upstream's numbers."""

from __future__ import annotations

from enum import IntEnum

import pytest

from memhop import records as r


@pytest.mark.parametrize(
    ("enum", "table"),
    [
        (
            r.RecordType,
            {
                "PROFILE": 0x01,
                "SCENE_NODE": 0x02,
                "SCENE_EDGE": 0x03,
                "TOPIC": 0x04,
                "SCENE": 0x05,
                "GRAPH_NODE": 0x06,
                "GRAPH_EDGE": 0x07,
                "ARCHIVE": 0x08,
                "GRAPH_SLOT": 0x0B,
                "PLAN_NODE": 0x0F,
                "REGISTRY": 0x10,
            },
        ),
        (r.ArchiveKind, {"UTTERANCE": 0, "EVENT": 1}),
        (r.ArchiveRole, {"USER": 0, "AGENT": 1, "SYSTEM": 2, "DREAM": 3}),
        (
            r.ContentType,
            {"TEXT": 0, "IMAGE": 1, "VIDEO": 2, "DOCUMENT": 3, "AUDIO": 4, "CODE": 5, "OTHER": 255},
        ),
        (
            r.GraphEdgeKind,
            {"RELATED": 0, "CAUSAL": 1, "PART_OF": 2, "SEQUENCE": 3, "DEPENDENCY": 4, "CUSTOM": 5},
        ),
        (r.PlanStatusCode, {"IN_PROGRESS": 0, "DONE": 1, "FAILED": 2}),
        (r.AgentType, {"PRIMARY": 0, "SUB": 1}),
    ],
)
def test_enum_values_match_upstream(enum: type[IntEnum], table: dict[str, int]) -> None:
    assert {m.name: m.value for m in enum} == table


def test_record_classes_carry_their_frame_type() -> None:
    assert r.ProfileSlot.RECORD_TYPE is r.RecordType.PROFILE
    assert r.SceneNode.RECORD_TYPE is r.RecordType.SCENE_NODE
    assert r.SceneEdge.RECORD_TYPE is r.RecordType.SCENE_EDGE
    assert r.TopicSlot.RECORD_TYPE is r.RecordType.TOPIC
    assert r.SceneSlot.RECORD_TYPE is r.RecordType.SCENE
    assert r.HypergraphNode.RECORD_TYPE is r.RecordType.GRAPH_NODE
    assert r.HypergraphEdge.RECORD_TYPE is r.RecordType.GRAPH_EDGE
    assert r.ArchiveSlot.RECORD_TYPE is r.RecordType.ARCHIVE
    assert r.HypergraphSlot.RECORD_TYPE is r.RecordType.GRAPH_SLOT
    assert r.PlanNode.RECORD_TYPE is r.RecordType.PLAN_NODE
    assert r.RegistryName.RECORD_TYPE is r.RecordType.REGISTRY


def test_utterance_seqs() -> None:
    assert (r.SEQ_USER, r.SEQ_AGENT) == (1, 2)


def test_known_keeps_unnamed_numbers_as_plain_ints() -> None:
    assert r.known(r.ContentType, 255) is r.ContentType.OTHER
    assert type(r.known(r.ContentType, 6)) is int
    assert type(r.known(r.PlanStatusCode, 3)) is int


def test_public_names_are_importable() -> None:
    # Their order is ruff's RUF022 business; here only that each resolves.
    for name in r.__all__:
        assert getattr(r, name) is not None
