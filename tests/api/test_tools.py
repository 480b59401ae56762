"""memhop.tools: the task face as OpenAI tools, held to the Session surface both ways."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import memhop
from memhop import tools

ADMIN = {"update_scene", "rename_topic", "merge_scenes", "delete_scene", "delete_topic"}
ADMIN |= {"update_l3", "delete_l3", "agent_id", "purge_scene", "purge_topic"}
TS = 1_700_000_000_000


def _public_methods() -> set[str]:
    return {
        name
        for name, member in inspect.getmembers(memhop.Session)
        if not name.startswith("_") and (callable(member) or isinstance(member, property))
    }


def test_the_table_is_the_task_face_exactly() -> None:
    """Every public Session method is a tool or an admin method, never both, never neither."""
    bound = set(tools.TOOLS.values())
    assert len(tools.TOOLS) == 19  # upstream's 18 and memhop's own memory_recall
    assert tools.TOOLS["memory_recall"] == "recall"
    assert bound | ADMIN == _public_methods()
    assert not bound & ADMIN


def _by_name() -> dict[str, dict[str, Any]]:
    return {d["function"]["name"]: d["function"]["parameters"] for d in tools.schemas()}


def test_every_schema_is_a_described_openai_function() -> None:
    """Names are the guide's; each description says when to call, then the method contract."""
    defs = tools.schemas()
    assert [d["function"]["name"] for d in defs] == list(tools.TOOLS)
    for d in defs:
        assert d["type"] == "function"
        fn = d["function"]
        doc = inspect.getdoc(getattr(memhop.Session, tools.TOOLS[fn["name"]]))
        assert doc
        assert doc.split()[0] in fn["description"], fn["name"]
        assert fn["description"].startswith("Call "), fn["name"]
        json.dumps(d)  # JSON-ready
    by_name = _by_name()
    assert by_name["plan_update_step"]["properties"]["status"]["enum"] == [
        "in_progress",
        "done",
        "failed",
        None,
    ]
    assert "cancel" not in by_name["memory_dream"]["properties"]
    assert set(by_name["memory_profile_update"]["properties"]) == {
        "name",
        "role",
        "personality",
        "preferences",
    }


def test_the_host_owns_the_clock_and_the_slot() -> None:
    """created_at and seq are never asked of the model; content still is (the control)."""
    by_name = _by_name()
    record = by_name["memory_record"]
    assert "created_at" not in record["properties"]
    assert "seq" not in record["properties"]
    assert record["properties"]["content"]["type"] == "string"  # required: not nullable
    assert "created_at" not in by_name["memory_close_turn"]["properties"]
    assert "input" in by_name["memory_close_turn"]["properties"]


def test_enums_are_offered_by_name() -> None:
    """kind, role and content_type are words; the library's own dream role is not offered."""
    props = _by_name()["memory_record"]["properties"]
    assert props["kind"]["enum"] == ["utterance", "event", None]
    assert props["role"]["enum"] == ["user", "agent", "system", None]
    assert props["content_type"]["enum"][:-1] == [m.name.lower() for m in memhop.ContentType]
    kinds = _by_name()["memory_subgraph"]["properties"]["edge_kinds"]["items"]["enum"]
    assert kinds == [m.name.lower() for m in memhop.GraphEdgeKind]


@pytest.fixture
def session(tmp_path: Path) -> Iterator[memhop.Session]:
    path = str(tmp_path / "tools.meh")
    defaults = memhop.Defaults(scene_dream_topic_threshold=-1)
    with memhop.open(path, memhop.LocalModel(), defaults, memhop.ProfileInput(name="Ada")) as db:
        yield db.primary()


def test_a_model_turn_decodes_into_every_input_shape(session: memhop.Session) -> None:
    """JSON strings and dicts reach the methods: words and numbers, nulls as defaults."""
    opened = tools.dispatch(
        session, "memory_search", '{"scene_id": null, "l3_id": null, "new_scene": null}'
    )
    assert opened["new_topic_id"]
    step = tools.dispatch(session, "plan_add_step", {"parent_seq": 0, "title": "look"})
    assert step == {"seq": 1}
    recorded = tools.dispatch(
        session,
        "memory_record",
        json.dumps(
            {
                "kind": "event",
                "event_type": "tool_call",
                "content": "weather(Lisbon)",
                "content_type": None,
                "role": None,
                "node_seq": 1,
            }
        ),
        now_ms=TS,
    )
    assert recorded == {"seq": 3}
    numeric = tools.dispatch(
        session, "memory_record", {"content": "sunny", "kind": 0, "role": "Agent"}, now_ms=TS + 1
    )
    assert numeric == {"seq": 4}
    assert tools.dispatch(
        session, "plan_update_step", {"seq": 1, "status": "done", "summary": "sunny"}
    ) == {"ok": True}
    closed = tools.dispatch(
        session,
        "memory_close_turn",
        {"input": "weather in Lisbon?", "output": "sunny", "outcome": None},
        now_ms=TS + 2,
    )
    assert closed["id"] == opened["new_topic_id"]
    assert closed["agent_timestamp"] == TS + 2  # the host's clock, not the model's
    found = tools.dispatch(session, "memory_archive_search", {"keyword": "lisbon"})
    assert [row["content"] for row in found["items"]] == ["weather(Lisbon)", "weather in Lisbon?"]
    assert found["items"][0]["kind"] == "event"
    assert found["items"][1]["role"] == "user"
    events = tools.dispatch(session, "memory_archive_search", {"kind": "event", "type": "text"})
    assert [row["content"] for row in events["items"]] == ["weather(Lisbon)"]
    updated = tools.dispatch(
        session,
        "memory_profile_update",
        {"name": "Ada", "preferences": [{"key": "units", "value": "metric"}], "role": None},
    )
    assert updated == {"ok": True}
    assert tools.dispatch(session, "memory_profile_get", None)["preferences"] == {"units": "metric"}
    imported = tools.dispatch(
        session,
        "memory_graph_import",
        {
            "items": [
                {
                    "title": "auth",
                    "domain": "proj",
                    "related": [{"titles": ["token"], "kind": "dependency"}],
                    "keywords": None,
                },
                {"title": "token", "domain": "proj"},
            ],
            "mode": "skip",
        },
    )
    assert len(imported["created_ids"]) == 2
    assert imported["edges_created"] == 1
    graph = tools.dispatch(session, "memory_graph_list", "")["items"][0]
    assert graph["name"] == "proj"
    edges = tools.dispatch(session, "memory_graph_get", {"id": graph["id"]})["edges"]
    assert [e["kind"] for e in edges] == ["dependency"]


def test_results_are_compact(session: memhop.Session) -> None:
    """No null or empty noise, ids as strings, and the text form is compact JSON."""
    opened = tools.dispatch(session, "memory_search", {})
    assert "topics" not in opened  # an empty surface is left out ...
    assert opened["profile"]["name"] == "Ada"  # ... while what is there stays
    assert "role" not in opened["profile"]
    assert isinstance(opened["new_topic_id"], str)
    assert len(opened["new_topic_id"]) == 16
    text = tools.encode(opened)
    assert "null" not in text
    assert '", "' not in text  # no padding between items
    assert json.loads(text) == opened


def test_refusals_come_back_as_error_objects_naming_the_argument(
    session: memhop.Session,
) -> None:
    """A memhop refusal is data for the model, with upstream's code; a good call is not."""
    no_turn = tools.dispatch(session, "memory_close_turn", {"input": "x"})
    assert no_turn["error"]["code"] == 1003
    assert "no turn is open" in no_turn["error"]["message"]
    assert tools.dispatch(session, "memory_search", {})["new_topic_id"]  # the control
    for name, args, fragment in [
        ("memory_record", "not json", "not JSON"),
        ("memory_record", "[1, 2]", "JSON object"),
        ("memory_record", {}, "content"),
        ("memory_record", {"content": "x", "bogus": 1}, "'bogus'"),
        ("memory_record", {"content": "x", "created_at": 1}, "created_at"),
        ("memory_record", {"content": "x", "seq": 9}, "seq"),
        ("memory_record", {"content": "x", "kind": "shout"}, "kind"),
        ("memory_record", {"content": "x", "role": 1.5}, "role"),
        ("memory_dream", {"cancel": True}, "cancel"),
        ("no_such_tool", {}, "no_such_tool"),
        ("memory_profile_update", {"name": "Ada", "nickname": "x"}, "nickname"),
        ("memory_profile_update", {"name": "Ada", "preferences": [{"k": 1}]}, "preferences"),
        ("plan_update_step", {"seq": 1, "status": "maybe"}, "status"),
    ]:
        answer = tools.dispatch(session, name, args)
        assert answer["error"]["code"] == 1003, (name, args, answer)
        assert fragment in answer["error"]["message"], (name, args, answer)
    assert tools.dispatch(session, "memory_record", {"content": "x"}) == {"seq": 3}


def test_inputs_a_model_controls_never_escape_as_python_errors(session: memhop.Session) -> None:
    """Deep nesting and a non-string tool name are refusals, not RecursionError/TypeError."""
    deep = tools.dispatch(session, "memory_search", "[" * 100_000 + "]" * 100_000)
    assert deep["error"]["code"] == 1003
    assert "nest" in deep["error"]["message"]
    unhashable = tools.dispatch(session, ["x"], {})  # type: ignore[arg-type]
    assert unhashable["error"]["code"] == 1003
    assert "tool name" in unhashable["error"]["message"]
    wrong_session = tools.dispatch("s", "memory_search", {})  # type: ignore[arg-type]
    assert wrong_session["error"]["code"] == 1003
    assert tools.dispatch(session, "memory_search", {})["new_topic_id"]  # the control


def test_admin_methods_are_not_reachable_as_tools(session: memhop.Session) -> None:
    """delete_scene is a Session method but not a tool; search is both."""
    scene = tools.dispatch(session, "memory_search", {})["scene"]["scene_id"]
    assert tools.dispatch(session, "delete_scene", {"scene_id": scene})["error"]["code"] == 1003
    assert session.list_scenes()[0].scene_id == scene


def _footprint(db: memhop.DB) -> tuple[int, int]:
    stats = db.stats()
    return stats.file_bytes, stats.record_count


def test_read_only_tools_write_nothing(tmp_path: Path) -> None:
    """Every tool marked READ_ONLY leaves the file as it was; a writing tool (the control) not."""
    path = str(tmp_path / "reads.meh")
    defaults = memhop.Defaults(scene_dream_topic_threshold=-1)
    with memhop.open(path, memhop.LocalModel(), defaults, memhop.ProfileInput(name="Ada")) as db:
        me = db.primary()
        opened = tools.dispatch(me, "memory_search", {})
        tools.dispatch(me, "plan_add_step", {"parent_seq": 0, "title": "step"})
        tools.dispatch(me, "memory_close_turn", {"input": "hello", "output": "hi"}, now_ms=TS)
        items = [
            {"title": "a", "domain": "d", "related": [{"titles": ["b"]}]},
            {"title": "b", "domain": "d"},
        ]
        graph = tools.dispatch(me, "memory_graph_import", {"items": items, "mode": "skip"})
        graph_id, node_id = graph["graph_ids"][0], graph["created_ids"][0]
        samples: dict[str, dict[str, Any]] = {
            "memory_graph_get": {"id": graph_id},
            "memory_nodes_query": {"graph_id": graph_id, "keyword": "a"},
            "memory_subgraph": {"graph_id": graph_id, "start_node_id": node_id},
            "memory_recall": {"query": "hello"},
            "memory_scene_read": {"scene_id": opened["scene"]["scene_id"]},
        }
        db.checkpoint()
        for name in sorted(tools.READ_ONLY):
            before = _footprint(db)
            answer = tools.dispatch(me, name, samples.get(name, {}))
            assert "error" not in answer, (name, answer)
            assert _footprint(db) == before, f"{name} wrote to the file"
        before = _footprint(db)
        tools.dispatch(me, "memory_search", {})  # the control: opening a turn writes
        assert _footprint(db) != before
    assert set(tools.READ_ONLY) < set(tools.TOOLS)
