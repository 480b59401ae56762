"""The round-robin check of a domain's topic mirror against its topic records.

Every write memhop makes goes through the mirror, so a warm ``index_rebuild``
checks a slice of the domain a pass rather than all of it: a topic changed or
removed behind the mirror's back is found within a round of passes (one added
behind it, at the next open, whose first pass checks every topic).

Contract: ``SpotCheck.drifted`` compares the next ``SPOT_CHECK`` topics of the
mirror with the records by frame offset, and reads (and compares) at most about
``SPOT_READS`` of them that moved, one at least and fewer once the hold has run its
time (``Held.over``); the rest wait for the next check. A round
goes over the topics the mirror held when it began; one the mirror dropped since
is skipped. Call under the domain lock (``Held``), as ``l1cache`` does.
"""

from __future__ import annotations

from memhop.dream.env import Held
from memhop.engine import Engine
from memhop.intmap import IntMap
from memhop.layers import topic

__all__ = ["SPOT_CHECK", "SPOT_READS", "SpotCheck"]

SPOT_CHECK = 256
"""Topics a warm ``index_rebuild`` checks against the records by offset, round robin."""
SPOT_READS = 32
"""Moved topics a check reads and compares, about: a check that read 256 of them held the
domain lock 15-17 ms at 10^5 turns (a consolidation moves every topic it folds)."""


class SpotCheck:
    """Where a domain's round of spot checks stands (see the module)."""

    def __init__(self) -> None:
        self._ids: tuple[int, ...] = ()  # the topics of this round
        self._at = 0  # where the next check starts in them

    def drifted(self, held: Held, engine: Engine, agent_id: int, topic_at: IntMap) -> bool:
        """Whether the mirror disagrees with the records in the next slice of the round;
        ``topic_at`` (topic -> its frame offset when last checked) is brought up to date."""
        meta = held.mirrors.topics
        if self._at >= len(self._ids):  # a new round, over the topics there are now
            # A copy of the mirror's keys: it shares their int objects (8 bytes an id, as
            # packed); packing them cost 2-3x the copy, in a hold once a round (8-12 ms of
            # the holder's CPU at 10^5 turns in all).
            self._ids, self._at = meta.unordered_ids(), 0
        start = self._at
        window = [(i, t) for i, t in enumerate(self._ids[start : start + SPOT_CHECK]) if t in meta]
        self._at = start + SPOT_CHECK
        offsets = engine.offsets_of(agent_id, [t for _, t in window])
        reads = 0
        for (i, topic_id), at in zip(window, offsets, strict=True):
            if at is None:
                return True
            if topic_at.get(topic_id) != at:
                if reads >= SPOT_READS or (reads and held.over()):
                    self._at = start + i  # this one and the rest at the next check
                    return False
                reads += 1
                if topic.get_topic_optional(engine, agent_id, topic_id) != meta.get(topic_id):
                    return True
                topic_at.put(topic_id, at)
        return False
