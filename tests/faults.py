"""Byte-level fault injection for .meh files (tests only)."""

from __future__ import annotations

import os

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
