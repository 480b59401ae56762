"""When each turn's content rows cross the retention line, so a sweep costs what crossed.

The content sweep (``prune.prune_contents``) removes the rows stamped before
the line that ``sweepable`` lets go (a row whose turn is carried and whose
words the memory keeps without it), and keeps the others. Upstream looks at
every row of the domain on every pass; here each topic with content waits in
a queue keyed by the stamp of its oldest row not yet past the line, and a
sweep takes the topics whose key the line has passed. A topic with rows kept
waits for its next row to cross, or for a change to it: the topic and content
mirrors note every topic they change (their ``retention_journal``), and a
changed topic is queued again by its oldest row, so a fold that carries a kept
turn (whose kept rows are past the line) sweeps it at the next pass, while the
topic of a new turn (every row younger) waits without being judged.

Contract: ``take(topics, contents, line, sweepable, ...)`` judges at most
about ``budget`` topics under the caller's hold and returns the ids to remove and
whether the sweep is done; the caller tombstones them, removes them from the
content mirror (which notes their topics again) and calls again until done.
A cold queue (new, or its mirrors replaced) first queues every topic of the
domain, ``budget`` at a time. ``kept`` is the number of rows past the line
kept, as of the last sweep that ran to the end.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

from memhop.index.l2meta import L2Meta
from memhop.index.l4 import L4Index
from memhop.intmap import IntMap

__all__ = ["SWEEP_BUDGET", "RetentionQueue", "Step"]

SWEEP_BUDGET = 256
"""Topics a sweep judges (or a cold queue takes in) under one hold of the domain lock: at
10^5 turns, beside turns, 512 took 12-28 ms of CPU a hold, 256 mostly under 10 ms."""
_TOPIC_BITS = 64  # a topic id is a u64
_TOPIC_MASK = (1 << _TOPIC_BITS) - 1


@dataclass(frozen=True, slots=True)
class Step:
    """What one hold of a sweep decided."""

    doomed: list[int]  # content ids to remove
    done: bool


@dataclass(slots=True)
class RetentionQueue:
    """Topics by the stamp of their oldest row not yet past the line (see the module)."""

    topics: L2Meta | None = None  # the mirrors the queue was filled from
    contents: L4Index | None = None
    unfolded: bool | None = None  # the rule it judged by (``sweep_unfolded``)
    _unqueued: list[int] = field(default_factory=list)  # topics of a cold fill not queued yet
    # (key, topic) as one int, key << 64 | topic: ordered as the pair, and no object the
    # collector counts (a tuple a queued topic started its pauses inside the domain lock).
    _heap: list[int] = field(default_factory=list)
    _key: dict[int, int] = field(default_factory=dict)  # topic -> its key in the heap now
    _key_peak: int = 0  # the most ``_key`` held since it was last copied out
    # Topic -> its rows past the line kept: most topics of a domain that folds little,
    # so packed (a dict and its int keys cost 8 MB at 10^5 turns).
    _kept: IntMap = field(default_factory=IntMap)
    kept: int = 0

    def take(
        self,
        topics: L2Meta,
        contents: L4Index,
        line: int,
        sweepable: Callable[[int, list[int]], list[int]],
        *,
        sweep_unfolded: bool,
        budget: int = SWEEP_BUDGET,
        over: Callable[[], bool] = lambda: False,
    ) -> Step:
        """Judge up to about ``budget`` topics whose rows crossed ``line`` (see the module),
        fewer once ``over()`` answers True (one at least)."""
        if (
            topics is not self.topics
            or contents is not self.contents
            or sweep_unfolded != self.unfolded
        ):
            self._cold(topics, contents)
        self.unfolded = sweep_unfolded
        # Changed since the last call: queued again (a row may have come, gone or been
        # carried). Drained first, so the rows this call removes are noted after it.
        for topic_id in topics.retention_journal.drain() | contents.retention_journal.drain():
            self._queue(topic_id, contents)
        unqueued = self._unqueued
        if unqueued:  # a cold fill, ``budget`` topics a hold at most
            for _ in range(min(budget, len(unqueued))):
                self._queue(unqueued.pop(), contents)
                budget -= 1
                if over():
                    break
            if unqueued:
                return Step([], False)
        doomed: list[int] = []
        heap, keys = self._heap, self._key
        self._key_peak = max(self._key_peak, len(keys))  # what follows only takes keys out
        judged = False
        while heap and heap[0] >> _TOPIC_BITS < line and budget > 0 and not (judged and over()):
            entry = heapq.heappop(heap)
            key, topic_id = entry >> _TOPIC_BITS, entry & _TOPIC_MASK
            if keys.get(topic_id) != key:
                continue  # queued again since, under another key
            del keys[topic_id]
            budget -= 1
            judged = True
            created = contents.created_in(topic_id)
            old = [i for i, at in zip(contents.ids_in(topic_id), created, strict=True) if at < line]
            gone = old if sweep_unfolded or not old else sweepable(topic_id, old)
            doomed += gone
            self._count(topic_id, len(old) - len(gone))
            younger = min((at for at in created if at >= line), default=None)
            if younger is not None:
                self._push(topic_id, younger)
        done = not heap or heap[0] >> _TOPIC_BITS >= line
        if done and len(keys) * 4 < self._key_peak:
            # A dict keeps the room of its largest size: after a cold fill queued every
            # topic of the domain (5 MB at 10^5 turns), the few left are copied out.
            self._key, self._key_peak = dict(keys), len(keys)
        return Step(doomed, done)

    def _cold(self, topics: L2Meta, contents: L4Index) -> None:
        """Start again from the mirrors: every topic holding content is to be queued."""
        self.topics, self.contents = topics, contents
        topics.retention_journal.drain()  # noted from here on
        contents.retention_journal.drain()
        self._unqueued = contents.topics()
        self._heap, self._key, self._kept, self.kept = [], {}, IntMap(), 0

    def _queue(self, topic_id: int, contents: L4Index) -> None:
        """Queue a topic by its oldest row: judged by the first sweep whose line passed it."""
        self._count(topic_id, 0)
        created = contents.created_in(topic_id)
        if not created:
            self._key.pop(topic_id, None)
            return
        self._push(topic_id, min(created))

    def _push(self, topic_id: int, key: int) -> None:
        self._key[topic_id] = key
        heapq.heappush(self._heap, key << _TOPIC_BITS | topic_id)

    def _count(self, topic_id: int, rows: int) -> None:
        """Set how many of the topic's rows past the line are kept."""
        kept = self._kept
        self.kept += rows - (kept.get(topic_id) or 0)
        if rows:
            kept.put(topic_id, rows)
        else:
            kept.discard(topic_id)
