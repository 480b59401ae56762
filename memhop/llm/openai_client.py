"""``OpenAIChat``: the ``ChatClient`` over an OpenAI-compatible endpoint; the only ``openai`` user.

One non-streaming chat completion per attempt: two messages, ``temperature`` 0,
``top_p`` 1, the legacy ``max_tokens`` field, and the reply's schema as
``response_format`` in the mode ``structured`` chooses (stepping down when the
endpoint refuses the field). The SDK's own retries are off; memhop makes up to three
attempts, waiting 500 ms then 2 s, and retries only HTTP 429, 500, 502, 503 and 504
(a refused ``response_format`` steps down at once instead). A failure without a
status (connection refused, timeout) is not retried: a slow endpoint costs one
timeout window.

Every exception the SDK raises passes through ``_to_llm_error``, the one boundary:
it becomes an ``LLMError`` whose message and cause carry no ``openai`` object and
never the API key (the raw exception is dropped, a redacted stand-in is chained).
Cancellation is checked before each attempt, during each backoff wait and after a
failed attempt, and a request already on the wire is cut when ``cancel`` is set
(``_abort``): the call returns within about ``POLL_S`` of the event.

``usage()`` counts requests (every attempt), failed requests and the tokens the
endpoint reported.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import openai

from memhop.config import LlmConfig
from memhop.errors import LLMError, OperationCancelledError
from memhop.llm._abort import CONNECTION_CLOSE, Aborter
from memhop.llm.chat import ReplySchema, TruncationError
from memhop.llm.structured import FormatLadder, is_refusal, response_format
from memhop.llm.types import Usage

__all__ = ["BACKOFF_DELAYS", "MAX_UPSTREAM_ECHO_BYTES", "RETRYABLE_STATUSES", "OpenAIChat"]

log = logging.getLogger(__name__)

BACKOFF_DELAYS: tuple[float, ...] = (0.5, 2.0)
"""Waits before the second and third attempts, in seconds."""
RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_UPSTREAM_ECHO_BYTES = 256
_REDACTED = "[redacted]"


class UpstreamError(Exception):
    """A redacted stand-in for an SDK exception, kept as the ``LLMError``'s cause."""


def _clamp_echo(body: str) -> str:
    """The first 256 bytes of ``body`` as valid UTF-8, with "…" when anything was cut."""
    raw = body.encode("utf-8", "replace")
    if len(raw) <= MAX_UPSTREAM_ECHO_BYTES:
        return body
    return raw[:MAX_UPSTREAM_ECHO_BYTES].decode("utf-8", "ignore") + "…"


def _status_body(exc: openai.APIStatusError) -> str:
    try:
        return exc.response.text
    except Exception:  # an unread or undecodable body: fall back to the SDK's message
        return exc.message


def _to_llm_error(exc: BaseException, secret: str) -> tuple[LLMError, bool]:
    """Map anything the SDK raised to ``(LLMError, retryable)``; the one boundary.

    The returned error is built outside any ``except`` block by the caller, so the
    raw exception (whose request holds the Authorization header) is never chained.
    """

    def redact(text: str) -> str:
        return text.replace(secret, _REDACTED) if secret else text

    retryable = False
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = f"llm api: {status} - {_clamp_echo(redact(_status_body(exc)))}"
        retryable = status in RETRYABLE_STATUSES
    elif isinstance(exc, openai.APIResponseValidationError):
        message = f"llm api: {exc.status_code} - the response did not match the chat schema"
    elif isinstance(exc, openai.APITimeoutError):
        message = "llm api call failed: the request timed out"
    elif isinstance(exc, openai.APIConnectionError):
        message = f"llm api call failed: {_clamp_echo(redact(exc.message))}"
    else:
        message = f"llm api call failed: {type(exc).__name__}: {_clamp_echo(redact(str(exc)))}"
    error = LLMError(message)
    error.__cause__ = UpstreamError(f"{type(exc).__name__}: {_clamp_echo(redact(str(exc)))}")
    return error, retryable


def _first_choice(completion: Any) -> tuple[str, str | None]:
    choices = completion.choices
    if not choices:
        msg = "llm api returned no choices"
        raise LLMError(msg)
    choice = choices[0]
    content = choice.message.content if choice.message is not None else None
    if content is not None and not isinstance(content, str):
        msg = "llm api returned a non-text message"
        raise LLMError(msg)
    return content or "", choice.finish_reason


@dataclass(frozen=True, slots=True)
class _Outcome:
    """One request's result: a reply, or an error (retryable, or a refused response_format).

    ``answered``: a completion came back (a reply, a truncated one, or an unusable one).
    """

    reply: str = ""
    error: LLMError | None = None
    retryable: bool = False
    refused: bool = False
    answered: bool = False


class OpenAIChat:
    """A ``ChatClient`` for one ``LlmConfig``; thread-safe; close it when done."""

    def __init__(self, config: LlmConfig, *, delays: Sequence[float] = BACKOFF_DELAYS) -> None:
        config.validate()
        self._secret = config.api_key
        self._model = config.model
        self._base_url = config.base_url
        self._max_output_tokens = config.effective_max_output_tokens
        self._context_tokens = max(config.context_tokens, 0)
        self._formats = FormatLadder(config.structured_output)
        self._delays = tuple(delays)
        self._lock = threading.Lock()
        self._usage = Usage()
        self._aborter = Aborter()
        self._client = openai.OpenAI(
            base_url=self._base_url,
            api_key=config.api_key,
            timeout=float(config.effective_timeout_secs),
            max_retries=0,
            default_headers=CONNECTION_CLOSE,
            http_client=openai.DefaultHttpxClient(
                event_hooks={"request": [self._aborter.on_request]}
            ),
        )

    def __repr__(self) -> str:
        return f"OpenAIChat(base_url={self._base_url!r}, model={self._model!r})"

    @property
    def max_output_tokens(self) -> int:
        return self._max_output_tokens

    @property
    def context_tokens(self) -> int:
        return self._context_tokens

    @property
    def structured_output(self) -> str:
        """The mode requests are sent in now ("json_schema", "json_object" or "off")."""
        return self._formats.modes()[0]

    def usage(self) -> Usage:
        with self._lock:
            return self._usage

    def close(self) -> None:
        """Release the HTTP connection pool."""
        self._client.close()

    def __enter__(self) -> OpenAIChat:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def chat(
        self,
        system: str,
        user: str,
        max_tokens: int,
        *,
        schema: ReplySchema | None = None,
        cancel: threading.Event | None = None,
    ) -> str:
        """One chat completion: the structured-output modes in turn, each with transport retries."""
        modes = self._formats.modes() if schema is not None else ("off",)
        index = 0
        while True:
            outcome = self._with_retries(system, user, max_tokens, schema, modes[index], cancel)
            if not outcome.refused or index + 1 == len(modes):
                break
            log.info("llm: %s refused response_format %s; stepping down", self._model, modes[index])
            index += 1
        if outcome.answered:
            self._formats.settle(modes[index])
        if outcome.error is None:
            return outcome.reply
        if outcome.refused:  # a forced mode ("auto" always ends at "off", which is never refused)
            mode = modes[index]
            msg = (
                f"the endpoint refused response_format {mode} (LlmConfig.structured_output"
                f'={mode!r}; "auto" would step down): {outcome.error.message}'
            )
            raise LLMError(msg) from outcome.error
        raise outcome.error

    def _with_retries(
        self,
        system: str,
        user: str,
        max_tokens: int,
        schema: ReplySchema | None,
        mode: str,
        cancel: threading.Event | None,
    ) -> _Outcome:
        """The transport retry loop (see the module); a refusal returns at once."""
        fmt = response_format(mode, schema)
        outcome = _Outcome()
        for attempt in range(len(self._delays) + 1):
            if attempt:
                _wait(self._delays[attempt - 1], cancel, outcome.error)
            _check_cancel(cancel, None)
            outcome = self._attempt(system, user, max_tokens, fmt, cancel)
            if outcome.error is None or outcome.refused:
                return outcome
            _check_cancel(cancel, outcome.error)
            log.debug(
                "llm attempt %d of %s failed: %s", attempt + 1, self._model, outcome.error.message
            )
            if not outcome.retryable:
                break
        return outcome

    def _attempt(
        self,
        system: str,
        user: str,
        max_tokens: int,
        fmt: dict[str, object] | None,
        cancel: threading.Event | None,
    ) -> _Outcome:
        """One request; never raises (the error is in the outcome)."""
        failure: _Outcome | None = None
        try:
            with self._aborter.watch(cancel):
                completion = self._client.chat.completions.create(
                    model=self._model,
                    messages=[
                        {"role": "system", "content": system},
                        {"role": "user", "content": user},
                    ],
                    max_tokens=max_tokens,
                    temperature=0,
                    top_p=1,
                    presence_penalty=0,
                    frequency_penalty=0,
                    stream=False,
                    extra_body=None if fmt is None else {"response_format": fmt},
                )
            reply, finish_reason = _first_choice(completion)
            usage = completion.usage
        except LLMError as exc:
            failure = _Outcome(error=exc, answered=True)
        except Exception as exc:
            error, retryable = _to_llm_error(exc, self._secret)
            refused = (
                fmt is not None
                and isinstance(exc, openai.APIStatusError)
                and is_refusal(exc.status_code, _status_body(exc))
            )
            failure = _Outcome(error=error, retryable=retryable, refused=refused)
        prompt = completion_tokens = 0
        if failure is None and usage is not None:
            prompt = usage.prompt_tokens or 0
            completion_tokens = usage.completion_tokens or 0
        failed = failure is not None or finish_reason == "length"
        self._count(
            Usage(
                requests=1,
                failures=int(failed),
                prompt_tokens=prompt,
                completion_tokens=completion_tokens,
            )
        )
        if failure is not None:
            return failure
        if finish_reason == "length":
            return _Outcome(error=TruncationError(max_tokens, completion_tokens), answered=True)
        return _Outcome(reply=reply, answered=True)

    def _count(self, delta: Usage) -> None:
        with self._lock:
            self._usage = self._usage + delta


def _check_cancel(cancel: threading.Event | None, cause: LLMError | None) -> None:
    if cancel is not None and cancel.is_set():
        error = OperationCancelledError("llm call cancelled")
        error.__cause__ = cause
        raise error


def _wait(delay: float, cancel: threading.Event | None, last: LLMError | None) -> None:
    if cancel is None:
        time.sleep(delay)
    elif cancel.wait(delay):
        _check_cancel(cancel, last)
