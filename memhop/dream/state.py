"""What Dream keeps of one domain between passes, held by the domain's mirrors.

The structure stages' cache (``l1cache``), the content sweep's queue
(``retention``), consolidation's looks (``scene_looks``) and the count of
structure stages begun live as long as the mirrors they were read from: a
domain whose mirrors are built again (a context reclaimed and reached again)
starts cold, and two DBs in one process share nothing. Read and written under the domain lock only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memhop.dream.env import Held
from memhop.dream.l1cache import L1Cache
from memhop.dream.retention import RetentionQueue
from memhop.dream.scene_looks import SceneLooks

__all__ = ["DreamState", "state_of"]


@dataclass(slots=True)
class DreamState:
    """One domain's Dream state (see the module)."""

    l1: L1Cache | None = None  # None: the next structure stage loads cold
    retention: RetentionQueue = field(default_factory=RetentionQueue)
    begun: int = 0  # structure stages begun to date (``l1domain.stages_begun``)
    looks: SceneLooks = field(default_factory=SceneLooks)  # consolidation's last looks


def state_of(held: Held) -> DreamState:
    """The domain's state, made on first use."""
    mirrors = held.mirrors
    found = mirrors.dream
    if not isinstance(found, DreamState):
        found = DreamState()
        mirrors.dream = found
    return found
