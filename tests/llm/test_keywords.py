"""Keyword extraction: parser, normaliser, schema, budget ladder and chunking (no network)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop.errors import Code, LLMError, OperationCancelledError, code_of
from memhop.llm.chat import TruncationError
from memhop.llm.keywords import (
    KEYWORD_CHUNK_RUNES,
    KEYWORDS_FORMAT_SUFFIX,
    KEYWORDS_SYSTEM,
    KEYWORDS_TASK,
    build_keywords_user,
    extract_keywords,
    keywords_schema,
    normalise_keywords,
    parse_keywords,
    split_chunks,
)
from tests.llm.fake_chat import FakeChat


def _truncated(exc: BaseException | None) -> bool:
    while exc is not None and not isinstance(exc, TruncationError):
        exc = exc.__cause__
    return exc is not None


def test_the_prompt_states_the_contract() -> None:
    assert KEYWORDS_SYSTEM.startswith(f"Task: {KEYWORDS_TASK}.")
    assert '{"keywords": ' in KEYWORDS_SYSTEM
    assert '"keywords"' in KEYWORDS_FORMAT_SUFFIX
    assert "..." not in KEYWORDS_FORMAT_SUFFIX  # no template for a weak model to echo back
    assert keywords_schema("x").schema["required"] == ["keywords"]
    assert build_keywords_user("a\nb").endswith("\na\nb")
    assert build_keywords_user("x").count("\n") == 1


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"keywords": ["coffee", "morning walk"]}', ("coffee", "morning walk")),
        ('```json\n{"keywords": ["a"]}\n```', ("a",)),
        ('Sure! Here you go:\n```json\n{"keywords": ["a"]}\n```', ("a",)),
        ('{"keywords": ["a"]}\n{"keywords": ["b"]}', ("a",)),  # trailing data is ignored
        ('{"keywords": ["a"]} trailing', ("a",)),
        ('{"keywords": ["cat", "...", "<keyword>", "…"]}', ("cat",)),  # stand-ins are dropped
        ('{"Keywords": ["a"]}', ("a",)),  # Go matches keys case-insensitively
        ('{"keywords": ["a"], "KEYWORDS": ["b"]}', ("b",)),  # the last match wins
        ('{"keywords": ["a"], "extra": 1}', ("a",)),
        ('{"keywords": null}', ()),
        ("{}", ()),
        ('{"keywords": [" a ", "", "a", "A", null, "b"]}', ("a", "A", "b")),
    ],
)
def test_parse_keywords_reads_the_contract(reply: str, expected: tuple[str, ...]) -> None:
    assert parse_keywords(reply) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "coffee, walk",
        '["a", "b"]',
        '{"keywords": ["a", 1]}',
        '{"keywords": "a"}',
        '{"keywords": ["a"',
        '"keywords"',
        '{"keywords": [NaN]}',
        "null",
        '{"keywords": ["...", "..."]}',  # the template echoed back
        '{"keywords": ["<keyword>"]}',
    ],
)
def test_parse_keywords_refuses_what_is_off_contract(reply: str) -> None:
    with pytest.raises(LLMError):
        parse_keywords(reply)


def test_normalise_trims_drops_empties_and_exact_duplicates_in_order() -> None:
    assert normalise_keywords([" b", "a ", "b", "", "  ", "B"]) == ("b", "a", "B")


@pytest.mark.parametrize(
    ("ceiling", "ladder"),
    [
        (64, [64]),
        (1024, [512, 1024]),
        (8192, [512, 4096, 8192]),
        (16384, [512, 4096, 8192]),
        (0, [512, 4096, 8192]),
    ],
)
def test_truncation_climbs_the_ladder_within_the_ceiling_and_stops(
    ceiling: int, ladder: list[int]
) -> None:
    chat = FakeChat(default=TruncationError(0), max_output_tokens=ceiling)
    with pytest.raises(LLMError) as info:
        extract_keywords(chat, "some text")
    assert chat.budgets == ladder
    assert _truncated(info.value)
    assert not any(c.user.endswith(KEYWORDS_FORMAT_SUFFIX) for c in chat.calls)
    assert all(c.schema == keywords_schema("some text") for c in chat.calls)


def test_an_unreadable_reply_is_retried_once_for_format_at_the_same_budget() -> None:
    chat = FakeChat(default="I think the keywords are coffee and tea.")
    with pytest.raises(LLMError, match="off contract"):
        extract_keywords(chat, "text")
    assert chat.budgets == [512, 512]
    assert [c.user.endswith(KEYWORDS_FORMAT_SUFFIX) for c in chat.calls] == [False, True]


def test_an_echoed_template_is_retried_and_never_stored() -> None:
    chat = FakeChat(answers=['{"keywords": ["...", "..."]}', '{"keywords": ["tea"]}'])
    assert extract_keywords(chat, "I drink tea") == ("tea",)
    assert len(chat.calls) == 2


def test_a_truncated_first_rung_escalates_then_succeeds() -> None:
    chat = FakeChat(answers=[TruncationError(512), '{"keywords": ["tea"]}'])
    assert extract_keywords(chat, "text") == ("tea",)
    assert chat.budgets == [512, 4096]


@pytest.mark.parametrize(
    "failure", [LLMError("llm api: 400 - bad"), OperationCancelledError("llm call cancelled")]
)
def test_other_failures_stop_the_ladder(failure: Exception) -> None:
    chat = FakeChat(answers=[failure])
    with pytest.raises(type(failure)) as info:
        extract_keywords(chat, "text")
    assert info.value is failure
    assert len(chat.calls) == 1


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_blank_text_asks_nothing(text: str) -> None:
    chat = FakeChat()
    assert extract_keywords(chat, text) == ()
    assert chat.calls == []


def test_an_empty_valid_reply_is_an_empty_result() -> None:
    chat = FakeChat(default='{"keywords": []}')
    assert extract_keywords(chat, "text") == ()
    assert len(chat.calls) == 1


def test_split_cuts_before_the_last_boundary_in_the_second_half() -> None:
    text = "a" * 1500 + "。" + "b" * 1000
    chunks = split_chunks(text)
    assert chunks == ["a" * 1500, "。" + "b" * 1000]


def test_split_ignores_a_boundary_in_the_first_half_and_hard_cuts() -> None:
    text = "a" * 10 + "\n" + "b" * 4000
    chunks = split_chunks(text)
    assert [len(c) for c in chunks] == [2000, 2000, 11]
    assert "".join(chunks) == text


def test_split_leaves_text_at_the_limit_whole() -> None:
    assert split_chunks("x" * KEYWORD_CHUNK_RUNES) == ["x" * KEYWORD_CHUNK_RUNES]
    assert len(split_chunks("x" * (KEYWORD_CHUNK_RUNES + 1))) == 2


@given(st.text(alphabet=st.sampled_from("ab .;。；\n字"), min_size=0, max_size=7000))
def test_split_chunks_partition_the_text(text: str) -> None:
    chunks = split_chunks(text)
    assert "".join(chunks) == text
    assert all(len(c) <= KEYWORD_CHUNK_RUNES for c in chunks)
    assert all(len(c) >= KEYWORD_CHUNK_RUNES // 2 for c in chunks[:-1])


def _echo_first_word(system: str, user: str, max_tokens: int) -> str:
    body = user.split("\n", 1)[1]
    return json.dumps({"keywords": [body.strip()[:3], "shared"]})


def test_long_text_is_chunked_and_the_results_merged_and_deduped() -> None:
    text = ("aaa " * 400 + "\n") + ("bbb " * 400 + "\n") + ("ccc " * 400)
    assert len(text) > 2 * KEYWORD_CHUNK_RUNES
    chat = FakeChat(default=_echo_first_word)
    result = extract_keywords(chat, text)
    assert len(chat.calls) == len(split_chunks(text.strip())) >= 3
    assert all(len(c.user) < KEYWORD_CHUNK_RUNES + 100 for c in chat.calls)
    assert result[0] == "aaa"
    assert result[1] == "shared"
    assert result.count("shared") == 1
    assert {"bbb", "ccc"} <= set(result)


def test_a_failing_chunk_is_named_and_stops_the_call() -> None:
    chat = FakeChat(default=TruncationError(8192))
    with pytest.raises(LLMError, match="chunk 0 of 3") as info:
        extract_keywords(chat, "x" * 5000)
    assert code_of(info.value) == Code.LLM
    assert _truncated(info.value)
    assert len(chat.calls) == 3  # the first chunk's whole ladder, nothing after


def test_a_cancelled_chunk_stays_cancelled() -> None:
    chat = FakeChat(answers=[OperationCancelledError("llm call cancelled")])
    with pytest.raises(OperationCancelledError, match="chunk 0 of 3"):
        extract_keywords(chat, "x" * 5000)
