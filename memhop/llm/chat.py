"""The chat seam every call point uses, and the helpers shared by the call points.

``ChatClient`` is one non-streaming chat completion (system + user message) under a
token budget; ``OpenAIChat`` is the real one, tests use scripted fakes. On top of
it: ``chat_with_retry`` (one escalation after a truncated answer), ``ask_json``
(parse, then one format-constrained retry), ``strip_code_blocks`` and
``parse_uint64_flex`` (an id echoed as a number or as a decimal/hex string).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol, TypeVar, runtime_checkable

from memhop.errors import LLMError, MemHopError, OperationCancelledError

__all__ = [
    "CONSOLIDATION_MAX_TOKENS",
    "ChatClient",
    "TruncationError",
    "ask_json",
    "chat_with_retry",
    "escalation_ceiling",
    "is_truncation",
    "min_tokens",
    "parse_uint64_flex",
    "rewrap",
    "strip_code_blocks",
]

CONSOLIDATION_MAX_TOKENS = 8192
"""Consolidation's ceiling and the widest keyword rung (equal to the default endpoint ceiling,
so a host that leaves ``max_output_tokens`` unset has no escalation headroom, as upstream)."""

_U64_MAX = (1 << 64) - 1
_FENCE = "```"
_DEC = frozenset("0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")

T = TypeVar("T")


class TruncationError(LLMError):
    """The model stopped at its ``max_tokens`` budget (finish_reason "length")."""

    def __init__(self, max_tokens: int) -> None:
        super().__init__(f"llm response truncated: finish_reason=length at max_tokens={max_tokens}")
        self.max_tokens = max_tokens


@runtime_checkable
class ChatClient(Protocol):
    """One chat completion: ``system`` then ``user``, at most ``max_tokens`` of output.

    Returns the first choice's content as is (an empty string is a success). Raises
    ``TruncationError`` when the answer was cut at the budget, ``LLMError`` for any
    other failure, ``OperationCancelledError`` when ``cancel`` was set.
    """

    @property
    def max_output_tokens(self) -> int:
        """The endpoint's output ceiling; <= 0 means "not stated"."""
        ...

    def chat(
        self, system: str, user: str, max_tokens: int, *, cancel: threading.Event | None = None
    ) -> str: ...


def is_truncation(exc: BaseException | None) -> bool:
    """True when ``exc`` or an exception in its cause chain is a ``TruncationError``."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, TruncationError):
            return True
        seen.add(id(exc))
        exc = exc.__cause__
    return False


def rewrap(exc: MemHopError, message: str) -> MemHopError:
    """A new error saying ``message`` under ``exc``'s code (cancellation stays cancellation).

    The caller raises it ``from exc`` so the original stays in the cause chain.
    """
    if isinstance(exc, OperationCancelledError):
        return OperationCancelledError(message, code=exc.code)
    return LLMError(message, code=exc.code)


def min_tokens(configured: int, ceiling: int) -> int:
    """The endpoint's ceiling bounded by the call point's (``configured`` <= 0 means unstated)."""
    return ceiling if configured <= 0 or configured > ceiling else configured


def escalation_ceiling(chat: ChatClient) -> int:
    """The budget a truncated answer escalates to: the endpoint ceiling, or 8192 if unstated."""
    ceiling = chat.max_output_tokens
    return ceiling if ceiling > 0 else CONSOLIDATION_MAX_TOKENS


def chat_with_retry(
    chat: ChatClient,
    system: str,
    user: str,
    primary_max: int,
    retry_max: int,
    *,
    cancel: threading.Event | None = None,
) -> str:
    """Ask at ``primary_max``; only a truncated answer with headroom is asked again (``retry_max``).

    Every other outcome (success, any other error, no headroom) is returned unchanged.
    """
    try:
        return chat.chat(system, user, primary_max, cancel=cancel)
    except TruncationError:
        if primary_max >= retry_max:
            raise
    return chat.chat(system, user, retry_max, cancel=cancel)


def ask_json(
    chat: ChatClient,
    system: str,
    user: str,
    *,
    ceiling: int,
    parse: Callable[[str], T],
    format_suffix: str,
    cancel: threading.Event | None = None,
) -> T:
    """Ask, parse; on an off-contract reply ask once more with ``format_suffix`` appended.

    A transport failure of the first ask is raised as is. A failed format retry is
    raised under the retry's own code (a cancelled retry reads as cancelled), naming
    both the off-contract reply and the retry's failure; the retry error is the cause.
    """
    budget = min_tokens(chat.max_output_tokens, ceiling)
    reply = chat_with_retry(chat, system, user, budget, escalation_ceiling(chat), cancel=cancel)
    try:
        return parse(reply)
    except LLMError as exc:
        first = exc
    try:
        retry = chat.chat(system, user + format_suffix, budget, cancel=cancel)
    except MemHopError as exc:
        msg = f"model answered off contract ({first.message}); format retry failed: {exc.message}"
        raise rewrap(exc, msg) from exc
    return parse(retry)


def strip_code_blocks(text: str) -> str:
    """Remove a Markdown fence that wraps the whole reply; prose before a fence is kept."""
    text = text.strip()
    if not text.startswith(_FENCE):
        return text
    newline = text.find("\n")
    body = "" if newline < 0 else text[newline + 1 :]
    closing = body.rfind(_FENCE)
    if closing >= 0:
        body = body[:closing]
    return body.strip()


def parse_uint64_flex(raw: object) -> int:
    """An id as a JSON number or a quoted string: decimal first, then hex (optional ``0x``).

    ``raw`` is a decoded JSON value (numbers as ``GoNumber`` or ``int``). Empty,
    ``null``, negative, fractional or out-of-range values raise ``LLMError``.
    """
    if isinstance(raw, bool) or not isinstance(raw, str | int):
        msg = f"member id {raw!r} is neither a number nor a string"
        raise LLMError(msg)
    text = str(raw).strip().strip('"').strip()
    if not text or text == "null":
        msg = "member id is empty or null"
        raise LLMError(msg)
    hex_text = text.removeprefix("0x").removeprefix("0X")
    for candidate, digits, base in ((text, _DEC, 10), (hex_text, _HEX, 16)):
        if candidate and all(c in digits for c in candidate):
            value = int(candidate, base)
            if value <= _U64_MAX:
                return value
    msg = f"member id {text!r} is not a decimal or hex uint64"
    raise LLMError(msg)
