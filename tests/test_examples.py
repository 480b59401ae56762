"""The README's main job: ``python examples/quickstart.py`` runs offline and injects a scene."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
QUICKSTART = REPO / "examples" / "quickstart.py"
DATA = REPO / "examples" / "data" / "locomo-conv-26.json"
BEGIN = "=== injected at the next turn ==="
END = "=== end of injected block ==="


@pytest.fixture(scope="module")
def conversation() -> dict[str, object]:
    item: dict[str, object] = json.loads(DATA.read_text(encoding="utf-8"))["items"][0]
    return item


def run_quickstart(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LLM_URL", "LLM_KEY", "LLM_MODEL")}
    return subprocess.run(
        [sys.executable, str(QUICKSTART), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def default_run() -> subprocess.CompletedProcess[str]:
    return run_quickstart()


def injected_block(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    assert BEGIN in lines, stdout
    assert END in lines, stdout
    return lines[lines.index(BEGIN) + 1 : lines.index(END)]


def scene_lines(block: list[str]) -> list[str]:
    """The rendered scene rows: what follows the scene header inside the injected block."""
    header = next(i for i, line in enumerate(block) if line.startswith("--- scene "))
    return block[header + 1 :]


def test_quickstart_runs_offline_and_exits_zero(
    default_run: subprocess.CompletedProcess[str],
) -> None:
    assert default_run.returncode == 0, default_run.stderr
    assert "memhop.LocalModel()" in default_run.stdout
    assert "replaying 3 of 19 sessions" in default_run.stdout


def test_injected_block_is_not_empty(default_run: subprocess.CompletedProcess[str]) -> None:
    # Positive control: the block the host injects carries a profile brief and scene rows.
    block = injected_block(default_run.stdout)
    assert "name: Melanie" in block
    rows = scene_lines(block)
    assert rows
    assert rows != ["(empty)"]


def test_scene_renders_the_last_sessions_own_lines(
    default_run: subprocess.CompletedProcess[str], conversation: dict[str, object]
) -> None:
    sessions = conversation["sessions"]
    assert isinstance(sessions, list)
    third = sessions[2]  # the default run replays three sessions; the last one is current
    assert third["id"].endswith("9 June, 2023")
    rows = scene_lines(injected_block(default_run.stdout))
    first_words = third["turns"][0]
    line = f"{first_words['speaker']}: {first_words['text'].splitlines()[0]}"
    assert any(row.endswith(line) for row in rows), rows
    assert rows[0].startswith("[2023-06-09 19:55]"), rows[0]
    # Only the current scene is injected: nothing said in the first session is in it.
    opening = sessions[0]["turns"][0]["text"]
    assert not any(opening in row for row in rows)


def test_archive_search_finds_the_spoken_line(
    default_run: subprocess.CompletedProcess[str],
) -> None:
    out = default_run.stdout
    after = out[out.index('search_l4(keyword="support group"') :]
    assert "I went to a LGBTQ support group yesterday" in after


def test_one_session_renders_that_session(conversation: dict[str, object]) -> None:
    result = run_quickstart("--sessions", "1")
    assert result.returncode == 0, result.stderr
    rows = scene_lines(injected_block(result.stdout))
    sessions = conversation["sessions"]
    assert isinstance(sessions, list)
    opening = sessions[0]["turns"][0]
    assert any(row.endswith(f"{opening['speaker']}: {opening['text']}") for row in rows), rows
