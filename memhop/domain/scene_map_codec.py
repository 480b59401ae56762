"""The scene map file's bytes: ``encode_maps`` and ``decode_maps`` (the map: ``scene_map``).

Contract:
- ``encode_maps`` / ``decode_maps`` are exact inverses; ``decode_maps``
  raises ValueError for bytes that are not a whole map (checksums, version,
  counts, sums), so a torn or foreign file is refused.
- Each 4 KiB block of the file has its own checksum: decoding checks the
  blocks of the heads and scene columns, and each read the blocks it uses
  (``DomainMap.verify``: ValueError then), as does ``DomainMap.verified``
  (every block) before a map is written again.

Layout, little-endian: magic ``MHSM``, version byte, domain count (u32); per
domain its head (agent, covered end, 16-byte digest, seal (u32), current
scene with its last_used_at (i64) and turn_seq, then the scene, topic and
member counts (u32)), then the scene ids (u64, ascending), each scene's
topic end (u32, cumulative), the topic ids (u64), each topic's member end
(u32, cumulative) and the member ids (u64); then an xxh3-64 of each 4 KiB
block of all that (the last block may be short), and last the block size
and block count (u32 each) and an xxh3-64 of the block checksums and those
two.
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Iterable, Mapping, Sequence
from mmap import mmap
from typing import Literal, TypeAlias

import xxhash

from memhop.domain.blocks import Blocks, stored_sums, sums_of
from memhop.index.scene_map import DomainMap, Ints, Verify

__all__ = ["decode_maps", "encode_maps"]

Buffer: TypeAlias = bytes | bytearray | memoryview | mmap

MAGIC = b"MHSM"
VERSION = (
    4  # an older map (one checksum for the file, or less) is refused: that open builds in full
)
BLOCK = 4096  # bytes under one checksum
_PREFIX = struct.Struct("<4sBI")
_HEAD = struct.Struct("<QQ16sIQqQIII")
_COUNTS = struct.Struct("<II")  # block size, block count
_SUM = struct.Struct("<Q")  # an xxh3-64
_SIZES = (8, 4, 8, 4, 8)  # the columns' item sizes, in file order
_SWAP = sys.byteorder != "little"  # the file is little-endian
_Code: TypeAlias = Literal["Q", "I"]
_CODES: tuple[_Code, ...] = ("Q", "I", "Q", "I", "Q")  # the columns' item types, in file order


def _column(raw: memoryview, code: _Code) -> Ints:
    """A column of the file's bytes: a view where the byte order is the machine's."""
    if not _SWAP:
        return raw.cast(code)
    column = array(code, raw.tobytes())
    column.byteswap()
    return column


def encode_maps(maps: Iterable[DomainMap]) -> bytes:
    """Serialise maps (one per domain) in ascending agent order, with their checksum."""
    ordered = sorted(maps, key=lambda m: m.agent_id)
    parts = [_PREFIX.pack(MAGIC, VERSION, len(ordered))]
    for m in ordered:
        m.verified()  # a map decoded from a file is written again only as it was written
        parts.append(
            _HEAD.pack(
                m.agent_id,
                m.covered_end,
                m.digest,
                m.seal,
                m.current_scene,
                m.current_used_at,
                m.current_turns,
                len(m.scene_ids),
                len(m.topic_ids),
                len(m.member_ids),
            )
        )
        for column, code in zip(m.columns(), _CODES, strict=True):
            if _SWAP:
                swapped = array(code, column)
                swapped.byteswap()
                column = swapped
            parts.append(column.tobytes())
    body = b"".join(parts)
    sums = sums_of(body, BLOCK)
    listed = sums.tobytes() + _COUNTS.pack(BLOCK, len(sums))
    return body + listed + _SUM.pack(xxhash.xxh3_64_intdigest(listed))


def decode_maps(data: Buffer) -> Mapping[int, DomainMap]:
    """Parse a scene map file: agent -> its map. ValueError for anything else.

    On a little-endian machine the columns are views of ``data`` (no copy),
    so ``data`` may be a map of the file: only the pages a read uses are
    brought in, and only their blocks are checked (``DomainMap.verify``).
    """
    whole = memoryview(data).cast("B")
    if len(whole) >= _PREFIX.size and bytes(whole[:4]) == MAGIC and whole[4] != VERSION:
        msg = f"scene map: not a version {VERSION} scene map"  # named before the checksums
        raise ValueError(msg)
    blocks = _blocks_of(whole)
    body = blocks.body
    blocks.check(0, min(_PREFIX.size, len(body)))
    if len(body) < _PREFIX.size:
        msg = "scene map: too short"
        raise ValueError(msg)
    magic, version, count = _PREFIX.unpack_from(body, 0)
    if magic != MAGIC or version != VERSION:
        msg = f"scene map: not a version {VERSION} scene map"
        raise ValueError(msg)
    maps: dict[int, DomainMap] = {}
    pos = _PREFIX.size
    for _ in range(count):
        if pos + _HEAD.size > len(body):
            msg = "scene map: a domain runs past the end"
            raise ValueError(msg)
        blocks.check(pos, pos + _HEAD.size)
        head = _HEAD.unpack_from(body, pos)
        agent, end, digest, seal, scene_id, used_at, turns, scenes, topics, members = head
        pos += _HEAD.size
        arrays: list[Ints] = []
        starts: list[int] = []
        for code, n in zip(_CODES, (scenes, scenes, topics, topics, members), strict=True):
            size = struct.calcsize(code) * n
            if pos + size > len(body):
                msg = "scene map: an array runs past the end"
                raise ValueError(msg)
            arrays.append(_column(body[pos : pos + size], code))
            starts.append(pos)
            pos += size
        blocks.check(starts[0], starts[2])  # the scene columns: every lookup searches them
        scene_ids, scene_ends, topic_ids, topic_ends, member_ids = arrays
        m = DomainMap(
            agent,
            end,
            digest,
            seal,
            scene_id,
            used_at,
            turns,
            scene_ids,
            scene_ends,
            topic_ids,
            topic_ends,
            member_ids,
            verify=_verifier(blocks, starts),
        )
        m.check(whole=False)
        if agent in maps:
            msg = "scene map: a domain appears twice"
            raise ValueError(msg)
        maps[agent] = m
    if pos != len(body):
        msg = "scene map: bytes after the last domain"
        raise ValueError(msg)
    return maps


def _blocks_of(whole: memoryview) -> Blocks:
    """The body and block checksums of a file; ValueError unless its tail vouches for them."""
    tail = _COUNTS.size + _SUM.size
    if len(whole) < tail:
        msg = "scene map: too short"
        raise ValueError(msg)
    block, count = _COUNTS.unpack_from(whole, len(whole) - tail)
    listed = whole[len(whole) - tail - 8 * count : len(whole) - _SUM.size]
    if (
        len(listed) != 8 * count + _COUNTS.size
        or xxhash.xxh3_64_intdigest(listed) != _SUM.unpack_from(whole, len(whole) - _SUM.size)[0]
    ):
        msg = "scene map: checksum mismatch"
        raise ValueError(msg)
    body = whole[: len(whole) - tail - 8 * count]
    if block != BLOCK:
        msg = "scene map: checksum mismatch (the blocks do not cover the file)"
        raise ValueError(msg)
    return Blocks(body, stored_sums(listed[: 8 * count]), BLOCK, "scene map")


def _verifier(blocks: Blocks, starts: Sequence[int]) -> Verify:
    """``DomainMap.verify`` for a domain whose columns begin at ``starts``."""

    def verify(column: int, start: int, end: int) -> None:
        size = _SIZES[column]
        blocks.check(starts[column] + size * start, starts[column] + size * end)

    return verify
