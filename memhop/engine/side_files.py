"""The files memhop keeps beside ``<file>``, and the temporary siblings that a new file
or side file is built in.

Each is written only by the holder of ``<file>``'s lock: the index seed (``engine.seed``),
the scene map (``domain.map_file``) and the recall file (``domain.recall_file``). A side
file is replaced whole (a temporary sibling renamed over it) or appended to, never
written in place, and none is synced: each is a cache the file itself can rebuild.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import secrets
import sys
from collections.abc import Iterable
from typing import BinaryIO

TEMP_SUFFIX = ".memhop-tmp"
TOKEN_BYTES = 6  # random bytes in a temporary name
SEED_SUFFIX = ".seed"
SCENE_MAP_SUFFIX = ".scenemap"
RECALL_SUFFIX = ".recall"
SIDECAR_SUFFIXES = (SEED_SUFFIX, SCENE_MAP_SUFFIX, RECALL_SUFFIX)


def temp_sibling(target: str) -> str:
    """Return an unused-looking temporary name in ``target``'s directory."""
    folder, name = os.path.split(os.path.abspath(target))
    return os.path.join(folder, f".{name}.{secrets.token_hex(TOKEN_BYTES)}{TEMP_SUFFIX}")


def replace_side_file(target: str, chunks: Iterable[bytes], mode: int) -> None:
    """Write ``chunks`` to a temporary sibling and rename it over ``target`` (no fsync).

    A reader sees the old file or the new one, whole. On an OSError (raised)
    the temporary file is removed; ``target`` is as it was.
    """
    tmp = temp_sibling(target)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def append_side_file(target: str, data: bytes) -> None:
    """Append ``data`` to the existing ``target`` (no fsync; FileNotFoundError when it is
    gone). For records that check themselves: a torn append is a tail a reader refuses;
    the bytes before it, and a mapping of them, do not change."""
    fd = os.open(target, os.O_WRONLY | os.O_APPEND)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def mapped_side_file(f: BinaryIO) -> bytes | mmap.mmap:
    """A side file's bytes: mapped, so a reader brings in only the pages it uses.

    Read whole where a mapped file could not be replaced or deleted while a map of
    it lives (Windows), or when it is empty (nothing to map). A side file is never
    written in place (a new one is renamed over it, or bytes appended past its end),
    so the mapping cannot change.
    """
    if sys.platform == "win32" or os.fstat(f.fileno()).st_size == 0:
        return f.read()
    return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def remove_side_file(target: str) -> None:
    """Delete ``target`` if it exists (an OSError other than its absence is raised)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(target)
