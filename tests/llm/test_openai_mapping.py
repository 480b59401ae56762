"""Every exception the ``openai`` package defines maps to ``LLMError`` at the one boundary."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletion

from memhop.errors import LLMError
from memhop.llm import openai_client
from memhop.llm.openai_client import UpstreamError, _to_llm_error
from tests.llm.conftest import SECRET

try:
    httpx: Any = importlib.import_module("httpx2")  # what openai 3.x is built on
except ImportError:  # pragma: no cover - openai 1.x/2.x
    httpx = importlib.import_module("httpx")

_REQUEST = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")


def _exception_classes() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    modules = [openai, importlib.import_module("openai._exceptions")]
    for module in modules:
        for value in list(vars(module).values()):
            if isinstance(value, type) and issubclass(value, openai.OpenAIError):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


def _response(status: int) -> Any:
    body = f'{{"error": {{"message": "echo Bearer {SECRET}"}}}}'
    return httpx.Response(status, text=body, request=_REQUEST)


def _instance(cls: type[BaseException]) -> BaseException:
    """Build an instance of ``cls`` through whichever constructor shape it has."""
    completion = ChatCompletion.model_construct(
        id="x", choices=[], created=0, model="m", object="chat.completion", usage=None
    )
    params = inspect.signature(cls.__init__).parameters
    declared = getattr(cls, "status_code", None)
    status = declared if isinstance(declared, int) else 500
    make: Any = cls  # constructor shapes differ per class; tried in turn below
    attempts: list[Any] = [
        lambda: make(f"boom {SECRET}", response=_response(status), body=None),
        lambda: make(response=_response(status), body=None),
        lambda: make(_response(status), None),
        lambda: make(message=f"connection to {SECRET}", request=_REQUEST),
        lambda: make(_REQUEST),
        lambda: make(f"boom {SECRET}", _REQUEST, body=None),
        lambda: make(completion=completion),
        lambda: make(f"closed {SECRET}", unsent_messages=[]),
        lambda: make(f"boom {SECRET}"),
        lambda: make(),
    ]
    errors = []
    for attempt in attempts:
        try:
            return attempt()  # type: ignore[no-any-return]
        except TypeError as exc:
            errors.append(str(exc))
    pytest.fail(f"cannot construct {cls.__name__}{tuple(params)}: {errors}")


CLASSES = _exception_classes()


def test_the_walk_finds_the_families_memhop_handles() -> None:
    names = {cls.__name__ for cls in CLASSES}
    assert {"OpenAIError", "APIStatusError", "APIConnectionError", "APITimeoutError"} <= names
    assert {"RateLimitError", "InternalServerError", "AuthenticationError"} <= names


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_openai_exception_maps_to_llm_error(cls: type[BaseException]) -> None:
    exc = _instance(cls)
    error, retryable = _to_llm_error(exc, SECRET)
    assert type(error) is LLMError
    assert isinstance(error.__cause__, UpstreamError)  # a redacted stand-in, not the SDK object
    assert error.__cause__.__cause__ is None
    assert error.__context__ is None
    for text in (str(error), repr(error), str(error.__cause__), repr(error.__cause__)):
        assert SECRET not in text
    assert retryable == (
        isinstance(exc, openai.APIStatusError) and exc.status_code in {429, 500, 502, 503, 504}
    )


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        (400, False),
        (401, False),
        (404, False),
        (409, False),
        (422, False),
        (429, True),
        (500, True),
        (502, True),
        (503, True),
        (504, True),
        (418, False),
    ],
)
def test_status_errors_name_the_status_and_retry_only_the_transient_ones(
    status: int, retryable: bool
) -> None:
    exc = openai.APIStatusError("x", response=_response(status), body=None)
    error, again = _to_llm_error(exc, SECRET)
    assert str(error).startswith(f"llm api: {status} - ")
    assert "Bearer [redacted]" in str(error)
    assert again is retryable


def test_a_long_body_is_echoed_bounded_to_256_bytes_of_valid_utf8() -> None:
    body = "é" * 300  # two bytes each: the cut falls on a boundary only by luck
    exc = openai.APIStatusError(
        "x", response=httpx.Response(500, text=body, request=_REQUEST), body=None
    )
    error, _ = _to_llm_error(exc, SECRET)
    echoed = str(error).removeprefix("llm api: 500 - ")
    assert echoed.endswith("…")
    assert len(echoed.removesuffix("…").encode()) <= openai_client.MAX_UPSTREAM_ECHO_BYTES
    assert echoed.removesuffix("…") == "é" * 128


def test_non_openai_failures_are_mapped_too() -> None:
    error, retryable = _to_llm_error(ValueError(f"odd {SECRET}"), SECRET)
    assert type(error) is LLMError
    assert not retryable
    assert SECRET not in str(error)
    assert "ValueError" in str(error)
