"""SplitColumn: a column of ints whose first items are read-only and the rest appended.

A recall index read back from its file keeps the file's columns where they
are (a view of the mapped bytes: nothing copied, nothing in the process's own
memory) and appends what it indexes since to an array of its own. Reads see
one column; a document's run of items lies wholly in one part or the other.

Contract: ``len``, ``[i]`` (i >= 0), iteration and ``run(a, b)`` as a list of
the base's items followed by the tail's; ``append`` adds to the tail;
``whole`` is one array of every item (a copy), ``head`` of the first items.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from itertools import chain
from operator import itemgetter

from memhop.index.recall_packed import Checked, Column, append_column

__all__ = ["SplitColumn"]


class SplitColumn:
    """``base`` (read-only, e.g. a memoryview) followed by ``tail`` (an array)."""

    __slots__ = ("_base", "_n", "tail")

    def __init__(self, code: str, base: Column | Sequence[int] = ()) -> None:
        self._base = base
        self._n = len(base)
        self.tail = array(code)

    @classmethod
    def of(cls, items: array[int]) -> SplitColumn:
        """A column that is all tail: ``items`` taken over."""
        column = cls(items.typecode)
        column.tail = items
        return column

    def __len__(self) -> int:
        return self._n + len(self.tail)

    def __getitem__(self, i: int) -> int:
        n = self._n
        return self._base[i] if i < n else self.tail[i - n]

    def __iter__(self) -> Iterator[int]:
        return chain(self._base, self.tail) if self._n else iter(self.tail)

    def take(self, at: Sequence[int]) -> list[int]:
        """The items at positions ``at`` (each >= 0), in that order: read in C from one copy
        of the column, not one Python call an item (a recall's tie of thousands of
        documents reads them)."""
        if len(at) < 2:
            return [self[i] for i in at]
        return list(itemgetter(*at)(self.whole(self.tail.typecode)))

    def run(self, a: int, b: int) -> Sequence[int]:
        """Items ``a`` to ``b``, which lie in one part (a document's terms do)."""
        n = self._n
        return self._base[a:b] if b <= n else self.tail[a - n : b - n]

    def parts(self) -> tuple[Column | Sequence[int] | bytes, array[int]]:
        """The base (b"" when there is none; checked, when it is checked as read) and the
        tail, as they are (for the kernel)."""
        base = self._base
        if isinstance(base, Checked):
            return base.whole(), self.tail
        return (base if self._n else b""), self.tail

    def append(self, value: int) -> None:
        self.tail.append(value)

    def widen(self, code: str) -> None:
        """Hold the tail's items in ``code`` from now on (ids past two bytes)."""
        self.tail = array(code, self.tail)

    def whole(self, code: str) -> array[int]:
        """Every item in one array of ``code`` (the base copied in C when it is raw bytes)."""
        out = array(code)
        append_column(out, self._base)
        append_column(out, self.tail)
        return out

    def head(self, n: int, code: str) -> array[int]:
        """The first ``n`` items in one array of ``code`` (a copy). Safe beside appends:
        it reads no item past ``n`` (a repack reads an index another thread edits)."""
        out = array(code)
        base_n = self._n
        append_column(out, self._base if n >= base_n else self._base[:n])
        if n > base_n:
            append_column(out, self.tail[: n - base_n])
        return out

    def find(self, value: int, a: int, b: int) -> int:
        """Where ``value`` first is among items ``a`` to ``b`` (one part's); -1 if not."""
        n = self._n
        base = self._base
        try:
            if a >= n:
                return self.tail.index(value, a - n, b - n) + n
            if type(base) is array:
                return base.index(value, a, b)
        except ValueError:
            return -1
        # A view of a file's bytes (little-endian: read back on such hosts only): its
        # bytes searched in C, a hit counted only where an item starts.
        assert isinstance(base, memoryview | Checked)
        size = base.itemsize
        try:
            pattern = value.to_bytes(size, "little")
        except OverflowError:
            return -1
        raw = base[a:b].tobytes()
        at = raw.find(pattern)
        while at > 0 and at % size:
            at = raw.find(pattern, at + 1)
        return -1 if at < 0 else a + at // size
