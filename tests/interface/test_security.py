"""The API key never leaves the config: not in the file, a repr, or an error's text."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest

import memhop

from .conftest import TS

SENTINEL = "sk-SENTINEL-7f3a9c-do-not-leak"
UNREACHABLE = "http://127.0.0.1:1"


def config(**kwargs: object) -> memhop.LlmConfig:
    fields: dict[str, object] = {"api_url": UNREACHABLE, "api_key": SENTINEL, "model": "m"}
    fields.update(kwargs)
    return memhop.LlmConfig(**fields)  # type: ignore[arg-type]


def full_text(exc: BaseException) -> str:
    """Everything a log line could show of ``exc``: message, args, chain, traceback."""
    return "".join(traceback.format_exception(exc)) + repr(exc.args)


def test_the_key_never_reaches_the_file_or_a_repr(tmp_path: Path) -> None:
    path = tmp_path / "k.meh"
    cfg = config()
    db = memhop.open(str(path), cfg, profile=memhop.ProfileInput(name="p"))
    me = db.primary()
    sub = db.sub_agent(cfg, memhop.ProfileInput(name="alpha"))
    db.agent(cfg, sub.agent_id)
    for session in (me, sub):
        session.search()
        session.append_archive(content="no model call", created_at=TS)
    shown = [
        repr(db),
        repr(cfg),
        str(cfg),
        repr(me),
        repr(sub),
        repr(db.stats()),
        repr(db.agents()),
    ]
    db.checkpoint()
    db.close()
    assert all(SENTINEL not in s for s in shown)
    data = path.read_bytes()
    assert SENTINEL.encode() not in data
    # control: what the host did write is in the file
    assert b"no model call" in data


def test_the_key_is_in_no_error_text_from_open_or_sub_agent(tmp_path: Path) -> None:
    path = tmp_path / "k.meh"
    refusals = [
        config(timeout_secs=2**63),
        config(timeout_secs=9_223_372_036 + 1),
        config(model=""),
        config(api_url=""),
    ]
    for bad in refusals:
        with pytest.raises(memhop.ConfigError) as info:
            memhop.open(str(path), bad, profile=memhop.ProfileInput(name="p"))
        assert SENTINEL not in full_text(info.value)
    with pytest.raises(memhop.ConfigError) as info:
        memhop.open(
            str(path),
            config(),
            memhop.Defaults(content_retention_ms=-1),
            memhop.ProfileInput(name="p"),
        )
    assert SENTINEL not in full_text(info.value)
    assert not path.exists()
    with memhop.open(str(path), config(), profile=memhop.ProfileInput(name="p")) as db:
        for bad in refusals:
            with pytest.raises(memhop.ConfigError) as info:
                db.sub_agent(bad, memhop.ProfileInput(name="alpha"))
            assert SENTINEL not in full_text(info.value)
        with pytest.raises(memhop.InvalidQueryError) as iq:
            db.sub_agent(config(), memhop.ProfileInput(name="n" * 300))
        assert SENTINEL not in full_text(iq.value)
        with pytest.raises(memhop.AgentNotFoundError) as nf:
            db.agent(config(), "ffffffffffffffff")
        assert SENTINEL not in full_text(nf.value)
        # control: the same config, well formed, is accepted
        db.sub_agent(config(), memhop.ProfileInput(name="alpha"))


def test_the_key_is_in_no_error_text_from_a_failing_endpoint(tmp_path: Path) -> None:
    path = tmp_path / "k.meh"
    with memhop.open(
        str(path), config(timeout_secs=5), profile=memhop.ProfileInput(name="p")
    ) as db:
        me = db.primary()
        me.search()
        with pytest.raises(memhop.LLMError) as info:
            me.update(input="hello", created_at=TS)
        assert memhop.code_of(info.value) == 9002
        assert SENTINEL not in full_text(info.value)
        assert db.stats().model_usage[me.agent_id].failures == 1
    assert SENTINEL.encode() not in path.read_bytes()
