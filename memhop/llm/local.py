"""``LocalModel``: a deterministic, offline stand-in for a language model.

This is a fallback, not an intelligence. It understands nothing: it does not
resolve meaning, synonyms, tone or paraphrase, and it never writes new text.

- Keywords are extractive and grounded: every keyword is a word (or a piece of a
  run of CJK characters) copied from the text as it appears there. Speaker labels
  and a small built-in list of English stop words are dropped (a capitalised "May" is
  the month and stays); CJK runs are split
  at common function characters. Candidates are ranked by frequency (case-folded),
  then by first occurrence, and at most eight are kept.
- Consolidation folds runs of adjacent surface rows whose keyword sets overlap
  (Jaccard >= 0.3 with the previous row), only while the surface is larger than
  the floor and never below it. The summary is built only from the members' own
  keywords ("Recap: k1; k2; ..."), never invented text.
- Distillation is neutral: emotion 0.5, MBTI axes 0, an empty personality (so the
  host's text is kept) and no per-node rows.

The same input always gives the same output. ``usage()`` counts operations; it makes no
requests and reports no tokens.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

from memhop.errors import OperationCancelledError
from memhop.llm.types import Distillation, Group, NodeDigest, TopicDigest, Usage
from memhop.text import content_words

__all__ = ["LOCAL_JACCARD_THRESHOLD", "LOCAL_MAX_KEYWORDS", "LocalModel"]

LOCAL_MAX_KEYWORDS = 8
LOCAL_JACCARD_THRESHOLD = 0.3
_SPEAKER = re.compile(r"^(?:User|Assistant|System):[ \t]?", re.MULTILINE)


def _candidates(text: str) -> tuple[list[str], list[str]]:
    """``(content tokens, all tokens)`` in text order, each exactly as written."""
    words = content_words(_SPEAKER.sub(" ", text))
    return [token for token, carries in words if carries], [token for token, _ in words]


def _rank(tokens: list[str], limit: int) -> tuple[str, ...]:
    """The most frequent tokens (case-folded), ties by first occurrence, as first written."""
    counts: dict[str, int] = {}  # keys in order of first occurrence
    first: dict[str, str] = {}
    for token, key in zip(tokens, map(str.casefold, tokens), strict=True):
        if key in counts:
            counts[key] += 1
        else:
            counts[key] = 1
            first[key] = token
    # Stable even reversed: ties keep their first occurrence.
    order = sorted(counts, key=counts.__getitem__, reverse=True)
    # Already what ``normalise_keywords`` keeps: a token has no blank and is never empty,
    # and two keys' first spellings differ, since their case-folds do.
    return tuple([first[key] for key in order[:limit]])


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def _recap(members: Sequence[TopicDigest]) -> str:
    seen: dict[str, str] = {}
    for topic in members:
        for keyword in topic.keywords:
            cleaned = keyword.strip()
            if cleaned:
                seen.setdefault(cleaned.casefold(), cleaned)
    return "Recap: " + "; ".join(seen.values())


class LocalModel:
    """The ``Model`` protocol answered offline, deterministically and extractively (see module)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls = 0

    def __repr__(self) -> str:
        return "LocalModel()"

    def _call(self, cancel: threading.Event | None) -> None:
        if cancel is not None and cancel.is_set():
            msg = "llm call cancelled"
            raise OperationCancelledError(msg)
        lock = self._lock
        lock.acquire()  # not ``with``: on 3.11 that costs twice the two calls
        try:
            self._calls += 1
        finally:
            lock.release()

    def extract_keywords(
        self, text: str, *, cancel: threading.Event | None = None
    ) -> tuple[str, ...]:
        """Up to eight words of ``text`` itself; stop words only when nothing else is there."""
        if not text.strip():
            return ()
        self._call(cancel)
        content, everything = _candidates(text)
        return _rank(content or everything, LOCAL_MAX_KEYWORDS)

    def consolidate(
        self, topics: Sequence[TopicDigest], floor: int, *, cancel: threading.Event | None = None
    ) -> tuple[Group, ...]:
        """Fold runs of adjacent, overlapping rows, newest first, down to ``floor`` at most."""
        if not topics:
            return ()
        self._call(cancel)
        budget = len(topics) - max(floor, 0)  # rows the surface may still lose
        sets = [frozenset(k.strip().casefold() for k in t.keywords if k.strip()) for t in topics]
        runs: list[tuple[int, int]] = []  # [start, end) in listing order
        end = len(topics)
        while end > 1 and budget > 0:
            start = end - 1
            while start > 0 and end - start <= budget:
                if _jaccard(sets[start - 1], sets[start]) < LOCAL_JACCARD_THRESHOLD:
                    break
                start -= 1
            if end - start >= 2:
                runs.append((start, end))
                budget -= end - start - 1
            end = start
        groups = []
        for start, end in sorted(runs):
            members = topics[start:end]
            groups.append(Group(member_ids=tuple(t.id for t in members), summary=_recap(members)))
        return tuple(groups)

    def distill(
        self, samples: Sequence[NodeDigest], *, cancel: threading.Event | None = None
    ) -> Distillation:
        """A neutral profile: it cannot read emotion or temperament from keywords."""
        self._call(cancel)
        return Distillation(
            valence=0.5,
            arousal=0.5,
            dominance=0.5,
            i_e=0.0,
            n_s=0.0,
            t_f=0.0,
            j_p=0.0,
            personality="",
        )

    def usage(self) -> Usage:
        # Operations only: no request or token is spent (a domain's meter counts the
        # operations itself and does not ask this model around its calls).
        with self._lock:
            return Usage(operations=self._calls)
