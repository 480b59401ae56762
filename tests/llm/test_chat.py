"""The shared ladder and readers: finding the JSON, budgets that fit, climbing, one format retry."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop.errors import Code, LLMError, OperationCancelledError, code_of
from memhop.llm._decode import first_object, is_placeholder
from memhop.llm.chat import (
    MIN_REPLY_TOKENS,
    Ask,
    ReplySchema,
    TruncationError,
    ask_json,
    escalation_ceiling,
    estimate_prompt_tokens,
    parse_uint64_flex,
    plan_budgets,
)
from tests.llm.fake_chat import FakeChat

SCHEMA = ReplySchema("test", {"type": "object"})


@pytest.mark.parametrize(
    "reply",
    [
        '{"a": "x"}',
        '  ```json\n{"a": "x"}\n```  ',
        'Sure! Here it is:\n```json\n{"a": "x"}\n```\nHope this helps.',
        '{"a": "x"}\n{"a": "y"}',  # llama.cpp's "Extra data": the first object is the answer
        '{"a": "x"} trailing words',
        'The format is {a}; my answer: {"a": "x"}',  # a brace that opens no JSON is skipped
        '[{"a": "x"}]',
    ],
)
def test_first_object_finds_the_json_around_prose_and_fences(reply: str) -> None:
    assert first_object(reply, "reply") == {"a": "x"}


@pytest.mark.parametrize("reply", ["", "prose only", '["a"]', '{"a": "x"', "null", '{"a": NaN}'])
def test_first_object_refuses_a_reply_without_a_readable_object(reply: str) -> None:
    with pytest.raises(LLMError, match="holds no JSON object"):
        first_object(reply, "reply")
    assert first_object("x " + '{"a": "x"}', "reply") == {"a": "x"}  # positive control


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("...", True),
        ("…", True),
        ("", True),
        ("  ", True),
        ("<id>", True),
        ("<text>", True),
        ("- -", True),
        ("coffee", False),
        ("<3 cats", False),
        ("9.5", False),
        ("咖啡", False),
    ],
)
def test_is_placeholder_names_template_stand_ins(text: str, expected: bool) -> None:
    assert is_placeholder(text) is expected


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


def test_escalation_ceiling() -> None:
    assert escalation_ceiling(FakeChat(max_output_tokens=0)) == 8192
    assert escalation_ceiling(FakeChat(max_output_tokens=777)) == 777


def _parse_ok(reply: str) -> str:
    if reply != "ok":
        raise LLMError(f"off contract: {reply!r}")
    return reply


def _ask(rungs: tuple[int, ...] = (512, 4096, 8192), user: str = "user") -> Ask[str]:
    return Ask("test op", "sys", user, SCHEMA, rungs, _parse_ok, "+FMT")


@pytest.mark.parametrize(
    ("ceiling", "budgets"),
    [
        (64, [64]),
        (1024, [512, 1024]),
        (8192, [512, 4096, 8192]),
        (16384, [512, 4096, 8192]),
        (0, [512, 4096, 8192]),
    ],
)
def test_budgets_stay_within_the_endpoint_ceiling_and_are_never_repeated(
    ceiling: int, budgets: list[int]
) -> None:
    assert [b.tokens for b in plan_budgets(FakeChat(max_output_tokens=ceiling), _ask())] == budgets


def test_budgets_fit_beside_the_prompt_in_the_context() -> None:
    ask = _ask(user="word " * 300)
    prompt = estimate_prompt_tokens(ask.system, ask.user + ask.format_suffix)
    assert 300 < prompt < 1000
    planned = plan_budgets(FakeChat(context_tokens=4096), ask)
    assert [b.tokens for b in planned] == [512, 4096 - prompt]
    assert "context_tokens=4096" in planned[-1].limit
    assert "context" not in planned[0].limit  # positive control: the first rung is its own
    wide = plan_budgets(FakeChat(context_tokens=0), ask)
    assert [b.tokens for b in wide] == [512, 4096, 8192]


def test_a_prompt_that_fills_the_context_is_not_sent() -> None:
    ask = _ask(user="x" * 3000)
    prompt = estimate_prompt_tokens(ask.system, ask.user + ask.format_suffix)
    chat = FakeChat(context_tokens=prompt + MIN_REPLY_TOKENS - 1)
    with pytest.raises(LLMError, match="leaves no room for a reply") as info:
        ask_json(chat, ask)
    assert "context of" in str(info.value)
    assert chat.calls == []
    chat = FakeChat(context_tokens=prompt + MIN_REPLY_TOKENS, default="ok")
    assert ask_json(chat, ask) == "ok"  # positive control: exactly enough room is asked


def test_a_truncated_reply_climbs_to_the_next_rung() -> None:
    chat = FakeChat(answers=[TruncationError(512, 512), "ok"])
    assert ask_json(chat, _ask()) == "ok"
    assert chat.budgets == [512, 4096]
    assert [c.user for c in chat.calls] == ["user", "user"]
    assert all(c.schema == SCHEMA for c in chat.calls)


def test_an_unreadable_reply_gets_one_format_retry_at_the_same_budget() -> None:
    chat = FakeChat(answers=["prose", "ok"])
    assert ask_json(chat, _ask()) == "ok"
    assert chat.budgets == [512, 512]
    assert [c.user for c in chat.calls] == ["user", "user+FMT"]


def test_a_second_unreadable_reply_fails_naming_both() -> None:
    chat = FakeChat(answers=["prose", "more prose"])
    with pytest.raises(LLMError, match="more prose") as info:
        ask_json(chat, _ask())
    assert "'prose'" in str(info.value)
    assert "test op" in str(info.value)
    assert len(chat.calls) == 2


def test_a_reply_cut_short_of_its_budget_does_not_climb() -> None:
    chat = FakeChat(answers=[TruncationError(4096, 3500)])
    with pytest.raises(TruncationError, match="context ran out") as info:
        ask_json(chat, _ask(rungs=(4096, 8192)))
    assert "context_tokens" in str(info.value)
    assert len(chat.calls) == 1
    chat = FakeChat(answers=[TruncationError(4096, 4096), "ok"])  # positive control
    assert ask_json(chat, _ask(rungs=(4096, 8192))) == "ok"


def test_truncation_at_the_last_rung_names_the_limit_that_set_it() -> None:
    chat = FakeChat(default=TruncationError(0), max_output_tokens=1024)
    with pytest.raises(LLMError, match="max_output_tokens=1024") as info:
        ask_json(chat, _ask())
    assert isinstance(info.value.__cause__, TruncationError)
    assert code_of(info.value) == Code.LLM
    assert chat.budgets == [512, 1024]

    ask = _ask(user="word " * 300)
    chat = FakeChat(default=TruncationError(0), context_tokens=2048)
    with pytest.raises(LLMError, match="context_tokens=2048") as info:
        ask_json(chat, ask)
    assert "max_tokens=8192" not in str(info.value)
    assert len(chat.calls) == 2


def test_a_transport_failure_is_raised_as_is() -> None:
    failure = LLMError("llm api: 503 - busy")
    chat = FakeChat(answers=[failure])
    with pytest.raises(LLMError) as info:
        ask_json(chat, _ask())
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
        ask_json(chat, _ask())
    assert code_of(info.value) == code_of(retry_error)
    assert info.value.__cause__ is retry_error
    assert "off contract" in str(info.value)  # the first failure is named too


_ANSWERS = st.sampled_from(["ok", "prose", "cut", "short"])


@given(st.lists(_ANSWERS, max_size=8), st.sampled_from([0, 700, 5000]))
def test_no_request_is_ever_sent_twice_in_one_operation(script: list[str], ceiling: int) -> None:
    made = {
        "ok": lambda: "ok",
        "prose": lambda: "prose",
        "cut": lambda: TruncationError(1),
        "short": lambda: TruncationError(100, 50),
    }
    chat = FakeChat(answers=[made[a]() for a in script], default="prose", max_output_tokens=ceiling)
    with contextlib.suppress(LLMError):
        assert ask_json(chat, _ask()) == "ok"
    sent = [(c.system, c.user, c.max_tokens) for c in chat.calls]
    assert len(sent) == len(set(sent))
    assert 1 <= len(sent) <= 2 * 3  # at most every rung, with and without the format retry
