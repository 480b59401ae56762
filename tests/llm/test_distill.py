"""Distillation: the listing, the prompt's numbers, and the reply parser (no network)."""

from __future__ import annotations

import json

import pytest

from memhop.errors import LLMError
from memhop.llm.chat import TruncationError
from memhop.llm.distill import (
    DISTILL_FORMAT_SUFFIX,
    DISTILL_PERSONALITY_MAX_RUNES,
    DISTILL_SYSTEM,
    DISTILL_TASK,
    build_distill_user,
    distill,
    distillation_schema,
    parse_distillation,
)
from memhop.llm.types import Distillation, NodeDigest, NodeMood
from tests.llm.fake_chat import FakeChat

SAMPLES = [
    NodeDigest(id=0xAB, importance=0.98765, keywords=("hiking", "Alps")),
    NodeDigest(id=2**64 - 1, importance=1.0, keywords=()),
]
NEUTRAL = Distillation(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, "")


def _reply(**overrides: object) -> str:
    base: dict[str, object] = {
        "emotion": {"valence": 0.8, "arousal": 0.6, "dominance": 0.5},
        "mbti": {"i_e": 0.2, "n_s": 0.3, "t_f": -0.1, "j_p": 0.4},
        "type": "ESFP",
        "personality": "  Curious and warm.  ",
        "per_node": [],
    }
    base.update(overrides)
    return json.dumps(base, ensure_ascii=False)


def test_the_listing_is_golden() -> None:
    assert build_distill_user(SAMPLES) == (
        "# L1 samples (2)\n"
        "\n"
        "- id_hex=00000000000000ab importance=0.988 kw=[hiking Alps]\n"
        "- id_hex=ffffffffffffffff importance=1.000 kw=[]\n"
        "\n"
        "Output the JSON now."
    )


def test_the_prompt_states_the_budget_the_parser_enforces() -> None:
    assert DISTILL_SYSTEM.startswith(f"Task: {DISTILL_TASK}.")
    assert f"at most {DISTILL_PERSONALITY_MAX_RUNES} characters" in DISTILL_SYSTEM
    for key in ("emotion", "mbti", "personality", "per_node", "id_hex", "i_e", "j_p"):
        assert f'"{key}"' in DISTILL_SYSTEM


def test_parse_reads_the_contract_and_ignores_a_stated_type() -> None:
    got = parse_distillation("```json\n" + _reply() + "\n```", {0xAB})
    assert got == Distillation(0.8, 0.6, 0.5, 0.2, 0.3, -0.1, 0.4, "Curious and warm.")


def test_parse_clamps_every_value() -> None:
    reply = _reply(
        emotion={"valence": 7, "arousal": -2, "dominance": 0.25},
        mbti={"i_e": -9, "n_s": 4.5, "t_f": 0, "j_p": -0.5},
        per_node=[{"id_hex": "00000000000000ab", "valence": 2, "arousal": -1}],
    )
    got = parse_distillation(reply, {0xAB})
    assert (got.valence, got.arousal, got.dominance) == (1.0, 0.0, 0.25)
    assert (got.i_e, got.n_s, got.t_f, got.j_p) == (-1.0, 1.0, 0.0, -0.5)
    assert got.per_node == (NodeMood(0xAB, 1.0, 0.0),)


@pytest.mark.parametrize(
    "reply",
    ["{}", '{"emotion": {}}', '{"mbti": {}}', '{"emotion": null, "mbti": {}}'],
)
def test_parse_refuses_a_reply_with_no_contract(reply: str) -> None:
    with pytest.raises(LLMError, match="required"):
        parse_distillation(reply, set())


def test_empty_blocks_are_a_valid_neutral_answer() -> None:
    assert parse_distillation('{"emotion": {}, "mbti": {}}', set()) == NEUTRAL
    assert parse_distillation('Here: {"emotion": {}, "mbti": {}} done.', set()) == NEUTRAL
    partial = parse_distillation('{"emotion": {}, "mbti": {"n_s": -0.5, "t_f": 0.5}}', set())
    assert (partial.i_e, partial.n_s, partial.t_f, partial.j_p) == (0.0, -0.5, 0.5, 0.0)


@pytest.mark.parametrize(
    "reply",
    [
        "The agent seems happy.",
        '{"emotion": {"valence": "0.5"}, "mbti": {}}',
        '{"emotion": {"valence": true}, "mbti": {}}',
        '{"emotion": [], "mbti": {}}',
        '{"emotion": {}, "mbti": {}, "personality": 5}',
        '{"emotion": {}, "mbti": {}, "per_node": {}}',
        '{"emotion": {"valence": 1e400}, "mbti": {}}',
        "null",
        '{"emotion": {}, "mbti": {}, "personality": "<text>"}',  # the template echoed back
        '{"emotion": {}, "mbti": {}, "personality": "..."}',
    ],
)
def test_parse_refuses_non_json_and_wrong_types(reply: str) -> None:
    with pytest.raises(LLMError):
        parse_distillation(reply, set())


def test_parse_caps_the_personality_in_runes() -> None:
    long = "好" * 500
    got = parse_distillation(_reply(personality=long), set())
    assert got.personality == "好" * DISTILL_PERSONALITY_MAX_RUNES


def test_parse_keeps_only_rows_for_sampled_nodes() -> None:
    rows = [
        {"id_hex": "00000000000000AB", "valence": 0.9, "arousal": 0.1},
        {"id_hex": "00000000000000cd", "valence": 0.2, "arousal": 0.2},  # not sampled
        {"id_hex": "ab", "valence": 0.2, "arousal": 0.2},  # not 16 hex digits
        {"id_hex": "zz00000000000000", "valence": 0.2, "arousal": 0.2},
        None,
        {"id_hex": "0000000000000001", "valence": 0.3, "arousal": 0.4},
        {"id_hex": "0000000000000001", "valence": 0.7, "arousal": 0.6},  # later wins
    ]
    got = parse_distillation(_reply(per_node=rows), {0xAB, 1})
    assert got.per_node == (NodeMood(1, 0.7, 0.6), NodeMood(0xAB, 0.9, 0.1))


def test_distill_asks_at_its_ceiling_and_escalates_to_the_endpoint() -> None:
    chat = FakeChat(answers=[TruncationError(2048), "not json", _reply()])
    got = distill(chat, SAMPLES)
    assert got.valence == 0.8
    assert chat.budgets == [2048, 8192, 8192]  # climbed after the truncation only
    assert chat.calls[2].user.endswith(DISTILL_FORMAT_SUFFIX)
    assert chat.calls[0].user == build_distill_user(SAMPLES)
    assert chat.calls[0].schema == distillation_schema(SAMPLES)


def test_the_schema_offers_only_the_sampled_ids() -> None:
    schema = distillation_schema(SAMPLES).schema
    row = schema["properties"]["per_node"]["items"]  # type: ignore[index]
    assert row["properties"]["id_hex"]["enum"] == ["00000000000000ab", "ffffffffffffffff"]
    assert schema["required"] == ["emotion", "mbti", "personality", "per_node"]


def test_distill_under_a_small_endpoint_ceiling() -> None:
    chat = FakeChat(default=_reply(), max_output_tokens=1000)
    distill(chat, SAMPLES)
    assert chat.budgets == [1000]
