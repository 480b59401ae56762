"""A repack of a recall index: its removed documents dropped, beside the edits going on.

A removed document stays in its terms' postings and in the per-document
columns (its length 0) until a repack drops them all and numbers the slots
left again: 135-142 ms of CPU at 66,000-105,000 documents, over every term. So
that no hold of the domain lock pays for it, ``RecallIndex`` repacks in three
parts:

- ``RecallIndex.begin_repack`` (under the lock) fixes what the repack covers:
  the slots made so far, the terms known so far, and a copy of each kind's
  (id, slot) map (its pages copied in C: 0.3 ms at 10^5 documents);
- ``Repack.run`` (no lock: it may run on another thread while the index is
  edited) reads only what those slots hold into new columns. That is safe
  because an edit only appends past them (a new document's slot, its terms, a
  posting at the end of its term's list) or sets a removed document's length
  to 0, which the run reads once, at its start; what it misses is in
  ``removed``;
- ``RecallIndex.finish_repack`` (under the lock) takes the new columns and
  redoes what changed since the repack began: documents removed since marked
  removed again, documents added since appended. It costs the changes, not the
  index.

Filtered column by column in C when the kernel is built (``compress``, ``map``
otherwise): a pass in Python per posting cost 0.35 s at 20,000 turns.
"""

from __future__ import annotations

import itertools
import operator
from array import array
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass

from memhop.index import kernel
from memhop.index.packed_map import IdMap
from memhop.index.recall_packed import Postings, code_for
from memhop.index.split_column import SplitColumn
from memhop.intmap import IntMap

__all__ = ["NO_LENGTH", "Repack", "Repacked", "kept"]

NO_LENGTH = 0xFFFFFFFF  # a term's shortest document before it has one
_FREE_RUN = 2048  # a term's postings freed at a time: well under a millisecond
_PACED_TERMS = 1024  # terms repacked between two calls of the run's pace (about 2 ms)


@dataclass(frozen=True, slots=True)
class Repacked:
    """The columns of a repacked index, for the slots and terms its repack covered."""

    alive: bytes  # old slot -> 1 if its document was kept
    renumber: array[int]  # old slot -> its new slot (one more item: the count kept)
    post_docs: list[array[int] | None]
    post_tfs: list[array[int] | None]
    max_tf: array[int]
    min_length: array[int]
    kinds: array[int]
    ids: array[int]
    scenes: array[int]
    created: array[int]
    lengths: array[int]
    starts: array[int]
    fwd_terms: array[int]
    fwd_counts: array[int]
    slot_of: dict[int, IntMap]


@dataclass(frozen=True, slots=True)
class Columns:
    """The per-document columns of an index as a repack begins (read up to its slots)."""

    kinds: SplitColumn
    ids: SplitColumn
    scenes: SplitColumn
    created: SplitColumn
    lengths: array[int]
    starts: array[int]
    fwd_terms: SplitColumn
    fwd_counts: SplitColumn


class Repack:
    """One repack of an index, begun by ``RecallIndex.begin_repack``; ``run`` it (with no
    lock, on any thread), then hand it to ``RecallIndex.finish_repack``."""

    __slots__ = (
        "_columns",
        "_compiled",
        "_fwd_code",
        "_fwd_end",
        "_pairs",
        "_postings",
        "_retired",
        "removed",
        "result",
        "slots",
        "terms",
    )

    def __init__(
        self,
        columns: Columns,
        postings: Callable[[int], tuple[Postings, Postings]],
        pairs: dict[int, IdMap],
        *,
        terms: int,
        compiled: bool,
    ) -> None:
        self._columns, self._postings, self._pairs = columns, postings, pairs
        self._compiled = compiled
        self.slots = len(columns.lengths)  # the slots covered: those made before it began
        self.terms = terms
        self._fwd_end = len(columns.fwd_terms)  # where the terms of those slots end
        self._fwd_code = columns.fwd_terms.tail.typecode
        self.removed: list[int] = []  # slots removed since it began (the index appends)
        self.result: Repacked | None = None
        self._retired: list[list[array[int] | None]] = []

    def retire(self, *postings: list[array[int] | None]) -> None:
        """Keep the index's postings lists from before the repack, for ``let_go``."""
        self._retired.extend(postings)

    def let_go(self) -> None:
        """Free what ``retire`` kept, ``_FREE_RUN`` postings at a time (called with no lock:
        the 40,000 arrays of 20,000 terms freed in one statement held the interpreter for
        4.6 ms, and a host's call beside it would wait that out)."""
        for postings in self._retired:
            while postings:
                del postings[-_FREE_RUN:]
        self._retired.clear()

    def run(self, pace: Callable[[], None] = lambda: None) -> None:
        """Make the repacked columns (``result``); ``pace`` is called between chunks of the
        work (a few ms each at 10^5 documents: the root makes way for calls there)."""
        n, cols = self.slots, self._columns
        lengths = cols.lengths[:n]  # a copy: a removal after this is in ``removed``
        alive = bytes(map(bool, lengths))
        renumber = array("I", itertools.accumulate(alive, initial=0))
        post_docs, post_tfs, max_tf, min_length = self._postings_kept(lengths, renumber, pace)
        starts = cols.starts[:n]
        ends = starts[1:]
        ends.append(self._fwd_end)
        sizes = list(map(operator.sub, ends, starts))
        kept_runs = b"".join(
            b"\1" * size if live else b"\0" * size for size, live in zip(sizes, alive, strict=True)
        )
        new_starts = array("Q", itertools.accumulate(itertools.compress(sizes, alive), initial=0))
        new_starts.pop()  # the end of the last document
        pace()
        self.result = Repacked(
            alive=alive,
            renumber=renumber,
            post_docs=post_docs,
            post_tfs=post_tfs,
            max_tf=max_tf,
            min_length=min_length,
            kinds=self._kept("B", cols.kinds.head(n, "B"), alive),
            ids=self._kept("Q", cols.ids.head(n, "Q"), alive),
            scenes=self._kept("Q", cols.scenes.head(n, "Q"), alive),
            created=self._kept("q", cols.created.head(n, "q"), alive),
            lengths=array("I", itertools.compress(lengths, alive)),
            starts=new_starts,
            fwd_terms=self._kept(
                self._fwd_code, cols.fwd_terms.head(self._fwd_end, self._fwd_code), kept_runs
            ),
            fwd_counts=self._kept("B", cols.fwd_counts.head(self._fwd_end, "B"), kept_runs),
            slot_of={kind: _renumbered(m, alive, renumber) for kind, m in self._pairs.items()},
        )

    def _postings_kept(
        self, lengths: array[int], renumber: array[int], pace: Callable[[], None]
    ) -> tuple[list[array[int] | None], list[array[int] | None], array[int], array[int]]:
        """Each covered term's postings of kept documents, renumbered, and its bounds (they
        lose the removed documents' counts and lengths)."""
        n = self.slots
        slot_code = code_for(renumber[-1])
        width = array(slot_code).itemsize
        post_docs: list[array[int] | None] = []
        post_tfs: list[array[int] | None] = []
        max_tf, min_length = array("B"), array("I")
        for term_id in range(self.terms):
            if term_id % _PACED_TERMS == 0:
                pace()
            docs, counts = self._postings(term_id)
            # an edit appends slots from n on at the end; what lies before stays as it is
            cut = bisect_left(docs, n)
            docs, counts = docs[:cut], counts[:cut]
            if self._compiled:
                kept_docs, kept_tfs, most, least = kernel.postings_kept(
                    docs, counts, lengths, renumber, width
                )
                post_docs.append(_of_bytes(slot_code, kept_docs))
                post_tfs.append(_of_bytes("B", kept_tfs))
                max_tf.append(most)
                min_length.append(NO_LENGTH if least < 0 else least)
                continue
            keep = bytes(map(bool, map(lengths.__getitem__, docs)))
            live = list(itertools.compress(docs, keep))
            kept_counts = array("B", itertools.compress(counts, keep))
            post_docs.append(array(slot_code, map(renumber.__getitem__, live)))
            post_tfs.append(kept_counts)
            max_tf.append(max(kept_counts, default=0))
            min_length.append(min(map(lengths.__getitem__, live), default=NO_LENGTH))
        return post_docs, post_tfs, max_tf, min_length

    def _kept(self, code: str, column: array[int], keep: bytes) -> array[int]:
        return kept(code, column, keep, compiled=self._compiled)


def kept(code: str, column: array[int], keep: bytes, *, compiled: bool) -> array[int]:
    """The items of ``column`` that ``keep`` marks, as an array of ``code``."""
    if compiled:
        return _of_bytes(code, kernel.kept(column, keep))
    return array(code, itertools.compress(column, keep))


def _renumbered(slots: IdMap, alive: bytes, renumber: array[int]) -> IntMap:
    """A kind's (id, slot) map for the kept slots, renumbered."""
    pairs = slots.flat()
    old = pairs[1::2]
    keep = bytes(map(alive.__getitem__, old))
    flat = array("Q", bytes(16 * keep.count(1)))
    flat[0::2] = array("Q", itertools.compress(pairs[0::2], keep))
    flat[1::2] = array("Q", map(renumber.__getitem__, itertools.compress(old, keep)))
    return IntMap.from_sorted_pairs(flat)


def _of_bytes(code: str, raw: bytes) -> array[int]:
    items = array(code)
    items.frombytes(raw)
    return items
