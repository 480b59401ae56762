"""Ranking over a recall index: exact BM25 top-k, in C or by MaxScore in Python.

Responsibility: the best ``limit`` documents for a bag of query terms. Okapi
BM25 (k1 = 1.2, b = 0.75), idf ``ln(1 + (N - df + 0.5) / (df + 0.5))``; each
document's shares are added rarest term first, and once the most the remaining
terms could give a new document is below a floor under the final k-th score,
they only add to documents already found that can still reach it (MaxScore).
Where the compiled kernel was built (``memhop.index._bm25``, when the install
had a C compiler), it does this term at a time in C, a floor taken from the
partial scores; else in Python (``KthFloor``). Both give the same documents
with the same scores, bit for bit (tests compare them).

``Ranking`` reads the columns ``memhop.index.recall.RecallIndex`` keeps (it
declares them below); it writes nothing. Not thread-safe, as the index.
"""

from __future__ import annotations

import abc
import functools
import heapq
import itertools
import math
import operator
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memhop.index import kernel
from memhop.index.recall_floor import KthFloor
from memhop.index.recall_packed import Postings
from memhop.index.split_column import SplitColumn

__all__ = ["K1", "B", "DocFilter", "DocKey", "Ranking", "Scored"]

K1 = 1.2
B = 0.75
_CHUNK = 1024  # postings read, at least, between two checks that new documents can win
_TIE_CUT = 8  # ties at the k-th score past this many a place are cut by age first

DocKey = tuple[int, int]
"""(kind, id): the root's own naming of a document (a row's topic id, an event's content id)."""


@dataclass(frozen=True, slots=True)
class DocFilter:
    """Which documents a search ranks: those of one scene (0: any), made at or after
    ``start`` and at or before ``end`` (0: unbounded), in Unix ms."""

    scene_id: int = 0
    start: int = 0
    end: int = 0

    def accepts(self, scene_id: int, created_at: int) -> bool:
        if self.scene_id and scene_id != self.scene_id:
            return False
        if self.start and created_at < self.start:
            return False
        return not (self.end and created_at > self.end)


@dataclass(frozen=True, slots=True)
class Scored:
    """One ranked document."""

    key: DocKey
    score: float


class Ranking(abc.ABC):
    """``search`` over the columns of a recall index (the class that holds them, and
    answers the three lookups below)."""

    _vocab: dict[str, int]
    _df: array[int]
    _max_tf: array[int]
    _min_length: array[int]
    _lengths: array[int]
    _starts: array[int]
    _kinds: SplitColumn
    _ids: SplitColumn
    _scenes: SplitColumn
    _created: SplitColumn
    _fwd_terms: SplitColumn
    _fwd_counts: SplitColumn
    _total_length: int
    _dead: int
    _compiled: bool  # rank through the compiled kernel (it was built, and is wanted)
    _scratch: bytearray  # the kernel's scores, zeros between searches (8 bytes a slot)

    @abc.abstractmethod
    def __len__(self) -> int:
        """Live documents."""

    @abc.abstractmethod
    def _postings(self, term_id: int) -> tuple[Postings, Postings]:
        """The term's document slots and counts (some slots may be of removed documents)."""

    @abc.abstractmethod
    def _terms_of_slot(self, slot: int) -> tuple[int, int]:
        """Where the document's distinct terms lie in ``_fwd_terms`` / ``_fwd_counts``."""

    def search(
        self,
        terms: Iterable[str],
        limit: int,
        where: DocFilter | None = None,
    ) -> list[Scored]:
        """The best ``limit`` documents for ``terms``, best first (ties: newer first, then key).

        ``where`` filters documents before they are ranked. A repeated query term counts once.
        """
        n = len(self)
        wanted = {self._vocab[t] for t in terms if t in self._vocab}
        wanted = {t for t in wanted if self._df[t] > 0}
        if n == 0 or not wanted or limit <= 0:
            return []
        df = self._df
        # tf * weight / (tf + base + per_length * length), weight = idf * (k1 + 1)
        weight = {t: (K1 + 1.0) * math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in wanted}
        base, per_length = K1 * (1.0 - B), K1 * B / (self._total_length / n)
        order = sorted(wanted, key=lambda t: (-weight[t], t))
        if self._compiled:
            lists = [
                (*self._postings(t), weight[t], self._bound(t, weight[t], base, per_length))
                for t in order
            ]
            return self._by_kernel(lists, base, per_length, limit, where)
        bounds = [self._bound(t, weight[t], base, per_length) for t in order]
        remaining = list(itertools.accumulate(reversed(bounds)))[::-1]  # terms i.. at best
        floor = KthFloor(
            limit,
            functools.partial(self._full_score, weight=weight, base=base, per_length=per_length),
        )
        lengths = self._lengths
        scores: dict[int, float] = {}
        refused: set[int] = set()
        for i, term_id in enumerate(order):
            w = weight[term_id]
            if i == 0 and where is None:
                # Every posting of the first term is read (no document is ranked yet).
                scores = self._scored(*self._postings(term_id), w, base, per_length)
                continue
            docs, counts = self._postings(term_id)
            read, total = 0, len(docs)
            untouched = floor.closes(scores, remaining[i])
            if not untouched:
                closed = False
                while read < total:
                    # Checking costs a pass over the scores: read at least as many postings.
                    step = max(_CHUNK, len(scores))
                    chunk = docs[read : read + step], counts[read : read + step]
                    read += step
                    if where is None:
                        self._add_every(scores, *chunk, w, base, per_length)
                    else:
                        self._add_accepted(scores, refused, where, *chunk, w, base, per_length)
                    if read < total and floor.closes(scores, remaining[i]):
                        closed = True
                        break
                if not closed:
                    continue
            # No new document can reach the top now: only add to those found, and only
            # to those that can still reach it. When none of this term's postings were
            # read yet and the found are far fewer, look each one up instead.
            least = floor.value - remaining[i]
            if scores and min(scores.values()) < least:  # a pass in C first: often none go
                scores = {slot: score for slot, score in scores.items() if score >= least}
            if untouched and len(scores) * 8 < total:
                for slot in scores:
                    tf = self._count_in(slot, term_id)
                    if tf:
                        scores[slot] += w * tf / (tf + base + per_length * lengths[slot])
                continue
            if scores and read < total:
                rest = dict(zip(docs[read:], counts[read:], strict=True))  # in C, not a loop
                for slot in scores.keys() & rest.keys():
                    tf = rest[slot]
                    scores[slot] += w * tf / (tf + base + per_length * lengths[slot])
        return self._best(scores, limit)

    def _by_kernel(
        self,
        lists: list[tuple[Postings, Postings, float, float]],
        base: float,
        per_length: float,
        limit: int,
        where: DocFilter | None,
    ) -> list[Scored]:
        """``search`` by the kernel: rarest term first, the sums MaxScore makes, the common
        terms' lists probed for the documents that can still reach the top once no other
        can (every posting scored when ``where`` filters, read from the documents' own
        columns there)."""
        filtered = None
        if where is not None:
            filtered = (
                *self._scenes.parts(),
                where.scene_id,
                *self._created.parts(),
                where.start,
                where.end,
            )
        scratch, need = self._scratch, 8 * len(self._lengths)
        if len(scratch) < need:  # zeros for every slot's score, kept between searches
            scratch.extend(bytes(need - len(scratch)))
        # A tie at the k-th comes back cut newest first, its times read only for one.
        newest = self._created.parts
        found = kernel.top(lists, self._lengths, base, per_length, limit, filtered, scratch, newest)
        return self._best({slot: score for score, slot in found}, limit)

    def _best(self, scores: dict[int, float], limit: int) -> list[Scored]:
        """The ``limit`` best of ``scores`` (slot -> score), ordered."""
        if len(scores) > limit:  # only the k best and those tied with them are ordered
            kth = heapq.nlargest(limit, scores.values())[-1]
            scores = {slot: score for slot, score in scores.items() if score >= kth}
            if len(scores) > _TIE_CUT * limit:
                scores = self._newest_of_tie(scores, kth, limit)
        kinds, ids, created = self._kinds, self._ids, self._created
        ranked = []
        for slot, score in scores.items():
            ranked.append((-score, -created[slot], (kinds[slot], ids[slot])))
        return [Scored(key, -neg) for neg, _, key in heapq.nsmallest(limit, ranked)]

    def _newest_of_tie(self, scores: dict[int, float], kth: float, limit: int) -> dict[int, float]:
        """``scores`` less the tied documents that cannot be among the ``limit`` best: a tie
        at the k-th score is broken newest first, so of the documents scoring ``kth``
        only those at least as new as the newest few can place. Read in C passes, not a
        column read a document (a text repeated every turn ties at 10^5 turns by the
        tens of thousands)."""
        values = scores.values()
        tied = list(itertools.compress(scores.keys(), map(kth.__eq__, values)))
        higher = dict(itertools.compress(scores.items(), map(kth.__lt__, values)))
        stamps = self._created.take(tied)
        newest = heapq.nlargest(limit - len(higher), stamps)[-1]  # the higher all place
        return higher | dict.fromkeys(itertools.compress(tied, map(newest.__le__, stamps)), kth)

    def _scored(
        self, docs: Sequence[int], counts: Sequence[int], w: float, base: float, per_length: float
    ) -> dict[int, float]:
        """Every live document of a run of a term's postings, scored for the term alone:
        column by column in C (a loop in Python costs about four times as much a posting)."""
        lengths = list(map(self._lengths.__getitem__, docs))
        # the same sums and products, in the same order, as the scan does one by one
        norms = map(operator.add, map(base.__radd__, counts), map(per_length.__mul__, lengths))
        scores = dict(zip(docs, map(operator.truediv, map(w.__mul__, counts), norms), strict=True))
        if self._dead:
            for slot in itertools.compress(docs, map(operator.not_, lengths)):
                del scores[slot]  # a removed document (its length is 0)
        return scores

    def _add_every(
        self,
        scores: dict[int, float],
        docs: Sequence[int],
        counts: Sequence[int],
        w: float,
        base: float,
        per_length: float,
    ) -> None:
        """Add the term's score to every live document of a run of its postings, the new
        ones taken in: ``_scored``'s columns in C, then one sum for each already found
        (the same sums, in the same order, as a scan posting by posting)."""
        added = self._scored(docs, counts, w, base, per_length)
        for slot in added.keys() & scores.keys():
            added[slot] += scores[slot]
        scores.update(added)

    def _add_accepted(
        self,
        scores: dict[int, float],
        refused: set[int],
        where: DocFilter,
        docs: Sequence[int],
        counts: Sequence[int],
        w: float,
        base: float,
        per_length: float,
    ) -> None:
        """``_add_every`` for a search that filters: each new document is asked first."""
        lengths = self._lengths
        for slot, tf in zip(docs, counts, strict=True):
            length = lengths[slot]
            if not length:
                continue  # a removed document
            if slot not in scores:
                if slot in refused:
                    continue
                if not self._accepts(where, slot):
                    refused.add(slot)
                    continue
                scores[slot] = 0.0
            scores[slot] += w * tf / (tf + base + per_length * length)

    def _bound(self, term_id: int, weight: float, base: float, per_length: float) -> float:
        """The most the term gives any live document: its highest count in its shortest
        document (the score grows with the count and falls with the length)."""
        tf, length = self._max_tf[term_id], self._min_length[term_id]
        return weight * tf / (tf + base + per_length * length)

    def _full_score(
        self, slot: int, *, weight: dict[int, float], base: float, per_length: float
    ) -> float:
        """The document's score for every query term at once, through its own terms."""
        a, b = self._terms_of_slot(slot)
        length, score = self._lengths[slot], 0.0
        for term_id, tf in zip(self._fwd_terms.run(a, b), self._fwd_counts.run(a, b), strict=True):
            w = weight.get(term_id)
            if w is not None:
                score += w * tf / (tf + base + per_length * length)
        return score

    def _count_in(self, slot: int, term_id: int) -> int:
        """How often ``term_id`` occurs in the live document at ``slot`` (0 if not)."""
        a, b = self._terms_of_slot(slot)
        at = self._fwd_terms.find(term_id, a, b)
        return 0 if at < 0 else self._fwd_counts[at]

    def _accepts(self, where: DocFilter, slot: int) -> bool:
        return where.accepts(self._scenes[slot], self._created[slot])
