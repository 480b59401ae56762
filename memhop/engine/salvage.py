"""Salvage: a compacted copy of every live record that still verifies, and a list of the rest.

Compaction refuses a file with one damaged live record (a faithful copy
cannot be made); salvage is the way out. It checks each live record as a
read would (``decode_record``: its CRC, the frame limit, that it is the record
the index names), copies those that pass exactly as compaction does, crash-safe
under a temporary sibling, and reports the ones it left behind.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from memhop.engine.compact import check_destination, copy_frames
from memhop.engine.engine import Engine
from memhop.engine.frame import ByteView, decode_record
from memhop.engine.publish import build_beside
from memhop.engine.snapshot import Index
from memhop.errors import CorruptionError, CRCMismatchError


@dataclass(frozen=True, slots=True)
class LeftBehind:
    """A live record salvage did not copy: where it was and why it failed.

    ``rec_type`` is the type byte found at the offset (it may be damaged
    itself), or -1 when the offset lies past the file.
    """

    agent_id: int
    id_hash: int
    offset: int
    rec_type: int
    reason: str


def _sort_live(source: Engine, view: ByteView, size: int) -> tuple[Index, list[LeftBehind]]:
    """Split the live records into those that verify (an index) and those that do not."""
    kept: Index = {}
    lost: list[LeftBehind] = []
    for offset, agent_id, id_hash in source.live_in_log_order():
        try:
            decode_record(view, offset, size, agent_id, id_hash)
        except (CorruptionError, CRCMismatchError) as exc:
            rec_type = view[offset] if offset < size else -1
            lost.append(LeftBehind(agent_id, id_hash, offset, rec_type, str(exc)))
            continue
        kept.setdefault(agent_id, {})[id_hash] = offset
    return kept, lost


def salvage_to(source: Engine, new_path: str | os.PathLike[str]) -> tuple[int, list[LeftBehind]]:
    """Copy every live record of ``source`` that verifies to ``new_path`` (which must not exist).

    Returns how many records were copied and the ones left behind, in log
    order. Writes wait while the copy runs; the source is not changed.
    """
    with source.exclusive():
        target = check_destination(source, new_path, "salvage")
        view, size = source.log_view()
        kept, lost = _sort_live(source, view, size)

        def fill(dest: Engine) -> None:
            if not copy_frames(kept, view, size, dest):
                msg = "salvage: a record that verified failed its second check"
                raise CorruptionError(msg)
            dest.checkpoint()

        build_beside(
            target, fill, mode=source.permission_bits(), what="salvage"
        ).close_without_checkpoint()
    return sum(len(ids) for ids in kept.values()), lost
