"""Which scenes consolidation looks at: those whose rows changed since its last look.

A look under the lock at every scene's surface costs what the domain holds
(22-44 ms of CPU at 10^5 turns), and a scene whose rows did not change gets
the same answer again: below the floor, declined on this very listing, or
held back by a failure. So the first look after the mirrors are made (and a
look with another floor) takes every scene; later ones take the scenes the
topic mirror noted as changed (its ``scene_journal``), the ones found worth
a model call last time (the call may have been cancelled) and the ones a
failure held back (their back-off ends with time, not with a change).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memhop.index.journal import Journal

__all__ = ["SceneLooks"]


@dataclass(slots=True)
class SceneLooks:
    """One domain's memory of consolidation's looks (in ``DreamState``; under the lock)."""

    floor: int | None = None  # the floor of the last look at every scene (None: not yet)
    due: set[int] = field(default_factory=set)  # to look at again, changed or not

    def to_look_at(
        self, changed: Journal, scenes: Sequence[int], floor: int, *, whole: bool
    ) -> list[int]:
        """The scenes among ``scenes`` (``whole``: every scene of the domain) a look at
        ``floor`` must take, ascending; each stays due until ``looked``."""
        self.due |= changed.drain()
        if self.floor != floor:
            if not whole:
                return sorted(scenes)  # a floor no look at every scene used: look at all
            self.floor = floor
            self.due.update(scenes)
        return sorted(self.due.intersection(scenes))

    def looked(self, scenes: Sequence[int], floor: int) -> None:
        """``scenes`` were looked at with ``floor``: no longer due unless ``again``."""
        if floor == self.floor:
            self.due.difference_update(scenes)

    def again(self, scene_id: int) -> None:
        """Look at ``scene_id`` next time, whether its rows change or not."""
        self.due.add(scene_id)
