"""Compaction: a copy of a file holding only its live records.

The copy keeps every live record's type, agent id, id hash and payload bytes;
tombstones, superseded versions and old snapshots are left behind, so deleted
payloads are absent from it. Live frames are verified (CRC) and copied byte
for byte in the order the log holds them, so the copy keeps write order and
compacting a compacted file is a fixed point.
"""

from __future__ import annotations

import contextlib
import os
import struct
import zlib

from memhop.engine.engine import Engine, Placement
from memhop.engine.frame import RECORD_HEADER_SIZE, ByteView, frame_bounds
from memhop.engine.lifecycle import create_engine
from memhop.engine.storefile import fsync_directory
from memhop.errors import CorruptionError, CRCMismatchError, InvalidQueryError, MemHopError

_BLOB_BYTES = 8 << 20  # append in blobs of about 8 MiB
_FRAME = struct.Struct("<BBIQQI")


def _check_destination(source: Engine, new_path: str) -> None:
    if not new_path:
        msg = "compact: newPath is required"
        raise InvalidQueryError(msg)
    if os.path.abspath(new_path) == os.path.abspath(source.path) or (
        os.path.exists(new_path) and os.path.samefile(new_path, source.path)
    ):
        msg = "compact: newPath must differ from the open database file"
        raise InvalidQueryError(msg)
    if os.path.lexists(new_path):
        msg = f"compact: newPath already exists: {new_path}"
        raise InvalidQueryError(msg)


def _refusal(view: ByteView, size: int, offset: int, id_hash: int) -> MemHopError:
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
    msg = f"compact: record {id_hash:016x} at offset {offset} will not read: {reason}"
    err = kind(msg)
    err.__cause__ = reason
    return err


def _copy_live(source: Engine, dest: Engine) -> None:
    """Append every live frame of ``source`` to ``dest``, verified, in log order.

    Contiguous live frames are copied as one run and runs are appended in
    blobs of about 8 MiB. The loop checks each frame inline (the same checks as
    ``frame_bounds``, which is called only to word a refusal) because this is
    the per-record cost of compaction.
    """
    view, size = source.log_view()
    unpack, crc32, head = _FRAME.unpack_from, zlib.crc32, RECORD_HEADER_SIZE
    blob = bytearray()
    placements: list[Placement] = []
    run_start = run_end = 0
    for offset, agent_id, id_hash in source.live_in_log_order():
        if offset + head > size:
            raise _refusal(view, size, offset, id_hash)
        rec_type, flags, length, f_agent, f_id, crc = unpack(view, offset)
        end = offset + head + length
        if (
            f_agent != agent_id
            or f_id != id_hash
            or flags
            or end > size
            or crc32(view[offset + head : end], crc32(view[offset : offset + 22])) != crc
        ):
            raise _refusal(view, size, offset, id_hash)
        if offset != run_end or run_end - run_start >= _BLOB_BYTES:
            blob += view[run_start:run_end]
            if len(blob) >= _BLOB_BYTES:
                dest.append_frames(bytes(blob), placements, sync=False)
                blob.clear()
                placements = []
            run_start = offset
        placements.append((agent_id, id_hash, rec_type, len(blob) + offset - run_start))
        run_end = end
    blob += view[run_start:run_end]
    dest.append_frames(bytes(blob), placements, sync=False)


def compact_into(source: Engine, new_path: str) -> Engine:
    """Write the live records of ``source`` to a new file and return it, open and checkpointed.

    Writes wait while the copy runs. On failure the partial destination is
    removed: no half-written file is left behind.
    """
    with source.exclusive():
        _check_destination(source, new_path)
        dest = create_engine(new_path)
        try:
            _copy_live(source, dest)
            # The checkpoint's fsync makes every frame durable at once: the copy
            # is not anyone's data until it completes, so per-batch syncs buy nothing.
            dest.checkpoint()
            fsync_directory(os.path.dirname(os.path.abspath(new_path)))
        except BaseException:
            with contextlib.suppress(MemHopError):
                dest.close_without_checkpoint()
            with contextlib.suppress(OSError):
                os.remove(new_path)
            raise
    return dest


def compact_to(source: Engine, new_path: str) -> None:
    """Write a compacted copy of ``source`` to ``new_path``; the source is not touched."""
    compact_into(source, new_path).close_without_checkpoint()
