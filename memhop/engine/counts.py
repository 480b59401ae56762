"""How many records of each type a domain wrote or deleted through one engine.

A reader that keeps copies of some records (Dream's structure cache) compares
two readings: equal counts mean that no record of that type changed between
them, so it need not look at them again. Kept under the engine's lock.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["WriteCounts"]


class WriteCounts:
    """(agent, type) -> writes and deletes so far; ``total()``: all of them."""

    __slots__ = ("_counts",)

    def __init__(self) -> None:
        self._counts: dict[tuple[int, int], int] = {}

    def add(self, records: Iterable[tuple[int, int]]) -> None:
        """Count one write (or delete) of each ``(agent, type)`` in ``records``."""
        counts = self._counts
        for key in records:
            counts[key] = counts.get(key, 0) + 1

    def of(self, agent_id: int, rec_type: int) -> int:
        return self._counts.get((agent_id, rec_type), 0)

    def total(self) -> int:
        """Every write and delete counted (a sum over the domains' types: a few dozen keys)."""
        return sum(self._counts.values())
