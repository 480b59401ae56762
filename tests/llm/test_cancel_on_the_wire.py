"""A set ``cancel`` (or ``DB.close``) cuts the HTTP request on the wire, not only the next step.

The fake endpoint never answers a ``hang`` step; it counts the client hanging up. Each
client's timeout is a minute, so only the cut can end these calls early.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import memhop
from memhop.config import LlmConfig
from memhop.errors import MemHopError, OperationCancelledError
from memhop.llm.openai_client import OpenAIChat
from memhop.llm.remote import ChatModel
from tests.llm.conftest import SECRET
from tests.llm.fake_server import KEYWORDS_REPLY, FakeOpenAI, Step

PATIENT_SECS = 60


def _await_hangup(server: FakeOpenAI) -> int:
    """The server notices a hang-up within a poll or two; give it time, then report."""
    for _ in range(500):
        if server.hangups:
            break
        time.sleep(0.01)
    return server.hangups


def test_a_cancel_cuts_the_request_the_endpoint_is_holding(fake_openai: FakeOpenAI) -> None:
    cancel = threading.Event()
    fake_openai.script(Step(hang=True, on_request=cancel.set))
    config = LlmConfig(fake_openai.api_url, SECRET, "fake-model", timeout_secs=PATIENT_SECS)
    with OpenAIChat(config, delays=(0, 0)) as chat:
        model = ChatModel(chat)
        with pytest.raises(OperationCancelledError):
            model.extract_keywords("text", cancel=cancel)
        assert _await_hangup(fake_openai) == 1
        assert model.extract_keywords("text", cancel=threading.Event()) == tuple(KEYWORDS_REPLY)
        assert chat.usage().requests == 2  # the cut request is counted, as a failure
        assert chat.usage().failures == 1
    assert [t.name for t in threading.enumerate() if t.name == "memhop-llm-cancel"] == []


def test_close_cuts_a_turn_waiting_on_the_model(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    reached = threading.Event()
    config = memhop.LlmConfig(fake_openai.api_url, SECRET, "fake-model", timeout_secs=60)
    path = str(tmp_path / "cut.meh")
    db = memhop.open(path, config, profile=memhop.ProfileInput(name="Ada"))
    me = db.primary()
    me.search()
    kept = me.update(input="I keep bees.", output="Lovely!", created_at=1_700_000_000_000)
    me.search()
    fake_openai.script(Step(hang=True, on_request=reached.set))
    outcome: list[BaseException] = []

    def closing_turn() -> None:
        try:
            me.update(input="And a cat.", output="Nice.", created_at=1_700_000_060_000)
        except MemHopError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=closing_turn)
    worker.start()
    assert reached.wait(10), "the turn never reached the model"
    db.close()
    worker.join()
    assert len(outcome) == 1
    assert _await_hangup(fake_openai) == 1
    with memhop.open(path, memhop.LocalModel()) as again:
        topics = again.primary().scene_context().topics
        assert [t.topic_id for t in topics] == [kept.id]  # the acknowledged turn is kept


def test_close_cuts_a_background_dream_pass_waiting_on_the_model(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    reached = threading.Event()
    config = memhop.LlmConfig(fake_openai.api_url, SECRET, "fake-model", timeout_secs=60)
    defaults = memhop.Defaults(scene_dream_topic_threshold=1, dream_compress_min_topics=2)
    # Two turns' keywords, then the background pass's consolidation, which never answers.
    fake_openai.script(Step(), Step(), Step(hang=True, on_request=reached.set))
    seed = memhop.ProfileInput(name="Ada")
    db = memhop.open(str(tmp_path / "dream.meh"), config, defaults, profile=seed)
    me = db.primary()
    for i in range(2):
        me.search()
        me.update(input=f"turn {i} about bees", output="ok", created_at=1_700_000_000_000 + i)
    assert reached.wait(10), "no background pass reached the model"
    assert fake_openai.count("consolidate") == 1
    db.close()
    alive = [t.name for t in threading.enumerate() if t.name.startswith("memhop-dream-")]
    assert alive == []  # joined by close, not left behind in a model call
    assert _await_hangup(fake_openai) == 1
