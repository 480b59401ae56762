"""The terms recall indexes text by: content words, case-folded and lightly stemmed.

``terms_of`` cuts directly; a ``Terms`` cuts the same with a memo token -> terms of
its own (one per domain's recall state, so no two DBs share one and a closed DB's
words go with it; dict operations only, at most 65,536 tokens, emptied when full).
"""

from __future__ import annotations

from memhop.text import content_words, tokens

__all__ = ["MEMO_MAX", "Terms", "terms_of"]

MEMO_MAX = 1 << 16  # tokens; emptied when full: a bound on memory, not an eviction policy


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


def terms_of(text: str) -> list[str]:
    """The index terms of ``text``: content words, case-folded and lightly stemmed."""
    return [term for token in tokens(text) for term in _token_terms(token)]


class Terms:
    """``terms_of`` with a memo: a token's terms depend on the token alone, and a domain's
    text repeats a few thousand words, so cutting a document costs a dict lookup a word."""

    __slots__ = ("_limit", "_memo")

    def __init__(self, limit: int = MEMO_MAX) -> None:
        self._memo: dict[str, tuple[str, ...]] = {}
        self._limit = limit

    def __len__(self) -> int:
        return len(self._memo)

    def of(self, text: str) -> list[str]:
        """The terms ``terms_of`` gives."""
        memo = self._memo
        terms: list[str] = []
        for token in tokens(text):
            found = memo.get(token)
            if found is None:
                found = _token_terms(token)
                if len(memo) >= self._limit:
                    memo.clear()
                memo[token] = found
            terms += found
        return terms
