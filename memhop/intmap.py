"""IntMap: a ``u64 -> u64`` map in two flat arrays, with a byte tag per entry.

A dict of Python ints holds about 116 bytes an entry; the engine's index and
the mirrors hold one entry per record, 10^5-10^6 per domain, for as long as
the file is open. This map keeps the keys it was built with in a sorted
``array('Q')`` with their values beside it (16 bytes an entry), and the keys
added since in a small dict that is folded into the arrays once it grows past
an eighth of them. The engine maps id -> frame offset, tagged with the
frame's type byte; the recall index maps a document id -> its slot.

Contract:
- A ``Mapping[int, int]``: ``get``, ``in``, ``len`` and ``[]`` as a dict's;
  iteration, ``items`` and ``values`` go in ascending id order.
- Value 0 marks a deleted entry in the arrays, so a delete costs no array
  copy; an entry whose value is 0 is kept in the dict instead (exact, and
  rare: no frame starts at offset 0, the record area begins at 8192).
- ``ids_of_type`` answers from the tags: those given to ``put``, and for
  entries built without one (a snapshot's), the byte at the entry's value in
  a view, read on the first such question (an open reads no frame).
  ``type_read`` / ``take_types`` let that question read the bytes without
  the caller's lock: puts made meanwhile are taken in, and a fold meanwhile
  refuses the read (the next question reads again).
- Not thread-safe on its own: the engine calls it under its lock.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, ItemsView, Iterator, Mapping, ValuesView
from itertools import chain, compress, islice
from mmap import mmap
from operator import itemgetter, lt, not_
from types import MappingProxyType

from memhop.intmap_arrays import both, insert, nonzero, picked, tagged, zeros_in

__all__ = ["HELD_FOLD", "NO_IDS", "IntMap", "TypeRead"]

_Bytes = bytes | bytearray | memoryview | mmap

NO_IDS: Mapping[int, int] = MappingProxyType({})
"""The ids of a domain that holds none (a default for ``index.get(agent, NO_IDS)``)."""

_FOLD_MIN = 4096
# The dict is folded into the arrays once it holds more than _FOLD_MIN ids and 1/128 of
# the arrays' entries: a fold costs about 2 us a new id under the engine's lock (8 ms
# at 4*10^5 entries, 18 ms at 10^6); folding an eighth held a turn or a Dream stage
# 66-109 ms at 4*10^5.
_FOLD_SHIFT = 7
HELD_FOLD = 1_024
"""A ``fold_min`` for a map put to under a hold that must stay short (Dream's, of a domain
lock): a fold costs about 2 us a new id, and 4,096 at a time added 8 ms to one hold."""
_TYPE_BITS = 9  # a dict entry's value is offset << 9 | type
_TYPE_MASK = 0x1FF
_NO_TYPE = 0x100  # the offset lies past the log: no type byte to read
_UNREAD = 0x1FF  # not read yet (an entry taken from a snapshot)
_TYPE_READ_PART = 4_096  # type bytes read per C call by ``TypeRead.types``


def _strictly_ascending(ids: array[int]) -> bool:
    return all(map(lt, ids, ids[1:]))


class IntMap(Mapping[int, int]):
    """``id -> value`` with a tag byte per entry (see the module contract)."""

    __slots__ = (
        "_count",
        "_dead",
        "_fold_min",
        "_folds",
        "_ids",
        "_new",
        "_offs",
        "_retyped",
        "_types",
    )

    def __init__(self, *, fold_min: int | None = None) -> None:
        """``fold_min``: the new ids the dict holds before a fold (None: ``_FOLD_MIN``); a
        map put to under a hold that must stay short folds fewer at a time."""
        self._fold_min = _FOLD_MIN if fold_min is None else fold_min
        self._ids: array[int] = array("Q")
        self._offs: array[int] = array("Q")
        self._types: array[int] | None = array("H")  # None until a typed question
        # While a ``TypeRead`` is out: array position -> type, for each entry put since.
        self._retyped: dict[int, int] | None = None
        self._new: dict[int, int] = {}  # id -> offset << 9 | type, ids not in _ids
        self._count = 0
        self._dead = 0  # zeroed entries in the arrays
        self._folds = 0  # folds to date: a type read from before one is refused

    @classmethod
    def from_pairs(cls, flat: array[int]) -> IntMap:
        """Build from interleaved (id, offset) pairs (a snapshot's entries); a later id wins."""
        return cls.from_arrays(flat[0::2], flat[1::2])

    @classmethod
    def from_arrays(
        cls, ids: array[int], values: array[int], *, fold_min: int | None = None
    ) -> IntMap:
        """Build from keys and their values (taken over, not copied); a later key wins."""
        if not _strictly_ascending(ids):
            # Go writes its entries in map order; sort them once.
            return cls.from_mapping(dict(zip(ids, values, strict=True)), fold_min=fold_min)
        return cls._of(ids, values, fold_min)

    @classmethod
    def from_sorted_pairs(cls, flat: array[int]) -> IntMap:
        """``from_pairs`` of pairs known to be strictly ascending by id (``flat()``'s, read
        back from a file whose checksum vouches for them): not checked again."""
        return cls._of(flat[0::2], flat[1::2])

    @classmethod
    def from_mapping(cls, offsets: Mapping[int, int], *, fold_min: int | None = None) -> IntMap:
        """Build from a plain mapping (a log scan's result)."""
        if isinstance(offsets, IntMap):
            return offsets
        ids = sorted(offsets)
        return cls._of(array("Q", ids), array("Q", map(offsets.__getitem__, ids)), fold_min)

    @classmethod
    def _of(cls, ids: array[int], offs: array[int], fold_min: int | None = None) -> IntMap:
        packed = cls(fold_min=fold_min)
        zero_at = zeros_in(offs)  # 0 means "deleted" in the arrays: such entries go to the dict
        if len(zero_at) == 1:  # a recall index's slot 0, say: cut it out in C
            at = zero_at[0]
            packed._new = {ids[at]: _UNREAD}
            ids, offs = ids[:at] + ids[at + 1 :], offs[:at] + offs[at + 1 :]
        elif zero_at:
            keep = array("B", map(bool, offs))
            packed._new = dict.fromkeys(compress(ids, map(not_, keep)), _UNREAD)
            ids, offs = array("Q", compress(ids, keep)), array("Q", compress(offs, keep))
        packed._ids, packed._offs, packed._types = ids, offs, None
        packed._count = len(ids) + len(packed._new)
        return packed

    # ---- Mapping -----------------------------------------------------------------------

    def _slot(self, id_hash: int) -> int:
        """The array position holding ``id_hash`` (live or zeroed), or -1."""
        ids = self._ids
        i = bisect_left(ids, id_hash)
        return i if i < len(ids) and ids[i] == id_hash else -1

    def __getitem__(self, id_hash: int) -> int:
        found = self.get(id_hash)
        if found is None:
            raise KeyError(id_hash)
        return found

    def get(self, id_hash: int, default: int | None = None) -> int | None:  # type: ignore[override]
        value = self._new.get(id_hash)
        if value is not None:
            return value >> _TYPE_BITS
        # The hot path of every read: the search inlined (``_slot``).
        ids = self._ids
        i = bisect_left(ids, id_hash)
        if i < len(ids) and ids[i] == id_hash:
            return self._offs[i] or default
        return default

    def __contains__(self, id_hash: object) -> bool:
        return isinstance(id_hash, int) and self.get(id_hash) is not None

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[int]:
        base = compress(self._ids, self._offs) if self._dead else self._ids
        if not self._new:
            return iter(base)
        # Two ascending runs: the sort merges them in one pass.
        return iter(sorted(chain(base, sorted(self._new))))

    def items(self) -> ItemsView[int, int]:
        return _Items(self)

    def values(self) -> ValuesView[int]:
        return _Values(self)

    def unordered_items(self) -> Iterator[tuple[int, int]]:
        """Every live (id, value) in no set order: one pass, without the merge ``items`` sorts."""
        return chain(self._array_pairs(), self._new_pairs())

    def _pairs(self) -> Iterator[tuple[int, int]]:
        if not self._new:
            return self._array_pairs()
        return iter(sorted(chain(self._array_pairs(), sorted(self._new_pairs()))))

    def _array_pairs(self) -> Iterator[tuple[int, int]]:
        """The arrays' live (id, value) pairs, ascending by id."""
        pairs: Iterator[tuple[int, int]] = zip(self._ids, self._offs, strict=True)
        return compress(pairs, self._offs) if self._dead else pairs

    def _new_pairs(self) -> Iterator[tuple[int, int]]:
        """The dict's (id, value) pairs, in no set order."""
        shift = _TYPE_BITS
        return ((i, v >> shift) for i, v in self._new.items())

    # ---- changes -----------------------------------------------------------------------

    def put(self, id_hash: int, offset: int, rec_type: int = 0) -> None:
        """Point ``id_hash`` at ``offset`` (a frame whose type byte is ``rec_type``)."""
        new = self._new
        if id_hash in new:  # never also in the arrays: no search there
            new[id_hash] = offset << _TYPE_BITS | rec_type
            return
        i = self._slot(id_hash)
        if i >= 0 and offset:
            if not self._offs[i]:
                self._count += 1
                self._dead -= 1
            self._offs[i] = offset
            if self._types is not None:
                self._types[i] = rec_type
            elif self._retyped is not None:
                self._retyped[i] = rec_type
            return
        if i >= 0 and self._offs[i]:  # moves to the dict: offset 0 cannot be held in the arrays
            self._offs[i] = 0
            self._count -= 1
            self._dead += 1
        self._count += 1
        new[id_hash] = offset << _TYPE_BITS | rec_type
        if len(new) > self._fold_min and len(new) > len(self._ids) >> _FOLD_SHIFT:
            # The zeroed entries stay unless they are many: dropping them is a pass over
            # every entry in Python ints (25-30 ms at 3*10^5), which a fold of new ids
            # would otherwise pay each time a domain deletes as it goes.
            self._fold(drop_dead=self._dead > len(self._ids) >> 3)

    def discard(self, id_hash: int) -> bool:
        """Forget ``id_hash``; False when it was not live."""
        if self._new.pop(id_hash, None) is not None:
            self._count -= 1
            return True
        i = self._slot(id_hash)
        if i < 0 or not self._offs[i]:
            return False
        self._offs[i] = 0
        self._count -= 1
        self._dead += 1
        if self._dead > max(self._fold_min, len(self._ids) >> 2):
            self._fold()
        return True

    def flat(self) -> array[int]:
        """The live (id, offset) pairs interleaved, ascending by id (a snapshot's entries)."""
        if self._new or self._dead:
            self._fold()
        if self._new:  # entries at offset 0, which the arrays cannot hold
            return array("Q", chain.from_iterable(self._pairs()))
        flat = array("Q", bytes(16 * len(self._ids)))
        flat[0::2], flat[1::2] = self._ids, self._offs
        return flat

    def _fold(self, *, drop_dead: bool = True) -> None:
        """Merge the new ids into the arrays and (``drop_dead``) drop the zeroed entries.

        The new ids go in place: each array grows once and its runs move back
        (growing it an extend at a time copied it at every reallocation once the
        allocator kept such blocks in its heap: 40-100 ms at 4*10^5 entries).
        """
        if self._dead and drop_dead:
            keep = array("B", map(bool, self._offs))
            self._ids = array("Q", compress(self._ids, keep))
            self._offs = array("Q", compress(self._offs, keep))
            if self._types is not None:
                self._types = array("H", compress(self._types, keep))
            self._dead = 0
        shift, new = _TYPE_BITS, self._new
        kept = {i: v for i, v in new.items() if not v >> shift}
        merged = sorted(i for i, v in new.items() if v >> shift)
        values = [new[i] for i in merged]
        at: list[int] = []
        ids, start = self._ids, 0
        for id_hash in merged:
            start = bisect_left(ids, id_hash, start)
            at.append(start)
        insert(ids, at, merged)
        insert(self._offs, at, [v >> shift for v in values])
        if self._types is not None:
            insert(self._types, at, [v & _TYPE_MASK for v in values])
        self._folds += 1
        if self._retyped is not None:  # positions in the old arrays: a read out is refused
            self._retyped = {}
        self._new = kept

    # ---- types -------------------------------------------------------------------------

    def _type_array(self, view: _Bytes, size: int) -> array[int]:
        types = self._types
        if types is None:
            types = self._types = _types_at(self._offs, view, size)
            self._retyped = None
        return types

    def type_read(self) -> TypeRead | None:
        """What a typed question must read, to be read without the caller's lock; None when
        the types are known. Hand the read back with ``take_types``."""
        if self._types is not None:
            return None
        if self._retyped is None:
            self._retyped = {}
        return TypeRead(self._folds, array("Q", self._offs))

    def take_types(self, read: TypeRead, types: array[int]) -> None:
        """Adopt ``types`` (the type bytes at ``read``'s offsets), with every put since.

        Ignored when the arrays were rebuilt since (a fold), or typed meanwhile:
        the next typed question then reads them itself.
        """
        if self._types is not None or self._folds != read.folds or self._retyped is None:
            return
        for at, rec_type in self._retyped.items():
            types[at] = rec_type
        self._types, self._retyped = types, None

    def sample(self, step: int) -> list[int]:
        """About ``len(self) / step`` of the values, spread over the map, in no set order.

        Every ``step``-th entry of the arrays (the live ones) and of the dict:
        what it costs is what it returns, not the size of the map.
        """
        picked = [value for value in self._offs[::step] if value]
        if self._new:
            shift = _TYPE_BITS
            picked += [value >> shift for value in islice(self._new.values(), 0, None, step)]
        return picked

    def ids_of_type(self, rec_type: int, view: _Bytes, size: int) -> list[int]:
        """The live ids whose frame has type byte ``rec_type``, ascending (none past 0-255)."""
        if not 0 <= rec_type <= 0xFF:
            return []
        wanted = tagged(self._type_array(view, size), rec_type)
        if self._dead and wanted.count(1):  # no entry of the type at all: no pass for the dead
            wanted = both(wanted, nonzero(self._offs))
        found = picked(self._ids, wanted)
        extra = [i for i, v in self._new.items() if _type_of(v, view, size) == rec_type]
        return sorted(chain(found, sorted(extra))) if extra else found


class TypeRead:
    """The value column of an IntMap as it was, to read its type bytes without a lock."""

    __slots__ = ("folds", "offsets")

    def __init__(self, folds: int, offsets: array[int]) -> None:
        self.folds = folds  # the map's folds then: one since moves the positions
        self.offsets = offsets  # a copy

    def types(self, view: _Bytes, size: int, pause: Callable[[], None]) -> array[int]:
        """The type byte at each offset (``_NO_TYPE`` past ``size``), a part at a time,
        calling ``pause`` between parts: each part is one C call, which holds the interpreter."""
        offs, step = self.offsets, _TYPE_READ_PART
        types = _types_at(offs[:step], view, size)
        for at in range(step, len(offs), step):
            pause()
            types.extend(_types_at(offs[at : at + step], view, size))
        return types


def _types_at(offs: array[int], view: _Bytes, size: int) -> array[int]:
    """The type byte of the frame at each of ``offs`` (``_NO_TYPE`` for one past the log)."""
    if len(offs) > 1 and max(offs) < size:  # every frame in the log: one C call
        return array("H", itemgetter(*offs)(view))
    past = _NO_TYPE
    return array("H", (view[o] if o < size else past for o in offs))


def _type_of(value: int, view: _Bytes, size: int) -> int:
    """The type a dict entry's value holds, reading the frame's byte if it was not read yet."""
    rec_type = value & _TYPE_MASK
    if rec_type != _UNREAD:
        return rec_type
    offset = value >> _TYPE_BITS
    return view[offset] if offset < size else _NO_TYPE


class _Items(ItemsView[int, int]):
    _mapping: IntMap

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return self._mapping._pairs()


class _Values(ValuesView[int]):
    _mapping: IntMap

    def __iter__(self) -> Iterator[int]:
        return (offset for _, offset in self._mapping._pairs())
