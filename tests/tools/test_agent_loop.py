"""A whole tool-calling loop: examples/agent_loop.py against the fake OpenAI-compatible server.

The fake model searches, recalls an earlier turn, records an event and closes
the turn, all through ``memhop.tools.dispatch``; afterwards the file holds the
turn, and each tool result the model was sent is the compact JSON of the call.
"""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

import memhop
from tests.llm.fake_server import KEYWORDS_REPLY, AgentReply, FakeOpenAI

REPO = Path(__file__).resolve().parent.parent.parent
EXAMPLE = REPO / "examples" / "agent_loop.py"
SECRET = "sk-loop-SECRET-9a8b7c"
TS = 1_700_000_000_000


def _seed(path: Path) -> str:
    """An earlier conversation about Lisbon, for the model to recall."""
    profile = memhop.ProfileInput(name="assistant")
    with memhop.open(str(path), memhop.LocalModel(), profile=profile) as db:
        me = db.primary()
        me.search()
        closed = me.update(
            input="I am flying to Lisbon in May", output="Noted: Lisbon in May.", created_at=TS
        )
        return closed.id


def _run(path: Path, server: FakeOpenAI, message: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLM_")}
    env |= {"LLM_URL": server.api_url, "LLM_KEY": SECRET, "LLM_MODEL": "fake-model"}
    return subprocess.run(
        [sys.executable, str(EXAMPLE), "--memory", str(path), message],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
        check=False,
    )


def test_the_model_keeps_its_memory_through_the_tools(tmp_path: Path) -> None:
    path = tmp_path / "agent.meh"
    earlier = _seed(path)
    server = FakeOpenAI().start()
    server.script_agent(
        AgentReply(tool_calls=[("memory_search", {})]),
        AgentReply(tool_calls=[("memory_recall", {"query": "Lisbon trip", "limit": None})]),
        AgentReply(
            tool_calls=[
                (
                    "memory_record",
                    {"content": "weather(Lisbon, May)", "kind": "event", "event_type": "tool_call"},
                ),
                ("memory_record", {"content": "sunny, 24 C", "kind": None, "role": "agent"}),
            ]
        ),
        AgentReply(
            tool_calls=[
                (
                    "memory_close_turn",
                    {"input": "Weather for my trip?", "output": "Sunny, 24 C", "outcome": "done"},
                )
            ]
        ),
        AgentReply(content="Lisbon in May: sunny, about 24 C."),
    )
    try:
        result = _run(path, server, "Weather for my trip?")
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr
    assert "assistant: Lisbon in May: sunny, about 24 C." in result.stdout
    assert SECRET not in result.stdout + result.stderr
    requests = [s for s in server.seen if s.point == "agent"]
    assert len(requests) == 5  # four rounds of tool calls, then the answer
    offered = [t["function"]["name"] for t in requests[0].body["tools"]]
    assert "memory_recall" in offered
    assert all(t["function"]["strict"] for t in requests[0].body["tools"])
    # What the model read back: the recall found the earlier turn, by its id.
    recall_result = json.loads(requests[2].body["messages"][-1]["content"])
    assert recall_result["items"][0]["topic_id"] == earlier
    assert "Lisbon" in recall_result["items"][0]["text"]
    recorded = [json.loads(m["content"]) for m in requests[3].body["messages"][-2:]]
    assert recorded == [{"seq": 3}, {"seq": 4}]
    assert server.count("keywords") == 1  # memhop's own call at the turn's close

    with memhop.open(str(path), memhop.LocalModel()) as db:
        me = db.primary()
        topics = me.scene_context().topics
        assert len(topics) == 2
        assert [m.content for m in topics[1].messages][:2] == [
            "Weather for my trip?",
            "Sunny, 24 C",
        ]
        assert list(topics[1].keywords) == KEYWORDS_REPLY
        events = me.search_l4(kind=memhop.ArchiveKind.EVENT)
        assert [e.content for e in events] == ["weather(Lisbon, May)", "done"]
        said = me.search_l4(keyword="sunny, 24")
        assert [(r.content, r.role) for r in said][:1] == [
            ("sunny, 24 C", memhop.ArchiveRole.AGENT)
        ]


def test_the_host_closes_the_turn_when_the_model_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In-process this time: the model answers at once, and the host keeps the turn."""
    example = runpy.run_path(str(EXAMPLE), run_name="agent_loop")
    path = tmp_path / "agent.meh"
    server = FakeOpenAI().start()
    server.script_agent(AgentReply(content="Hello!"))
    for name, value in (("LLM_URL", server.api_url), ("LLM_KEY", SECRET), ("LLM_MODEL", "m")):
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "argv", ["agent_loop.py", "--memory", str(path), "Hi there"])
    try:
        assert example["main"]() == 0
    finally:
        server.stop()
    assert "assistant: Hello!" in capsys.readouterr().out
    assert [s.point for s in server.seen] == ["agent", "keywords"]  # one round, then the close
    with memhop.open(str(path), memhop.LocalModel()) as db:
        topics = db.primary().scene_context().topics
        assert [m.content for m in topics[0].messages][:2] == ["Hi there", "Hello!"]
