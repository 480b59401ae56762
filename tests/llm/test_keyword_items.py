"""Keywords are keywords: the schema bounds each item, and the reader splits a sentence.

The schema half runs over real HTTP against the fake endpoint (what memhop sends), and
checks the bound with a JSON Schema validator (what it allows); the reader half checks the
splitting rule on replies as a weak model writes them.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

import memhop
from memhop.llm.keywords import (
    KEYWORD_MAX_WORDS,
    KEYWORD_MIN_ITEMS,
    KEYWORD_PATTERN,
    is_sentence,
    keyword_pieces,
    keywords_schema,
    parse_keywords,
)
from tests.llm.fake_server import FakeOpenAI, Step

CHARITY = "Hey Caroline, I ran a charity race for mental health last Saturday."


def _valid(schema: dict[str, object], reply: object) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(reply)


def test_the_schema_holds_each_item_to_six_short_words() -> None:
    schema = keywords_schema("Caroline went to a support group.").schema
    jsonschema.Draft202012Validator.check_schema(schema)
    fine = ["coffee", "LGBTQ support group", "mental health last Saturday", "咖啡", "D.C."]
    assert _valid(schema, {"keywords": fine})  # positive control: keywords pass
    assert _valid(schema, {"keywords": ["one two three four five six"]})
    for item in (
        "one two three four five six seven",  # a sentence's length
        "a" * 33,  # one endless word
        'the "quoted" name',  # a quote reads differently inside llama.cpp's JSON text
        " leading space",
        "two  spaces",
        "",
    ):
        assert not _valid(schema, {"keywords": [item]}), item


def test_the_list_may_grow_with_the_text_but_not_without_end() -> None:
    short = keywords_schema("I jog.").schema
    assert _valid(short, {"keywords": [f"k{i}" for i in range(KEYWORD_MIN_ITEMS)]})
    assert not _valid(short, {"keywords": [f"k{i}" for i in range(KEYWORD_MIN_ITEMS + 1)]})
    long = keywords_schema("x" * 2000).schema
    assert _valid(long, {"keywords": [f"k{i}" for i in range(500)]})  # one per 4 characters
    assert not _valid(long, {"keywords": [f"k{i}" for i in range(501)]})


@pytest.mark.parametrize("mode", ["json_schema", "json_object"])
def test_the_bound_is_sent_with_every_keyword_request(
    fake_openai: FakeOpenAI, tmp_path: Path, mode: str
) -> None:
    llm = memhop.LlmConfig(
        api_url=fake_openai.api_url,
        api_key="sk-items",
        model="fake-model",
        structured_output=mode,
        timeout_secs=5,
    )
    profile = memhop.ProfileInput(name="Melanie")
    with memhop.open(str(tmp_path / "a.meh"), llm, profile=profile) as db:
        me = db.primary()
        me.search()
        row = me.update(input=CHARITY, output="That is great!", created_at=1_700_000_000_000)
        assert row.fused_keywords  # positive control: the turn closed on the reply
    (seen,) = [s for s in fake_openai.seen if s.point == "keywords"]
    fmt = seen.body["response_format"]
    assert fmt["type"] == mode
    schema = fmt["json_schema"]["schema"] if mode == "json_schema" else fmt["schema"]
    items = schema["properties"]["keywords"]
    assert items["items"] == {"type": "string", "pattern": KEYWORD_PATTERN}
    assert items["maxItems"] >= KEYWORD_MIN_ITEMS


def test_a_sentence_a_weak_model_sends_becomes_its_phrases(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    sent = ["Hey Caroline", CHARITY, "Melanie!", "charity race"]
    fake_openai.script(Step(content=json.dumps({"keywords": sent})))
    llm = memhop.LlmConfig(fake_openai.api_url, "sk-items", "fake-model", timeout_secs=5)
    with memhop.open(
        str(tmp_path / "a.meh"), llm, profile=memhop.ProfileInput(name="Melanie")
    ) as db:
        me = db.primary()
        me.search()
        row = me.update(input=CHARITY, output="That is great!", created_at=1_700_000_000_000)
        listed = me.scene_context().topics
    # The short item stays as sent and first; the sentence gives its phrases in its place;
    # "Melanie!" loses its exclamation; the later "charity race" is a duplicate.
    expected = (
        "Hey Caroline",
        "ran",
        "charity race",
        "mental health last Saturday",
        "Melanie",
    )
    assert row.fused_keywords == expected
    assert listed[0].keywords == expected  # what is stored


@pytest.mark.parametrize(
    ("item", "pieces"),
    [
        ("morning walk", ["morning walk"]),  # a keyword passes unchanged
        ("Paris, France", ["Paris, France"]),  # one comma is a name, not a list
        ("D.C.", ["D.C."]),
        ("Dr. Who", ["Dr. Who"]),
        ("It was so powerful.", ["powerful"]),
        ("Is this your own painting?", ["painting"]),
        ("I went to a LGBTQ support...", ["went", "LGBTQ support"]),  # cut off by a bound
        ("Supportive, Community, Family", ["Supportive", "Community", "Family"]),
        ("one two three four five six seven", ["one two three four five six", "seven"]),
        ("我昨天去了支持小组。", ["昨天去", "支持小组"]),
        ("How's it going?", ["going"]),
        ("Why is it so?", []),
    ],
)
def test_a_sentence_is_replaced_by_its_phrases(item: str, pieces: list[str]) -> None:
    assert keyword_pieces(item) == pieces
    assert is_sentence(item) == (pieces != [item])


def test_a_reply_of_only_wordless_sentences_is_kept_as_sent() -> None:
    # Refusing it would lose the turn; the model did answer.
    assert parse_keywords('{"keywords": ["Why is it so?", "Is it?"]}') == (
        "Why is it so?",
        "Is it?",
    )
    assert parse_keywords('{"keywords": ["Why is it so?", "tea"]}') == ("tea",)  # control


_WORDS = st.sampled_from(["tea", "the", "Mel", "ran", "a", "race", "咖啡", "7", "was", "so"])
_ENDS = st.sampled_from(["", ".", "!", "?", ",", "..."])
_ITEMS = st.builds(
    lambda words, end: " ".join(words) + end, st.lists(_WORDS, min_size=1, max_size=12), _ENDS
)


@given(st.lists(_ITEMS, min_size=1, max_size=6))
def test_every_stored_keyword_is_short_grounded_and_in_order(items: list[str]) -> None:
    got = parse_keywords(json.dumps({"keywords": items}, ensure_ascii=False))
    pieces = [p for item in items for p in keyword_pieces(item)]
    if not pieces:  # nothing in any item carried content: kept as sent
        assert got == tuple(dict.fromkeys(i.strip() for i in items))
        return
    assert all(len(k.split()) <= KEYWORD_MAX_WORDS for k in got)
    assert got == tuple(dict.fromkeys(pieces))  # in the reply's order, first seen kept
    for item in items:
        if not is_sentence(item):
            assert item.strip() in got  # a keyword passes unchanged
        for piece in keyword_pieces(item):
            assert all(word in item for word in piece.split())  # words of the item itself
