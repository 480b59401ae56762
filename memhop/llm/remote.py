"""The ``Model`` protocol over a chat endpoint: ``ChatModel`` and ``OpenAIModel``.

``ChatModel`` is the seam tests use with a scripted ``ChatClient``; ``OpenAIModel``
is the same model over ``OpenAIChat``. The ``openai`` package is imported only when
an ``OpenAIModel`` is built, so hosts that run offline never pay for it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol, cast, runtime_checkable

from memhop.config import LlmConfig
from memhop.errors import ConfigError
from memhop.llm import consolidate as _consolidate
from memhop.llm import distill as _distill
from memhop.llm import keywords as _keywords
from memhop.llm.chat import ChatClient
from memhop.llm.types import Distillation, Group, Model, NodeDigest, TopicDigest, Usage

__all__ = ["ChatModel", "OpenAIModel", "model_of"]


@runtime_checkable
class _Metered(Protocol):
    def usage(self) -> Usage: ...


class ChatModel:
    """The three model operations, each a prompt, a call and a strict parse over ``chat``."""

    def __init__(self, chat: ChatClient) -> None:
        self._chat = chat
        # A runtime Protocol check walks the protocol's members: once per client, not
        # twice per operation (the domain's meter reads usage before and after each).
        self._metered = isinstance(chat, _Metered)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._chat!r})"

    def extract_keywords(
        self, text: str, *, cancel: threading.Event | None = None
    ) -> tuple[str, ...]:
        return _keywords.extract_keywords(self._chat, text, cancel=cancel)

    def consolidate(
        self, topics: Sequence[TopicDigest], floor: int, *, cancel: threading.Event | None = None
    ) -> tuple[Group, ...]:
        return _consolidate.consolidate(self._chat, topics, floor, cancel=cancel)

    def distill(
        self, samples: Sequence[NodeDigest], *, cancel: threading.Event | None = None
    ) -> Distillation:
        return _distill.distill(self._chat, samples, cancel=cancel)

    def usage(self) -> Usage:
        """The chat client's cumulative usage, or zeros if it keeps none."""
        return cast(_Metered, self._chat).usage() if self._metered else Usage()


class OpenAIModel(ChatModel):
    """The model over an OpenAI-compatible endpoint; ``config`` is validated first."""

    def __init__(self, config: LlmConfig) -> None:
        from memhop.llm.openai_client import OpenAIChat  # deferred: openai is slow to import

        self._openai = OpenAIChat(config)
        super().__init__(self._openai)

    @property
    def structured_output(self) -> str:
        """The ``response_format`` mode requests go out in now (see ``memhop.llm.structured``)."""
        return self._openai.structured_output

    def close(self) -> None:
        """Release the HTTP connection pool."""
        self._openai.close()


def model_of(llm: object) -> Model:
    """The model an ``llm`` argument names: an endpoint config (validated) or a Model."""
    if isinstance(llm, LlmConfig):
        llm.validate()
        return OpenAIModel(llm)
    if isinstance(llm, Model):
        return llm
    msg = f"llm must be an LlmConfig or a memhop Model, not {type(llm).__name__}"
    raise ConfigError(msg)
