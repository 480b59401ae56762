"""The host journey against a real OpenAI-compatible endpoint (skipped without one).

Set MEMHOP_TEST_LLM_URL, MEMHOP_TEST_LLM_KEY and MEMHOP_TEST_LLM_MODEL to run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import memhop

_ENV = ("MEMHOP_TEST_LLM_URL", "MEMHOP_TEST_LLM_KEY", "MEMHOP_TEST_LLM_MODEL")

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not all(os.environ.get(name) for name in _ENV),
        reason="no real endpoint: set MEMHOP_TEST_LLM_URL, _KEY and _MODEL",
    ),
]


def _config() -> memhop.LlmConfig:
    url, key, model = (os.environ[name] for name in _ENV)
    return memhop.LlmConfig(api_url=url, api_key=key, model=model, timeout_secs=120)


def test_a_turn_closes_with_real_keywords_and_survives_reopen(tmp_path: Path) -> None:
    """One turn's keywords come from the model, are grounded in the turn, and persist."""
    path = str(tmp_path / "real.meh")
    config = _config()
    with memhop.open(path, config, profile=memhop.ProfileInput(name="Ada")) as db:
        me = db.primary()
        me.search()
        row = me.update(
            input="I adopted a grey cat called Miso last weekend.",
            output="Congratulations on adopting Miso!",
            created_at=1_700_000_000_000,
        )
        assert row.fused_keywords, "the model returned no keywords"
        usage = db.stats().model_usage[me.agent_id]
        assert usage.calls >= 1
    with memhop.open(path, config) as db:
        listed = db.primary().scene_context().topics
        assert [t.topic_id for t in listed] == [row.id]
        assert listed[0].keywords == row.fused_keywords
    assert config.api_key.encode() not in Path(path).read_bytes()
