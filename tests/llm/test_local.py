"""LocalModel: grounded keywords, adjacent-only extractive folds, neutral distillation."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop.errors import OperationCancelledError
from memhop.llm import LocalModel, Model, NodeDigest, TopicDigest, Usage
from memhop.llm.local import LOCAL_MAX_KEYWORDS

WORDS = [
    "coffee",
    "Coffee",
    "the",
    "and",
    "Rex",
    "dog",
    "walk",
    "跑步",
    "咖啡",
    "我",
    "的",
    "公园",
    "2024",
    "don't",
    "state-of-the-art",
    "Über",
    "ΟΔΟΣ",
    "é",
    "x",
    "_",
    "—",
]
texts = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(WORDS), max_size=60).map(" ".join),
    st.lists(st.sampled_from([*WORDS, "", "\n", "User: ", "。", ", "]), max_size=60).map("".join),
)


def test_it_is_a_model() -> None:
    assert isinstance(LocalModel(), Model)


@given(texts)
def test_every_keyword_occurs_in_the_text(text: str) -> None:
    keywords = LocalModel().extract_keywords(text)
    assert len(keywords) <= LOCAL_MAX_KEYWORDS
    for keyword in keywords:
        assert keyword
        assert keyword == keyword.strip()
        assert keyword in text  # copied as written, so also found case-insensitively
    assert len({k.casefold() for k in keywords}) == len(keywords)


@given(texts)
def test_the_same_text_gives_the_same_keywords(text: str) -> None:
    assert LocalModel().extract_keywords(text) == LocalModel().extract_keywords(text)


def test_keywords_rank_by_frequency_then_first_occurrence() -> None:
    text = "User: The dog chased the ball. Rex the dog loves the park and the ball!"
    assert LocalModel().extract_keywords(text) == ("dog", "ball", "chased", "Rex", "loves", "park")


def _keywords_by_the_rule(text: str) -> tuple[str, ...]:
    """The ranking restated one token at a time: speaker labels out, the content words (all
    words when none carries content), counted case-folded, ties by first occurrence."""
    import re

    from memhop.text import content_words

    if not text.strip():
        return ()
    words = content_words(re.sub(r"^(?:User|Assistant|System):[ \t]?", " ", text, flags=re.M))
    tokens = [w for w, carries in words if carries] or [w for w, _ in words]
    seen: list[str] = []  # case-folds in order of first occurrence
    spelling: dict[str, str] = {}
    for token in tokens:
        if token.casefold() not in spelling:
            seen.append(token.casefold())
            spelling[token.casefold()] = token
    folded = [t.casefold() for t in tokens]
    ranked = sorted(seen, key=lambda key: (-folded.count(key), seen.index(key)))
    return tuple(spelling[key] for key in ranked[:LOCAL_MAX_KEYWORDS])


@given(texts)
def test_keywords_are_the_ranking_rule_restated(text: str) -> None:
    assert LocalModel().extract_keywords(text) == _keywords_by_the_rule(text)
    # A control that the two are compared on keywords, not on two empty answers: a word
    # said three times more than any other leads both.
    louder = text + " zebra" * (len(text) + 3)
    loudest = LocalModel().extract_keywords(louder)[0]
    assert loudest == _keywords_by_the_rule(louder)[0]
    assert loudest.casefold() == "zebra"


def test_speaker_labels_and_stop_words_are_dropped() -> None:
    text = "User: can you remind me about my dentist appointment\nAssistant: Sure, Tuesday 3pm"
    keywords = LocalModel().extract_keywords(text)
    assert keywords == ("remind", "dentist", "appointment", "Tuesday", "3pm")


def test_cjk_runs_are_split_into_grounded_pieces() -> None:
    text = "我喜欢在周末去公园跑步，跑步让我很开心"
    keywords = LocalModel().extract_keywords(text)
    assert keywords == ("喜欢", "周末去公园跑步", "跑步让", "开心")  # crude, but all copied


def test_a_text_of_stop_words_still_yields_its_words() -> None:
    assert LocalModel().extract_keywords("User: ok, thanks!") == ("ok", "thanks")


@pytest.mark.parametrize("text", ["", "   ", "!!! ???"])
def test_nothing_to_keep_is_an_empty_answer(text: str) -> None:
    assert LocalModel().extract_keywords(text) == ()


def _topics(*tracks: tuple[str, ...]) -> list[TopicDigest]:
    return [TopicDigest(id=100 + i, depth=1, keywords=t) for i, t in enumerate(tracks)]


def test_adjacent_overlapping_rows_fold_with_an_extractive_summary() -> None:
    topics = _topics(("run", "park"), ("run", "park", "morning"), ("tax", "form"), ("tax", "Form"))
    groups = LocalModel().consolidate(topics, 0)
    assert [g.member_ids for g in groups] == [(100, 101), (102, 103)]
    assert groups[0].summary == "Recap: run; park; morning"
    assert groups[1].summary == "Recap: tax; form"


def test_nothing_folds_at_or_under_the_floor() -> None:
    topics = _topics(("a", "b"), ("a", "b"), ("a", "b"))
    assert LocalModel().consolidate(topics, 3) == ()
    assert LocalModel().consolidate(topics, 5) == ()
    assert LocalModel().consolidate([], 0) == ()


def test_folds_stop_at_the_floor_newest_first() -> None:
    topics = _topics(("a",), ("a",), ("a",), ("a",), ("a",))
    (group,) = LocalModel().consolidate(topics, 4)
    assert group.member_ids == (103, 104)
    (group,) = LocalModel().consolidate(topics, 3)
    assert group.member_ids == (102, 103, 104)


def test_unrelated_neighbours_never_fold() -> None:
    topics = _topics(("run",), ("tax",), ("run",), ("tax",))
    assert LocalModel().consolidate(topics, 0) == ()


tracks = st.lists(
    st.lists(st.sampled_from(["a", "b", "c", "d", "A", " b "]), max_size=4).map(tuple),
    max_size=12,
)


@given(tracks, st.integers(-2, 12))
def test_folds_are_adjacent_disjoint_and_built_from_member_keywords(
    track_list: list[tuple[str, ...]], floor: int
) -> None:
    topics = _topics(*track_list)
    groups = LocalModel().consolidate(topics, floor)
    index = {t.id: i for i, t in enumerate(topics)}
    claimed: set[int] = set()
    for group in groups:
        positions = [index[m] for m in group.member_ids]
        assert len(positions) >= 2
        assert positions == list(range(positions[0], positions[0] + len(positions)))
        assert claimed.isdisjoint(group.member_ids)
        claimed.update(group.member_ids)
        member_keywords = {k.strip() for m in group.member_ids for k in topics[index[m]].keywords}
        assert group.summary.startswith("Recap: ")
        pieces = group.summary.removeprefix("Recap: ").split("; ")
        assert set(pieces) <= member_keywords
    remaining = len(topics) - sum(len(g.member_ids) - 1 for g in groups)
    assert remaining >= max(floor, 0) or not groups
    assert groups == LocalModel().consolidate(topics, floor)


def test_distillation_is_neutral() -> None:
    got = LocalModel().distill([NodeDigest(1, 0.9, ("furious", "shouting"))])
    assert (got.valence, got.arousal, got.dominance) == (0.5, 0.5, 0.5)
    assert (got.i_e, got.n_s, got.t_f, got.j_p) == (0.0, 0.0, 0.0, 0.0)
    assert got.personality == ""
    assert got.per_node == ()


def test_usage_counts_operations_with_no_requests_or_tokens() -> None:
    model = LocalModel()
    model.extract_keywords("coffee")
    model.consolidate(_topics(("a",), ("a",)), 0)
    model.distill([])
    assert model.usage() == Usage(operations=3)


def test_usage_moves_with_each_call_and_only_then() -> None:
    model = LocalModel()
    before = model.usage()
    assert model.usage() == before == Usage()  # asked again without a call: the same count
    model.extract_keywords("coffee")
    assert model.usage() == Usage(operations=1)  # a call moves it: nothing stale handed back
    model.extract_keywords("tea")
    assert model.usage() == Usage(operations=2)
    assert before == Usage()  # a usage handed out earlier stays what it said


def test_a_cancelled_call_is_refused() -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(OperationCancelledError):
        LocalModel().extract_keywords("coffee", cancel=cancel)
