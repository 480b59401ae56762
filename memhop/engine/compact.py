"""Compaction: a copy of a file holding only its live records.

The copy keeps every live record's type, agent id, id hash and payload bytes;
tombstones, superseded versions and old snapshots are left behind, so deleted
payloads are absent from it. Live frames are verified (CRC) and copied byte
for byte in the order the log holds them, so the copy keeps write order and
compacting a compacted file is a fixed point.
"""

from __future__ import annotations

import os
import struct
import zlib
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from itertools import chain, islice
from operator import lt

from memhop.engine.engine import Engine
from memhop.engine.frame import RECORD_HEADER_SIZE, ByteView, frame_bounds
from memhop.engine.publish import build_beside
from memhop.engine.snapshot import Index
from memhop.errors import CorruptionError, CRCMismatchError, InvalidQueryError, MemHopError

_BLOB_BYTES = 1 << 20  # append in blobs of about 1 MiB (cache-sized: faster to join than 8 MiB)
_FRAME = struct.Struct("<BBIQQI")


def check_destination(source: Engine, new_path: object, what: str = "compact") -> str:
    """Return a copy's destination as a str path, refusing what cannot be one (``what``: prefix)."""
    if isinstance(new_path, os.PathLike):
        new_path = os.fspath(new_path)
    if new_path is not None and not isinstance(new_path, str):
        msg = f"{what}: newPath must be a str or os.PathLike, not {type(new_path).__name__}"
        raise InvalidQueryError(msg)
    if not new_path:
        msg = f"{what}: newPath is required"
        raise InvalidQueryError(msg)
    if "\0" in new_path:
        msg = f"{what}: newPath contains a NUL byte: {new_path!r}"
        raise InvalidQueryError(msg)
    if os.path.abspath(new_path) == os.path.abspath(source.path) or (
        os.path.exists(new_path) and os.path.samefile(new_path, source.path)
    ):
        msg = f"{what}: newPath must differ from the open database file"
        raise InvalidQueryError(msg)
    if os.path.lexists(new_path):
        msg = f"{what}: newPath already exists: {new_path}"
        raise InvalidQueryError(msg)
    return new_path


def refusal(view: ByteView, size: int, offset: int, id_hash: int) -> MemHopError:
    """Name the live record at ``offset`` that will not read, with the decoder's own reason."""
    try:
        bounds = frame_bounds(view, offset, size)
        reason: MemHopError = CorruptionError(
            "the index names a record the record area does not hold"
            if bounds is None
            else "the frame does not match its index entry"
        )
    except MemHopError as exc:
        reason = exc
    # Keep a checksum failure's own code; anything else is corruption.
    kind = CRCMismatchError if isinstance(reason, CRCMismatchError) else CorruptionError
    msg = (
        f"compact: record {id_hash:016x} at offset {offset} will not read: {reason};"
        " salvage_to copies every record that verifies"
    )
    err = kind(msg)
    err.__cause__ = reason
    return err


def first_refusal(source: Engine, view: ByteView, size: int) -> MemHopError:
    """Find the first live frame, in log order, that fails a check, and word its refusal.

    The slow path, taken only after the bulk checks in ``_verify_live`` failed:
    it names the same record a frame-by-frame copy would have stopped at.
    """
    unpack, crc32, head = _FRAME.unpack_from, zlib.crc32, RECORD_HEADER_SIZE
    for offset, agent_id, id_hash in source.live_in_log_order():
        if offset + head > size:
            return refusal(view, size, offset, id_hash)
        _, flags, length, f_agent, f_id, crc = unpack(view, offset)
        end = offset + head + length
        if (
            f_agent != agent_id
            or f_id != id_hash
            or flags
            or end > size
            or crc32(view[offset + head : end], crc32(view[offset : offset + 22])) != crc
        ):
            return refusal(view, size, offset, id_hash)
    msg = "compact: the live records failed a check that no single record fails"
    return CorruptionError(msg)


def _verify_live(
    live: Mapping[int, Mapping[int, int]], view: ByteView, size: int, offsets: list[int], base: int
) -> tuple[list[int], Index] | None:
    """Check the live frames at ``offsets`` (ascending); return their ends and the copy's index.

    None when a frame fails a check: those of ``frame_bounds``, plus the
    index's own claim that the frame's agent and id are the entry at this
    offset. The copy's index starts as a copy of the live index (so it keeps
    its id order, which the snapshot sorts by) and each entry is moved to its
    frame's offset in the copy (``base`` plus the live frames before it) as
    the frame passes. Moved offsets are below every later source offset and
    source offsets are distinct, so a frame can only claim an entry not yet
    moved: all pass only when every entry names its own frame. This loop is
    the per-record cost of compaction.
    """
    unpack, crc32, head = _FRAME.unpack_from, zlib.crc32, RECORD_HEADER_SIZE
    if offsets[-1] + head > size or not all(map(lt, offsets, islice(offsets, 1, None))):
        return None  # out of bounds, or two entries share a frame
    # ``items()``: a packed map's pairs in one pass, not a search per key.
    index: Index = {agent_id: dict(by_id.items()) for agent_id, by_id in live.items() if by_id}
    in_agent = index.get
    nothing: dict[int, int] = {}
    ends: list[int] = []
    keep = ends.append
    at = base
    for offset in offsets:
        _, flags, length, agent_id, id_hash, crc = unpack(view, offset)
        start = offset + head
        end = start + length
        ids = in_agent(agent_id, nothing)
        if (
            flags
            or end > size
            or ids.get(id_hash) != offset
            or crc32(view[start:end], crc32(view[offset : offset + 22])) != crc
        ):
            return None
        ids[id_hash] = at  # never ``nothing``: its get() gave None, not offset
        at += end - offset
        keep(end)
    return ends, index


def _blobs(mv: memoryview, offsets: list[int], ends: list[int]) -> Iterator[bytes]:
    """Yield the frames at ``offsets`` joined into blobs of at most about 1 MiB, in order."""
    cut, count, i = mv.__getitem__, len(offsets), 0
    while i < count:
        # Frames starting within 1 MiB of this one: their bytes fit in that span.
        j = bisect_left(offsets, offsets[i] + _BLOB_BYTES, i + 1, count)
        yield b"".join(map(cut, map(slice, offsets[i:j], ends[i:j])))
        i = j


def copy_frames(
    live: Mapping[int, Mapping[int, int]], view: ByteView, size: int, dest: Engine
) -> bool:
    """Append the frames ``live`` names (agent -> id -> offset in ``view``) to ``dest``, in order.

    Every frame is checked before any is written; the copy's index is built
    alongside and handed over with the frames in one ``load_frames`` call.
    False, with nothing written, when a frame fails a check.
    """
    offsets = sorted(chain.from_iterable(by_id.values() for by_id in live.values()))
    if not offsets:
        dest.load_frames((), {}, sync=False)
        return True
    checked = _verify_live(live, view, size, offsets, dest.record_end)
    if checked is None:
        return False
    ends, index = checked
    with memoryview(view) as mv:
        dest.load_frames(_blobs(mv, offsets, ends), index, sync=False)
    return True


def _copy_live(source: Engine, dest: Engine, what: str) -> None:
    """Append every live frame of ``source`` to ``dest``, verified; refuse on the first bad one."""
    source.confirm_index(what)  # what the copy leaves behind is only what a replay says is dead
    view, size = source.log_view()
    if not copy_frames(source.live_index(), view, size, dest):
        raise first_refusal(source, view, size)


def write_live_copy(
    source: Engine, target: str, *, replace: bool = False, what: str = "compact"
) -> Engine:
    """Write the live records of ``source`` to ``target`` crash-safely; return the copy, open.

    The copy is built under a temporary sibling name, checkpointed (one fsync
    makes every frame durable), renamed into place and the directory fsynced:
    a reader of ``target`` never sees a partial copy, even after a kill or a
    full disk. It keeps the source's permission bits. ``replace`` lets the
    rename replace an existing ``target`` (the step an in-place compaction
    needs); the caller holds ``source.exclusive()`` and has checked ``target``.
    """

    def fill(dest: Engine) -> None:
        _copy_live(source, dest, what)
        # The checkpoint's fsync makes every frame durable at once: the copy is
        # not anyone's data until it is renamed into place.
        dest.checkpoint()

    return build_beside(target, fill, mode=source.permission_bits(), replace=replace, what=what)


def compact_into(source: Engine, new_path: str | os.PathLike[str]) -> Engine:
    """Write the live records of ``source`` to a new file and return it, open and checkpointed.

    Writes wait while the copy runs. ``new_path`` must not exist; on failure
    nothing is left under it (see ``write_live_copy``).
    """
    with source.exclusive():
        return write_live_copy(source, check_destination(source, new_path))


def compact_to(source: Engine, new_path: str | os.PathLike[str]) -> None:
    """Write a compacted copy of ``source`` to ``new_path``; the source is not touched."""
    compact_into(source, new_path).close_without_checkpoint()
