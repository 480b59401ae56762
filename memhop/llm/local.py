"""``LocalModel``: a deterministic, offline stand-in for a language model.

This is a fallback, not an intelligence. It understands nothing: it does not
resolve meaning, synonyms, tone or paraphrase, and it never writes new text.

- Keywords are extractive and grounded: every keyword is a word (or a piece of a
  run of CJK characters) copied from the text as it appears there. Speaker labels
  and a small built-in list of English stop words are dropped; CJK runs are split
  at common function characters. Candidates are ranked by frequency (case-folded),
  then by first occurrence, and at most eight are kept.
- Consolidation folds runs of adjacent surface rows whose keyword sets overlap
  (Jaccard >= 0.3 with the previous row), only while the surface is larger than
  the floor and never below it. The summary is built only from the members' own
  keywords ("Recap: k1; k2; ..."), never invented text.
- Distillation is neutral: emotion 0.5, MBTI axes 0, an empty personality (so the
  host's text is kept) and no per-node rows.

The same input always gives the same output. ``usage()`` counts calls; tokens are 0.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

from memhop.errors import OperationCancelledError
from memhop.llm.keywords import normalise_keywords
from memhop.llm.types import Distillation, Group, NodeDigest, TopicDigest, Usage

__all__ = ["LOCAL_JACCARD_THRESHOLD", "LOCAL_MAX_KEYWORDS", "LocalModel"]

LOCAL_MAX_KEYWORDS = 8
LOCAL_JACCARD_THRESHOLD = 0.3
_CJK_PIECE_MAX = 8
_CJK_PIECE = 4

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
_LETTER = rf"(?:(?![{_CJK}])[^\W_])"
_TOKEN = re.compile(rf"[{_CJK}]+|{_LETTER}+(?:['’\-]{_LETTER}+)*")
_CJK_RUN = re.compile(rf"[{_CJK}]+")
_SPEAKER = re.compile(r"^(?:User|Assistant|System):[ \t]?", re.MULTILINE)
# Function characters that separate content words inside a CJK run.
_CJK_BREAK = frozenset(
    "的了是在和与及或也就都很吗呢吧啊呀把被给对从到说我你他她它们这那个有没不还又而要会能着过地得之其并但如果因为所以しはがをにでとものへやか"
)

_STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can can't could couldn't did didn't do does doesn't
    doing don't down during each else even ever few for from further get gets got had hadn't has
    hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his
    how how's however i i'd i'll i'm i've if in into is isn't it it's its itself just let's like
    may maybe me might more most much must mustn't my myself no nor not now of off oh ok okay on
    once only or other ought our ours ourselves out over own please quite rather re really recap
    same shall shan't she she'd she'll she's should shouldn't so some such sure than thank
    thanks that that's the their theirs them themselves then there there's these they they'd
    they'll they're they've this those though through to too under until up upon us very was
    wasn't we we'd we'll we're we've well were weren't what what's when when's where where's
    whether which while who who's whom why why's will with won't would wouldn't yeah yes yet you
    you'd you'll you're you've your yours yourself yourselves
    """.split()  # noqa: SIM905 - a word list reads better as text
)


def _cjk_pieces(run: str) -> list[str]:
    """Split a CJK run at function characters; long pieces are cut into short ones."""
    pieces: list[str] = []
    current = ""
    for char in run + "的":  # a final break flushes the last piece
        if char not in _CJK_BREAK:
            current += char
            continue
        if len(current) > _CJK_PIECE_MAX:
            pieces += [current[i : i + _CJK_PIECE] for i in range(0, len(current), _CJK_PIECE)]
        else:
            pieces.append(current)
        current = ""
    return [piece for piece in pieces if len(piece) >= 2]


def _candidates(text: str) -> tuple[list[str], list[str]]:
    """``(content tokens, all tokens)`` in text order, each exactly as written."""
    content: list[str] = []
    everything: list[str] = []
    for match in _TOKEN.finditer(_SPEAKER.sub(" ", text)):
        token = match.group()
        if _CJK_RUN.fullmatch(token):
            pieces = _cjk_pieces(token)
            content += pieces
            everything += pieces or [token]
            continue
        everything.append(token)
        if token.lower() not in _STOP_WORDS and (len(token) > 1 or token.isdigit()):
            content.append(token)
    return content, everything


def _rank(tokens: list[str], limit: int) -> tuple[str, ...]:
    """The most frequent tokens (case-folded), ties by first occurrence, as first written."""
    counts: dict[str, int] = {}
    first: dict[str, str] = {}
    for token in tokens:
        key = token.casefold()
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, token)
    order = sorted(counts, key=lambda key: -counts[key])  # stable: ties keep first occurrence
    return normalise_keywords(first[key] for key in order[:limit])


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
        with self._lock:
            self._calls += 1

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
        with self._lock:
            return Usage(calls=self._calls)
