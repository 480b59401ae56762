"""The examples run offline: the quickstart injects a scene, multi_agent and locomo_ingest work."""

from __future__ import annotations

import json
import os
import re
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
    return run_example(QUICKSTART, *args)


def run_example(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LLM_URL", "LLM_KEY", "LLM_MODEL")}
    return subprocess.run(
        [sys.executable, str(script), *args],
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


# ---- examples/multi_agent.py and examples/locomo_ingest.py ------------------------------

MULTI_AGENT = REPO / "examples" / "multi_agent.py"
LOCOMO_INGEST = REPO / "examples" / "locomo_ingest.py"
LOCOMO10 = REPO / "examples" / "data" / "locomo10.json"


def test_multi_agent_keeps_domains_apart_and_shares_the_graph() -> None:
    result = run_example(MULTI_AGENT)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "0000000000000000  Lead        primary" in out
    assert out.count("sub-agent") == 2
    # Each domain searches only its own lines: the researcher's and booker's mention
    # Alfama, the lead's do not.
    assert "lead       0 line(s): (nothing)" in out
    assert "researcher 2 line(s): " in out
    assert "booker     2 line(s): " in out
    searches = out[out.index("(search_l4(keyword='Alfama'))") : out.index("=== the booker")]
    assert "Casa Alfama" not in searches.split("researcher")[1].split("booker")[0]
    # The graph is the file's: the booker reads the node the researcher imported.
    assert "Alfama (district): Old town; tram 28 crosses it" in out
    assert "one hop from Alfama: ['Alfama', 'Belem tower']" in out
    # After a reopen the booker is reached by its id and still has its turn.
    after = out[out.index("=== after reopen") :]
    assert "Two double rooms held at Casa Alfama" in after
    assert "Belem tower and the Alfama district" not in after


def locomo_lines(sample: int, sessions: int) -> tuple[str, int]:
    """A conversation's id and its number of non-empty lines in the first sessions."""
    item = json.loads(LOCOMO10.read_text(encoding="utf-8"))["items"][sample]
    lines = sum(1 for s in item["sessions"][:sessions] for t in s["turns"] if t["text"])
    return item["sample_id"], lines


def searchable(block: str) -> int:
    found = re.search(r"(\d+) lines and events searchable", block)
    assert found is not None, block
    return int(found.group(1))


def test_locomo_ingest_dates_each_conversation_and_keeps_the_originals() -> None:
    result = run_example(LOCOMO_INGEST, "--limit", "2", "--sessions", "3")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "LoCoMo: 2 conversations, one .meh file each" in out
    blocks = out.split("\nconv-")
    assert len(blocks) == 3  # the heading, then one block per conversation (--limit 2)
    for sample, block in enumerate(blocks[1:]):
        sample_id, lines = locomo_lines(sample, 3)
        assert block.startswith(sample_id.removeprefix("conv-"))
        assert f"3 sessions, {lines} lines" in block
        # Default retention keeps the originals no Dream summary carries.
        assert "swept 0 originals" in block
        assert searchable(block) == lines
    # Scenes are named and dated by their LoCoMo sessions.
    first, third = "session 1 (1:56 pm on 8 May, 2023)", "session 3 (7:55 pm on 9 June, 2023)"
    assert f"scenes: {first} ... {third}" in out


def test_locomo_ingest_sweeps_like_upstream_when_asked() -> None:
    result = run_example(LOCOMO_INGEST, "--limit", "1", "--sessions", "3", "--sweep-unfolded")
    assert result.returncode == 0, result.stderr
    _, lines = locomo_lines(0, 3)
    swept = re.search(r"swept (\d+) originals", result.stdout)
    assert swept is not None
    assert 0 < int(swept.group(1)) <= lines
    assert searchable(result.stdout) == lines - int(swept.group(1))
