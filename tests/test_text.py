"""The shared tokenizer: content words, the stop list, and the month of May."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

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


def _words_by_the_rule(text: str) -> list[tuple[str, bool]]:
    """The rule restated one token at a time: ``tokens`` judged by ``is_stop_word``."""
    from memhop.text import _CJK_RUN, _cjk_pieces, is_stop_word, tokens

    out: list[tuple[str, bool]] = []
    for token in tokens(text):
        if _CJK_RUN.fullmatch(token):
            pieces = _cjk_pieces(token)
            out += [(p, True) for p in pieces] if pieces else [(token, False)]
        else:
            out.append((token, not is_stop_word(token) and (len(token) > 1 or token.isdigit())))
    return out


_ALPHABET = "aAbI7 9May may-the's’—,.\n时代的了和ひらがなは"


@given(st.text(alphabet=_ALPHABET, max_size=60) | st.text(max_size=40))
@example("I went to the support group on 7 May, 2023; you may come")
@example("AI时代的big-data 了")
def test_content_words_judge_every_token_as_the_rule_says(text: str) -> None:
    assert content_words(text) == _words_by_the_rule(text)


_LOOKAHEAD_LETTER = "(?:(?![%s])[^\\W_])"


def _tokens_by_lookahead(text: str) -> list[str]:
    """``tokens`` as first written: a letter is a word character, not "_", that no CJK
    character begins (a lookahead at each one); a CJK run is tried first."""
    from memhop.text import _CJK

    letter = _LOOKAHEAD_LETTER % _CJK
    word = rf"{letter}+(?:['’\-]{letter}+)*"
    return re.findall(rf"[{_CJK}]+|{word}", text)


_MIXED = "abXY09_-'’ .中文字ひらがなカタカナ한국어ÀéßΩж😀\u0301٣\uf900\U00020000"


@given(st.text(alphabet=_MIXED, max_size=40) | st.text(max_size=40))
@example("AI时代的big-data_x 了 don't ’tis ab-中")
def test_tokens_are_the_lookahead_definitions_tokens(text: str) -> None:
    from memhop.text import tokens

    assert tokens(text) == _tokens_by_lookahead(text)
    # A control that the two are compared on tokens, not on two empty lists: a word and a
    # CJK run appended come out as two more tokens, the same on both sides.
    longer = text + " word 中文"
    assert tokens(longer) == _tokens_by_lookahead(longer) == [*tokens(text), "word", "中文"]
