"""Consolidation: the listing, the prompt's floor, and the reply parser (no network)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import jsonschema
import pytest

from memhop.errors import LLMError, OperationCancelledError
from memhop.llm.chat import TruncationError
from memhop.llm.consolidate import (
    CONSOLIDATE_FORMAT_SUFFIX,
    CONSOLIDATE_TASK,
    ECHO_CHARS,
    MAX_RUN,
    SUMMARY_PATTERN,
    build_consolidate_system,
    build_consolidate_user,
    consolidate,
    consolidation_schema,
    go_list,
    parse_consolidation,
)
from memhop.llm.types import Group, TopicDigest
from tests.llm.fake_chat import FakeChat

TOPICS = [
    TopicDigest(id=11, depth=1, keywords=("morning run", "park")),
    TopicDigest(id=18446744073709551615, depth=2, keywords=("咖啡",)),
    TopicDigest(id=7, depth=1, keywords=()),
]


def test_the_listing_is_golden() -> None:
    assert build_consolidate_user(TOPICS) == (
        "# Surface topics of one scene (3 topics, oldest first)\n"
        "\n"
        "- id=11 depth=1 kw=[morning run park]\n"
        "- id=18446744073709551615 depth=2 kw=[咖啡]\n"
        "- id=7 depth=1 kw=[]\n"
        "\n"
        "Return the merged groups now."
    )
    assert go_list(["a", "b c"]) == "[a b c]"


@pytest.mark.parametrize(("floor", "shown"), [(20, "20"), (7, "7"), (0, "0"), (-3, "0")])
def test_the_prompt_states_the_configured_floor_and_no_other_number(floor: int, shown: str) -> None:
    system = build_consolidate_system(floor)
    assert system.startswith(f"Task: {CONSOLIDATE_TASK}.")
    numbers = re.findall(r"(?<![\w.])\d+(?![\w])", system)
    assert numbers == [shown, shown]
    assert '"l2_groups"' in system
    assert '"node_hashes"' in system
    assert '"merged_summary"' in system
    assert system.index('"keywords"') < system.rindex('"merged_summary"')  # copy, then write
    assert "ADJACENT" in system
    assert "false memory" in system


def test_parse_accepts_fenced_replies_and_every_id_shape() -> None:
    reply = (
        "```json\n"
        '{"l2_groups": [{"node_hashes": [11, "12", "0x0d", "00000000000000ff"],'
        ' "merged_summary": "They talked about running."}], "scene_id": 5}\n'
        "```"
    )
    assert parse_consolidation(reply, {11, 12, 13, 255}) == (
        Group(member_ids=(11, 12, 13, 255), summary="They talked about running."),
    )


def test_parse_reads_keys_case_insensitively() -> None:
    reply = '{"L2_Groups": [{"Node_Hashes": [1, 2], "MERGED_SUMMARY": "s"}]}'
    assert parse_consolidation(reply, {1, 2}) == (Group((1, 2), "s"),)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("{}", ()),
        ('{"l2_groups": []}', ()),
        ('{"l2_groups": null}', ()),
        # Usability is the applier's call: the parser keeps these as proposed.
        ('{"l2_groups": [{"node_hashes": [5], "merged_summary": "s"}]}', (Group((5,), "s"),)),
        ('{"l2_groups": [{"node_hashes": [5, 5], "merged_summary": "s"}]}', (Group((5, 5), "s"),)),
        ('Groups: {"l2_groups": []} as asked.', ()),
    ],
)
def test_parse_leaves_group_validation_to_the_applier(
    reply: str, expected: tuple[Group, ...]
) -> None:
    assert parse_consolidation(reply, {5}) == expected


@pytest.mark.parametrize(
    "reply",
    [
        '{"l2_groups": [{"node_hashes": [1, "x-1"], "merged_summary": "s"}]}',
        '{"l2_groups": [{"node_hashes": [1, null], "merged_summary": "s"}]}',
        '{"l2_groups": [{"node_hashes": [1, ""], "merged_summary": "s"}]}',
        '{"l2_groups": [{"node_hashes": [1, -2], "merged_summary": "s"}]}',
        '{"l2_groups": [{"node_hashes": [1, 2], "merged_summary": "s"}',
        '{"l2_groups": [{"node_hashes": [1, 2], "merged_summary": 5}]}',
        '{"l2_groups": {"node_hashes": [1, 2]}}',
        "I would merge topics 1 and 2.",
        "null",
        # What would invent: an id never listed, a summary that is a stand-in or missing.
        '{"l2_groups": [{"node_hashes": [1, 99], "merged_summary": "s"}]}',
        '{"l2_groups": [{"node_hashes": ["<id>", "<id>"], "merged_summary": "<text>"}]}',
        '{"l2_groups": [{"node_hashes": [1, 2], "merged_summary": "<text>"}]}',
        '{"l2_groups": [{"node_hashes": [1, 2], "merged_summary": "..."}]}',
        '{"l2_groups": [{"node_hashes": [1, 2], "merged_summary": "  "}]}',
        '{"l2_groups": [{"node_hashes": [1, 2], "merged_summary": "},"}]}',
        '{"l2_groups": [{"node_hashes": [1, 2]}]}',
        '{"l2_groups": [null]}',
    ],
)
def test_parse_refuses_what_it_cannot_use(reply: str) -> None:
    with pytest.raises(LLMError):
        parse_consolidation(reply, {1, 2})
    good = '{"l2_groups": [{"node_hashes": [1, 2], "merged_summary": "s"}]}'
    assert parse_consolidation(good, {1, 2}) == (Group((1, 2), "s"),)  # positive control


def test_a_bad_id_refuses_the_whole_reply_not_just_its_group() -> None:
    good = '{"node_hashes": [1, 2], "merged_summary": "fine"}'
    bad = '{"node_hashes": [3, "zz"], "merged_summary": "bad"}'
    with pytest.raises(LLMError, match="zz"):
        parse_consolidation(f'{{"l2_groups": [{good}, {bad}]}}', {1, 2, 3})


def test_an_empty_listing_asks_nothing() -> None:
    chat = FakeChat()
    assert consolidate(chat, [], 20) == ()
    assert chat.calls == []


def test_consolidate_asks_at_its_ceiling_then_retries_the_format_once() -> None:
    good = '{"l2_groups": [{"node_hashes": [11, 7], "merged_summary": "s"}]}'
    chat = FakeChat(answers=["Here are the groups: 11 and 7", good])
    assert consolidate(chat, TOPICS, 2) == (Group((11, 7), "s"),)
    assert chat.budgets == [8192, 8192]
    assert chat.calls[1].user.endswith(CONSOLIDATE_FORMAT_SUFFIX)
    assert chat.calls[0].system == build_consolidate_system(2)
    assert chat.calls[0].schema == consolidation_schema(TOPICS)


def _runs(schema: Mapping[str, Any]) -> list[list[str]]:
    groups = schema["properties"]["l2_groups"]["items"]["anyOf"]
    return [g["properties"]["node_hashes"]["enum"][0] for g in groups]


def test_the_schema_offers_only_runs_of_adjacent_listed_ids_with_their_keywords() -> None:
    schema = consolidation_schema(TOPICS).schema
    assert _runs(schema) == [
        ["11", "18446744073709551615"],
        ["11", "18446744073709551615", "7"],
        ["18446744073709551615", "7"],
    ]
    groups = schema["properties"]["l2_groups"]["items"]["anyOf"]  # type: ignore[index]
    assert [g["properties"]["keywords"]["enum"] for g in groups] == [
        [["morning run", "park", "咖啡"]],
        [["morning run", "park", "咖啡"]],
        [["咖啡"]],
    ]
    for group in groups:
        assert group["required"] == ["node_hashes", "keywords", "merged_summary"]
        assert group["additionalProperties"] is False
    assert schema["properties"]["l2_groups"]["maxItems"] == 1  # type: ignore[index]
    ten = [TopicDigest(i, 1, (f"k{i}",)) for i in range(10)]
    runs = _runs(consolidation_schema(ten).schema)
    assert max(len(r) for r in runs) == MAX_RUN
    assert min(len(r) for r in runs) == 2
    assert all(r == [str(i) for i in range(int(r[0]), int(r[0]) + len(r))] for r in runs)
    assert len(runs) == 9 + 8 + 7  # every run of two, three and four of the ten


def test_a_long_listing_leaves_the_keyword_copy_free_and_keeps_the_runs() -> None:
    def keyword_fields(topics: list[TopicDigest]) -> list[Any]:
        schema = consolidation_schema(topics).schema
        groups = schema["properties"]["l2_groups"]["items"]["anyOf"]  # type: ignore[index]
        return [g["properties"]["keywords"] for g in groups]

    word = "w" * 100
    short = [TopicDigest(i, 1, (word,)) for i in range(10)]
    assert all("enum" in f for f in keyword_fields(short))
    long = [TopicDigest(i, 1, (word,) * 20) for i in range(10)]
    assert ECHO_CHARS < (9 * 2 + 8 * 3 + 7 * 4) * 20 * 104  # every run's keywords, quoted
    fields = keyword_fields(long)
    assert fields == [{"type": "array", "items": {"type": "string"}}] * len(fields)
    assert len(_runs(consolidation_schema(long).schema)) == 9 + 8 + 7


def test_a_schema_valid_reply_is_a_usable_group_and_stand_ins_are_not_schema_valid() -> None:
    schema = consolidation_schema(TOPICS).schema
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)

    def group(ids: list[str], keywords: list[str], summary: str) -> dict[str, object]:
        node = {"node_hashes": ids, "keywords": keywords, "merged_summary": summary}
        return {"l2_groups": [node]}

    good = group(["18446744073709551615", "7"], ["咖啡"], "They had coffee, 咖啡 in his words.")
    assert validator.is_valid(good)
    assert parse_consolidation(json.dumps(good), {11, 7, 18446744073709551615}) == (
        Group((18446744073709551615, 7), "They had coffee, 咖啡 in his words."),
    )
    for bad in (
        group(["11", "7"], ["morning run", "park"], "Not adjacent."),
        group(["7", "18446744073709551615"], ["咖啡"], "Out of order."),
        group(["18446744073709551615", "7"], ["tea"], "Keywords that are not the run's."),
        group(["18446744073709551615", "7"], ["咖啡"], "<text>"),
        group(["18446744073709551615", "7"], ["咖啡"], ""),
        group(["18446744073709551615", "7"], ["咖啡"], " leading blank"),
        group(["18446744073709551615", "7"], ["咖啡"], "{"),
        group(["18446744073709551615", "7"], ["咖啡"], "], then"),
        group(["18446744073709551615", "7"], ["咖啡"], 'a "quoted" word'),
    ):
        assert not validator.is_valid(bad), bad


@pytest.mark.parametrize("text", ["They ran in the park.", "咖啡", "a-b, then c…"])
def test_the_summary_pattern_takes_prose(text: str) -> None:
    assert re.fullmatch(SUMMARY_PATTERN, text)
    assert not re.fullmatch(SUMMARY_PATTERN, "<" + text + ">")  # positive control above


def test_a_listing_of_one_topic_asks_nothing() -> None:
    chat = FakeChat(answers=['{"l2_groups": []}'])
    assert consolidate(chat, TOPICS[:1], 0) == ()
    assert chat.calls == []
    assert consolidate(chat, TOPICS[:2], 0) == ()
    assert len(chat.calls) == 1  # positive control: two topics are asked


def test_consolidate_escalates_a_truncation_to_the_endpoint_ceiling() -> None:
    chat = FakeChat(answers=[TruncationError(8192), "{}"], max_output_tokens=16384)
    assert consolidate(chat, TOPICS, 2) == ()
    assert chat.budgets == [8192, 16384]


def test_a_cancelled_format_retry_reads_as_cancelled() -> None:
    chat = FakeChat(answers=["prose", OperationCancelledError("llm call cancelled")])
    with pytest.raises(OperationCancelledError, match="off contract"):
        consolidate(chat, TOPICS, 2)
