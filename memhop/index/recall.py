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
``terms_of`` keeps a process-wide memo, token -> terms, shared by every index
and thread (dict operations only; at most 65,536 tokens, emptied when full).
"""

from __future__ import annotations

import heapq
import itertools
import math
from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from memhop.intmap import NO_IDS, IntMap
from memhop.text import content_words, tokens

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
        # Per document slot, parallel arrays (no object per document).
        self._kinds = array("B")
        self._ids = array("Q")
        self._scenes = array("Q")
        self._created = array("q")
        self._lengths = array("I")  # slot -> document length; 0 once removed
        self._starts = array("Q")  # slot -> first of its terms in _fwd_terms
        self._fwd_terms = array("I")  # every document's distinct term ids, slot after slot
        self._fwd_counts = array("B")
        # kind -> id -> slot, packed: a dict would hold ~40 bytes a document more
        self._slot_of: dict[int, IntMap] = {}
        self._total_length = 0
        self._dead = 0

    def _terms_of_slot(self, slot: int) -> tuple[int, int]:
        end = self._starts[slot + 1] if slot + 1 < len(self._starts) else len(self._fwd_terms)
        return self._starts[slot], end

    # ---- updates -----------------------------------------------------------------------

    def put(self, key: DocKey, scene_id: int, created_at: int, terms: Iterable[str]) -> None:
        """Index a document under ``key`` (replacing the one there); no terms means remove."""
        self.remove(key)
        counts = Counter(terms)  # counted in C; term ids are then looked up once a term
        if not counts:
            return
        vocab, df = self._vocab, self._df
        tfs: list[tuple[int, int]] = []
        for term, count in counts.items():  # first use first, as the terms came
            term_id = vocab.get(term)
            if term_id is None:
                term_id = self._term_id(term)
            df[term_id] += 1
            tfs.append((term_id, count if count < _MAX_TF else _MAX_TF))
        length = counts.total()
        self._total_length += length
        self._append(key[0], key[1], scene_id, created_at, length, tfs)

    def _append(
        self,
        kind: int,
        doc_id: int,
        scene_id: int,
        created_at: int,
        length: int,
        tfs: Iterable[tuple[int, int]],
    ) -> None:
        """Give a document the next slot: its row of the per-document arrays and its postings."""
        slot = len(self._lengths)
        self._starts.append(len(self._fwd_terms))
        fwd_terms, fwd_counts = self._fwd_terms, self._fwd_counts
        post_docs, post_tfs = self._post_docs, self._post_tfs
        for term_id, tf in tfs:
            fwd_terms.append(term_id)
            fwd_counts.append(tf)
            post_docs[term_id].append(slot)
            post_tfs[term_id].append(tf)
        self._kinds.append(kind)
        self._ids.append(doc_id)
        self._scenes.append(scene_id)
        self._created.append(created_at)
        self._lengths.append(length)
        slots = self._slot_of.get(kind)
        if slots is None:
            slots = self._slot_of[kind] = IntMap()
        slots.put(doc_id, slot)

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
        slots = self._slot_of.get(key[0])
        if slots is None or (slot := slots.get(key[1])) is None:
            return False
        slots.discard(key[1])
        a, b = self._terms_of_slot(slot)
        df = self._df
        for term_id in self._fwd_terms[a:b]:
            df[term_id] -= 1
        self._total_length -= self._lengths[slot]
        self._lengths[slot] = 0
        self._dead += 1
        if self._dead > 1024 and self._dead > len(self):
            self._repack()
        return True

    def _repack(self) -> None:
        """Drop dead slots from the postings and the per-document arrays."""
        kinds, ids, scenes, created, lengths = (
            self._kinds,
            self._ids,
            self._scenes,
            self._created,
            self._lengths,
        )
        starts, terms, counts = self._starts, self._fwd_terms, self._fwd_counts
        self._kinds, self._ids = array("B"), array("Q")
        self._scenes, self._created, self._lengths = array("Q"), array("q"), array("I")
        self._starts, self._fwd_terms, self._fwd_counts = array("Q"), array("I"), array("B")
        self._slot_of = {}
        self._post_docs = [array("I") for _ in self._df]
        self._post_tfs = [array("B") for _ in self._df]
        self._dead = 0
        n = len(lengths)
        for s in range(n):
            if lengths[s]:  # 0: a removed document
                a, b = starts[s], starts[s + 1] if s + 1 < n else len(terms)
                tfs = zip(terms[a:b], counts[a:b], strict=True)
                self._append(kinds[s], ids[s], scenes[s], created[s], lengths[s], tfs)

    # ---- reads -------------------------------------------------------------------------

    def __len__(self) -> int:
        return sum(map(len, self._slot_of.values()))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and key[1] in self._slot_of.get(key[0], NO_IDS)

    def keys(self) -> list[DocKey]:
        return sorted((k, i) for k, d in self._slot_of.items() for i in d)

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
        n = len(self)
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
        kinds, ids, created = self._kinds, self._ids, self._created
        ranked = []
        for slot, score in scores.items():
            ranked.append((-score, -created[slot], (kinds[slot], ids[slot])))
        return [Scored(key, -neg) for neg, _, key in heapq.nsmallest(limit, ranked)]

    def _count_in(self, slot: int, term_id: int) -> int:
        """How often ``term_id`` occurs in the live document at ``slot`` (0 if not)."""
        a, b = self._terms_of_slot(slot)
        try:
            return self._fwd_counts[self._fwd_terms.index(term_id, a, b)]
        except ValueError:
            return 0

    def _df_slots(self, term_id: int) -> int:
        return len(self._post_docs[term_id])

    def _accepts(self, accept: Callable[[DocKey, int, int], bool], slot: int) -> bool:
        return accept((self._kinds[slot], self._ids[slot]), self._scenes[slot], self._created[slot])

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
        for kind, slots in self._slot_of.items():
            for doc_id, slot in slots.items():
                a, b = self._terms_of_slot(slot)
                terms, tfs = self._fwd_terms[a:b], self._fwd_counts[a:b]
                counts = {names[t]: c for t, c in zip(terms, tfs, strict=True)}
                out[(kind, doc_id)] = (self._scenes[slot], self._created[slot], counts)
        return out

    def __repr__(self) -> str:
        return f"RecallIndex(docs={len(self)}, terms={len(self._vocab)})"


@dataclass(slots=True)
class RecallState:
    """A domain's recall index and which topics each of its documents stands for."""

    index: RecallIndex = field(default_factory=RecallIndex)
    row_of: dict[int, int] = field(default_factory=dict)  # topic -> the row indexing it
    members: dict[int, tuple[int, ...]] = field(default_factory=dict)  # row -> its descendants
    # topic -> its event's id, or their ids when several (a tuple per turn costs 64 bytes)
    events: dict[int, int | tuple[int, ...]] = field(default_factory=dict)
    # scene -> its surface rows in order, as last indexed: a row's document holds the
    # lines of the rows beside it there (a tuple per row cost 27 bytes a record)
    orders: dict[int, array[int]] = field(default_factory=dict)
    row_scenes: IntMap = field(default_factory=IntMap)  # surface row -> its scene, as indexed
    open_topic: int = 0  # the open turn when last brought up to date (its events take its scene)
    # Topics still to index in a first build, a unit (a scene's topics) at a time; empty
    # once built (the root builds in steps, each under its own hold of the domain lock).
    pending: list[list[int]] = field(default_factory=list)
