"""The packed form of a recall index: flat columns, what the side file stores.

Responsibility: the columns' shape and the cheap checks that they fit together.
Term ids and document slots are held in two bytes while they fit (most domains'
terms always do): half the memory, and half the recall file's bytes to read back.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeAlias, overload

__all__ = [
    "NARROW",
    "Checked",
    "Column",
    "PackedIndex",
    "Postings",
    "append_column",
    "code_for",
    "code_of",
    "copied",
]

NARROW = 0xFFFF
"""The largest id a two-byte column holds."""


class Checked:
    """A view of a file's bytes cast to a column's type, its bytes checked as they are
    read: ``check(start, end)`` raises unless bytes [start, end) of the file (``at``
    is where the column begins) are as written. A recall state's postings and
    document terms are most of its file, and a recall reads a few runs of them.

    A column read item by item more than ``ITEM_READS`` times is checked whole then
    (a hit's id and time are read an item at a time: one check each costs more than a
    column of 10^5 items hashed once)."""

    __slots__ = ("_at", "_check", "_items", "_reads", "format", "itemsize")

    ITEM_READS = 256

    def __init__(self, items: memoryview, check: Callable[[int, int], None], at: int) -> None:
        self._items, self._check, self._at = items, check, at
        self.format, self.itemsize = items.format, items.itemsize
        self._reads = 0  # items read one by one; -1 once every item is checked

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, i: int) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> memoryview: ...
    def __getitem__(self, i: int | slice) -> int | memoryview:
        items = self._items
        if self._reads < 0:
            return items[i] if isinstance(i, slice) else int(items[i])
        size = self.itemsize
        if isinstance(i, slice):
            a, b, _ = i.indices(len(items))
            if a < b:
                self._check(self._at + a * size, self._at + b * size)
            return items[i]
        self._reads += 1
        if self._reads > self.ITEM_READS:
            return int(self.whole()[i])
        if i < 0:
            i += len(items)
        self._check(self._at + i * size, self._at + (i + 1) * size)
        return int(items[i])

    def part(self, a: int, b: int) -> Checked:
        """Items ``a`` to ``b``, checked as they are read (as this column is)."""
        return Checked(self._items[a:b], self._check, self._at + a * self.itemsize)

    def whole(self) -> memoryview:
        """Every item, checked."""
        if self._reads >= 0:
            self._check(self._at, self._at + len(self._items) * self.itemsize)
            self._reads = -1
        return self._items

    def __iter__(self) -> Iterator[int]:
        return iter(self.whole())


Postings: TypeAlias = "array[int] | memoryview"
"""A term's slots or counts: its own array, or a view of the file's where they lie."""
Column: TypeAlias = "array[int] | memoryview | Checked"
"""A column of ints: an array, or a view of a file's bytes cast to the column's type
(checked as it is read, or not)."""


def code_of(column: Column) -> str:
    """The column's type code (``array`` and ``struct`` codes agree for these)."""
    return column.typecode if isinstance(column, array) else column.format


def copied(column: Column, code: str) -> array[int]:
    """``column`` as an array of ``code`` of its own; an array of that code already is
    given back as it is."""
    if isinstance(column, array) and column.typecode == code:
        return column
    out = array(code)
    append_column(out, column)
    return out


def append_column(out: array[int], column: Column | Sequence[int]) -> None:
    """Append the items of ``column`` to ``out``: in one C copy when they are already of
    its type (an array, or a view of bytes), else item by item."""
    if isinstance(column, Checked):
        column = column.whole()
    if isinstance(column, memoryview) and column.format == out.typecode:
        out.frombytes(column.cast("B"))
    elif isinstance(column, array) and column.typecode == out.typecode:
        out.extend(column)
    else:
        out.extend(iter(column))


def code_for(count: int) -> str:
    """The type code that holds ids below ``count``: two bytes while they fit."""
    return "H" if count <= NARROW + 1 else "I"


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
    post_starts: Column
    post_docs: Column
    post_tfs: Column
    term_max_tfs: Column  # per term: its highest count, and its shortest document
    term_min_lengths: Column
    kinds: Column
    ids: Column
    scenes: Column
    created: Column
    lengths: Column
    total_length: int  # the sum of ``lengths``, kept so a read-back index need not sum them
    starts: Column
    fwd_terms: Column
    fwd_counts: Column
    slots: dict[int, Column]

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
            len(self.term_max_tfs) != terms and "term counts do not match the terms",
            len(self.term_min_lengths) != terms and "term lengths do not match the terms",
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


def _ascending_from_zero(starts: Column, end: int) -> bool:
    """Whether ``starts`` begins at 0 (or is empty) and ends within ``end`` (that they
    ascend in between is the checksum's to vouch for: a pass over them costs)."""
    if not starts:
        return end == 0
    return starts[0] == 0 and starts[-1] <= end
