"""PackedMap: an id map read back from a file, looked up where it lies until first written.

A recall state read back holds maps of an id to an id (a document's slot, a
row's scene, a topic's row) with one entry a document: 10^5 of them at 10^5
turns, which cost 3 ms each to make into an ``IntMap``. A first recall looks up
a few; a ``PackedMap`` answers those by bisection over the file's ascending
keys, and makes its ``IntMap`` (a copy) at its first write.

Contract: reads as the ``IntMap`` its columns were packed from (``get``, ``[]``,
``in``, ``len``, keys ascending, ``items``, equality), with ``put``, ``discard``
and ``flat`` as ``IntMap`` has them.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator

from memhop.index.recall_packed import Column, copied
from memhop.intmap import IntMap

__all__ = ["IdMap", "PackedMap"]

_NONE = array("Q")


class PackedMap:
    """``keys[k] -> values[k]``, keys ascending; interleaved when ``values`` is None
    (``keys`` then holds key, value, key, value...)."""

    __slots__ = ("_keys", "_made", "_n", "_step", "_values")

    def __init__(self, keys: Column, values: Column | None = None) -> None:
        if values is None:
            if len(keys) % 2:
                msg = "interleaved pairs of odd length"
                raise ValueError(msg)
            self._keys, self._values, self._step, self._n = keys, keys, 2, len(keys) // 2
        else:
            if len(keys) != len(values):
                msg = "keys and values differ in length"
                raise ValueError(msg)
            self._keys, self._values, self._step, self._n = keys, values, 1, len(keys)
        self._made: IntMap | None = None

    def _map(self) -> IntMap:
        """The map as an ``IntMap`` of its own (made once, at the first write)."""
        if self._made is None:
            if self._step == 2:
                self._made = IntMap.from_sorted_pairs(copied(self._keys, "Q"))
            else:
                self._made = IntMap.from_arrays(copied(self._keys, "Q"), copied(self._values, "Q"))
            self._keys = self._values = _NONE  # the file's pages go with the last view of them
        return self._made

    def get(self, key: int, default: int | None = None) -> int | None:
        if self._made is not None:
            return self._made.get(key, default)
        keys, step, n = self._keys, self._step, self._n
        at = bisect_left(range(n), key, key=lambda k: keys[k * step])
        if at < n and keys[at * step] == key:
            return int(self._values[at * step + step - 1])
        return default

    def __getitem__(self, key: int) -> int:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key: object) -> bool:
        return isinstance(key, int) and self.get(key) is not None

    def __len__(self) -> int:
        return self._n if self._made is None else len(self._made)

    def __iter__(self) -> Iterator[int]:
        if self._made is not None:
            return iter(self._made)
        keys, step = self._keys, self._step
        return (int(keys[k * step]) for k in range(self._n))

    def items(self) -> Iterator[tuple[int, int]]:
        if self._made is not None:
            return iter(self._made.items())
        keys, values, step = self._keys, self._values, self._step
        return ((int(keys[k * step]), int(values[k * step + step - 1])) for k in range(self._n))

    def keys(self) -> Iterator[int]:
        return iter(self)

    def values(self) -> Iterator[int]:
        return (value for _, value in self.items())

    def put(self, key: int, value: int) -> None:
        self._map().put(key, value)

    def discard(self, key: int) -> bool:
        return self._map().discard(key)

    def copy(self) -> IdMap:
        """A map of its own with the same pairs (the file's views are shared: read only)."""
        if self._made is not None:
            return self._made.copy()
        return PackedMap(self._keys, None if self._step == 2 else self._values)

    def flat(self) -> array[int]:
        """The pairs interleaved, keys ascending (as ``IntMap.flat``)."""
        return self._map().flat()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PackedMap | IntMap | dict):
            return NotImplemented
        return dict(self.items()) == dict(other.items())

    __hash__ = None  # type: ignore[assignment]  # mutable: not hashable


IdMap = IntMap | PackedMap
"""An id map a recall state holds: its own, or one read back and not written since."""
