"""``OpenAIChat``: the ``ChatClient`` over an OpenAI-compatible endpoint; the only ``openai`` user.

One non-streaming chat completion per attempt: two messages, ``temperature`` 0,
``top_p`` 1, the legacy ``max_tokens`` field, no ``response_format``. The SDK's own
retries are off; memhop makes up to three attempts, waiting 500 ms then 2 s, and
retries only HTTP 429, 500, 502, 503 and 504. A failure without a status (connection
refused, timeout) is not retried: a slow endpoint costs one timeout window.

Every exception the SDK raises passes through ``_to_llm_error``, the one boundary:
it becomes an ``LLMError`` whose message and cause carry no ``openai`` object and
never the API key (the raw exception is dropped, a redacted stand-in is chained).
Cancellation is checked before each attempt, during each backoff wait and after a
failed attempt; a request already on the wire runs to its own end or timeout.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

import openai

from memhop.config import LlmConfig
from memhop.errors import LLMError, OperationCancelledError
from memhop.llm.chat import TruncationError
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


class OpenAIChat:
    """A ``ChatClient`` for one ``LlmConfig``; thread-safe; close it when done."""

    def __init__(self, config: LlmConfig, *, delays: Sequence[float] = BACKOFF_DELAYS) -> None:
        config.validate()
        self._secret = config.api_key
        self._model = config.model
        self._base_url = config.base_url
        self._max_output_tokens = config.effective_max_output_tokens
        self._delays = tuple(delays)
        self._lock = threading.Lock()
        self._usage = Usage()
        self._client = openai.OpenAI(
            base_url=self._base_url,
            api_key=config.api_key,
            timeout=float(config.effective_timeout_secs),
            max_retries=0,
        )

    def __repr__(self) -> str:
        return f"OpenAIChat(base_url={self._base_url!r}, model={self._model!r})"

    @property
    def max_output_tokens(self) -> int:
        return self._max_output_tokens

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
        self, system: str, user: str, max_tokens: int, *, cancel: threading.Event | None = None
    ) -> str:
        """One chat completion with the transport retry loop (see the module docstring)."""
        last: LLMError | None = None
        for attempt in range(len(self._delays) + 1):
            if attempt:
                _wait(self._delays[attempt - 1], cancel, last)
            _check_cancel(cancel, None)
            reply, error, retryable = self._attempt(system, user, max_tokens)
            if error is None:
                return reply
            _check_cancel(cancel, error)
            log.debug("llm attempt %d of %s failed: %s", attempt + 1, self._model, error.message)
            last = error
            if not retryable:
                raise error
        assert last is not None
        raise last

    def _attempt(
        self, system: str, user: str, max_tokens: int
    ) -> tuple[str, LLMError | None, bool]:
        """One request: ``(reply, None, False)`` or ``("", error, retryable)``; never raises."""
        failure: tuple[LLMError, bool] | None = None
        try:
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
            )
            reply, finish_reason = _first_choice(completion)
            usage = completion.usage
        except LLMError as exc:
            failure = (exc, False)
        except Exception as exc:
            failure = _to_llm_error(exc, self._secret)
        prompt = completion_tokens = 0
        if failure is None and usage is not None:
            prompt = usage.prompt_tokens or 0
            completion_tokens = usage.completion_tokens or 0
        failed = failure is not None or finish_reason == "length"
        self._count(Usage(1, prompt, completion_tokens, int(failed)))
        if failure is not None:
            return "", failure[0], failure[1]
        if finish_reason == "length":
            return "", TruncationError(max_tokens), False
        return reply, None, False

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
