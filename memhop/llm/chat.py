"""The chat seam every call point uses, and the one way a call point asks for JSON.

``ChatClient`` is one non-streaming chat completion (system + user message) under a
token budget, optionally held to the reply's JSON schema (``ReplySchema``);
``OpenAIChat`` is the real one, tests use scripted fakes.

``ask_json`` walks the same ladder for every operation (an ``Ask``):

- budgets: the call point's rungs, each bounded by the endpoint's output ceiling and
  by the room the model's context leaves beside the prompt (``context_tokens``);
  rungs that end up equal are asked once;
- a reply truncated at its budget climbs to the next rung; one truncated at the last
  rung, or short of its budget (the context ran out first), is an error naming the
  limit that stopped it: climbing cannot help;
- an unreadable reply gets one format retry (the call point's suffix appended) at the
  same budget; any other failure is raised as is.

So no request is sent twice in one operation: rungs differ in budget, and the
format retry differs in its prompt.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar, runtime_checkable

from memhop.errors import LLMError, MemHopError, OperationCancelledError

__all__ = [
    "CONSOLIDATION_MAX_TOKENS",
    "MIN_REPLY_TOKENS",
    "Ask",
    "Budget",
    "ChatClient",
    "ReplySchema",
    "TruncationError",
    "ask_json",
    "escalation_ceiling",
    "estimate_prompt_tokens",
    "parse_uint64_flex",
    "plan_budgets",
    "rewrap",
]

CONSOLIDATION_MAX_TOKENS = 8192
"""Consolidation's ceiling and the widest keyword rung (equal to the default endpoint ceiling,
so a host that leaves ``max_output_tokens`` unset has no escalation headroom, as upstream)."""
MIN_REPLY_TOKENS = 32
"""Below this much room for a reply a request is not sent: no answer could fit."""
_BYTES_PER_TOKEN = 3
_MESSAGE_OVERHEAD_TOKENS = 16
"""Per request: the chat template's role markers around the two messages."""

_U64_MAX = (1 << 64) - 1
_DEC = frozenset("0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")

T = TypeVar("T")


class TruncationError(LLMError):
    """The model stopped before finishing its reply (finish_reason "length").

    ``produced`` is the completion tokens the endpoint reported (0 when it reported
    none). A reply cut short of ``max_tokens`` was stopped by something else: the
    model's context ran out, so a larger budget would not help.
    """

    def __init__(self, max_tokens: int, produced: int = 0) -> None:
        self.max_tokens = max_tokens
        self.produced = produced
        if self.short:
            message = (
                f"llm response truncated after {produced} tokens, short of"
                f" max_tokens={max_tokens}: the model's context ran out"
                " (set LlmConfig.context_tokens to the model's context size)"
            )
        else:
            message = f"llm response truncated: finish_reason=length at max_tokens={max_tokens}"
        super().__init__(message)

    @property
    def short(self) -> bool:
        return 0 < self.produced < self.max_tokens


@dataclass(frozen=True, slots=True)
class ReplySchema:
    """The JSON schema a reply must follow, under a short name (sent as structured output)."""

    name: str
    schema: Mapping[str, object]


@runtime_checkable
class ChatClient(Protocol):
    """One chat completion: ``system`` then ``user``, at most ``max_tokens`` of output.

    ``schema``, when given, is the reply's JSON schema: a client that can hold the
    model to it does, one that cannot ignores it. Returns the first choice's content
    as is (an empty string is a success). Raises ``TruncationError`` when the answer
    was cut, ``LLMError`` for any other failure, ``OperationCancelledError`` when
    ``cancel`` was set.
    """

    @property
    def max_output_tokens(self) -> int:
        """The endpoint's output ceiling; <= 0 means "not stated"."""
        ...

    @property
    def context_tokens(self) -> int:
        """The model's context window in tokens; <= 0 means "not stated"."""
        ...

    def chat(
        self,
        system: str,
        user: str,
        max_tokens: int,
        *,
        schema: ReplySchema | None = None,
        cancel: threading.Event | None = None,
    ) -> str: ...


@dataclass(frozen=True, slots=True)
class Ask(Generic[T]):
    """One operation's request: prompts, reply schema, budget rungs, parser, format suffix.

    ``what`` names the operation in error messages ("keyword extraction").
    ``rungs`` ascend; the first is asked first.
    """

    what: str
    system: str
    user: str
    schema: ReplySchema
    rungs: tuple[int, ...]
    parse: Callable[[str], T]
    format_suffix: str


@dataclass(frozen=True, slots=True)
class Budget:
    """One rung as it will be asked: its ``max_tokens`` and what set it (for error messages)."""

    tokens: int
    limit: str


def rewrap(exc: MemHopError, message: str) -> MemHopError:
    """A new error saying ``message`` under ``exc``'s code (cancellation stays cancellation).

    The caller raises it ``from exc`` so the original stays in the cause chain.
    """
    if isinstance(exc, OperationCancelledError):
        return OperationCancelledError(message, code=exc.code)
    return LLMError(message, code=exc.code)


def escalation_ceiling(chat: ChatClient) -> int:
    """The widest budget an operation may climb to: the endpoint ceiling, or 8192 if unstated."""
    ceiling = chat.max_output_tokens
    return ceiling if ceiling > 0 else CONSOLIDATION_MAX_TOKENS


def estimate_prompt_tokens(system: str, user: str) -> int:
    """A deliberately high estimate of a request's prompt tokens (no tokenizer at hand).

    One token per three UTF-8 bytes plus the chat template's overhead: English runs
    about four bytes a token and a CJK character (three bytes) about one token, so
    the estimate leaves room to spare rather than overflow the context.
    """
    size = len(system.encode("utf-8", "replace")) + len(user.encode("utf-8", "replace"))
    return -(-size // _BYTES_PER_TOKEN) + _MESSAGE_OVERHEAD_TOKENS


def plan_budgets(chat: ChatClient, ask: Ask[T]) -> list[Budget]:
    """The rungs of ``ask`` as they will be sent, each bounded by the endpoint and the context.

    The prompt is measured with the format suffix, so the retry fits too. A context
    that leaves fewer than ``MIN_REPLY_TOKENS`` beside the prompt refuses the ask.
    """
    ceiling, context = chat.max_output_tokens, chat.context_tokens
    prompt = estimate_prompt_tokens(ask.system, ask.user + ask.format_suffix)
    room = context - prompt
    if context > 0 and room < MIN_REPLY_TOKENS:
        msg = (
            f"{ask.what}: the prompt (about {prompt} tokens) leaves no room for a reply in the"
            f" model's context of {context} tokens (LlmConfig.context_tokens)"
        )
        raise LLMError(msg)
    budgets: list[Budget] = []
    for rung in ask.rungs:
        budget = Budget(rung, f"the widest budget of {ask.what}")
        if 0 < ceiling < budget.tokens:
            budget = Budget(ceiling, f"the endpoint's max_output_tokens={ceiling}")
        if context > 0 and room < budget.tokens:
            budget = Budget(
                room,
                f"the model's context (context_tokens={context}) beside a prompt of about"
                f" {prompt} tokens",
            )
        if not budgets or budget.tokens > budgets[-1].tokens:
            budgets.append(budget)
    return budgets


def ask_json(chat: ChatClient, ask: Ask[T], *, cancel: threading.Event | None = None) -> T:
    """Walk the ladder (see the module) and return the parsed reply.

    A failure after the format retry names the first off-contract reply too and
    keeps the retry's code (a cancelled retry reads as cancelled).
    """
    budgets = plan_budgets(chat, ask)
    rung, user = 0, ask.user
    first: LLMError | None = None
    while True:
        budget = budgets[rung]
        try:
            reply = chat.chat(ask.system, user, budget.tokens, schema=ask.schema, cancel=cancel)
        except TruncationError as exc:
            if not exc.short and rung + 1 < len(budgets):
                rung += 1
                continue
            failure: MemHopError = exc if exc.short else _cut_at(ask, budget, exc)
            break
        except MemHopError as exc:
            failure = exc
            break
        try:
            return ask.parse(reply)
        except LLMError as exc:
            if first is not None:
                failure = exc
                break
            first, user = exc, ask.user + ask.format_suffix
    if first is None:
        raise failure
    msg = f"{ask.what}: the model answered off contract ({first.message}); format retry: "
    raise rewrap(failure, msg + failure.message) from failure


def _cut_at(ask: Ask[T], budget: Budget, cause: TruncationError) -> LLMError:
    """A truncation at the last rung, naming the limit that set that rung."""
    error = LLMError(
        f"{ask.what}: reply truncated at max_tokens={budget.tokens}, the limit set by"
        f" {budget.limit}"
    )
    error.__cause__ = cause
    return error


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
