"""An IntMap's reads and puts (the path every record's write and read takes), in Python.

``PyCore`` holds the map's state (each page's lowest bound, its ids, values and tags, the
recent ids' dict, the count and two bounds) and answers ``get``, ``in``, ``len``, ``[]``,
``put`` and ``_settle``; ``pages.PagedMap`` does the rest on the same state. The compiled
core (``_core.c``, where the install built it) answers the same calls from the same state
with the same results (the tests run every IntMap test on both); this one is the
reference, and what runs without a C compiler.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable

__all__ = ["NEW", "TAG_BITS", "TAG_MASK", "UNTYPED", "PyCore"]

NEW = -1
"""``put``'s answer for an id that was not live."""
UNTYPED = -2
"""``put``'s answer for a live id whose page holds no tags yet."""
TAG_BITS = 9  # a recent entry's value is value << 9 | tag
TAG_MASK = 0x1FF
U64_MAX = 2**64 - 1


class PyCore:
    """The state and the hot calls of an IntMap (see the module contract)."""

    __slots__ = (
        "_count",
        "_firsts",
        "_ids",
        "_new",
        "_offs",
        "_page_max",
        "_recent_max",
        "_types",
    )

    # Page p holds the ids in [_firsts[p], _firsts[p + 1]); _firsts[0] is 0, and there is
    # always one page, empty or not.
    _firsts: array[int]
    _ids: list[array[int]]
    _offs: list[array[int]]
    # A page's tags, or None until a typed question reads them (a snapshot's pages).
    _types: list[array[int] | None]
    _new: dict[int, int]  # id -> value << 9 | tag, for ids in no page
    _count: int
    _recent_max: int  # recent ids held before they go to their pages
    _page_max: int  # a page splits past this many entries
    _split: Callable[[int], None]  # cuts a page in two (``pages.PagedMap._split``)

    def __getitem__(self, id_hash: int) -> int:
        found = self.get(id_hash)
        if found is None:
            raise KeyError(id_hash)
        return found

    def get(self, id_hash: int, default: int | None = None) -> int | None:
        value = self._new.get(id_hash)
        if value is not None:
            return value >> TAG_BITS
        page = bisect_right(self._firsts, id_hash) - 1
        ids = self._ids[page]
        i = bisect_left(ids, id_hash)
        if i < len(ids) and ids[i] == id_hash:
            return self._offs[page][i]
        return default

    def __contains__(self, id_hash: object) -> bool:
        return isinstance(id_hash, int) and self.get(id_hash) is not None

    def __len__(self) -> int:
        return self._count

    def put(self, id_hash: int, offset: int, rec_type: int = 0) -> int:
        """Point ``id_hash`` at ``offset`` (a frame whose type byte is ``rec_type``); return
        the tag it had (``NEW`` when it was not live, ``UNTYPED`` when its page is untyped)."""
        new = self._new
        was = new.get(id_hash)
        if was is not None:  # never also in a page: no search there
            new[id_hash] = offset << TAG_BITS | rec_type
            return was & TAG_MASK
        page = bisect_right(self._firsts, id_hash) - 1
        ids = self._ids[page]
        i = bisect_left(ids, id_hash)
        if i < len(ids) and ids[i] == id_hash:
            self._offs[page][i] = offset
            types = self._types[page]
            if types is None:
                return UNTYPED
            tag, types[i] = types[i], rec_type
            return tag
        new[id_hash] = offset << TAG_BITS | rec_type
        self._count += 1
        if len(new) > self._recent_max:
            self._settle()
        return NEW

    def _settle(self) -> None:
        """Put the recent ids into their pages, a page at a time from the highest, then
        split each page past ``_page_max`` in halves until its parts fit (``_fit``).
        OverflowError, with nothing changed, when a recent value is not a u64."""
        new = self._new
        if new and (min(new.values()) < 0 or max(new.values()) >> TAG_BITS > U64_MAX):
            msg = "an IntMap value must be a u64"
            raise OverflowError(msg)
        self._new = {}
        firsts = self._firsts
        keys = sorted(new)
        end = len(keys)
        while end:
            page = bisect_right(firsts, keys[end - 1]) - 1
            start = bisect_left(keys, firsts[page], 0, end)
            ids, offs, types = self._ids[page], self._offs[page], self._types[page]
            for id_hash in keys[start:end]:
                value = new[id_hash]
                i = bisect_left(ids, id_hash)
                ids.insert(i, id_hash)
                offs.insert(i, value >> TAG_BITS)
                if types is not None:
                    types.insert(i, value & TAG_MASK)
            self._fit(page)
            end = start

    def _fit(self, page: int) -> None:
        """Split ``page`` in halves, and each half again, until every part holds at most
        ``_page_max`` entries (a single entry stays whole)."""
        size = len(self._ids[page])
        if size > self._page_max and size > 1:
            self._split(page)
            self._fit(page + 1)
            self._fit(page)
