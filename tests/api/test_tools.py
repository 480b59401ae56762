"""memhop.tools: the task face as OpenAI tools, held to the Session surface both ways."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import memhop
from memhop import tools

ADMIN = {"update_scene", "rename_topic", "merge_scenes", "delete_scene", "delete_topic"}
ADMIN |= {"update_l3", "delete_l3", "agent_id"}


def _public_methods() -> set[str]:
    return {
        name
        for name, member in inspect.getmembers(memhop.Session)
        if not name.startswith("_") and (callable(member) or isinstance(member, property))
    }


def test_the_table_is_the_task_face_exactly() -> None:
    """Every public Session method is a tool or an admin method, never both, never neither."""
    bound = set(tools.TOOLS.values())
    assert len(tools.TOOLS) == 18
    assert bound | ADMIN == _public_methods()
    assert not bound & ADMIN


def test_every_schema_is_an_openai_function_with_an_object_schema() -> None:
    """Names are the guide's, descriptions are the method contracts' first lines."""
    defs = tools.schemas()
    assert [d["function"]["name"] for d in defs] == list(tools.TOOLS)
    for d in defs:
        assert d["type"] == "function"
        fn = d["function"]
        assert fn["description"], fn["name"]
        assert fn["parameters"]["type"] == "object"
        json.dumps(d)  # JSON-ready
    by_name = {d["function"]["name"]: d["function"]["parameters"] for d in defs}
    record = by_name["memory_record"]
    assert set(record["required"]) == {"content", "created_at"}
    assert record["properties"]["kind"]["type"] == "integer"
    assert by_name["plan_update_step"]["properties"]["status"]["enum"] == [
        "in_progress",
        "done",
        "failed",
    ]
    assert "cancel" not in by_name["memory_dream"]["properties"]
    assert set(by_name["memory_profile_update"]["properties"]) == {
        "name",
        "role",
        "personality",
        "preferences",
    }


@pytest.fixture
def session(tmp_path: Path) -> Iterator[memhop.Session]:
    path = str(tmp_path / "tools.meh")
    defaults = memhop.Defaults(scene_dream_topic_threshold=-1)
    with memhop.open(path, memhop.LocalModel(), defaults, memhop.ProfileInput(name="Ada")) as db:
        yield db.primary()


def test_a_model_turn_decodes_into_every_input_shape(session: memhop.Session) -> None:
    """JSON strings and dicts reach the methods: numbers as numbers, words as words."""
    opened = tools.dispatch(session, "memory_search", "{}")
    assert opened["new_topic_id"]
    step = tools.dispatch(session, "plan_add_step", {"parent_seq": 0, "title": "look"})
    assert step == {"seq": 1}
    recorded = tools.dispatch(
        session,
        "memory_record",
        json.dumps(
            {
                "kind": 1,
                "event_type": "tool_call",
                "content": "weather(Lisbon)",
                "created_at": 1_700_000_000_000,
                "node_seq": 1,
            }
        ),
    )
    assert recorded == {"seq": 3}
    assert tools.dispatch(
        session, "plan_update_step", {"seq": 1, "status": "done", "summary": "sunny"}
    ) == {"ok": True}
    closed = tools.dispatch(
        session,
        "memory_close_turn",
        {"input": "weather in Lisbon?", "output": "sunny", "created_at": 1_700_000_000_001},
    )
    assert closed["id"] == opened["new_topic_id"]
    found = tools.dispatch(session, "memory_archive_search", {"keyword": "lisbon"})
    assert [row["content"] for row in found["items"]] == ["weather(Lisbon)", "weather in Lisbon?"]
    updated = tools.dispatch(
        session, "memory_profile_update", {"name": "Ada", "preferences": {"units": "metric"}}
    )
    assert updated == {"ok": True}
    assert tools.dispatch(session, "memory_profile_get", None)["preferences"] == {"units": "metric"}
    imported = tools.dispatch(
        session,
        "memory_graph_import",
        {
            "items": [
                {"title": "auth", "domain": "proj", "related": [{"titles": ["token"], "kind": 4}]},
                {"title": "token", "domain": "proj"},
            ],
            "mode": "skip",
        },
    )
    assert len(imported["created_ids"]) == 2
    assert imported["edges_created"] == 1
    assert tools.dispatch(session, "memory_graph_list", "")["items"][0]["name"] == "proj"


def test_refusals_come_back_as_error_objects(session: memhop.Session) -> None:
    """A memhop refusal is data for the model, with upstream's code; a good call is not."""
    no_turn = tools.dispatch(session, "memory_close_turn", {"input": "x", "created_at": 1})
    assert no_turn["error"]["code"] == 1003
    assert "no turn is open" in no_turn["error"]["message"]
    assert tools.dispatch(session, "memory_search", {})["new_topic_id"]  # the control
    for name, args in [
        ("memory_record", "not json"),
        ("memory_record", "[1, 2]"),
        ("memory_record", {"content": "x"}),  # created_at missing
        ("memory_record", {"content": "x", "created_at": 1, "bogus": 1}),
        ("memory_dream", {"cancel": True}),
        ("no_such_tool", {}),
        ("memory_profile_update", {"nickname": "x"}),
    ]:
        answer = tools.dispatch(session, name, args)
        assert answer["error"]["code"] == 1003, (name, args, answer)


def test_admin_methods_are_not_reachable_as_tools(session: memhop.Session) -> None:
    """delete_scene is a Session method but not a tool; search is both."""
    scene = tools.dispatch(session, "memory_search", {})["scene"]["scene_id"]
    assert tools.dispatch(session, "delete_scene", {"scene_id": scene})["error"]["code"] == 1003
    assert session.list_scenes()[0].scene_id == scene
