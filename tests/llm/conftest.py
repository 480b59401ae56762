"""Fixtures for the model layer: the fake HTTP endpoint and clients bound to it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from memhop.config import LlmConfig
from memhop.llm.openai_client import OpenAIChat
from tests.llm.fake_server import FakeOpenAI

SECRET = "sk-test-SECRET-0123456789abcdef"


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()
    assert not server.errors, server.errors


@pytest.fixture
def make_chat(fake_openai: FakeOpenAI) -> Iterator[Callable[..., OpenAIChat]]:
    """Build ``OpenAIChat`` clients on the fake endpoint (no backoff waits unless asked)."""
    made: list[OpenAIChat] = []

    def make(
        *, timeout_secs: int = 5, max_output_tokens: int = 0, delays: tuple[float, ...] = (0, 0)
    ) -> OpenAIChat:
        config = LlmConfig(
            api_url=fake_openai.api_url,
            api_key=SECRET,
            model="fake-model",
            timeout_secs=timeout_secs,
            max_output_tokens=max_output_tokens,
        )
        chat = OpenAIChat(config, delays=delays)
        made.append(chat)
        return chat

    yield make
    for chat in made:
        chat.close()
