"""Checked blocks: a body of bytes under an xxh3-64 of each fixed-size block of it.

The side files beside a ``.meh`` (the scene map, the recall file) are read where
they lie, mapped, and a read uses a small part of them; checking each block
only when a read first uses it makes an open cost what it reads, not what the
file holds. ``sums_of`` gives a writer the checksums; ``Blocks.check`` raises
ValueError (naming ``what``) for a range whose bytes are not as written.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Sequence

import xxhash

__all__ = ["Blocks", "stored_sums", "sums_of"]


def stored_sums(raw: memoryview) -> Sequence[int]:
    """Checksums as ``sums_of`` stores them, read where they lie (swapped on a big-endian
    host)."""
    sums: Sequence[int] = raw.cast("B").cast("Q")
    if sys.byteorder != "little":  # pragma: no cover - big-endian hosts only
        swapped = array("Q", sums)
        swapped.byteswap()
        sums = swapped
    return sums


def sums_of(body: bytes | memoryview, size: int) -> array[int]:
    """The xxh3-64 of each ``size``-byte block of ``body`` (the last may be short), in
    little-endian order as the files store them."""
    whole = memoryview(body).cast("B")
    sums = array(
        "Q", (xxhash.xxh3_64_intdigest(whole[at : at + size]) for at in range(0, len(whole), size))
    )
    if sys.byteorder != "little":  # pragma: no cover - big-endian hosts only
        sums.byteswap()
    return sums


class Blocks:
    """``body`` and the checksum of each of its ``size``-byte blocks, each block checked
    once, when a read first uses it."""

    __slots__ = ("_checked", "_sums", "_what", "body", "size")

    def __init__(self, body: memoryview, sums: Sequence[int], size: int, what: str) -> None:
        if len(sums) != -(-len(body) // size):
            msg = f"{what}: checksum mismatch (the blocks do not cover the bytes)"
            raise ValueError(msg)
        self.body, self.size, self._sums, self._what = body, size, sums, what
        self._checked = bytearray(len(sums))

    def check(self, start: int, end: int) -> None:
        """Raise ValueError unless bytes [start, end) of the body are as written."""
        checked, sums, body, size = self._checked, self._sums, self.body, self.size
        last = -(-end // size)
        # The first block not checked yet found in C: a range read again (a common word's
        # postings, each search) costs one call, not a step a block.
        first = checked.find(0, start // size, last)
        if first < 0:
            return
        for k in range(first, last):
            if not checked[k]:
                if xxhash.xxh3_64_intdigest(body[k * size : (k + 1) * size]) != sums[k]:
                    msg = f"{self._what}: checksum mismatch"
                    raise ValueError(msg)
                checked[k] = 1

    def check_all(self) -> None:
        """Raise ValueError unless every block is as written."""
        self.check(0, len(self.body))
