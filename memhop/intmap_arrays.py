"""Bulk steps over IntMap's flat arrays, each a few C calls rather than a loop per entry.

``insert`` puts new entries into an ``array`` in place (a fold of the map's
dict into its arrays); ``tagged``, ``nonzero``, ``both`` and ``picked`` make,
combine and read byte masks (a typed question). Pure functions, no state.
"""

from __future__ import annotations

import sys
from array import array
from itertools import compress

__all__ = ["both", "insert", "nonzero", "picked", "tagged", "zeros_in"]


def insert(values: array[int], at: list[int], new: list[int]) -> None:
    """Put ``new[k]`` before ``values[at[k]]`` (``at`` ascending, positions in ``values``
    as it is), in place: one growth, then each run moved back once, last run first."""
    n = len(values)
    values.extend(new)  # the grown tail's contents are overwritten below
    with memoryview(values) as view:
        end = n
        for k in range(len(new) - 1, -1, -1):
            a = at[k]
            if end > a:
                view[a + k + 1 : end + k + 1] = view[a:end]  # overlapping: moved as memmove does
            view[a + k] = new[k]
            end = a


# A byte string with a 1 where a condition holds and 0 elsewhere, made in C: a domain's
# typed question runs once per Dream stage over 10^5-10^6 entries.
_ONE_AT: list[bytes] = [bytes(b == i for b in range(256)) for i in range(256)]
_NONZERO = bytes(b != 0 for b in range(256))
_LITTLE = sys.byteorder == "little"


def tagged(types: array[int], rec_type: int) -> bytes:
    """1 at each entry whose 16-bit tag is ``rec_type`` (a byte), else 0."""
    raw = types.tobytes()
    low, high = (raw[0::2], raw[1::2]) if _LITTLE else (raw[1::2], raw[0::2])
    mask = low.translate(_ONE_AT[rec_type])
    if high.count(0) != len(high):  # tags past a byte (no type to read) never match
        mask = both(mask, high.translate(_ONE_AT[0]))
    return mask


def nonzero(values: array[int]) -> bytes:
    """1 at each entry whose value is not 0, else 0."""
    raw, width = values.tobytes(), values.itemsize
    union = 0
    for k in range(width):  # a value is 0 only if each of its bytes is
        union |= int.from_bytes(raw[k::width], "little")
    return union.to_bytes(len(values), "little").translate(_NONZERO)


def picked(ids: array[int], wanted: bytes) -> list[int]:
    """The ids at the positions ``wanted`` marks: a few found by ``bytes.find`` (in C over
    the gaps), many by one pass over every id."""
    if wanted.count(1) * 16 > len(wanted):
        return list(compress(ids, wanted))
    found = []
    at = wanted.find(1)
    while at >= 0:
        found.append(ids[at])
        at = wanted.find(1, at + 1)
    return found


def both(a: bytes, b: bytes) -> bytes:
    """1 where both ``a`` and ``b`` hold 1 (each all 0s and 1s, the same length)."""
    return (int.from_bytes(a, "little") & int.from_bytes(b, "little")).to_bytes(len(a), "little")


def zeros_in(values: array[int]) -> list[int]:
    """The positions of the entries that are 0, ascending: their bytes searched in C (a
    count compares every entry as an object, 20 times as slow)."""
    size = values.itemsize
    raw, zero = values.tobytes(), bytes(size)
    found: list[int] = []
    at = raw.find(zero)
    while at >= 0:
        if at % size:  # a run of zero bytes across two entries: search on from the next
            at = raw.find(zero, at + size - at % size)
            continue
        found.append(at // size)
        at = raw.find(zero, at + size)
    return found
