"""When the next decay must look at each L1 node or edge: ids and times only.

Decay changes nothing stored until a value crosses a threshold (a node's
importance 0.15, an edge's weight 0.05), and that moment follows
from the stored value and its clock, so each node and edge is scheduled for
it and a pass looks only at those due: what a pass costs is what changed.
The cache keeps no edge (a domain can hold one per pair of scenes), only when
each is due; an edge is read when a stage needs it.

Contract: ``due`` maps every scheduled id to its time (0: the next decay);
``pop_due(now, limit)`` hands out each id whose time has come, once (a bounded
number a call, the rest left due), and forgets nothing: the caller reschedules
or drops each. Not thread-safe: used under
the domain lock, or read (``in``) by one thread while no stage runs.
"""

from __future__ import annotations

import heapq

__all__ = ["PARKED", "Schedule"]

PARKED = -1
"""The time of an id kept in the schedule but never due (``park``)."""


class Schedule:
    """Id -> when the next decay must look at it, with the ids bucketed by time."""

    __slots__ = ("_buckets", "_keys", "due")

    def __init__(self) -> None:
        self.due: dict[int, int] = {}
        self._buckets: dict[int, list[int]] = {}  # due ms -> ids scheduled then
        self._keys: list[int] = []  # heap of the bucket keys

    def __contains__(self, item: object) -> bool:
        return item in self.due

    def put(self, item: int, due_ms: int) -> None:
        """Visit ``item`` in the first decay at or after ``due_ms`` (replaces its time)."""
        self.due[item] = due_ms
        bucket = self._buckets.get(due_ms)
        if bucket is None:
            bucket = self._buckets[due_ms] = []
            heapq.heappush(self._keys, due_ms)
        bucket.append(item)

    def park(self, item: int) -> None:
        """Keep ``item`` scheduled but never due: only a ``put`` brings it back."""
        self.due[item] = PARKED

    def drop(self, item: int) -> None:
        """Forget ``item`` (deleted, or not to be visited until scheduled again)."""
        self.due.pop(item, None)

    def pop_due(self, now: int, limit: int | None = None) -> set[int]:
        """The ids due by ``now`` (at most about ``limit`` of them; None: all); each must be
        rescheduled or dropped by the caller, and ``any_due`` says whether more are left."""
        found: set[int] = set()
        keys, due, buckets = self._keys, self.due, self._buckets
        while keys and keys[0] <= now:
            due_ms = keys[0]
            bucket = buckets[due_ms]
            room = len(bucket) if limit is None else limit - len(found)
            if room <= 0:
                break
            if room >= len(bucket):
                heapq.heappop(keys)
                del buckets[due_ms]
                taken = bucket
            else:  # a part of the bucket: the rest stays due
                taken = bucket[-room:]
                del bucket[-room:]
            # An id whose time moved since is in a later bucket too: skip it here.
            found.update(e for e in taken if due.get(e) == due_ms)
        return found

    def any_due(self, now: int) -> bool:
        """Whether ``pop_due(now)`` may find an id (a bucket whose ids all moved since
        answers True once more: the pop that empties it finds nothing)."""
        return bool(self._keys) and self._keys[0] <= now
