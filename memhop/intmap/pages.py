"""IntMap: a ``u64 -> u64`` map in small sorted pages of flat arrays, with a tag per entry.

A dict of Python ints holds about 116 bytes an entry; the engine's index and
the mirrors hold one entry per record, 10^5-10^6 per domain, for as long as
the file is open. This map keeps its ids in sorted pages of at most
``_PAGE_MAX`` entries, each page an ``array('Q')`` of ids with their values
(and tags) beside it, about 17 bytes an entry; an array of each page's lowest
bound routes an id to its page. New ids wait in a small dict (a put and a
read of a recent id cost a dict's) until ``_RECENT_MAX`` of them are put into
their pages at once, a page at a time (the compiled core merges a page's new
ids in one pass from its top; a page past ``_PAGE_MAX`` is then halved until its
parts fit): what that costs does not grow with the map (no merge of everything
held, at any size). The engine maps id -> frame offset, tagged with the
frame's type byte; the mirrors map ids to rows.

Contract:
- A ``Mapping[int, int]``: ``get``, ``in``, ``len`` and ``[]`` as a dict's;
  iteration, ``items`` and ``values`` go in ascending id order. Ids and
  values are u64 (0 included).
- ``ids_of_type`` answers from the tags: those given to ``put``, and for the
  pages built without them (a snapshot's entries), the byte at each entry's
  value in a view, read on the first such question (an open reads no frame).
  ``type_some`` reads them a bounded number at a time, so a caller can let go
  of its lock between steps; a page put to before it is read stays untyped
  until then (the frame's byte is the type; the tag only spares its read).
- ``put`` answers the tag the id had: ``NEW`` when it was not live, ``UNTYPED``
  when its page holds no tags yet (the engine keeps its typed answers by it).
- Not thread-safe on its own: its owner calls it under a lock (``copy`` gives one
  another thread may read).

Its reads and puts run on a core (``core.PyCore`` in Python, or the compiled ``_core.Core``
where the install built it: ``COMPILED``); this module does the rest on the same state.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, ItemsView, Iterator, Mapping, ValuesView
from itertools import chain, compress, islice
from mmap import mmap
from operator import itemgetter, lt
from types import MappingProxyType
from typing import TYPE_CHECKING, Self

from memhop.intmap.core import TAG_BITS, TAG_MASK, PyCore

__all__ = ["COMPILED", "NO_IDS", "IntMap", "PagedMap", "PyIntMap"]

_Bytes = bytes | bytearray | memoryview | mmap

NO_IDS: Mapping[int, int] = MappingProxyType({})
"""The ids of a domain that holds none (a default for ``index.get(agent, NO_IDS)``)."""

# A page splits in two past _PAGE_MAX entries (a settle's merge moves a page at most:
# 16 KiB of ids and values, a microsecond or two); a bulk build fills pages to _PAGE_FILL so
# the first puts do not split them at once; a page under _PAGE_MERGE entries after a
# delete joins a neighbour when the two fit in _PAGE_FILL (an empty one always goes).
_PAGE_MAX = 1_024
_PAGE_FILL = 768
_PAGE_MERGE = 128
_RECENT_MAX = 512  # new ids held in the dict before they go to their pages (~1 ms)
# Fixed, not grown with the pages: 8 a page cut a put's average at 400,000 ids (985 -> 822
# ns) but a settle then touches every page, and the longest put grew with the map (1.4 ->
# 3.5 ms at 600,000 ids, under the engine's lock).
_NO_TYPE = 0x100  # the offset lies past the log: no type byte to read


def _strictly_ascending(ids: array[int]) -> bool:
    return all(map(lt, ids, ids[1:]))


class PagedMap(Mapping[int, int]):
    """``id -> value`` with a tag per entry (see the module contract), on a core's state."""

    __slots__ = ()

    # The core's state (``core.PyCore`` says what each holds) and its calls.
    _firsts: array[int]
    _ids: list[array[int]]
    _offs: list[array[int]]
    _types: list[array[int] | None]
    _new: dict[int, int]
    _count: int
    _recent_max: int
    _page_max: int
    _settle: Callable[[], None]

    def __init__(self) -> None:
        self._firsts = array("Q", [0])
        self._ids = [array("Q")]
        self._offs = [array("Q")]
        self._types = [array("H")]
        self._new = {}
        self._count = 0
        self._recent_max = _RECENT_MAX
        self._page_max = _PAGE_MAX

    @classmethod
    def from_pairs(cls, flat: array[int]) -> Self:
        """Build from interleaved (id, offset) pairs (a snapshot's entries); a later id wins."""
        return cls.from_arrays(flat[0::2], flat[1::2])

    @classmethod
    def from_arrays(
        cls, ids: array[int], values: array[int], types: array[int] | None = None
    ) -> Self:
        """Build from keys and their values (and ``types``, the tags, when known); a later
        key wins."""
        if not _strictly_ascending(ids):
            # Go writes its entries in map order; sort them once (the tags are read later).
            return cls.from_mapping(dict(zip(ids, values, strict=True)))
        return cls._of(ids, values, types)

    @classmethod
    def from_sorted_pairs(cls, flat: array[int]) -> Self:
        """``from_pairs`` of pairs known to be strictly ascending by id (``flat()``'s, read
        back from a file whose checksum vouches for them): not checked again."""
        return cls._of(flat[0::2], flat[1::2])

    @classmethod
    def from_mapping(cls, offsets: Mapping[int, int]) -> Self:
        """Build from a plain mapping (a log scan's result)."""
        if isinstance(offsets, cls):
            return offsets
        ids = sorted(offsets)
        return cls._of(array("Q", ids), array("Q", map(offsets.__getitem__, ids)))

    @classmethod
    def _of(cls, ids: array[int], offs: array[int], types: array[int] | None = None) -> Self:
        packed = cls()
        count = len(ids)
        if count:
            fill = _PAGE_FILL
            starts = range(0, count, fill)
            packed._firsts = array("Q", [0]) + ids[fill::fill]
            packed._ids = [ids[at : at + fill] for at in starts]
            packed._offs = [offs[at : at + fill] for at in starts]
            packed._types = (
                [None] * len(starts) if types is None else [types[at : at + fill] for at in starts]
            )
        packed._count = count
        return packed

    # ---- Mapping -----------------------------------------------------------------------

    def __iter__(self) -> Iterator[int]:
        paged = chain.from_iterable(self._ids)
        if not self._new:
            return paged
        # Two ascending runs: the sort merges them in one pass.
        return iter(sorted(chain(paged, sorted(self._new))))

    def items(self) -> ItemsView[int, int]:
        return _Items(self)

    def values(self) -> ValuesView[int]:
        return _Values(self)

    def unordered_items(self) -> Iterator[tuple[int, int]]:
        """Every (id, value) once, in no set order: one pass, without ``items``'s merge."""
        return chain(self._paged_pairs(), self._new_pairs())

    def _pairs(self) -> Iterator[tuple[int, int]]:
        if not self._new:
            return self._paged_pairs()
        return iter(sorted(chain(self._paged_pairs(), sorted(self._new_pairs()))))

    def _paged_pairs(self) -> Iterator[tuple[int, int]]:
        return chain.from_iterable(map(zip, self._ids, self._offs))

    def _new_pairs(self) -> Iterator[tuple[int, int]]:
        shift = TAG_BITS
        return ((i, v >> shift) for i, v in self._new.items())

    # ---- changes -----------------------------------------------------------------------

    def discard(self, id_hash: int) -> bool:
        """Forget ``id_hash``; False when it was not live."""
        if self._new.pop(id_hash, None) is not None:
            self._count -= 1
            return True
        page = bisect_right(self._firsts, id_hash) - 1
        ids = self._ids[page]
        i = bisect_left(ids, id_hash)
        if i == len(ids) or ids[i] != id_hash:
            return False
        del ids[i]
        del self._offs[page][i]
        types = self._types[page]
        if types is not None:
            del types[i]
        self._count -= 1
        if len(ids) < _PAGE_MERGE:
            self._merge(page)
        return True

    def _split(self, page: int) -> None:
        ids, offs, types = self._ids[page], self._offs[page], self._types[page]
        half = len(ids) // 2
        self._ids[page : page + 1] = [ids[:half], ids[half:]]
        self._offs[page : page + 1] = [offs[:half], offs[half:]]
        self._types[page : page + 1] = (
            [None, None] if types is None else [types[:half], types[half:]]
        )
        self._firsts.insert(page + 1, ids[half])

    def _merge(self, page: int) -> None:
        """Join a small page to a neighbour when both fit in a filled page; drop an empty one."""
        pages = len(self._ids)
        if pages == 1:
            return
        if not self._ids[page]:
            # Its range goes to the page below it (page 0's to the page above, whose
            # bound becomes 0).
            del self._firsts[page if page else 1]
            del self._ids[page], self._offs[page], self._types[page]
            return
        low = page if page + 1 < pages else page - 1
        high = low + 1
        if len(self._ids[low]) + len(self._ids[high]) > _PAGE_FILL:
            return
        self._ids[low].extend(self._ids[high])
        self._offs[low].extend(self._offs[high])
        low_types, high_types = self._types[low], self._types[high]
        if low_types is not None and high_types is not None:
            low_types.extend(high_types)
        else:
            self._types[low] = None  # its untyped entries are read with the rest
        del self._firsts[high]
        del self._ids[high], self._offs[high], self._types[high]

    def copy(self) -> Self:
        """A map of its own with the same entries (its pages copied in C)."""
        twin = type(self)()
        twin._recent_max, twin._page_max = self._recent_max, self._page_max
        twin._firsts, twin._new, twin._count = self._firsts[:], self._new.copy(), self._count
        twin._ids, twin._offs = [p[:] for p in self._ids], [p[:] for p in self._offs]
        twin._types = [None if p is None else p[:] for p in self._types]
        return twin

    def flat(self) -> array[int]:
        """The (id, offset) pairs interleaved, ascending by id (a snapshot's entries)."""
        if self._new:
            self._settle()
        flat = array("Q", bytes(16 * self._count))
        flat[0::2] = array("Q", b"".join(map(bytes, self._ids)))
        flat[1::2] = array("Q", b"".join(map(bytes, self._offs)))
        return flat

    # ---- types -------------------------------------------------------------------------

    def type_some(self, view: _Bytes, size: int, budget: int) -> bool:
        """Read the tags of untyped pages, about ``budget`` entries' worth; True when every
        page is typed (a typed question then reads no frame)."""
        done = 0
        for page, types in enumerate(self._types):
            if types is None:
                if done >= budget:
                    return False
                offs = self._offs[page]
                self._types[page] = _types_at(offs, view, size)
                done += len(offs)
        return True

    def sample(self, step: int) -> list[int]:
        """About ``len(self) / step`` of the values, spread over the map, in no set order:
        what it costs is what it returns, not the size of the map."""
        picked_values: list[int] = []
        at = 0
        for offs in self._offs:
            picked_values += offs[(-at) % step :: step]
            at += len(offs)
        if self._new:
            shift = TAG_BITS
            picked_values += [v >> shift for v in islice(self._new.values(), 0, None, step)]
        return picked_values

    def ids_of_type(self, rec_type: int, view: _Bytes, size: int) -> list[int]:
        """The ids whose frame has type byte ``rec_type``, ascending (none past 0-255)."""
        if not 0 <= rec_type <= 0xFF:
            return []
        self.type_some(view, size, self._count)
        tags = array("H", b"".join(map(bytes, self._types)))  # type: ignore[arg-type]
        wanted = _tagged(tags, rec_type)
        found = _picked(self._ids, wanted) if wanted.count(1) else []
        recent = [i for i, v in self._new.items() if (v & TAG_MASK) == rec_type]
        return sorted(chain(found, sorted(recent))) if recent else found


# A byte string with a 1 where a tag is the type asked for and 0 elsewhere, made in C: a
# typed question runs once per Dream stage over 10^5-10^6 entries.
_ONE_AT: list[bytes] = [bytes(b == i for b in range(256)) for i in range(256)]
_LITTLE = sys.byteorder == "little"


def _tagged(tags: array[int], rec_type: int) -> bytes:
    """1 at each entry whose 16-bit tag is ``rec_type`` (a byte), else 0."""
    raw = tags.tobytes()
    low, high = (raw[0::2], raw[1::2]) if _LITTLE else (raw[1::2], raw[0::2])
    mask = low.translate(_ONE_AT[rec_type])
    if high.count(0) != len(high):  # tags past a byte (no type to read) never match
        also = high.translate(_ONE_AT[0])
        both = int.from_bytes(mask, "little") & int.from_bytes(also, "little")
        mask = both.to_bytes(len(mask), "little")
    return mask


def _picked(pages: list[array[int]], wanted: bytes) -> list[int]:
    """The ids at the positions ``wanted`` marks across the pages: a few found by
    ``bytes.find`` (in C over the gaps), page by page, many by one pass."""
    if wanted.count(1) * 16 > len(wanted):
        return list(compress(chain.from_iterable(pages), wanted))
    found = []
    start = 0
    for ids in pages:  # the positions ascend: each page's are found within its span
        end = start + len(ids)
        at = wanted.find(1, start, end)
        while at >= 0:
            found.append(ids[at - start])
            at = wanted.find(1, at + 1, end)
        start = end
    return found


def _types_at(offs: array[int], view: _Bytes, size: int) -> array[int]:
    """The type byte of the frame at each of ``offs`` (``_NO_TYPE`` for one past the log)."""
    if len(offs) > 1 and max(offs) < size:  # every frame in the log: one C call
        return array("H", itemgetter(*offs)(view))
    past = _NO_TYPE
    return array("H", (view[o] if o < size else past for o in offs))


class _Items(ItemsView[int, int]):
    _mapping: PagedMap

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return self._mapping._pairs()


class _Values(ValuesView[int]):
    _mapping: PagedMap

    def __iter__(self) -> Iterator[int]:
        return (value for _, value in self._mapping._pairs())


# The core's get takes an int default only, narrower than Mapping's overloads (as before).
class PyIntMap(PyCore, PagedMap):  # type: ignore[misc]
    """An IntMap on the Python core: the reference the compiled one is tested against."""

    __slots__ = ()


if TYPE_CHECKING:
    IntMap = PyIntMap
    COMPILED = False
else:
    try:
        from memhop.intmap._core import Core
    except ImportError:  # built without a C compiler (hatch_build.py says why)
        IntMap, COMPILED = PyIntMap, False
    else:

        class IntMap(Core, PagedMap):
            """An IntMap on the compiled core."""

            __slots__ = ()

        COMPILED = True
