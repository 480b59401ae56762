"""The shared helpers: fences, flexible ids, escalation and the format-constrained retry."""

from __future__ import annotations

import pytest

from memhop.errors import Code, LLMError, OperationCancelledError, code_of
from memhop.llm.chat import (
    TruncationError,
    ask_json,
    chat_with_retry,
    escalation_ceiling,
    is_truncation,
    min_tokens,
    parse_uint64_flex,
    strip_code_blocks,
)
from memhop.llm.keywords import parse_keywords
from tests.llm.fake_chat import FakeChat


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"a": 1}', '{"a": 1}'),
        ('  ```json\n{"a": 1}\n```  ', '{"a": 1}'),
        ('```\n{"a": 1}\n```', '{"a": 1}'),
        ('```json\n{"a": "x```y"}\n```', '{"a": "x```y"}'),
        ('```json\n{"a": 1}', '{"a": 1}'),
        ("```", ""),
        ('Here it is:\n```json\n{"a": 1}\n```', 'Here it is:\n```json\n{"a": 1}\n```'),
    ],
)
def test_strip_code_blocks_removes_only_a_leading_fence(reply: str, expected: str) -> None:
    assert strip_code_blocks(reply) == expected


def test_prose_before_a_fence_is_refused_by_the_parser() -> None:
    with pytest.raises(LLMError):
        parse_keywords('Sure!\n```json\n{"keywords": ["a"]}\n```')
    assert parse_keywords('```json\n{"keywords": ["a"]}\n```') == ("a",)  # positive control


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (42, 42),
        ("42", 42),
        (" 42 ", 42),
        ('"42"', 42),
        ("ff", 255),
        ("0xFF", 255),
        ("00000000000000ab", 0xAB),
        ("ffffffffffffffff", 2**64 - 1),
        (str(2**64 - 1), 2**64 - 1),
        ("10", 10),  # decimal is tried first
    ],
)
def test_parse_uint64_flex_accepts_numbers_decimal_and_hex(raw: object, expected: int) -> None:
    assert parse_uint64_flex(raw) == expected


@pytest.mark.parametrize(
    "raw", [None, "", "null", " ", "-5", "1.5", "xyz", "0x", str(2**64 * 16), True, [1], {"a": 1}]
)
def test_parse_uint64_flex_refuses_what_is_not_an_id(raw: object) -> None:
    with pytest.raises(LLMError):
        parse_uint64_flex(raw)


def test_min_tokens_and_escalation_ceiling() -> None:
    assert min_tokens(0, 512) == 512
    assert min_tokens(-1, 512) == 512
    assert min_tokens(64, 512) == 64
    assert min_tokens(9000, 512) == 512
    assert escalation_ceiling(FakeChat(max_output_tokens=0)) == 8192
    assert escalation_ceiling(FakeChat(max_output_tokens=777)) == 777


def test_truncation_escalates_once_to_the_retry_budget() -> None:
    chat = FakeChat(answers=[TruncationError(512), "ok"])
    assert chat_with_retry(chat, "s", "u", 512, 2048) == "ok"
    assert chat.budgets == [512, 2048]


def test_truncation_without_headroom_is_not_asked_again() -> None:
    chat = FakeChat(answers=[TruncationError(777)])
    with pytest.raises(TruncationError):
        chat_with_retry(chat, "s", "u", 777, 777)
    assert chat.budgets == [777]


def test_other_errors_are_not_escalated() -> None:
    chat = FakeChat(answers=[LLMError("llm api: 400 - bad request")])
    with pytest.raises(LLMError, match="400"):
        chat_with_retry(chat, "s", "u", 512, 2048)
    assert chat.budgets == [512]


def test_is_truncation_walks_the_cause_chain() -> None:
    outer = LLMError("chunk 0 of 2 failed")
    outer.__cause__ = TruncationError(64)
    assert is_truncation(outer)
    assert not is_truncation(LLMError("other"))
    assert "max_tokens=64" in str(TruncationError(64))
    assert TruncationError(64).code == Code.LLM


def _parse_ok(reply: str) -> str:
    if reply != "ok":
        raise LLMError(f"off contract: {reply!r}")
    return reply


def test_ask_json_makes_one_format_retry_with_the_suffix() -> None:
    chat = FakeChat(answers=["prose", "ok"])
    result = ask_json(chat, "sys", "user", ceiling=2048, parse=_parse_ok, format_suffix="+FMT")
    assert result == "ok"
    assert [c.user for c in chat.calls] == ["user", "user+FMT"]
    assert chat.budgets == [2048, 2048]


def test_ask_json_reports_a_second_off_contract_reply() -> None:
    chat = FakeChat(answers=["prose", "more prose"])
    with pytest.raises(LLMError, match="more prose"):
        ask_json(chat, "s", "u", ceiling=2048, parse=_parse_ok, format_suffix="+F")
    assert len(chat.calls) == 2


def test_ask_json_returns_a_transport_failure_as_is() -> None:
    failure = LLMError("llm api: 503 - busy")
    chat = FakeChat(answers=[failure])
    with pytest.raises(LLMError) as info:
        ask_json(chat, "s", "u", ceiling=2048, parse=_parse_ok, format_suffix="+F")
    assert info.value is failure
    assert len(chat.calls) == 1


@pytest.mark.parametrize(
    ("retry_error", "expected"),
    [
        (OperationCancelledError("llm call cancelled"), OperationCancelledError),
        (LLMError("llm api: 503 - busy"), LLMError),
    ],
)
def test_a_failed_format_retry_keeps_its_own_code(
    retry_error: Exception, expected: type[Exception]
) -> None:
    chat = FakeChat(answers=["prose", retry_error])
    with pytest.raises(expected) as info:
        ask_json(chat, "s", "u", ceiling=2048, parse=_parse_ok, format_suffix="+F")
    assert code_of(info.value) == code_of(retry_error)
    assert info.value.__cause__ is retry_error
    assert "off contract" in str(info.value)  # the first failure is named too
