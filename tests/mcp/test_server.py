"""The MCP server, driven by the SDK's own client over stdio, as an MCP host runs it.

Each test starts the server as a real subprocess (``python -m memhop.mcp`` and
``python -m memhop mcp``), talks to it through ``mcp.Client``, and afterwards
opens the ``.meh`` file the server wrote, once the process has exited.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

import memhop
import memhop.mcp
from memhop import tools
from tests.llm.fake_server import KEYWORDS_REPLY, FakeOpenAI

SECRET = "sk-mcp-SECRET-5f1d2c"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLM_")}
    return {**env, **extra}


def _params(*args: str, **env: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=list(args), env=_env(**env))


def _answer(result: Any) -> dict[str, Any]:
    """The tool result's JSON, read from its text as a host shows it to the model."""
    assert len(result.content) == 1
    answer: dict[str, Any] = json.loads(result.content[0].text)
    assert result.structured_content == answer
    return answer


async def _session(client: Client) -> dict[str, Any]:
    """A whole turn through the tools, the refusals, and the resources."""
    assert client.server_info.name == "memhop"
    assert client.server_info.version == memhop.__version__  # not the SDK's empty default
    listed = await client.list_tools()
    by_name = {t.name: t for t in listed.tools}
    assert list(by_name) == list(tools.TOOLS)
    for definition in tools.schemas():
        fn = definition["function"]
        assert by_name[fn["name"]].description == fn["description"]
        assert by_name[fn["name"]].input_schema == fn["parameters"]
        hints = by_name[fn["name"]].annotations
        assert hints is not None
        assert hints.read_only_hint is (fn["name"] in tools.READ_ONLY)

    opened = _answer(await client.call_tool("memory_search", {}))
    recorded = _answer(
        await client.call_tool(
            "memory_record",
            {"content": "weather(Lisbon)", "kind": "event", "event_type": "tool_call"},
        )
    )
    assert recorded == {"seq": 3}
    # A bad call is a tool error the model can read; the server lives on.
    bad = await client.call_tool("memory_record", {"content": "x", "kind": "shout"})
    assert bad.is_error
    assert _answer(bad)["error"]["code"] == 1003
    assert "kind" in _answer(bad)["error"]["message"]
    with pytest.raises(MCPError, match="unknown tool"):
        await client.call_tool("memory_delete_everything", {})
    closed = _answer(
        await client.call_tool(
            "memory_close_turn", {"input": "Weather in Lisbon?", "output": "Sunny, 24 C"}
        )
    )
    assert closed["id"] == opened["new_topic_id"]
    assert closed["user_timestamp"] > 1_700_000_000_000  # the server's clock stamped it
    hits = _answer(await client.call_tool("memory_recall", {"query": "lisbon weather"}))
    assert hits["items"][0]["topic_id"] == closed["id"]

    resources = await client.list_resources()
    uris = {str(r.uri) for r in resources.resources}
    assert uris == {memhop.mcp.SCENE_URI, memhop.mcp.PROFILE_URI}
    scene = await client.read_resource(memhop.mcp.SCENE_URI)
    context = json.loads(scene.contents[0].text)
    assert context["topics"][0]["messages"][0]["content"] == "Weather in Lisbon?"
    profile = json.loads((await client.read_resource(memhop.mcp.PROFILE_URI)).contents[0].text)
    with pytest.raises(MCPError):
        await client.read_resource("memhop://nothing")
    return {"topic": closed["id"], "profile": profile}


def test_a_turn_through_the_server_is_in_the_file_after_it_exits(tmp_path: Path) -> None:
    path = tmp_path / "served.meh"

    async def main() -> dict[str, Any]:
        async with Client(stdio_client(_params("-m", "memhop.mcp", str(path)))) as client:
            return await _session(client)

    seen = asyncio.run(main())
    assert seen["profile"]["name"] == "assistant"  # a missing file is created
    with memhop.open(str(path), memhop.LocalModel()) as db:  # the lock was released
        topics = db.primary().scene_context().topics
        assert [t.topic_id for t in topics] == [seen["topic"]]
        assert [m.content for m in topics[0].messages][:2] == ["Weather in Lisbon?", "Sunny, 24 C"]
        assert [r.content for r in db.primary().search_l4(kind=memhop.ArchiveKind.EVENT)] == [
            "weather(Lisbon)"
        ]


def test_the_cli_serves_a_sub_agent_with_an_endpoint_model_and_never_shows_its_key(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sub.meh"
    server = FakeOpenAI().start()
    errlog = (tmp_path / "server.err").open("w+", encoding="utf-8")
    env = {"LLM_URL": server.api_url, "LLM_KEY": SECRET, "LLM_MODEL": "fake-model"}
    params = _params("-m", "memhop", "mcp", str(path), "--agent", "helper", **env)

    async def main() -> dict[str, Any]:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            return await _session(client)

    try:
        seen = asyncio.run(main())
    finally:
        server.stop()
    errlog.seek(0)
    stderr = errlog.read()
    errlog.close()
    assert "sub-agent 'helper'" in stderr  # the control: the log was captured
    assert SECRET not in stderr
    assert seen["profile"]["name"] == "helper"
    assert server.count("keywords") == 1  # the endpoint model closed the turn
    assert all(s.authorization == f"Bearer {SECRET}" for s in server.seen)
    with memhop.open(str(path), memhop.LocalModel()) as db:
        helper = next(a for a in db.agents() if a.name == "helper")
        topics = db.agent(memhop.LocalModel(), helper.id).scene_context().topics
        assert list(topics[0].keywords) == KEYWORDS_REPLY
        assert db.primary().scene_context().topics == ()  # the primary was not touched


def test_the_model_comes_from_all_three_variables_or_none() -> None:
    assert isinstance(memhop.mcp.model_from_env({}), memhop.LocalModel)
    config = memhop.mcp.model_from_env(
        {"LLM_URL": "http://127.0.0.1:1/v1", "LLM_KEY": SECRET, "LLM_MODEL": "m"}
    )
    assert isinstance(config, memhop.LlmConfig)
    assert SECRET not in repr(config)
    with pytest.raises(memhop.ConfigError, match="missing: LLM_MODEL") as half:
        memhop.mcp.model_from_env({"LLM_URL": "http://x", "LLM_KEY": SECRET})
    assert SECRET not in str(half.value)


def test_usage_errors_exit_2_and_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert memhop.mcp.main([]) == 2
    assert memhop.mcp.main(["--help"]) == 0
    assert "LLM_URL" in capsys.readouterr().out


def _serve_closed_stdin(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``memhop mcp`` with stdin already closed: it starts, serves nothing, and exits."""
    return subprocess.run(
        [sys.executable, "-m", "memhop", "mcp", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
        check=False,
    )


@pytest.mark.parametrize("name", ["", "   ", "x" * 300], ids=["empty", "blank", "too-long"])
def test_a_bad_agent_name_is_a_usage_error_before_the_file_is_created(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "new.meh"
    assert memhop.mcp.main([str(path), "--agent", name]) == 2
    err = capsys.readouterr().err
    assert "argument --agent" in err
    assert "serving" not in err
    assert not path.exists()
    served = _serve_closed_stdin(str(path), "--agent", "helper")  # the control: a good name
    assert served.returncode == 0, served.stderr
    assert f"serving {path} as sub-agent 'helper'" in served.stderr
    assert path.exists()


def test_a_file_that_will_not_open_is_refused_without_a_serving_line(tmp_path: Path) -> None:
    junk = tmp_path / "junk.meh"
    junk.write_bytes(b"not memhop\n" * 1000)
    refused = _serve_closed_stdin(str(junk))
    assert refused.returncode == 1
    assert "CorruptionError" in refused.stderr
    assert "serving" not in refused.stderr
    assert "Traceback" not in refused.stderr
    good = tmp_path / "good.meh"
    served = _serve_closed_stdin(str(good))  # the control: a file that opens is announced
    assert served.returncode == 0, served.stderr
    assert f"serving {good} as the primary (LocalModel)" in served.stderr


def test_a_file_held_elsewhere_is_a_clear_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The server cannot take a file another handle holds: exit 1 and the reason, no traceback."""
    path = str(tmp_path / "held.meh")
    with memhop.open(path, memhop.LocalModel(), profile=memhop.ProfileInput(name="p")):
        assert memhop.mcp.main([path]) == 1
    err = capsys.readouterr().err
    assert "another instance" in err
    assert "Traceback" not in err
    assert memhop.open(path, memhop.LocalModel()).close() is None  # the control: it is free now
