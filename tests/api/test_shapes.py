"""Every public shape's to_dict is upstream's JSON object, key for key and in order."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from memhop.api import results as res
from memhop.api import results_graph as res_graph
from memhop.api import results_upkeep as res_upkeep
from memhop.api.types import (
    ArchiveKind,
    ArchiveRole,
    ContentType,
    GraphEdgeKind,
    L3ImportItem,
    L3Relation,
    PlanStatus,
    Result,
)

A = "00000000000000aa"
B = "00000000000000bb"
C = "00000000000000cc"


def _zero_and_full() -> list[tuple[Result, dict[str, Any]]]:
    """(value, its exact to_dict) pairs: each type once at its zero and once filled."""
    stage = res_upkeep.DreamStage(name="l4_prune", status="ok", duration_ms=3)
    message = res.SceneMessage(
        role=ArchiveRole.DREAM, type=ContentType.OTHER, content="hi", seq=4, created_at=9
    )
    slot = res_graph.HypergraphSlot(id=A, name="g", created_at=1, updated_at=2)
    node = res_graph.HypergraphNode(
        id=B,
        graph_id=A,
        title="t",
        node_type="concept",
        content="c",
        keywords=("k",),
        source_ref="a.go:1",
        created_at=3,
        updated_at=4,
    )
    edge = res_graph.HypergraphEdge(
        id=C, graph_id=A, kind=GraphEdgeKind.PART_OF, node_ids=(B, C), created_at=5
    )
    leaf = res.PlanNodeView(seq=2, parent_seq=1, title="b", status=PlanStatus.DONE)
    root = res.PlanNodeView(
        seq=1,
        title="a",
        status=PlanStatus.FAILED,
        summary="s",
        created_at=1,
        finished_at=2,
        updated_at=3,
        children=(leaf,),
    )
    leaf_dict = {
        "seq": 2,
        "parent_seq": 1,
        "title": "b",
        "status": "done",
        "summary": "",
        "created_at": 0,
        "finished_at": 0,
        "updated_at": 0,
        "children": [],
    }
    node_dict = {
        "id": B,
        "graph_id": A,
        "title": "t",
        "node_type": "concept",
        "content": "c",
        "keywords": ["k"],
        "source_ref": "a.go:1",
        "created_at": 3,
        "updated_at": 4,
    }
    edge_dict = {"id": C, "graph_id": A, "kind": 2, "node_ids": [B, C], "created_at": 5}
    slot_dict = {"id": A, "name": "g", "created_at": 1, "updated_at": 2}
    zero_profile = {
        "name": "",
        "role": "",
        "personality": "",
        "emotion_state": {"valence": 0.0, "arousal": 0.0, "dominance": 0.0},
        "mbti": {"i_e": 0.0, "n_s": 0.0, "t_f": 0.0, "j_p": 0.0},
        "preferences": {},
        "agent_type": 0,
        "updated_at_ms": 0,
    }
    return [
        (res.EmotionScore(valence=0.5), {"valence": 0.5, "arousal": 0.0, "dominance": 0.0}),
        (res.MBTIScore(i_e=-1.0), {"i_e": -1.0, "n_s": 0.0, "t_f": 0.0, "j_p": 0.0}),
        (res.ProfileSlot(), zero_profile),
        (
            res.ProfileSlot(name="n", preferences={"z": "1", "a": "2"}, agent_type=1),
            {**zero_profile, "name": "n", "preferences": {"z": "1", "a": "2"}, "agent_type": 1},
        ),
        (res.SceneSlot(scene_id=A), {"scene_id": A, "scene_name": ""}),
        (
            res.SceneSlot(scene_id=A, scene_name="s", l3_id=B),
            {"scene_id": A, "scene_name": "s", "l3_id": B},
        ),
        (
            res.TopicSlot(id=A),
            {
                "id": A,
                "scene_id": "",
                "depth": 0,
                "fused_keywords": [],
                "user_timestamp": 0,
                "agent_timestamp": 0,
            },
        ),
        (
            res.TopicSlot(
                id=A,
                scene_id=B,
                parent_id="0000000000000000",
                depth=2,
                name="n",
                fused_keywords=("x", "y"),
                user_timestamp=1,
                agent_timestamp=2,
            ),
            {
                "id": A,
                "scene_id": B,
                "parent_id": "0000000000000000",
                "depth": 2,
                "name": "n",
                "fused_keywords": ["x", "y"],
                "user_timestamp": 1,
                "agent_timestamp": 2,
            },
        ),
        (
            res.SearchResult(scene=res.SceneSlot(scene_id=A), new_topic_id=B),
            {
                "profile": zero_profile,
                "profile_brief": "",
                "scene": {"scene_id": A, "scene_name": ""},
                "topics": [],
                "new_topic_id": B,
            },
        ),
        (
            message,
            {"role": 3, "type": 255, "content": "hi", "seq": 4, "created_at": 9},
        ),
        (
            res.SceneContextTopic(topic_id=A),
            {
                "topic_id": A,
                "depth": 0,
                "keywords": [],
                "child_count": 0,
                "user_timestamp": 0,
                "agent_timestamp": 0,
            },
        ),
        (
            res.SceneContextTopic(
                topic_id=A,
                depth=1,
                name="n",
                keywords=("k",),
                messages=(message,),
                child_count=2,
                user_timestamp=1,
                agent_timestamp=2,
            ),
            {
                "topic_id": A,
                "depth": 1,
                "name": "n",
                "keywords": ["k"],
                "messages": [{"role": 3, "type": 255, "content": "hi", "seq": 4, "created_at": 9}],
                "child_count": 2,
                "user_timestamp": 1,
                "agent_timestamp": 2,
            },
        ),
        (res.SceneContext(), {"scene_name": "", "topics": []}),
        (
            res.ArchiveSlot(id=A),
            {
                "id": A,
                "kind": 0,
                "seq": 0,
                "content_type": 0,
                "role": 0,
                "topic_id": "",
                "created_at": 0,
                "content": "",
            },
        ),
        (
            res.ArchiveSlot(
                id=A,
                kind=ArchiveKind.EVENT,
                seq=3,
                content_type=ContentType.CODE,
                role=ArchiveRole.USER,
                topic_id=B,
                event_type="tool_call",
                node_seq=2,
                created_at=7,
                content="c",
            ),
            {
                "id": A,
                "kind": 1,
                "seq": 3,
                "content_type": 5,
                "role": 0,
                "topic_id": B,
                "event_type": "tool_call",
                "node_seq": 2,
                "created_at": 7,
                "content": "c",
            },
        ),
        (
            res_graph.SceneNodeView(id=A),
            {
                "id": A,
                "scene_id": "",
                "topic_ids": [],
                "edge_ids": [],
                "importance": 0.0,
                "valence": 0.0,
                "arousal": 0.0,
                "emotion_set": False,
                "created_at": 0,
                "updated_at": 0,
            },
        ),
        (slot, slot_dict),
        (node, node_dict),
        (
            res_graph.HypergraphNode(id=B),
            {
                "id": B,
                "graph_id": "",
                "title": "",
                "node_type": "",
                "content": "",
                "keywords": [],
                "created_at": 0,
                "updated_at": 0,
            },
        ),
        (edge, edge_dict),
        (
            res_graph.L3Graph(slot=slot, nodes=(node,), edges=(edge,)),
            {"slot": slot_dict, "nodes": [node_dict], "edges": [edge_dict]},
        ),
        (res_graph.L3Subgraph(), {"nodes": [], "edges": []}),
        (
            res_graph.L3ImportResult(),
            {
                "graph_ids": [],
                "created_ids": [],
                "updated_ids": [],
                "skipped_count": 0,
                "errors": [],
            },
        ),
        (
            res_graph.L3ImportResult(
                graph_ids=(A,),
                created_ids=(B,),
                updated_ids=(C,),
                skipped_count=1,
                edges_created=2,
                errors=("e",),
            ),
            {
                "graph_ids": [A],
                "created_ids": [B],
                "updated_ids": [C],
                "skipped_count": 1,
                "edges_created": 2,
                "errors": ["e"],
            },
        ),
        (leaf, leaf_dict),
        (
            root,
            {
                "seq": 1,
                "parent_seq": 0,
                "title": "a",
                "status": "failed",
                "summary": "s",
                "created_at": 1,
                "finished_at": 2,
                "updated_at": 3,
                "children": [leaf_dict],
            },
        ),
        (res.PlanTree(), {"roots": [], "done_count": 0, "total_count": 0}),
        (stage, {"name": "l4_prune", "status": "ok", "duration_ms": 3}),
        (
            res_upkeep.DreamReport(),
            {
                "l4_records_pruned": 0,
                "l5_nodes_pruned": 0,
                "consolidated_scenes": 0,
                "l2_topics_compressed": 0,
                "l1_nodes_added": 0,
                "l1_edges_added": 0,
                "l1_nodes_removed": 0,
                "l1_edges_removed": 0,
                "l0_updated": False,
            },
        ),
        (
            res_upkeep.DreamReport(l4_records_pruned=4, l0_updated=True, stages=(stage,)),
            {
                "l4_records_pruned": 4,
                "l5_nodes_pruned": 0,
                "consolidated_scenes": 0,
                "l2_topics_compressed": 0,
                "l1_nodes_added": 0,
                "l1_edges_added": 0,
                "l1_nodes_removed": 0,
                "l1_edges_removed": 0,
                "l0_updated": True,
                "stages": [{"name": "l4_prune", "status": "ok", "duration_ms": 3}],
            },
        ),
        (
            res_upkeep.AgentInfo(id="0000000000000000", name="p", primary=True),
            {"id": "0000000000000000", "name": "p", "primary": True},
        ),
        (
            res_upkeep.ModelUsage(
                operations=1, requests=5, prompt_tokens=2, completion_tokens=3, failures=4
            ),
            {
                "operations": 1,
                "requests": 5,
                "prompt_tokens": 2,
                "completion_tokens": 3,
                "failures": 4,
            },
        ),
        (
            res_upkeep.DBStats(),
            {
                "file_bytes": 0,
                "record_count": 0,
                "model_usage": {},
                "damaged_records": 0,
                "damaged_frames": 0,
                "tail_bytes_cut": 0,
            },
        ),
        (res_upkeep.SalvageReport(), {"records_copied": 0, "left_behind": []}),
        (
            res_upkeep.DamagedRecord(
                agent_id=A, id=B, offset=-1, record_type=-1, record_kind="unknown", reason=""
            ),
            {
                "agent_id": A,
                "id": B,
                "offset": -1,
                "record_type": -1,
                "record_kind": "unknown",
                "reason": "",
            },
        ),
        (
            res.RecallHit(scene_id=A, topic_id=B, score=1.5),
            {
                "scene_id": A,
                "topic_id": B,
                "score": 1.5,
                "created_at": 0,
                "keywords": [],
                "text": "",
                "event_type": "",
                "origin": "turn",
                "derived_from": [],
                "grounding": None,
            },
        ),
        (
            res_upkeep.DBStats(
                file_bytes=10,
                record_count=2,
                model_usage={A: res_upkeep.ModelUsage(operations=1)},
                damaged_records=3,
                damaged_frames=1,
                tail_bytes_cut=26,
            ),
            {
                "file_bytes": 10,
                "record_count": 2,
                "model_usage": {
                    A: {
                        "operations": 1,
                        "requests": 0,
                        "prompt_tokens": 0,
                        "completion_tokens": 0,
                        "failures": 0,
                    }
                },
                "damaged_records": 3,
                "damaged_frames": 1,
                "tail_bytes_cut": 26,
            },
        ),
        (
            res_upkeep.SalvageReport(
                records_copied=5,
                left_behind=(
                    res_upkeep.DamagedRecord(
                        agent_id=A,
                        id=B,
                        offset=8192,
                        record_type=4,
                        record_kind="topic",
                        reason="record at offset 8192 failed CRC32 check",
                    ),
                ),
            ),
            {
                "records_copied": 5,
                "left_behind": [
                    {
                        "agent_id": A,
                        "id": B,
                        "offset": 8192,
                        "record_type": 4,
                        "record_kind": "topic",
                        "reason": "record at offset 8192 failed CRC32 check",
                    }
                ],
            },
        ),
    ]


CASES = _zero_and_full()


@pytest.mark.parametrize(("value", "expected"), CASES, ids=lambda v: type(v).__name__)
def test_to_dict_is_the_go_json_shape_in_go_key_order(
    value: Result, expected: dict[str, Any]
) -> None:
    got = value.to_dict()
    assert got == expected
    assert list(got) == list(expected), "keys out of Go field order"
    # The shape survives JSON: plain containers, no enum objects, nothing null.
    assert json.loads(json.dumps(got)) == expected


def test_every_result_type_has_a_golden_shape() -> None:
    covered = {type(value).__name__ for value, _ in CASES}
    assert covered == {*res.__all__, *res_graph.__all__, *res_upkeep.__all__}


def test_enum_members_leave_as_plain_numbers_and_words() -> None:
    got = res.ArchiveSlot(id=A, kind=ArchiveKind.EVENT).to_dict()
    assert type(got["kind"]) is int
    view = res.PlanNodeView(seq=1, status=PlanStatus.DONE).to_dict()
    assert type(view["status"]) is str
    assert view["status"] == "done"


def test_an_undefined_stored_number_stays_a_plain_int() -> None:
    got = res_graph.HypergraphEdge(id=A, kind=9).to_dict()
    assert got["kind"] == 9


def test_to_dict_hands_out_fresh_containers() -> None:
    value = res.ProfileSlot(preferences={"a": "1"})
    first = value.to_dict()
    first["preferences"]["b"] = "2"
    assert value.to_dict()["preferences"] == {"a": "1"}


@pytest.mark.parametrize(("value", "expected"), CASES, ids=lambda v: type(v).__name__)
def test_results_are_frozen(value: Result, expected: dict[str, Any]) -> None:
    name = next(iter(expected))
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, name, None)
    assert not hasattr(value, "__dict__"), "results are slotted"


@pytest.mark.parametrize(("value", "expected"), CASES, ids=lambda v: type(v).__name__)
def test_results_hash_and_compare_by_value(value: Result, expected: dict[str, Any]) -> None:
    twin = dataclasses.replace(value)  # type: ignore[type-var]
    assert twin == value
    assert hash(twin) == hash(value)


def test_results_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        res.SceneSlot(A)  # type: ignore[misc]


def test_mappings_are_read_only_copies() -> None:
    prefs = {"a": "1"}
    profile = res.ProfileSlot(preferences=prefs)
    prefs["b"] = "2"
    assert dict(profile.preferences) == {"a": "1"}
    with pytest.raises(TypeError):
        profile.preferences["c"] = "3"  # type: ignore[index]
    stats = res_upkeep.DBStats(model_usage={A: res_upkeep.ModelUsage()})
    with pytest.raises(TypeError):
        stats.model_usage[B] = res_upkeep.ModelUsage()  # type: ignore[index]


def test_mbti_type_is_derived_and_never_on_the_wire() -> None:
    score = res.MBTIScore(i_e=0.2, n_s=0.3, t_f=-0.1, j_p=0.4)
    assert score.type == "ESTP"
    assert res.MBTIScore(i_e=-0.5).type == "IXXX"
    assert res.MBTIScore().type == ""
    assert "type" not in score.to_dict()


def test_provenance_fields_wait_off_the_wire() -> None:
    topic = res.TopicSlot(id=A)
    row = res.SceneContextTopic(topic_id=A)
    for value in (topic, row):
        assert value.origin == "turn"
        assert value.derived_from == ()
        assert value.grounding is None
        assert {"origin", "derived_from", "grounding"}.isdisjoint(value.to_dict())


def test_input_shapes_write_their_json_keys() -> None:
    item = L3ImportItem(title="t", domain="d")
    assert item.to_dict() == {
        "title": "t",
        "domain": "d",
        "node_type": "",
        "content": "",
        "keywords": [],
    }
    full = L3ImportItem(
        title="t",
        domain="d",
        node_type="n",
        content="c",
        keywords=["k"],
        source_ref="r",
        related=[L3Relation(["u"], GraphEdgeKind.CAUSAL), L3Relation(("v",))],
    )
    assert full.to_dict() == {
        "title": "t",
        "domain": "d",
        "node_type": "n",
        "content": "c",
        "keywords": ["k"],
        "source_ref": "r",
        "related": [{"titles": ["u"], "kind": 1}, {"titles": ["v"]}],
    }
    assert full.keywords == ("k",)
    assert hash(full) == hash(dataclasses.replace(full))
