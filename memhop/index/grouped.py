"""Grouped: a read-only packed ``key -> group`` map made writable, a group made on first use.

A recall state read back holds three maps of a key to a few ids (a row's
members, a topic's events, a scene's rows): thousands of groups, of which a
session touches a few. Packed as ascending keys, cumulative ends and the flat
items, each is made into its value the first time it is read.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, MutableMapping
from typing import TypeVar

from memhop.index.recall_packed import Column

__all__ = ["Grouped"]

T = TypeVar("T")


class Grouped(MutableMapping[int, T]):
    """``key -> made(group)`` over packed columns, a group made on first use.

    ``keys`` ascend; group k is ``flat[ends[k-1]:ends[k]]``. What is written
    or read is kept in a dict; a packed key deleted is remembered as gone.
    """

    __slots__ = ("_ends", "_flat", "_gone", "_keys", "_made", "_read")

    def __init__(
        self,
        keys: Column,
        ends: Column,
        flat: Column,
        made: Callable[[Column], T],
    ) -> None:
        self._keys, self._ends, self._flat, self._made = keys, ends, flat, made
        self._read: dict[int, T] = {}
        self._gone: set[int] = set()

    def _at(self, key: int) -> int | None:
        """Where ``key`` is packed, if it is and is not gone."""
        at = bisect_left(self._keys, key)
        if at < len(self._keys) and self._keys[at] == key and key not in self._gone:
            return at
        return None

    def __getitem__(self, key: int) -> T:
        if key in self._read:
            return self._read[key]
        at = self._at(key)
        if at is None:
            raise KeyError(key)
        start = self._ends[at - 1] if at else 0
        made = self._read[key] = self._made(self._flat[start : self._ends[at]])
        return made

    def __setitem__(self, key: int, value: T) -> None:
        self._read[key] = value

    def __delitem__(self, key: int) -> None:
        packed = self._at(key) is not None
        if key not in self._read and not packed:
            raise KeyError(key)
        self._read.pop(key, None)
        if packed:
            self._gone.add(key)

    def __contains__(self, key: object) -> bool:
        return key in self._read or (isinstance(key, int) and self._at(key) is not None)

    def __iter__(self) -> Iterator[int]:
        yield from self._read
        for key in self._keys:
            if key not in self._read and key not in self._gone:
                yield key

    def __len__(self) -> int:
        return sum(1 for _ in self)
