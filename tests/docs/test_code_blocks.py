"""Every ```python block in docs/ and README.md runs, offline, in a fresh directory.

Convention (docs/index.md, "Conventions"): a block fenced ```python is an
example and must run on its own (its own imports, ``memhop.LocalModel()`` or a
file it creates); a block fenced ```python fake-server runs the same way with
``LLM_URL``, ``LLM_KEY`` and ``LLM_MODEL`` naming the fake OpenAI-compatible
server of tests/llm on 127.0.0.1; a block fenced ```python no-run is shown, not
run (a declaration, a fragment, a call to a real endpoint). Each block runs in
its own interpreter with a temporary working directory and no other ``LLM_*``
variables.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs._docs import REPO, pages
from tests.llm.fake_server import FakeOpenAI

FENCE = re.compile(r"^```(.*)$")
RUNNABLE = ("python", "python fake-server")


def python_blocks(text: str) -> list[tuple[int, str, str]]:
    """(line number, info string, code) of every fenced block whose language is python."""
    blocks: list[tuple[int, str, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opened = FENCE.match(lines[i])
        if opened is None:
            i += 1
            continue
        info, start = opened.group(1).strip(), i + 1
        end = start
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        if info.split(" ")[0] == "python":
            blocks.append((start, info, "\n".join(lines[start:end]) + "\n"))
        i = end + 1
    return blocks


def runnable() -> list[tuple[str, int, str, str]]:
    found = []
    for page in pages():
        if not page.exists():
            continue
        for line, info, code in python_blocks(page.read_text(encoding="utf-8")):
            if info in RUNNABLE:
                found.append((str(page.relative_to(REPO)), line, info, code))
    return found


BLOCKS = runnable()


def run_block(code: str, cwd: Path, server: FakeOpenAI | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLM_")}
    env["PYTHONPATH"] = str(REPO)
    if server is not None:
        env.update(LLM_URL=server.api_url, LLM_KEY="sk-docs-test", LLM_MODEL="fake-model")
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_block_parser_tells_examples_from_declarations() -> None:
    text = "x\n```python\nprint(1)\n```\n```python no-run\nclass A: ...\n```\n```sh\nls\n```\n"
    assert python_blocks(text) == [
        (2, "python", "print(1)\n"),
        (5, "python no-run", "class A: ...\n"),
    ]
    assert len(BLOCKS) >= 2  # at least integration.md's loop and format.md's reader


def test_a_fake_server_block_reaches_the_server(tmp_path: Path) -> None:
    """The fake-server fence really points a block at the fake endpoint."""
    code = (
        "import os, memhop\n"
        "llm = memhop.LlmConfig(os.environ['LLM_URL'], os.environ['LLM_KEY'],"
        " os.environ['LLM_MODEL'])\n"
        "with memhop.open('a.meh', llm, profile=memhop.ProfileInput(name='A')) as db:\n"
        "    me = db.primary()\n"
        "    me.search()\n"
        "    row = me.update(input='coffee at dawn', created_at=1_700_000_000_000)\n"
        "    print(row.fused_keywords)\n"
    )
    server = FakeOpenAI().start()
    try:
        result = run_block(code, tmp_path, server)
        assert result.returncode == 0, result.stderr
        assert server.count("keywords") >= 1
    finally:
        server.stop()
    (tmp_path / "offline").mkdir()
    offline = run_block(code, tmp_path / "offline", None)  # no server named: it cannot run
    assert offline.returncode != 0


@pytest.mark.parametrize(
    ("page", "line", "info", "code"), BLOCKS, ids=[f"{p}:{n}" for p, n, _, _ in BLOCKS]
)
def test_python_block_runs(page: str, line: int, info: str, code: str, tmp_path: Path) -> None:
    server = FakeOpenAI().start() if info == "python fake-server" else None
    try:
        result = run_block(code, tmp_path, server)
    finally:
        if server is not None:
            server.stop()
    assert result.returncode == 0, f"{page} line {line} failed:\n{result.stderr}"
