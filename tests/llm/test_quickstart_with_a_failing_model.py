"""The quickstart against an endpoint that fails a turn: it says so, goes on, and shows memory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.llm.fake_server import FakeOpenAI, Step

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"


def test_a_failed_turn_is_reported_and_the_rest_are_kept(fake_openai: FakeOpenAI) -> None:
    # The first turn's ask and its format retry both come back as prose: that turn fails.
    fake_openai.script(Step(content="I cannot do that."), Step(content="Still no."))
    env = {
        **os.environ,
        "LLM_URL": fake_openai.api_url,
        "LLM_KEY": "sk-quickstart",
        "LLM_MODEL": "fake-model",
    }
    result = subprocess.run(
        [sys.executable, str(QUICKSTART), "--sessions", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "turn 1 (session 1) not recorded: " in out
    assert "turn 2 " not in out  # positive control: only the failing turn is reported
    turns = fake_openai.count("keywords") - 1  # every turn asked once, the first twice
    assert f"recorded {turns - 1} of {turns} turns" in out
    assert "=== injected at the next turn ===" in out
    assert "sk-quickstart" not in out + result.stderr
