"""The shared tokenizer: content words, the stop list, and the month of May."""

from __future__ import annotations

import memhop
from memhop.text import content_words


def test_content_words_drop_function_words_and_keep_digits() -> None:
    words = [
        w for w, carries in content_words("I went to the support group on 7 May, 2023") if carries
    ]
    assert words == ["went", "support", "group", "7", "May", "2023"]


def test_may_the_modal_is_a_stop_word_and_may_the_month_is_not() -> None:
    flags = dict(content_words("you may come in May"))
    assert flags["may"] is False  # the modal: no content
    assert flags["May"] is True  # the month: dates matter to memory


def test_local_model_keeps_month_names_among_keywords() -> None:
    keywords = memhop.LocalModel().extract_keywords("Caroline: The parade was on 7 May 2023.")
    assert "May" in keywords
    assert "was" not in keywords  # control: stop words are still dropped


def test_phrases_are_runs_of_content_words_as_written() -> None:
    from memhop.text import phrases

    said = "Hey Caroline, since we last chatted I ran a charity race for mental health!"
    assert phrases(said) == [
        "Hey Caroline",
        "since",
        "last chatted",
        "ran",
        "charity race",
        "mental health",
    ]
    assert phrases("AI时代 big data") == ["AI", "时代", "big data"]  # CJK pieces stand alone
    assert phrases("it is what it is") == []  # only stop words: no phrase
