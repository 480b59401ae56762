"""Listings: which nodes' topic lists hold a topic, for the association layer's cache.

Responsibility: ``topic -> nodes`` for every topic a scene node lists (one node a
topic, nearly always). One node is held in an ``IntMap`` entry (16 bytes in its
arrays), two or more in a tuple in a dict; a dict of one-tuples cost ~150 bytes a
topic (0.1 KiB a turn at 20,000 turns).

Contract: ``of`` gives the nodes in the order they were added (a node added twice
is there twice); ``remove`` takes every occurrence of the node out.
"""

from __future__ import annotations

from memhop.intmap import IntMap

__all__ = ["Listings"]


class Listings:
    """``topic id -> node ids`` (see the module)."""

    __slots__ = ("_more", "_one")

    def __init__(self) -> None:
        self._one = IntMap()  # topic -> its only node
        self._more: dict[int, tuple[int, ...]] = {}  # topic -> its nodes, two or more

    def of(self, topic_id: int) -> tuple[int, ...]:
        """The nodes whose list holds ``topic_id``; () for none."""
        more = self._more.get(topic_id)
        if more is not None:
            return more
        node_id = self._one.get(topic_id)
        return () if node_id is None else (node_id,)

    def add(self, topic_id: int, node_id: int) -> None:
        """Note that ``node_id``'s list holds ``topic_id``."""
        held = self.of(topic_id)
        if not held:
            self._one.put(topic_id, node_id)
            return
        self._hold(topic_id, held, (*held, node_id))

    def remove(self, topic_id: int, node_id: int) -> None:
        """Note that ``node_id``'s list no longer holds ``topic_id``."""
        held = self.of(topic_id)
        if node_id in held:
            self._hold(topic_id, held, tuple(n for n in held if n != node_id))

    def _hold(self, topic_id: int, was: tuple[int, ...], now: tuple[int, ...]) -> None:
        if len(was) > 1:
            del self._more[topic_id]
        elif was:
            self._one.discard(topic_id)
        if len(now) > 1:
            self._more[topic_id] = now
        elif now:
            self._one.put(topic_id, now[0])

    def __len__(self) -> int:
        return len(self._one) + len(self._more)
