"""The index snapshot blob (version 0x03) written at the tail by a checkpoint.

Layout, little-endian: magic ``PANS`` (0x534E4150), version byte, agent count,
then per agent its id, entry count and (id hash, offset) pairs, then a CRC32
of everything before it. Only the primary index is stored; the type index is
rebuilt from the frames the offsets point at.
"""

from __future__ import annotations

import struct
import sys
import zlib
from array import array
from collections.abc import Mapping

from memhop.engine.frame import ByteView
from memhop.errors import CorruptionError, CRCMismatchError
from memhop.intmap import IntMap

SNAPSHOT_MAGIC = 0x534E4150
SNAPSHOT_VERSION = 0x03
SNAPSHOT_MAGIC_BYTES = struct.pack("<I", SNAPSHOT_MAGIC)
MIN_SNAPSHOT_SIZE = 13  # magic, version, agent count, CRC

_PREFIX = struct.Struct("<IBI")
_AGENT = struct.Struct("<QI")

Index = dict[int, dict[int, int]]
PackedIndex = dict[int, IntMap]
_SWAP = sys.byteorder != "little"  # the blob is little-endian


def build_snapshot(index: Mapping[int, Mapping[int, int]]) -> bytes:
    """Serialise ``agent -> id -> offset`` in ascending agent and id order."""
    agents = sorted(a for a, ids in index.items() if ids)
    parts = [_PREFIX.pack(SNAPSHOT_MAGIC, SNAPSHOT_VERSION, len(agents))]
    for agent in agents:
        flat = IntMap.from_mapping(index[agent]).flat()
        if _SWAP:
            flat.byteswap()
        parts.append(_AGENT.pack(agent, len(flat) // 2))
        parts.append(flat.tobytes())
    body = b"".join(parts)
    return body + struct.pack("<I", zlib.crc32(body))


def _check_envelope(blob: ByteView) -> int:
    """Validate size, CRC, magic and version; return where the CRC starts."""
    if len(blob) < MIN_SNAPSHOT_SIZE:
        msg = "snapshot too short"
        raise CorruptionError(msg)
    crc_at = len(blob) - 4
    (stored,) = struct.unpack_from("<I", blob, crc_at)
    if zlib.crc32(blob[:crc_at]) != stored:
        msg = "crc32 mismatch"
        raise CRCMismatchError(msg)
    magic, version, _ = _PREFIX.unpack_from(blob, 0)
    if magic != SNAPSHOT_MAGIC:
        msg = "invalid snapshot magic"
        raise CorruptionError(msg)
    if version != SNAPSHOT_VERSION:
        msg = f"unsupported snapshot version 0x{version:02x} (expected 0x{SNAPSHOT_VERSION:02x})"
        raise CorruptionError(msg)
    return crc_at


def parse_snapshot(blob: ByteView) -> PackedIndex:
    """Parse a snapshot blob into a fresh ``agent -> id -> offset`` index."""
    crc_at = _check_envelope(blob)
    _, _, agent_count = _PREFIX.unpack_from(blob, 0)
    pos = _PREFIX.size
    index: PackedIndex = {}
    for _ in range(agent_count):
        if pos + _AGENT.size > crc_at:
            msg = "snapshot agent header truncated"
            raise CorruptionError(msg)
        agent, count = _AGENT.unpack_from(blob, pos)
        pos += _AGENT.size
        if pos + 16 * count > crc_at:
            msg = "snapshot entries truncated"
            raise CorruptionError(msg)
        flat = array("Q")
        flat.frombytes(blob[pos : pos + 16 * count])
        if _SWAP:
            flat.byteswap()
        pos += 16 * count
        known = index.get(agent)
        if known is not None:  # an agent listed twice: its later entries win
            flat = known.flat() + flat
        index[agent] = IntMap.from_pairs(flat)
    return index


def snapshot_length_at(buf: ByteView, offset: int, size: int) -> int | None:
    """Return the length of a snapshot blob starting at ``offset``, or None if none is there.

    Walks the agent sections without checking the CRC; used to step over a
    blob that ended up inside the record area.
    """
    if size - offset < MIN_SNAPSHOT_SIZE or buf[offset : offset + 4] != SNAPSHOT_MAGIC_BYTES:
        return None
    (agent_count,) = struct.unpack_from("<I", buf, offset + 5)
    pos = offset + _PREFIX.size
    for _ in range(agent_count):
        if pos + _AGENT.size > size:
            return None
        _, count = _AGENT.unpack_from(buf, pos)
        pos += _AGENT.size + 16 * count
    pos += 4
    return pos - offset if pos <= size else None
