"""The model seam: three operations any model (remote or local) answers.

Responsibility: turn text into keywords, propose consolidation groups over a
scene's surface, and distil a profile from association samples. ``LlmConfig``
endpoints are served by ``OpenAIModel`` (the only importer of ``openai``);
``LocalModel`` answers the same operations offline and deterministically.

Contract:
- Every failure is ``LLMError`` (9002), or ``OperationCancelledError`` (5008)
  when the caller's ``cancel`` event was set (a request on the wire is cut);
  no ``openai`` type or exception escapes this package.
- The API key never reaches a log line or an exception message.
- ``usage()`` is cumulative for the model object (operations, requests,
  failures, tokens).

Layout: ``types`` (the protocol and value types), ``chat`` (the ``ChatClient``
seam and ``ask_json``, the one ladder: budgets that fit, climbing only after a
truncation, one format retry), ``_decode`` (tolerant finding, strict reading of
a JSON reply), ``keywords`` / ``consolidate`` / ``distill`` (prompts, reply
schemas, parsers and their call points), ``structured`` (the ``response_format``
modes and stepping down), ``_abort`` (cutting a request on the wire),
``openai_client`` (``OpenAIChat``, imported lazily: ``openai`` is slow to
import), ``remote`` (``ChatModel``, ``OpenAIModel``) and ``local``
(``LocalModel``).

Traps: finding the JSON in a reply is tolerant, reading it is strict: an
off-contract reply (or one that names an id it was not shown, or a template's
placeholder) is an error, never a guess. If you change a prompt, the fake server
in tests/llm must still tell the three call points apart by their system prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memhop.llm.chat import ChatClient, ReplySchema, TruncationError
from memhop.llm.local import LocalModel
from memhop.llm.remote import ChatModel, OpenAIModel, model_of
from memhop.llm.types import (
    Distillation,
    Group,
    Model,
    NodeDigest,
    NodeMood,
    ReportsUsage,
    TopicDigest,
    Usage,
)

if TYPE_CHECKING:
    from memhop.llm.openai_client import OpenAIChat


def __getattr__(name: str) -> Any:
    if name == "OpenAIChat":  # deferred so that importing memhop does not import openai
        from memhop.llm.openai_client import OpenAIChat

        return OpenAIChat
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


__all__ = [
    "ChatClient",
    "ChatModel",
    "Distillation",
    "Group",
    "LocalModel",
    "Model",
    "NodeDigest",
    "NodeMood",
    "OpenAIChat",
    "OpenAIModel",
    "ReplySchema",
    "ReportsUsage",
    "TopicDigest",
    "TruncationError",
    "Usage",
    "model_of",
]
