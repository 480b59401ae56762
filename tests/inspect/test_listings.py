"""What the inspector lists matches what the library said it wrote (by the ids it returned)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import memhop
from tests.inspect.conftest import TS, Demo


def test_agents_lists_the_primary_then_the_sub_agent_by_the_ids_the_library_gave(
    demo: Demo,
) -> None:
    agents = memhop.inspect(demo.path).agents()
    assert [(a["id"], a["name"], a["primary"]) for a in agents] == [
        ("0000000000000000", "Ada", True),
        (demo.sub_id, "scout", False),
    ]


def test_topics_hold_every_closed_turn_with_scene_time_and_line_count(demo: Demo) -> None:
    view = memhop.inspect(demo.path)
    topics = {t["topic_id"]: t for t in view.topics(scene=demo.scene_id)}
    assert set(demo.turn_ids) <= set(topics)
    first = topics[demo.turn_ids[0]]
    assert first["scene_id"] == demo.scene_id
    assert first["user_time"] == datetime.fromtimestamp(TS / 1000, UTC)
    assert first["user_time"].tzinfo is not None
    assert first["lines"] == 2  # the user's and the agent's line
    assert "roses" in first["keywords"]
    # The sub-agent's turn is in its own domain only, reached by name or by id.
    assert demo.sub_turn_id not in topics
    for handle in ("scout", demo.sub_id):
        assert [t["topic_id"] for t in view.topics(agent=handle)] == [demo.sub_turn_id]


def test_provenance_of_dream_rows_matches_the_live_api(demo: Demo) -> None:
    """Dream's fused rows read as "dream", with the members and grounding search() gave."""
    assert demo.dream_rows, "the demo's Dream pass folded nothing, so this proves nothing"
    topics = {t["topic_id"]: t for t in memhop.inspect(demo.path).topics()}
    for live in demo.dream_rows:
        row = topics[live.id]
        assert (row["origin"], row["derived_from"], row["grounding"]) == (
            "dream",
            live.derived_from,
            live.grounding,
        )
    plain = topics[demo.turn_ids[0]]
    assert (plain["origin"], plain["derived_from"], plain["grounding"]) == ("turn", (), None)


def test_content_events_and_plans_carry_enum_names_and_a_scene_id(demo: Demo) -> None:
    view = memhop.inspect(demo.path)
    events = view.events()
    assert [(e["content"], e["kind"], e["event_type"]) for e in events] == [
        (demo.event_text, "event", "tool")
    ]
    assert events[0]["scene_id"] == demo.scene_id
    lines = view.content(topic=demo.turn_ids[0])
    assert [(c["seq"], c["role"], c["kind"], c["content_type"]) for c in lines] == [
        (1, "user", "utterance", "text"),
        (2, "agent", "utterance", "text"),
    ]
    assert {c["scene_id"] for c in view.content()} == {demo.scene_id}
    plans = view.plans()
    assert [(p["title"], p["status"], p["scene_id"]) for p in plans] == [
        (demo.plan_title, "in_progress", demo.scene_id)
    ]


def test_profile_scenes_l1_and_graphs(demo: Demo) -> None:
    view = memhop.inspect(demo.path)
    assert [(p["name"], p["role"], p["agent_type"]) for p in view.profile()] == [
        ("Ada", "gardener", "primary")
    ]
    assert [p["name"] for p in view.profile("scout")] == ["scout"]
    scenes = view.scenes()
    assert [s["scene_id"] for s in scenes] == [demo.scene_id]
    assert scenes[0]["turns"] == 7  # six turns, and the one opened after Dream
    assert {n["scene_id"] for n in view.l1()} == {demo.scene_id}  # Dream stamped one node
    assert [(g["graph_id"], g["name"], g["nodes"]) for g in view.graphs()] == [
        (demo.graph_id, "garden", 1)
    ]


def test_lookup_and_grep_find_records_by_id_and_text(demo: Demo) -> None:
    view = memhop.inspect(demo.path)
    found = view.lookup(demo.turn_ids[0])
    assert [(r["type"], r["agent"]) for r in found] == [("topic", "0000000000000000")]
    assert found[0]["record"]["depth"] >= 1
    hits = view.grep("APHIDS")
    assert {h["agent"] for h in hits} == {demo.sub_id}
    assert view.grep("aphids", agent="Ada").to_dicts() == []  # the primary never said it
    assert len(view.grep("aphids", agent="scout")) == len(hits)


def test_bad_arguments_are_clear_memhop_errors(demo: Demo) -> None:
    view = memhop.inspect(demo.path)
    with pytest.raises(memhop.AgentNotFoundError, match="no agent 'nobody'"):
        view.topics(agent="nobody")
    with pytest.raises(memhop.InvalidQueryError, match="topic must be 16 hex digits"):
        view.content(topic="xyz")
    with pytest.raises(memhop.NotFoundError, match="no scene"):
        view.topics(scene="0123456789abcdef")
    assert len(view.topics(scene=demo.scene_id)) > 0  # positive control for the scene filter
    with pytest.raises(memhop.StorageIOError, match="no database at"):
        memhop.inspect(demo.path + ".missing")


def test_a_file_that_is_not_a_meh_file_is_corruption_not_a_traceback(tmp_path: object) -> None:
    path = f"{tmp_path}/notes.meh"
    with open(path, "wb") as handle:
        handle.write(b"just some notes\n" * 1000)
    with pytest.raises(memhop.MemHopError, match="invalid"):
        memhop.inspect(path)
