"""Compaction: a copy of a file holding only its live records.

The copy keeps every live record's type, agent id, id hash and payload bytes;
tombstones, superseded versions and old snapshots are left behind, so deleted
payloads are absent from it. Records are written in ascending (agent, id)
order, which makes compacting a compacted file a fixed point.
"""

from __future__ import annotations

import contextlib
import os

from memhop.engine.engine import Engine, RecordEntry
from memhop.engine.lifecycle import create_engine
from memhop.engine.storefile import fsync_directory
from memhop.errors import CorruptionError, CRCMismatchError, InvalidQueryError, MemHopError

_CHUNK = 256


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


def _live_entries(source: Engine, agent_id: int, ids: list[int]) -> list[RecordEntry]:
    entries: list[RecordEntry] = []
    for id_hash in ids:
        try:
            frame = source.read(agent_id, id_hash)
        except MemHopError as exc:
            # Keep a checksum failure's own code; anything else is corruption.
            kind = CRCMismatchError if isinstance(exc, CRCMismatchError) else CorruptionError
            offset = source.offset_of(agent_id, id_hash)
            msg = f"compact: record {id_hash:016x} at offset {offset} will not read: {exc}"
            raise kind(msg) from exc
        entries.append(RecordEntry(agent_id, frame.rec_type, id_hash, frame.payload))
    return entries


def compact_into(source: Engine, new_path: str) -> Engine:
    """Write the live records of ``source`` to a new file and return it, open and checkpointed.

    Writes wait while the copy runs. On failure the partial destination is
    removed, so no half-written file is left behind.
    """
    with source.exclusive():
        _check_destination(source, new_path)
        dest = create_engine(new_path)
        try:
            for agent_id in source.agents():
                ids = source.all_ids(agent_id)
                for lo in range(0, len(ids), _CHUNK):
                    chunk = _live_entries(source, agent_id, ids[lo : lo + _CHUNK])
                    dest.write_batch(chunk, sync=False)
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
