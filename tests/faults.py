"""Byte-level fault injection for .meh files (tests only)."""

from __future__ import annotations

import os
import struct
import zlib

from memhop.engine import Engine, open_engine
from memhop.engine.recovery import is_reserve
from memhop.engine.storefile import FENCE


def flip_byte(path: str, offset: int, mask: int = 0xFF) -> None:
    """XOR one byte of the file with ``mask``."""
    with open(path, "r+b") as f:
        f.seek(offset)
        (value,) = f.read(1)
        f.seek(offset)
        f.write(bytes([value ^ mask]))


def write_at(path: str, offset: int, data: bytes) -> None:
    """Overwrite bytes in place."""
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def append_bytes(path: str, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


def frame_bytes(
    agent_id: int, rec_type: int, id_hash: int, payload: bytes, flags: int = 0
) -> bytes:
    """One record frame built from the format's layout (26-byte header, CRC32), not the
    engine's encoder: what a crafted file holds, with a checksum the readers accept."""
    head = struct.pack("<BBIQQ", rec_type, flags, len(payload), agent_id, id_hash)
    return head + struct.pack("<I", zlib.crc32(payload, zlib.crc32(head))) + payload


def active_slot(head: bytes) -> int:
    """The offset of the active header slot in a file's first bytes (the larger commit id,
    A on a tie; both slots assumed sound)."""
    (a,) = struct.unpack_from("<Q", head, 8)
    (b,) = struct.unpack_from("<Q", head, 4096 + 8)
    return 0 if a >= b else 4096


def tail_snapshot(path: str) -> tuple[int, bytes]:
    """(offset, bytes) of the snapshot the active header names."""
    with open(path, "rb") as f:
        data = f.read()
    start, length = struct.unpack_from("<QI", data, active_slot(data) + 16)
    return start, data[start : start + length]


def rewrite_active_header(path: str, at: int, data: bytes) -> int:
    """Overwrite bytes at ``at`` within the active header slot and recompute that slot's
    CRC, as a crafted file would; return the slot's offset."""
    with open(path, "rb") as f:
        head = f.read(8192)
    slot = active_slot(head)
    body = bytearray(head[slot : slot + 4088])
    body[at : at + len(data)] = data
    write_at(path, slot, bytes(body) + struct.pack("<I", zlib.crc32(body)))
    return slot


SnapshotEntries = list[tuple[int, list[tuple[int, int]]]]
"""A snapshot blob's body: (agent id, [(id hash, frame offset), ...]) per agent, in blob order."""


def snapshot_entries(blob: bytes) -> SnapshotEntries:
    """Read a snapshot blob (version 0x03) by its layout; its CRC is not checked."""
    (count,) = struct.unpack_from("<I", blob, 5)
    at, agents = 9, []
    for _ in range(count):
        agent, n = struct.unpack_from("<QI", blob, at)
        pairs = struct.unpack_from(f"<{2 * n}Q", blob, at + 12)
        agents.append((agent, list(zip(pairs[::2], pairs[1::2], strict=True))))
        at += 12 + 16 * n
    return agents


def snapshot_blob(agents: SnapshotEntries) -> bytes:
    """Write a snapshot blob (version 0x03) with a CRC that passes."""
    body = bytearray(b"PANS\x03" + struct.pack("<I", len(agents)))
    for agent, pairs in agents:
        body += struct.pack("<QI", agent, len(pairs))
        for pair in pairs:
            body += struct.pack("<QQ", *pair)
    return bytes(body) + struct.pack("<I", zlib.crc32(body))


def truncate_to(path: str, size: int) -> None:
    os.truncate(path, size)


def zero_header(path: str, slot: str, length: int = 4) -> None:
    """Zero the first ``length`` bytes of header slot "A" or "B"."""
    write_at(path, 0 if slot == "A" else 4096, bytes(length))


def file_size(path: str) -> int:
    """The file's length less a writer's reserve at its end (the fence, then zeros): what
    an open engine's file holds, and what the next open keeps. A closed engine's file has
    no reserve (``tests/engine/test_room.py``), so its length is all of it."""
    with open(path, "rb") as f:
        data = f.read()
    at = len(data.rstrip(b"\0")) - len(FENCE)  # where a reserve would start: its fence
    return at if at >= 0 and is_reserve(data, at, len(data)) else len(data)


def reopen(engine: Engine) -> Engine:
    """Close (with a checkpoint) and open the same file again."""
    engine.close()
    return open_engine(engine.path)
