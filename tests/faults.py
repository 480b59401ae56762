"""Byte-level fault injection for .meh files (tests only)."""

from __future__ import annotations

import os
import struct
import zlib

from memhop.engine import Engine, open_engine


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


def rewrite_active_header(path: str, at: int, data: bytes) -> int:
    """Overwrite bytes at ``at`` within the active header slot (the larger commit id, A on a
    tie) and recompute that slot's CRC, as a crafted file would; return the slot's offset."""
    with open(path, "rb") as f:
        head = f.read(8192)
    (a,) = struct.unpack_from("<Q", head, 8)
    (b,) = struct.unpack_from("<Q", head, 4096 + 8)
    slot = 0 if a >= b else 4096
    body = bytearray(head[slot : slot + 4088])
    body[at : at + len(data)] = data
    write_at(path, slot, bytes(body) + struct.pack("<I", zlib.crc32(body)))
    return slot


def truncate_to(path: str, size: int) -> None:
    os.truncate(path, size)


def zero_header(path: str, slot: str, length: int = 4) -> None:
    """Zero the first ``length`` bytes of header slot "A" or "B"."""
    write_at(path, 0 if slot == "A" else 4096, bytes(length))


def file_size(path: str) -> int:
    return os.path.getsize(path)


def reopen(engine: Engine) -> Engine:
    """Close (with a checkpoint) and open the same file again."""
    engine.close()
    return open_engine(engine.path)
