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
- Built from scratch, kept up to date incrementally, or packed and unpacked
  again (``packed``, ``unpacked``), ``search`` ranks the same documents with
  the same scores (tests compare them).

Traps: not thread-safe; the root holds the domain lock around every call.
"""

from __future__ import annotations

import heapq
import itertools
import math
import operator
from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from memhop.intmap import NO_IDS, IntMap

__all__ = [
    "K1",
    "B",
    "DocKey",
    "PackedIndex",
    "RecallIndex",
    "Scored",
]

K1 = 1.2
B = 0.75
_MAX_TF = 255  # a term's count in one document saturates here (BM25 flattens long before)
_CHUNK = 1024  # postings read, at least, between two checks that new documents can win
# Term ids and document slots are held in two bytes while they fit (most domains' terms
# always do): half the memory, and half the recall file's bytes to read back.
_NARROW = 0xFFFF

DocKey = tuple[int, int]
"""(kind, id): the root's own naming of a document (a row's topic id, an event's content id)."""


@dataclass(frozen=True, slots=True, eq=False)
class PackedIndex:
    """A recall index's live documents in flat columns: what the side file stores.

    Term ``t`` is ``terms[t]``; its postings are ``post_docs`` / ``post_tfs``
    from ``post_starts[t]`` to ``post_starts[t + 1]``. Document slot ``s``
    has one entry in each per-document column, and its distinct terms in
    ``fwd_terms`` / ``fwd_counts`` from ``starts[s]`` to the next start.
    ``slots`` maps a kind to its (id, slot) pairs, interleaved, ids ascending.
    """

    terms: tuple[str, ...]
    post_starts: array[int]
    post_docs: array[int]
    post_tfs: array[int]
    kinds: array[int]
    ids: array[int]
    scenes: array[int]
    created: array[int]
    lengths: array[int]
    starts: array[int]
    fwd_terms: array[int]
    fwd_counts: array[int]
    slots: dict[int, array[int]]

    def check(self) -> None:
        """Raise ValueError unless the columns' lengths and starts fit together.

        What the columns hold is not read here (a pass over every posting would
        cost what a load saves): a file's checksum vouches for its bytes.
        """
        docs, terms = len(self.kinds), len(self.terms)
        per_doc = (self.ids, self.scenes, self.created, self.lengths, self.starts)
        problems = [
            any(len(column) != docs for column in per_doc) and "per-document columns differ",
            len(self.post_starts) != terms + 1 and "term starts do not match the terms",
            len(self.post_docs) != len(self.post_tfs) and "postings and counts differ",
            len(self.fwd_terms) != len(self.fwd_counts) and "document terms and counts differ",
            not _ascending_from_zero(self.post_starts, len(self.post_docs)) and "bad term starts",
            not _ascending_from_zero(self.starts, len(self.fwd_terms)) and "bad document starts",
            sum(len(flat) for flat in self.slots.values()) != 2 * docs and "slots do not match",
        ]
        found = [p for p in problems if p]
        if found:
            msg = f"packed recall index: {found[0]}"
            raise ValueError(msg)


def _code_for(count: int) -> str:
    """The type code that holds ids below ``count``: two bytes while they fit."""
    return "H" if count <= _NARROW + 1 else "I"


def _ascending_from_zero(starts: array[int], end: int) -> bool:
    """Whether ``starts`` begins at 0 (or is empty) and ends within ``end`` (that they
    ascend in between is the checksum's to vouch for: a pass over them costs)."""
    if not starts:
        return end == 0
    return starts[0] == 0 and starts[-1] <= end


@dataclass(frozen=True, slots=True)
class Scored:
    """One ranked document."""

    key: DocKey
    score: float


class RecallIndex:
    """Term postings and per-document term counts of one domain."""

    def __init__(self) -> None:
        self._vocab: dict[str, int] = {}
        self._df = array("I")  # term id -> live documents holding it
        # term id -> document slots (some may be dead) and counts; None: still in _base
        self._post_docs: list[array[int] | None] = []
        self._post_tfs: list[array[int] | None] = []
        self._base: PackedIndex | None = None  # what the index was unpacked from
        # Per document slot, parallel arrays (no object per document).
        self._kinds = array("B")
        self._ids = array("Q")
        self._scenes = array("Q")
        self._created = array("q")
        self._lengths = array("I")  # slot -> document length; 0 once removed
        self._starts = array("Q")  # slot -> first of its terms in _fwd_terms
        self._fwd_terms = array("H")  # every document's distinct term ids, slot after slot
        self._fwd_counts = array("B")
        # kind -> id -> slot, packed: a dict would hold ~40 bytes a document more
        self._slot_of: dict[int, IntMap] = {}
        self._total_length = 0
        self._dead = 0
        self.edits = 0  # puts and removes since the index was made or unpacked

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
        self.edits += 1
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
        postings, wide = self._postings, slot > _NARROW
        for term_id, tf in tfs:
            fwd_terms.append(term_id)
            fwd_counts.append(tf)
            docs, counts = postings(term_id)
            if wide and docs.typecode == "H":
                docs = self._post_docs[term_id] = array("I", docs)
            docs.append(slot)
            counts.append(tf)
        self._kinds.append(kind)
        self._ids.append(doc_id)
        self._scenes.append(scene_id)
        self._created.append(created_at)
        self._lengths.append(length)
        slots = self._slot_of.get(kind)
        if slots is None:
            slots = self._slot_of[kind] = IntMap()
        slots.put(doc_id, slot)

    def _postings(self, term_id: int) -> tuple[array[int], array[int]]:
        """A term's document slots and counts, taken out of the packed base on first use."""
        docs, counts = self._post_docs[term_id], self._post_tfs[term_id]
        if docs is None or counts is None:
            base = self._base
            assert base is not None  # only an unpacked index leaves postings in its base
            a, b = base.post_starts[term_id], base.post_starts[term_id + 1]
            docs = self._post_docs[term_id] = base.post_docs[a:b]
            counts = self._post_tfs[term_id] = base.post_tfs[a:b]
        return docs, counts

    def _term_id(self, term: str) -> int:
        term_id = self._vocab.get(term)
        if term_id is None:
            term_id = self._vocab[term] = len(self._df)
            self._df.append(0)
            self._post_docs.append(array("H"))
            self._post_tfs.append(array("B"))
            if term_id > _NARROW and self._fwd_terms.typecode == "H":
                self._fwd_terms = array("I", self._fwd_terms)
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
        self.edits += 1
        if self._dead > 1024 and self._dead > len(self):
            self._repack()
        return True

    def _repack(self) -> None:
        """Drop dead slots from the postings and the per-document arrays.

        Filtered column by column in C (``compress``, ``map``): a pass in Python per
        posting cost 0.35 s at 20,000 turns, and a close repacks before it saves.
        """
        alive = bytes(map(bool, self._lengths))  # 0: a removed document
        new_slot = array("I", itertools.accumulate(alive, initial=0))  # live slot -> its new
        slot_code, renumber = _code_for(new_slot[-1]), new_slot.__getitem__
        for term_id in range(len(self._df)):
            docs, counts = self._postings(term_id)
            keep = bytes(map(alive.__getitem__, docs))
            self._post_docs[term_id] = array(
                slot_code, map(renumber, itertools.compress(docs, keep))
            )
            self._post_tfs[term_id] = array("B", itertools.compress(counts, keep))
        starts = self._starts
        ends = starts[1:]
        ends.append(len(self._fwd_terms))
        sizes = list(map(operator.sub, ends, starts))
        kept = b"".join(
            b"\1" * n if live else b"\0" * n for n, live in zip(sizes, alive, strict=True)
        )
        self._fwd_terms = array(self._fwd_terms.typecode, itertools.compress(self._fwd_terms, kept))
        self._fwd_counts = array("B", itertools.compress(self._fwd_counts, kept))
        self._starts = array("Q", itertools.accumulate(itertools.compress(sizes, alive), initial=0))
        self._starts.pop()  # the end of the last document
        for name in ("_kinds", "_ids", "_scenes", "_created", "_lengths"):
            column: array[int] = getattr(self, name)
            setattr(self, name, array(column.typecode, itertools.compress(column, alive)))
        for kind, slots in self._slot_of.items():
            flat = slots.flat()
            flat[1::2] = array("Q", map(renumber, flat[1::2]))
            self._slot_of[kind] = IntMap.from_sorted_pairs(flat)
        self._base = None
        self._dead = 0

    # ---- packed form (the side file's) -----------------------------------------------

    def packed(self) -> PackedIndex:
        """The live documents in flat columns; a term no live document holds is left out.

        Repacks first when documents were removed (their slots and their terms go).
        """
        if self._dead:
            self._repack()
        df = self._df
        kept = [t for t in range(len(df)) if df[t]]
        renumber = array("I", bytes(4 * len(df)))
        for new_id, old_id in enumerate(kept):
            renumber[old_id] = new_id
        names = {term_id: term for term, term_id in self._vocab.items()}
        slot_code = _code_for(len(self._lengths))
        post_starts, post_docs, post_tfs = array("Q", [0]), array(slot_code), array("B")
        for old_id in kept:
            docs, counts = self._postings(old_id)
            post_docs += docs if docs.typecode == slot_code else array(slot_code, docs)
            post_tfs += counts
            post_starts.append(len(post_docs))
        return PackedIndex(
            terms=tuple(names[t] for t in kept),
            post_starts=post_starts,
            post_docs=post_docs,
            post_tfs=post_tfs,
            kinds=self._kinds,
            ids=self._ids,
            scenes=self._scenes,
            created=self._created,
            lengths=self._lengths,
            starts=self._starts,
            fwd_terms=array(_code_for(len(kept)), map(renumber.__getitem__, self._fwd_terms)),
            fwd_counts=self._fwd_counts,
            slots={kind: slots.flat() for kind, slots in sorted(self._slot_of.items())},
        )

    @classmethod
    def unpacked(cls, packed: PackedIndex) -> RecallIndex:
        """The index ``packed`` holds; its columns are taken over, not copied.

        Costs what copying the columns costs: a term's postings are taken out
        of the packed ones when the term is first used.
        """
        packed.check()
        index = cls()
        terms = len(packed.terms)
        index._vocab = dict(zip(packed.terms, range(terms), strict=True))
        starts = packed.post_starts
        index._df = array("I", map(operator.sub, starts[1:], starts[:-1]))
        index._post_docs = [None] * terms
        index._post_tfs = [None] * terms
        index._base = packed
        index._kinds, index._ids, index._scenes = packed.kinds, packed.ids, packed.scenes
        index._created, index._lengths = packed.created, packed.lengths
        index._starts = packed.starts
        index._fwd_terms, index._fwd_counts = packed.fwd_terms, packed.fwd_counts
        index._slot_of = {k: IntMap.from_sorted_pairs(flat) for k, flat in packed.slots.items()}
        index._total_length = sum(packed.lengths)
        return index

    # ---- reads -------------------------------------------------------------------------

    def __len__(self) -> int:
        return sum(map(len, self._slot_of.values()))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and key[1] in self._slot_of.get(key[0], NO_IDS)

    def scene_of(self, key: DocKey) -> int | None:
        """The scene the document under ``key`` was indexed under; None if none is."""
        slots = self._slot_of.get(key[0])
        slot = None if slots is None else slots.get(key[1])
        return None if slot is None else self._scenes[slot]

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
            pairs = zip(*self._postings(term_id), strict=True)
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
        return len(self._postings(term_id)[0])

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
