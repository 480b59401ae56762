"""A floor under the final k-th score of one recall search, raised as documents are found.

Responsibility: say when a document not yet scored can no longer reach the top k.
Two floors hold: the k-th partial score so far (scores only grow), and the k-th
full score of the best documents so far, each scored through its own terms (a
"probe"), which nears the answer long before the scan ends.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable

__all__ = ["KthFloor"]

_PROBE = 4  # at each check, the best limit * _PROBE documents so far are scored in full
# Sums taken in another order may differ in their last bits: a full score is lowered by
# this much (relative) before it counts, so a tie at the k-th is never lost.
_SLACK = 1e-9


class KthFloor:
    """The floor of one search; ``value`` only rises."""

    def __init__(self, limit: int, full_score: Callable[[int], float]) -> None:
        self._limit = limit
        self._full_score = full_score  # a document slot -> its score for every query term
        self._full: dict[int, float] = {}  # slot -> its full score, once probed
        self.value = -math.inf

    def closes(self, scores: dict[int, float], reachable: float) -> bool:
        """Raise the floor from the partial ``scores``; True once ``reachable`` is below it."""
        if reachable < self.value:
            return True
        limit = self._limit
        if len(scores) < limit:
            return False
        # Values first, then the slots at or above the least of them: a key function
        # over every score would cost twice as much.
        top = heapq.nlargest(limit * _PROBE, scores.values())
        self.value = max(self.value, top[limit - 1])
        if reachable < self.value:
            return True
        least, full = top[-1], self._full
        fresh = [slot for slot, score in scores.items() if score >= least and slot not in full]
        for slot in fresh[: limit * _PROBE]:  # ties past that add nothing the floor needs
            full[slot] = self._full_score(slot)
        if len(full) >= limit:
            self.value = max(self.value, heapq.nlargest(limit, full.values())[-1] * (1.0 - _SLACK))
        return reachable < self.value
