"""The recall mirror: a BM25 index over a domain's surface rows and events.

Responsibility: rank documents for a bag of query terms in time that grows
with the rare terms' postings, not with the domain. A document is one surface
row (a turn, or a Dream row with what it folded) or one event; the root says
what its terms are and keeps it current. No text is held, only term counts.

Scoring is Okapi BM25 (k1 = 1.2, b = 0.75) with the non-negative idf
``ln(1 + (N - df + 0.5) / (df + 0.5))``. Top-k is exact and uses MaxScore:
terms are taken rarest first; once the best score the remaining terms could
still give a new document is below the k-th score so far, they only add to
documents already found.

Contract:
- ``put`` replaces the document under its key; ``remove`` forgets it.
- Built from scratch or kept up to date incrementally, ``search`` ranks the
  same documents with the same scores (tests compare them).

Traps: not thread-safe; the root holds the domain lock around every call.
"""

from __future__ import annotations

import heapq
import itertools
import math
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from memhop.text import content_words

__all__ = ["K1", "B", "DocKey", "RecallIndex", "RecallState", "Scored", "terms_of"]

K1 = 1.2
B = 0.75
_MAX_TF = 255  # a term's count in one document saturates here (BM25 flattens long before)
_CHUNK = 1024  # postings read, at least, between two checks that new documents can win

DocKey = tuple[int, int]
"""(kind, id): the root's own naming of a document (a row's topic id, an event's content id)."""


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


def terms_of(text: str) -> list[str]:
    """The index terms of ``text``: content words, case-folded and lightly stemmed."""
    return [_stem(word.casefold()) for word, carries in content_words(text) if carries]


@dataclass(slots=True)
class _Doc:
    key: DocKey
    scene_id: int
    created_at: int
    length: int
    terms: array[int]  # term ids, each once
    counts: array[int]  # the count of terms[i]


@dataclass(frozen=True, slots=True)
class Scored:
    """One ranked document."""

    key: DocKey
    score: float


class RecallIndex:
    """Term postings and per-document term counts of one domain."""

    def __init__(self) -> None:
        self._vocab: dict[str, int] = {}
        self._df: list[int] = []
        self._post_docs: list[array[int]] = []  # term id -> document slots (some may be dead)
        self._post_tfs: list[array[int]] = []
        self._docs: list[_Doc | None] = []
        self._lengths = array("I")  # slot -> document length; 0 once removed
        self._slot_of: dict[DocKey, int] = {}
        self._total_length = 0
        self._dead = 0

    # ---- updates -----------------------------------------------------------------------

    def put(self, key: DocKey, scene_id: int, created_at: int, terms: Iterable[str]) -> None:
        """Index a document under ``key`` (replacing the one there); no terms means remove."""
        self.remove(key)
        counts: dict[int, int] = {}
        length = 0
        for term in terms:
            term_id = self._term_id(term)
            counts[term_id] = counts.get(term_id, 0) + 1
            length += 1
        if not counts:
            return
        slot = len(self._docs)
        doc = _Doc(key, scene_id, created_at, length, array("I"), array("B"))
        for term_id, count in counts.items():
            tf = min(count, _MAX_TF)
            doc.terms.append(term_id)
            doc.counts.append(tf)
            self._df[term_id] += 1
            self._post_docs[term_id].append(slot)
            self._post_tfs[term_id].append(tf)
        self._docs.append(doc)
        self._lengths.append(length)
        self._slot_of[key] = slot
        self._total_length += length

    def _term_id(self, term: str) -> int:
        term_id = self._vocab.get(term)
        if term_id is None:
            term_id = self._vocab[term] = len(self._df)
            self._df.append(0)
            self._post_docs.append(array("I"))
            self._post_tfs.append(array("B"))
        return term_id

    def remove(self, key: DocKey) -> bool:
        """Forget the document under ``key``; False when none was indexed."""
        slot = self._slot_of.pop(key, None)
        if slot is None:
            return False
        doc = self._docs[slot]
        assert doc is not None  # a mapped slot always holds its document
        for term_id in doc.terms:
            self._df[term_id] -= 1
        self._total_length -= doc.length
        self._docs[slot] = None
        self._lengths[slot] = 0
        self._dead += 1
        if self._dead > 1024 and self._dead > len(self._slot_of):
            self._repack()
        return True

    def _repack(self) -> None:
        """Drop dead slots from the postings once they outnumber the live ones."""
        live = [d for d in self._docs if d is not None]
        self._docs = []
        self._lengths = array("I")
        self._slot_of = {}
        self._post_docs = [array("I") for _ in self._df]
        self._post_tfs = [array("B") for _ in self._df]
        self._dead = 0
        for doc in live:
            slot = len(self._docs)
            for term_id, tf in zip(doc.terms, doc.counts, strict=True):
                self._post_docs[term_id].append(slot)
                self._post_tfs[term_id].append(tf)
            self._docs.append(doc)
            self._lengths.append(doc.length)
            self._slot_of[doc.key] = slot

    # ---- reads -------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, key: object) -> bool:
        return key in self._slot_of

    def keys(self) -> list[DocKey]:
        return sorted(self._slot_of)

    def search(
        self,
        terms: Iterable[str],
        limit: int,
        accept: Callable[[DocKey, int, int], bool] | None = None,
    ) -> list[Scored]:
        """The best ``limit`` documents for ``terms``, best first (ties: newer first, then key).

        ``accept(key, scene_id, created_at)`` filters documents before they are
        ranked. A repeated query term counts once.
        """
        n = len(self._slot_of)
        wanted = {self._vocab[t] for t in terms if t in self._vocab}
        wanted = {t for t in wanted if self._df[t] > 0}
        if n == 0 or not wanted or limit <= 0:
            return []
        avg = self._total_length / n
        idf = {t: math.log(1.0 + (n - self._df[t] + 0.5) / (self._df[t] + 0.5)) for t in wanted}
        order = sorted(wanted, key=lambda t: (-idf[t], t))
        bounds = [idf[t] * (K1 + 1.0) for t in order]
        remaining = [sum(bounds[i:]) for i in range(len(order))]
        # tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg)), with the constants folded
        base, per_length = K1 * (1.0 - B), K1 * B / avg
        lengths = self._lengths
        scores: dict[int, float] = {}
        refused: set[int] = set()
        for i, term_id in enumerate(order):
            weight = idf[term_id] * (K1 + 1.0)
            pairs = zip(self._post_docs[term_id], self._post_tfs[term_id], strict=True)
            untouched = self._closed(scores, limit, remaining[i])
            if not untouched:
                closed = False
                read, total = 0, self._df_slots(term_id)
                while read < total:
                    # Checking costs a pass over the scores: read at least as many postings.
                    step = max(_CHUNK, len(scores))
                    read += step
                    for slot, tf in itertools.islice(pairs, step):
                        length = lengths[slot]
                        if not length:
                            continue  # a removed document
                        if slot not in scores:
                            if slot in refused:
                                continue
                            if accept is not None and not self._accepts(accept, slot):
                                refused.add(slot)
                                continue
                            scores[slot] = 0.0
                        scores[slot] += weight * tf / (tf + base + per_length * length)
                    if read < total and self._closed(scores, limit, remaining[i]):
                        closed = True
                        break
                if not closed:
                    continue
            # No new document can reach the top now: only add to those found, and only
            # to those that can still reach it. When none of this term's postings were
            # read yet and the found are far fewer, look each one up instead.
            floor = heapq.nlargest(limit, scores.values())[-1] - remaining[i]
            scores = {slot: score for slot, score in scores.items() if score >= floor}
            if untouched and len(scores) * 8 < self._df_slots(term_id):
                for slot in scores:
                    tf = self._count_in(slot, term_id)
                    if tf:
                        scores[slot] += weight * tf / (tf + base + per_length * lengths[slot])
                continue
            for slot, tf in pairs:
                if slot in scores:
                    scores[slot] += weight * tf / (tf + base + per_length * lengths[slot])
        docs = self._docs
        ranked = []
        for slot, score in scores.items():
            doc = docs[slot]
            assert doc is not None  # scored documents are live
            ranked.append((-score, -doc.created_at, doc.key))
        return [Scored(key, -neg) for neg, _, key in heapq.nsmallest(limit, ranked)]

    def _count_in(self, slot: int, term_id: int) -> int:
        """How often ``term_id`` occurs in the live document at ``slot`` (0 if not)."""
        doc = self._docs[slot]
        assert doc is not None
        try:
            return doc.counts[doc.terms.index(term_id)]
        except ValueError:
            return 0

    def _df_slots(self, term_id: int) -> int:
        return len(self._post_docs[term_id])

    def _accepts(self, accept: Callable[[DocKey, int, int], bool], slot: int) -> bool:
        doc = self._docs[slot]
        assert doc is not None
        return accept(doc.key, doc.scene_id, doc.created_at)

    @staticmethod
    def _closed(scores: dict[int, float], limit: int, reachable: float) -> bool:
        """True once a document not yet scored cannot beat the k-th score so far.

        Scores only grow, so the k-th so far is a floor under the final k-th.
        """
        return len(scores) >= limit and reachable < heapq.nlargest(limit, scores.values())[-1]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RecallIndex):
            return NotImplemented
        return self._contents() == other._contents()

    __hash__ = None  # type: ignore[assignment]  # mutable: not hashable

    def _contents(self) -> dict[DocKey, tuple[int, int, dict[str, int]]]:
        names = {term_id: term for term, term_id in self._vocab.items()}
        out = {}
        for key, slot in self._slot_of.items():
            doc = self._docs[slot]
            assert doc is not None
            counts = {names[t]: c for t, c in zip(doc.terms, doc.counts, strict=True)}
            out[key] = (doc.scene_id, doc.created_at, counts)
        return out

    def __repr__(self) -> str:
        return f"RecallIndex(docs={len(self._slot_of)}, terms={len(self._vocab)})"


@dataclass(slots=True)
class RecallState:
    """A domain's recall index and which topics each of its documents stands for."""

    index: RecallIndex = field(default_factory=RecallIndex)
    row_of: dict[int, int] = field(default_factory=dict)  # topic -> the row indexing it
    members: dict[int, set[int]] = field(default_factory=dict)  # row -> its topics
    events: dict[int, set[int]] = field(default_factory=dict)  # topic -> its event ids
    # row -> the rows beside it whose lines its document holds
    neighbours: dict[int, tuple[int, ...]] = field(default_factory=dict)
    open_topic: int = 0  # the open turn when last brought up to date (its events take its scene)
