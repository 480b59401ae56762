"""The terms recall indexes text by: content words, case-folded and lightly stemmed.

``terms_of`` keeps a process-wide memo, token -> terms, shared by every index
and thread (dict operations only; at most 65,536 tokens, emptied when full).
"""

from __future__ import annotations

from memhop.text import content_words, tokens

__all__ = ["terms_of"]


def _stem(word: str) -> str:
    """Fold common English inflections together: plurals, -ing, -ed, possessives."""
    word = word.removesuffix("'s").removesuffix("’s")
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ed"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _token_terms(token: str) -> tuple[str, ...]:
    return tuple(_stem(word.casefold()) for word, carries in content_words(token) if carries)


# A token's terms depend on the token alone, and a domain's text repeats a few thousand
# words: judging each distinct token once makes cutting a document a dict lookup a word.
_TERMS_OF_TOKEN: dict[str, tuple[str, ...]] = {}
_TERM_MEMO_MAX = 1 << 16  # emptied when full: a bound on memory, not an eviction policy


def terms_of(text: str) -> list[str]:
    """The index terms of ``text``: content words, case-folded and lightly stemmed."""
    memo = _TERMS_OF_TOKEN
    terms: list[str] = []
    for token in tokens(text):
        found = memo.get(token)
        if found is None:
            found = _token_terms(token)
            if len(memo) >= _TERM_MEMO_MAX:
                memo.clear()
            memo[token] = found
        terms += found
    return terms
