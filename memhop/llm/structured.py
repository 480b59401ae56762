"""Structured output: the ``response_format`` a request carries, and stepping down on refusal.

Three modes, strongest first:

- ``json_schema``: the reply's schema, strict (OpenAI, vLLM, recent Ollama);
- ``json_object`` with the schema beside it (llama.cpp's server turns the schema into
  a grammar; an endpoint that knows only ``json_object`` ignores the extra key);
- ``off``: no ``response_format``, the prompt alone asks for JSON.

``LlmConfig.structured_output="auto"`` starts at ``json_schema`` and steps down when
the endpoint refuses the field; ``FormatLadder`` remembers the mode the endpoint
took, for the life of the client. A stepped-down mode is remembered only once the
endpoint answered it, so an endpoint that is simply down does not lose its mode. A
forced mode never steps down: its refusal is the error, naming the setting.

A refusal is an HTTP 400, 415, 422, 500 or 501 to a request that carried the field,
whose body names it ("response_format", "json_schema", ...): llama-cpp-python answers
``json_schema`` with a 500 naming ``response_format``; OpenAI-style servers answer a
400 naming it. Any other failure is not the field's fault and does not step down.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from memhop.llm.chat import ReplySchema

__all__ = ["MODES", "FormatLadder", "is_refusal", "response_format"]

MODES = ("json_schema", "json_object", "off")
_REFUSALS = frozenset({400, 415, 422, 500, 501})
_FIELD_WORDS = ("response_format", "json_schema", "json_object", "schema", "grammar")


def response_format(mode: str, schema: ReplySchema | None) -> dict[str, object] | None:
    """The ``response_format`` body field for ``mode``, or None when nothing is sent."""
    if schema is None or mode == "off":
        return None
    body: Mapping[str, object] = schema.schema
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": schema.name, "strict": True, "schema": dict(body)},
        }
    return {"type": "json_object", "schema": dict(body)}


def is_refusal(status: int | None, body: str) -> bool:
    """True when a failed request that carried ``response_format`` was refused for it."""
    lowered = body.lower()
    return status in _REFUSALS and any(word in lowered for word in _FIELD_WORDS)


class FormatLadder:
    """The modes a client may still use, strongest first; thread-safe."""

    def __init__(self, setting: str) -> None:
        self._modes: tuple[str, ...] = MODES if setting == "auto" else (setting,)
        self._lock = threading.Lock()

    def modes(self) -> tuple[str, ...]:
        """The remembered mode first, then the weaker ones "auto" may still step down to."""
        with self._lock:
            return self._modes

    def settle(self, mode: str) -> None:
        """The endpoint answered ``mode``: never try a stronger one again."""
        with self._lock:
            if mode in self._modes:
                self._modes = self._modes[self._modes.index(mode) :]
