"""Records map to results with hex ids; the plan tree is built from a flat step list."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

import memhop
from memhop import records as r
from memhop.api import _args as args
from memhop.api import _mapping as m
from memhop.api import _mapping_graph as mg
from memhop.api import _mapping_upkeep as mu
from memhop.api._surfaces import Surfaces
from memhop.api.types import GraphEdgeKind, L3ImportItem, L3ImportMode, L3Relation, PlanStatus
from memhop.errors import CorruptionError, InvalidQueryError

BIG = 0xFEDCBA9876543210


def test_the_profile_record_is_the_result_every_field_on_the_wire() -> None:
    stored = r.ProfileSlot(
        name="n",
        role="r",
        personality="p",
        emotion_state=r.EmotionScore(valence=0.1, arousal=0.2, dominance=0.3),
        mbti=r.MBTIScore(i_e=0.2, n_s=0.3, t_f=-0.1, j_p=0.4),
        preferences={"a": "1"},
        agent_type=r.AgentType.SUB,
        updated_at_ms=7,
    )
    got = stored  # one class from the codec to the face: nothing to map
    assert type(got) is memhop.ProfileSlot
    assert got.to_dict() == {
        "name": "n",
        "role": "r",
        "personality": "p",
        "emotion_state": {"valence": 0.1, "arousal": 0.2, "dominance": 0.3},
        "mbti": {"i_e": 0.2, "n_s": 0.3, "t_f": -0.1, "j_p": 0.4},
        "preferences": {"a": "1"},
        "agent_type": 1,
        "updated_at_ms": 7,
    }
    assert got.mbti.type == "ESTP"
    assert type(got.to_dict()["agent_type"]) is int  # a number on the wire, as upstream's
    assert got.agent_type == 1


def test_scene_hides_its_counters_and_renders_an_unset_anchor_empty() -> None:
    stored = r.SceneSlot(scene_id=BIG, scene_name="s", turn_seq=4, last_used_at=9)
    assert m.scene_slot(stored).to_dict() == {"scene_id": "fedcba9876543210", "scene_name": "s"}
    anchored = m.scene_slot(r.SceneSlot(scene_id=1, l3_id=2))
    assert anchored.l3_id == "0000000000000002"


def test_topic_keeps_a_nil_parent_apart_from_a_zero_one() -> None:
    root = m.topic_slot(r.TopicSlot(id=BIG, scene_id=1, depth=1, fused_keywords=("k",)))
    assert root.parent_id is None
    assert root.id == "fedcba9876543210"
    assert root.fused_keywords == ("k",)
    child = m.topic_slot(r.TopicSlot(id=1, parent_id=0, depth=2))
    assert child.to_dict()["parent_id"] == "0000000000000000"


def test_search_result_carries_the_brief_of_its_profile() -> None:
    got = Surfaces().search_result(
        r.ProfileSlot(name="n"),
        r.SceneSlot(scene_id=3),
        [r.TopicSlot(id=5, scene_id=3), r.TopicSlot(id=4, scene_id=3)],
        new_topic_id=6,
    )
    assert got.profile_brief == "name: n\n"
    assert [t.id for t in got.topics] == ["0000000000000005", "0000000000000004"]
    assert got.new_topic_id == "0000000000000006"
    assert got.scene.scene_id == "0000000000000003"


def test_scene_context_row_lists_utterances_in_seq_order_and_no_event() -> None:
    topic = r.TopicSlot(id=9, depth=1, name="n", fused_keywords=("k",), user_timestamp=1)
    contents = [
        r.ArchiveSlot(id_hash=1, seq=2, role=r.ArchiveRole.AGENT, content="out", topic_id=9),
        r.ArchiveSlot(id_hash=2, seq=3, kind=r.ArchiveKind.EVENT, event_type="e", content="x"),
        r.ArchiveSlot(id_hash=3, seq=1, content="in", created_at=5),
    ]
    row = m.scene_context_topic(topic, 2, contents)
    assert [msg.content for msg in row.messages] == ["in", "out"]
    assert row.messages[1].role == r.ArchiveRole.AGENT
    assert row.to_dict()["messages"][0] == {
        "role": 0,
        "type": 0,
        "content": "in",
        "seq": 1,
        "created_at": 5,
    }
    assert row.child_count == 2
    assert row.keywords == ("k",)
    aged = m.scene_context_topic(topic, 0, [])
    assert "messages" not in aged.to_dict()


def test_archive_slot_maps_ids_and_enums() -> None:
    stored = r.ArchiveSlot(
        id_hash=BIG,
        kind=r.ArchiveKind.EVENT,
        seq=3,
        content_type=r.ContentType.TEXT,
        topic_id=1,
        event_type="tool_call",
        node_seq=2,
        created_at=8,
        content="c",
    )
    got = m.archive_slot(stored)
    assert got.id == "fedcba9876543210"
    assert got.topic_id == "0000000000000001"
    assert got.kind is r.ArchiveKind.EVENT
    assert got.to_dict()["node_seq"] == 2


def test_scene_node_view_renders_its_id_lists() -> None:
    node = r.SceneNode(
        id_hash=1,
        scene_id=2,
        topic_ids=(3, 4),
        edge_ids=(5,),
        importance=1.0,
        emotion_set=True,
        created_at=6,
        updated_at=7,
    )
    got = mg.scene_node_view(node).to_dict()
    assert got["topic_ids"] == ["0000000000000003", "0000000000000004"]
    assert got["edge_ids"] == ["0000000000000005"]
    assert list(got)[:4] == ["id", "scene_id", "topic_ids", "edge_ids"]
    assert got["emotion_set"] is True


def test_graph_shapes_map_from_records() -> None:
    slot = r.HypergraphSlot(id_hash=1, name="g", created_at=2, updated_at=3)
    node = r.HypergraphNode(id_hash=4, graph_id=1, title="t", keywords=("k",), source_ref=None)
    edge = r.HypergraphEdge(id_hash=5, graph_id=1, kind=r.GraphEdgeKind.CAUSAL, node_ids=(4, 6))
    graph = mg.l3_graph(slot, [node], [edge])
    assert graph.slot.id == "0000000000000001"
    assert "source_ref" not in graph.nodes[0].to_dict()
    assert graph.edges[0].node_ids == ("0000000000000004", "0000000000000006")
    assert graph.edges[0].to_dict()["kind"] == 1
    sub = mg.l3_subgraph([], [edge])
    assert sub.to_dict()["nodes"] == []
    with_ref = mg.hypergraph_node(r.HypergraphNode(id_hash=4, source_ref="a.go:3"))
    assert with_ref.to_dict()["source_ref"] == "a.go:3"


def test_import_result_renders_ids() -> None:
    got = mg.l3_import_result(
        graph_ids=[1],
        created_ids=[2, 3],
        updated_ids=[],
        skipped_count=1,
        edges_created=0,
        errors=[],
    )
    assert got.to_dict() == {
        "graph_ids": ["0000000000000001"],
        "created_ids": ["0000000000000002", "0000000000000003"],
        "updated_ids": [],
        "skipped_count": 1,
        "errors": [],
    }


def test_agent_info_and_stats() -> None:
    assert mu.agent_info(0, "p", primary=True).id == "0000000000000000"
    usage = SimpleNamespace(
        operations=2, requests=3, prompt_tokens=10, completion_tokens=5, failures=1
    )
    stats = mu.db_stats(100, 4, {BIG: usage, 0: usage})
    assert list(stats.model_usage) == ["0000000000000000", "fedcba9876543210"]
    assert stats.model_usage["fedcba9876543210"].prompt_tokens == 10
    assert stats.model_usage["fedcba9876543210"].requests == 3


# ---- plan trees ---------------------------------------------------------------------------


def _step(seq: int, parent: int = 0, status: int = 0, title: str = "") -> r.PlanNode:
    return r.PlanNode(
        id_hash=seq, seq=seq, parent_seq=parent, status=status, title=title or f"s{seq}"
    )


def _shape(tree: Any) -> list[Any]:
    return [(v.seq, _shape(v.children)) for v in tree]


def test_an_empty_turn_has_an_empty_tree() -> None:
    tree = m.plan_tree([])
    assert tree.to_dict() == {"roots": [], "done_count": 0, "total_count": 0}


def test_children_nest_under_parents_in_seq_order_whatever_the_input_order() -> None:
    steps = [_step(5, 1), _step(2), _step(3, 1, status=1), _step(1, status=1), _step(4, 3)]
    tree = m.plan_tree(steps)
    assert _shape(tree.roots) == [(1, [(3, [(4, [])]), (5, [])]), (2, [])]
    assert (tree.done_count, tree.total_count) == (2, 5)


def test_an_orphan_heads_its_own_branch_and_keeps_naming_its_parent() -> None:
    tree = m.plan_tree([_step(1), _step(4, 3), _step(5, 4)])
    assert _shape(tree.roots) == [(1, []), (4, [(5, [])])]
    assert tree.roots[1].parent_seq == 3


def test_a_parent_loop_is_listed_not_lost() -> None:
    tree = m.plan_tree([_step(1), _step(2, 3), _step(3, 2), _step(4, 4)])
    assert _shape(tree.roots) == [(1, []), (2, [(3, [])]), (4, [])]
    assert tree.total_count == 4


def test_views_carry_status_words_and_fall_back_to_the_ordinal() -> None:
    node = r.PlanNode(
        id_hash=1,
        seq=7,
        status=r.PlanStatusCode.FAILED,
        summary="s",
        created_at=1,
        finished_at=2,
        updated_at=3,
    )
    view = m.plan_tree([node]).roots[0]
    assert view.title == "7"
    assert view.status is PlanStatus.FAILED
    assert (view.created_at, view.finished_at, view.updated_at) == (1, 2, 3)


def test_an_undefined_stored_status_is_reported() -> None:
    with pytest.raises(CorruptionError, match="status 9"):
        m.plan_tree([_step(1, status=9)])


# ---- inputs ---------------------------------------------------------------------------------


def test_plan_status_words_map_to_codes() -> None:
    assert args.plan_status_code("done") is r.PlanStatusCode.DONE
    assert args.plan_status_code(PlanStatus.IN_PROGRESS) is r.PlanStatusCode.IN_PROGRESS
    for bad in ("DONE", "", "pending", 1):
        with pytest.raises(InvalidQueryError, match="in_progress, done or failed"):
            args.plan_status_code(bad)  # type: ignore[arg-type]


def test_import_mode_names_the_valid_words_and_the_received_one() -> None:
    assert args.import_mode("merge") is L3ImportMode.MERGE
    with pytest.raises(InvalidQueryError, match=r"skip, merge or overwrite, got 'Skip'"):
        args.import_mode("Skip")


def test_an_import_item_reads_from_its_json_keys() -> None:
    item = args.import_item(
        {
            "title": "t",
            "domain": "d",
            "node_type": "n",
            "content": "c",
            "keywords": ["k"],
            "source_ref": "r",
            "related": [{"titles": ["u"], "kind": 2}, {"titles": ["v"]}],
        }
    )
    assert item == L3ImportItem(
        title="t",
        domain="d",
        node_type="n",
        content="c",
        keywords=("k",),
        source_ref="r",
        related=(L3Relation(("u",), GraphEdgeKind.PART_OF), L3Relation(("v",))),
    )
    assert args.import_item(item.to_dict()) == item
    assert args.import_item(item) is item


def test_missing_and_null_keys_take_zero_values() -> None:
    item = args.import_item({"title": "t", "source_ref": None, "related": None})
    assert item == L3ImportItem(title="t", domain="")


def test_an_undefined_edge_kind_is_kept_for_the_import_to_report() -> None:
    item = args.import_item(
        {"title": "t", "domain": "d", "related": [{"titles": ["u"], "kind": 9}]}
    )
    assert item.related[0].kind == 9


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ({"title": "t", "domian": "d"}, "'domian'"),
        ({"title": 3}, "'title'"),
        ({"keywords": "abc"}, "keywords"),
        ({"keywords": ["a", 1]}, "keywords"),
        ({"related": "x"}, "'related'"),
        ({"related": [{"titles": ["a"], "weight": 1}]}, r"related\[0\].*'weight'"),
        ({"related": [{"titles": ["a"], "kind": "sideways"}]}, r"related\[0\]\.kind.*causal"),
        ({"related": [{"titles": ["a"], "kind": True}]}, r"related\[0\]\.kind"),
        ({"related": ["a"]}, r"related\[0\]"),
        (["title"], "L3ImportItem or a dict"),
    ],
)
def test_a_bad_import_item_names_the_offending_key(value: Any, named: str) -> None:
    with pytest.raises(InvalidQueryError, match=named):
        args.import_item(value)


def test_input_dataclasses_refuse_a_bare_string_for_a_list() -> None:
    with pytest.raises(InvalidQueryError, match="titles"):
        L3Relation("abc")
    with pytest.raises(InvalidQueryError, match="related"):
        L3ImportItem("t", "d", related=[{"titles": ["a"]}])  # type: ignore[list-item]


def test_scene_context_maps_the_roots_rows_in_order() -> None:
    first = r.TopicSlot(id=2, depth=1, user_timestamp=1)
    second = r.TopicSlot(id=1, depth=2, user_timestamp=2)
    line = r.ArchiveSlot(id_hash=3, seq=1, content="in")
    rows = [
        SimpleNamespace(row=SimpleNamespace(topic=first, child_count=1), messages=(line,)),
        SimpleNamespace(row=SimpleNamespace(topic=second, child_count=0), messages=()),
    ]
    got = m.scene_context("s", rows)
    assert got.scene_name == "s"
    assert [t.topic_id for t in got.topics] == ["0000000000000002", "0000000000000001"]
    assert got.topics[0].child_count == 1
    assert got.topics[0].messages[0].content == "in"
    assert m.scene_context("", []).to_dict() == {"scene_name": "", "topics": []}
