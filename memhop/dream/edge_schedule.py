"""When the next decay must look at each L1 edge: ids and times only.

A domain can hold an edge per pair of scenes, so the cache keeps no edge, only
when each is next due (its stored weight and clock say when it must next be
written back or removed); an edge is read when a stage needs it.

Contract: ``due`` maps every scheduled edge id to its time (0: the next
decay); ``pop_due(now)`` hands out each id whose time has come, once, and
forgets nothing: the caller reschedules or drops each. Not thread-safe: used
under the domain lock, or read (``in``) by one thread while no stage runs.
"""

from __future__ import annotations

import heapq

__all__ = ["EdgeSchedule"]


class EdgeSchedule:
    """Edge id -> when the next decay must look at it, with the ids bucketed by time."""

    __slots__ = ("_buckets", "_keys", "due")

    def __init__(self) -> None:
        self.due: dict[int, int] = {}
        self._buckets: dict[int, list[int]] = {}  # due ms -> edge ids scheduled then
        self._keys: list[int] = []  # heap of the bucket keys

    def __contains__(self, edge_id: object) -> bool:
        return edge_id in self.due

    def put(self, edge_id: int, due_ms: int) -> None:
        """Visit ``edge_id`` in the first decay at or after ``due_ms`` (replaces its time)."""
        self.due[edge_id] = due_ms
        bucket = self._buckets.get(due_ms)
        if bucket is None:
            bucket = self._buckets[due_ms] = []
            heapq.heappush(self._keys, due_ms)
        bucket.append(edge_id)

    def drop(self, edge_id: int) -> None:
        """Forget ``edge_id`` (a deleted edge)."""
        self.due.pop(edge_id, None)

    def pop_due(self, now: int) -> set[int]:
        """The edges due by ``now``; each must be rescheduled or deleted by the caller."""
        found: set[int] = set()
        keys, due = self._keys, self.due
        while keys and keys[0] <= now:
            due_ms = heapq.heappop(keys)
            # An id whose time moved since is in a later bucket too: skip it here.
            found.update(e for e in self._buckets.pop(due_ms) if due.get(e) == due_ms)
        return found
