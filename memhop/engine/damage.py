"""What damage one open of a file has met: records its reads refused, frames its scan skipped.

Kept apart from the engine's lock and index: the engine calls it under its
lock and hands it the live index when it counts.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from memhop.intmap import NO_IDS, IntMap

log = logging.getLogger("memhop.engine")


class DamageLog:
    """Damaged live records met by reads ((agent, id) -> the offset that failed), and the
    damaged frames the open's replay resumed past (tombstones included)."""

    def __init__(self, frames: int = 0) -> None:
        self.records: dict[tuple[int, int], int] = {}
        self.frames = frames

    @property
    def clean(self) -> bool:
        return not self.records and not self.frames

    def note(self, agent_id: int, id_hash: int, offset: int, reason: Exception) -> None:
        """Remember a damaged record; log it the first time it is met at this offset."""
        if self.records.get((agent_id, id_hash)) != offset:
            self.records[(agent_id, id_hash)] = offset
            msg = "damaged record %016x of agent %016x at offset %d: %s"
            log.warning(msg, id_hash, agent_id, offset, reason)

    def counts(self, live: Mapping[int, IntMap]) -> tuple[int, int]:
        """(damaged records still live where they failed, damaged frames skipped)."""
        met = self.records.items()
        return sum(1 for (a, i), at in met if live.get(a, NO_IDS).get(i) == at), self.frames
