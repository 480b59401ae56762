"""The recall mirror: a BM25 index over a domain's surface rows and events.

Responsibility: rank documents for a bag of query terms in time that grows
with the rare terms' postings, not with the domain. A document is one surface
row (a turn, or a Dream row with what it folded) or one event; the root says
what its terms are and keeps it current. No text is held, only term counts.

Ranking (exact BM25 top-k by MaxScore) is ``memhop.index.recall_rank``'s,
over the columns kept here: per term its postings, its document count and its
bounds (highest count, shortest document); per document its kind, id, scene,
time, length and distinct terms with their counts.

Contract:
- ``put`` replaces the document under its key; ``remove`` forgets it.
- Built from scratch, kept up to date incrementally, or packed and unpacked
  again (``packed``, ``unpacked``), ``search`` ranks the same documents with
  the same scores (tests compare them).

Traps: not thread-safe; the root holds the domain lock around every call,
but for a begun repack's ``run``, which reads only what no edit changes
(``memhop.index.recall_repack``).
"""

from __future__ import annotations

import operator
from array import array
from collections import Counter
from collections.abc import Iterable

from memhop.index import kernel
from memhop.index.packed_map import IdMap, PackedMap
from memhop.index.recall_packed import (
    NARROW,
    PackedIndex,
    Postings,
    append_column,
    code_for,
    code_of,
    copied,
)
from memhop.index.recall_rank import K1, B, DocFilter, DocKey, Ranking, Scored
from memhop.index.recall_repack import NO_LENGTH, Columns, Repack
from memhop.index.split_column import SplitColumn
from memhop.intmap import NO_IDS, IntMap

__all__ = [
    "K1",
    "B",
    "DocFilter",
    "DocKey",
    "PackedIndex",
    "RecallIndex",
    "Repack",
    "Scored",
]

_MAX_TF = 255  # a term's count in one document saturates here (BM25 flattens long before)
_REPACK_DEAD = 1024  # removed documents past which (and past the live ones) a repack is due


class RecallIndex(Ranking):
    """Term postings and per-document term counts of one domain (ranked by ``Ranking``)."""

    def __init__(self, *, compiled: bool = True) -> None:
        """``compiled``: rank through the compiled kernel when it was built (False:
        MaxScore in Python, which gives the same answers)."""
        self._compiled = compiled and kernel.COMPILED
        self._scratch = bytearray()
        self._vocab: dict[str, int] = {}
        self._df = array("I")  # term id -> live documents holding it
        # term id -> its highest count and its shortest document (bounds: a removal leaves
        # them, which only loosens them; a packed index stores them exact)
        self._max_tf = array("B")
        self._min_length = array("I")
        # term id -> document slots (some may be dead) and counts; None: still in _base
        self._post_docs: list[array[int] | None] = []
        self._post_tfs: list[array[int] | None] = []
        self._base: PackedIndex | None = None  # what the index was unpacked from
        # Per document slot, parallel columns (no object per document); an index read
        # back keeps its file's columns as their base and appends to arrays of its own.
        self._kinds = SplitColumn("B")
        self._ids = SplitColumn("Q")
        self._scenes = SplitColumn("Q")
        self._created = SplitColumn("q")
        self._lengths = array("I")  # slot -> document length; 0 once removed
        self._starts = array("Q")  # slot -> first of its terms in _fwd_terms (read often)
        self._fwd_terms = SplitColumn("H")  # every document's distinct term ids, in slot order
        self._fwd_counts = SplitColumn("B")
        # kind -> id -> slot, packed: a dict would hold ~40 bytes a document more; a kind
        # read back is looked up in its file's (id, slot) pairs until it is written
        self._slot_of: dict[int, IdMap] = {}
        self._live = 0
        self._total_length = 0
        self._dead = 0
        self._repacking: Repack | None = None  # begun, not finished
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
        postings, wide = self._owned, slot > NARROW
        max_tf, min_length = self._max_tf, self._min_length
        for term_id, tf in tfs:
            fwd_terms.tail.append(term_id)
            fwd_counts.tail.append(tf)
            docs, counts = postings(term_id)
            if tf > max_tf[term_id]:
                max_tf[term_id] = tf
            if length < min_length[term_id]:
                min_length[term_id] = length
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
        self._live += 1

    def _postings(self, term_id: int) -> tuple[Postings, Postings]:
        """A term's document slots and counts to read: the packed base's, where they lie
        (checked as read), until the term is written (a common word's list is MBs at 10^5
        documents, and a search may only probe it)."""
        docs, counts = self._post_docs[term_id], self._post_tfs[term_id]
        if docs is None or counts is None:
            base = self._base
            assert base is not None  # only an unpacked index leaves postings in its base
            a, b = base.post_starts[term_id], base.post_starts[term_id + 1]
            return base.post_docs[a:b], base.post_tfs[a:b]
        return docs, counts

    def _owned(self, term_id: int) -> tuple[array[int], array[int]]:
        """A term's document slots and counts to write, taken out of the base on first use."""
        docs, counts = self._post_docs[term_id], self._post_tfs[term_id]
        if docs is None or counts is None:
            base_docs, base_counts = self._postings(term_id)
            docs = self._post_docs[term_id] = copied(base_docs, code_of(base_docs))
            counts = self._post_tfs[term_id] = copied(base_counts, "B")
        return docs, counts

    def _term_id(self, term: str) -> int:
        term_id = self._vocab.get(term)
        if term_id is None:
            term_id = self._vocab[term] = len(self._df)
            self._df.append(0)
            self._max_tf.append(0)
            self._min_length.append(NO_LENGTH)
            self._post_docs.append(array("H"))
            self._post_tfs.append(array("B"))
            if term_id > NARROW and self._fwd_terms.tail.typecode == "H":
                self._fwd_terms.widen("I")
        return term_id

    def remove(self, key: DocKey) -> bool:
        """Forget the document under ``key``; False when none was indexed."""
        slots = self._slot_of.get(key[0])
        if slots is None or (slot := slots.get(key[1])) is None:
            return False
        slots.discard(key[1])
        self._live -= 1
        a, b = self._terms_of_slot(slot)
        df = self._df
        for term_id in self._fwd_terms.run(a, b):
            df[term_id] -= 1
        self._total_length -= self._lengths[slot]
        self._lengths[slot] = 0
        self._dead += 1
        self.edits += 1
        if self._repacking is not None:
            self._repacking.removed.append(slot)
        return True

    # ---- repack (``memhop.index.recall_repack``) ---------------------------------------

    @property
    def repack_due(self) -> bool:
        """Whether removed documents outnumber the live ones (past ``_REPACK_DEAD``): their
        postings and columns are dropped by a repack, which the root runs off the lock."""
        return self._dead > _REPACK_DEAD and self._dead > self._live

    def begin_repack(self) -> Repack:
        """A repack of what the index holds now (called under its lock); ``run`` it with
        no lock, then ``finish_repack`` it. Another begun after it replaces it."""
        columns = Columns(
            kinds=self._kinds,
            ids=self._ids,
            scenes=self._scenes,
            created=self._created,
            lengths=self._lengths,
            starts=self._starts,
            fwd_terms=self._fwd_terms,
            fwd_counts=self._fwd_counts,
        )
        pairs = {kind: slots.copy() for kind, slots in self._slot_of.items()}
        job = Repack(columns, self._postings, pairs, terms=len(self._df), compiled=self._compiled)
        self._repacking = job
        return job

    def finish_repack(self, job: Repack) -> bool:
        """Take ``job``'s columns, redoing what changed since it began (called under the
        lock; costs those changes). False, the index as it was, when ``job`` did not run
        or is not the repack begun last."""
        new = job.result
        if self._repacking is not job or new is None:
            return False
        self._repacking = None
        kinds, ids, scenes, created = self._kinds, self._ids, self._scenes, self._created
        lengths = self._lengths
        starts, fwd_terms, fwd_counts = self._starts, self._fwd_terms, self._fwd_counts
        since = [s for s in range(job.slots, len(lengths)) if lengths[s]]
        added = len(self._df) - job.terms  # terms first met since it began
        job.retire(self._post_docs, self._post_tfs)  # freed with no lock (``let_go``)
        new.post_docs.extend(array("H") for _ in range(added))
        new.post_tfs.extend(array("B") for _ in range(added))
        new.max_tf.frombytes(bytes(added))
        new.min_length.extend([NO_LENGTH] * added)
        self._post_docs, self._post_tfs = new.post_docs, new.post_tfs  # grown, not copied
        self._max_tf, self._min_length = new.max_tf, new.min_length
        self._base = None
        self._kinds, self._ids = SplitColumn.of(new.kinds), SplitColumn.of(new.ids)
        self._scenes, self._created = SplitColumn.of(new.scenes), SplitColumn.of(new.created)
        self._lengths, self._starts = new.lengths, new.starts
        self._fwd_terms = SplitColumn.of(new.fwd_terms)
        self._fwd_counts = SplitColumn.of(new.fwd_counts)
        if len(self._df) > NARROW + 1 and new.fwd_terms.typecode == "H":
            self._fwd_terms.widen("I")
        self._slot_of = dict(new.slot_of)
        self._dead = 0
        for slot in job.removed:  # removed after the run read it: removed again
            if slot < job.slots and new.alive[slot]:
                self._lengths[new.renumber[slot]] = 0
                self._slot_of[kinds[slot]].discard(ids[slot])
                self._dead += 1
        for slot in since:  # added since it began, and still there: after the rest
            a = starts[slot]
            b = starts[slot + 1] if slot + 1 < len(starts) else len(fwd_terms)
            tfs = zip(fwd_terms.run(a, b), fwd_counts.run(a, b), strict=True)
            self._append(kinds[slot], ids[slot], scenes[slot], created[slot], lengths[slot], tfs)
            self._live -= 1  # counted when it was put
        return True

    def _repack(self) -> None:
        """Repack now, in one go."""
        job = self.begin_repack()
        job.run()
        self.finish_repack(job)

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
        slot_code = code_for(len(self._lengths))
        post_starts, post_docs, post_tfs = array("Q", [0]), array(slot_code), array("B")
        for old_id in kept:
            docs, counts = self._postings(old_id)
            append_column(post_docs, docs)
            append_column(post_tfs, counts)
            post_starts.append(len(post_docs))
        return PackedIndex(
            terms=tuple(names[t] for t in kept),
            post_starts=post_starts,
            post_docs=post_docs,
            post_tfs=post_tfs,
            term_max_tfs=array("B", map(self._max_tf.__getitem__, kept)),
            term_min_lengths=array("I", map(self._min_length.__getitem__, kept)),
            kinds=self._kinds.whole("B"),
            ids=self._ids.whole("Q"),
            scenes=self._scenes.whole("Q"),
            created=self._created.whole("q"),
            lengths=self._lengths,
            total_length=self._total_length,
            starts=self._starts,
            fwd_terms=array(code_for(len(kept)), map(renumber.__getitem__, self._fwd_terms)),
            fwd_counts=self._fwd_counts.whole("B"),
            slots={kind: slots.flat() for kind, slots in sorted(self._slot_of.items())},
        )

    @classmethod
    def unpacked(cls, packed: PackedIndex, *, compiled: bool = True) -> RecallIndex:
        """The index ``packed`` holds; its columns are taken over, not copied.

        Costs what the terms and the documents' lengths cost: a term's postings
        are taken out of the packed ones when the term is first used, a kind's
        slots when one of its ids is looked up, and the other columns are read
        where they lie (a view of the file's bytes, as often as not).
        """
        packed.check()
        index = cls(compiled=compiled)
        terms = len(packed.terms)
        index._vocab = dict(zip(packed.terms, range(terms), strict=True))
        starts = packed.post_starts
        index._df = array("I", map(operator.sub, starts[1:], starts[:-1]))
        index._max_tf = copied(packed.term_max_tfs, "B")
        index._min_length = copied(packed.term_min_lengths, "I")
        index._post_docs = [None] * terms
        index._post_tfs = [None] * terms
        index._base = packed
        index._kinds = SplitColumn("B", packed.kinds)
        index._ids = SplitColumn("Q", packed.ids)
        index._scenes = SplitColumn("Q", packed.scenes)
        index._created = SplitColumn("q", packed.created)
        index._lengths = copied(packed.lengths, "I")  # read in every search, and edited
        index._starts = copied(packed.starts, "Q")
        index._fwd_terms = SplitColumn(code_of(packed.fwd_terms), packed.fwd_terms)
        index._fwd_counts = SplitColumn("B", packed.fwd_counts)
        index._slot_of = {kind: PackedMap(flat) for kind, flat in packed.slots.items()}
        index._live = len(packed.kinds)  # a packed index holds live documents only
        index._total_length = packed.total_length
        return index

    # ---- reads -------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._live

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and key[1] in (self._slot_of.get(key[0]) or NO_IDS)

    def scene_of(self, key: DocKey) -> int | None:
        """The scene the document under ``key`` was indexed under; None if none is."""
        slots = self._slot_of.get(key[0])
        slot = None if slots is None else slots.get(key[1])
        return None if slot is None else self._scenes[slot]

    def keys(self) -> list[DocKey]:
        return sorted((k, i) for k, d in self._slot_of.items() for i in d)

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
                terms, tfs = self._fwd_terms.run(a, b), self._fwd_counts.run(a, b)
                counts = {names[t]: c for t, c in zip(terms, tfs, strict=True)}
                out[(kind, doc_id)] = (self._scenes[slot], self._created[slot], counts)
        return out

    def __repr__(self) -> str:
        return f"RecallIndex(docs={len(self)}, terms={len(self._vocab)})"
