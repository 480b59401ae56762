"""SceneRows: one scene's topic rows as records, with its surface and listing kept sorted.

Responsibility: the form of a scene the topic cache (``l2meta``) keeps while the
scene is being written: rows by id, the ids of the rows naming each parent, the
surface (depth 1, by ``surface_key``) and the listing (depth <= ``LISTING_MAX_DEPTH``,
by ``listing_key``), each kept in order as rows come and go, so a read of a long
scene copies a list instead of sorting it. ``topic_pack`` is the other form.

Traps: not thread-safe; the cache's caller holds the domain lock.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable

from memhop.records import TopicSlot

__all__ = ["LISTING_MAX_DEPTH", "SceneRows", "listing_key", "surface_key"]

LISTING_MAX_DEPTH = 2
"""SceneContext lists topics down to this depth; sinking moves one level per pass."""


def surface_key(topic: TopicSlot) -> tuple[int, int]:
    return topic.user_timestamp, topic.id


def listing_key(topic: TopicSlot) -> tuple[int, int, int]:
    return topic.user_timestamp, topic.depth, topic.id


_Key = Callable[[TopicSlot], tuple[int, ...]]


class SceneRows:
    """One scene's rows by id, plus its surface and listing kept in their read order."""

    __slots__ = ("kids", "listed", "rows", "surface")

    def __init__(self) -> None:
        self.rows: dict[int, TopicSlot] = {}
        self.kids: dict[int, set[int]] = {}  # parent id -> ids of this scene's rows naming it
        self.surface: list[TopicSlot] = []  # depth 1, by surface_key
        self.listed: list[TopicSlot] = []  # depth <= LISTING_MAX_DEPTH, by listing_key

    @classmethod
    def of(cls, topics: Iterable[TopicSlot]) -> SceneRows:
        """A scene holding ``topics`` (distinct ids), each placed once and sorted once."""
        held = cls()
        rows, kids, surface, listed = held.rows, held.kids, held.surface, held.listed
        for topic in topics:
            rows[topic.id] = topic
            if topic.parent_id is not None:
                kids.setdefault(topic.parent_id, set()).add(topic.id)
            if topic.depth == 1:
                surface.append(topic)
            if topic.depth <= LISTING_MAX_DEPTH:
                listed.append(topic)
        surface.sort(key=surface_key)
        listed.sort(key=listing_key)
        return held

    def add(self, topic: TopicSlot) -> None:
        self.rows[topic.id] = topic
        if topic.parent_id is not None:
            self.kids.setdefault(topic.parent_id, set()).add(topic.id)
        if topic.depth > LISTING_MAX_DEPTH:
            return
        # A turn's row is the scene's newest: after the last row of both orders, found by
        # one key each, where an insort calls the key at every step of its bisection.
        listed, key = self.listed, listing_key(topic)
        if not listed or listing_key(listed[-1]) < key:
            listed.append(topic)
        else:
            bisect.insort(listed, topic, key=listing_key)
        if topic.depth == 1:
            surface = self.surface
            if not surface or surface_key(surface[-1]) < surface_key(topic):
                surface.append(topic)
            else:
                bisect.insort(surface, topic, key=surface_key)

    def drop(self, topic: TopicSlot) -> None:
        del self.rows[topic.id]
        if topic.parent_id is not None:
            kids = self.kids[topic.parent_id]
            kids.discard(topic.id)
            if not kids:
                del self.kids[topic.parent_id]
        if topic.depth == 1:
            _drop_sorted(self.surface, topic, surface_key)
        if topic.depth <= LISTING_MAX_DEPTH:
            _drop_sorted(self.listed, topic, listing_key)


def _drop_sorted(rows: list[TopicSlot], topic: TopicSlot, key: _Key) -> None:
    # Keys end in the topic id, so they are unique: the row sits exactly where its key does.
    at = bisect.bisect_left(rows, key(topic), key=key)
    del rows[at]
