"""L2Meta: one domain's topic cache, serving a scene's surface without touching the file.

Responsibility: hold every topic of a domain by id and by scene, so a scene's
surface (api.md §5.1 step 5) and its depth <= 2 listing (api.md §9.2) cost
time proportional to that scene's own rows.

Contract:
- Built from records (``from_topics``) or kept up to date by the root after
  each successful write (``put``, ``remove``, ``retarget``); both ways give
  equal mirrors (``==``).
- ``surface``: depth-1 topics by (user_timestamp, id). ``listing``: depth <= 2
  topics by (user_timestamp, depth, id), each with the number of listed rows
  whose parent it is.
- Answers are fresh lists; the cache never hands out its own containers.

Traps: not thread-safe; the root holds the domain lock around every call.
"""

from __future__ import annotations

import bisect
import dataclasses
import operator
from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from memhop.index.journal import Journal
from memhop.records import TopicSlot

__all__ = ["LISTING_MAX_DEPTH", "L2Meta", "ListingRow"]

LISTING_MAX_DEPTH = 2
"""SceneContext lists topics down to this depth; sinking moves one level per pass."""

_PACE_EVERY = 128  # topics (or scenes) placed between two calls of a build's ``pace``


@dataclass(frozen=True, slots=True)
class ListingRow:
    """One row of a scene listing: the topic and how many listed rows it parents."""

    topic: TopicSlot
    child_count: int


def _surface_key(topic: TopicSlot) -> tuple[int, int]:
    return topic.user_timestamp, topic.id


def _listing_key(topic: TopicSlot) -> tuple[int, int, int]:
    return topic.user_timestamp, topic.depth, topic.id


_Key = Callable[[TopicSlot], tuple[int, ...]]


class _Scene:
    """One scene's rows by id, plus its surface and listing kept in their read order."""

    __slots__ = ("kids", "listed", "rows", "surface")

    def __init__(self) -> None:
        self.rows: dict[int, TopicSlot] = {}
        self.kids: dict[int, set[int]] = {}  # parent id -> ids of this scene's rows naming it
        self.surface: list[TopicSlot] = []  # depth 1, by _surface_key
        self.listed: list[TopicSlot] = []  # depth <= LISTING_MAX_DEPTH, by _listing_key

    def take(self, topic: TopicSlot) -> None:
        """Hold a row, appending it to the surface and listing unsorted (a bulk load sorts)."""
        self.rows[topic.id] = topic
        if topic.parent_id is not None:
            self.kids.setdefault(topic.parent_id, set()).add(topic.id)
        if topic.depth == 1:
            self.surface.append(topic)
        if topic.depth <= LISTING_MAX_DEPTH:
            self.listed.append(topic)

    def add(self, topic: TopicSlot) -> None:
        self.rows[topic.id] = topic
        if topic.parent_id is not None:
            self.kids.setdefault(topic.parent_id, set()).add(topic.id)
        if topic.depth == 1:
            bisect.insort(self.surface, topic, key=_surface_key)
        if topic.depth <= LISTING_MAX_DEPTH:
            bisect.insort(self.listed, topic, key=_listing_key)

    def drop(self, topic: TopicSlot) -> None:
        del self.rows[topic.id]
        if topic.parent_id is not None:
            kids = self.kids[topic.parent_id]
            kids.discard(topic.id)
            if not kids:
                del self.kids[topic.parent_id]
        if topic.depth == 1:
            _drop_sorted(self.surface, topic, _surface_key)
        if topic.depth <= LISTING_MAX_DEPTH:
            _drop_sorted(self.listed, topic, _listing_key)


def _drop_sorted(rows: list[TopicSlot], topic: TopicSlot, key: _Key) -> None:
    # Keys end in the topic id, so they are unique: the row sits exactly where its key does.
    at = bisect.bisect_left(rows, key(topic), key=key)
    del rows[at]


class L2Meta:
    """The topic cache of one domain."""

    __slots__ = (
        "_by_id",
        "_by_scene",
        "_scene_ids",
        "_words",
        "journal",
        "l1_journal",
        "retention_journal",
    )

    def __init__(self) -> None:
        self.journal = Journal()  # notes every topic put, removed or moved
        self.l1_journal = Journal()  # the same notes, drained by Dream's association layer
        self.retention_journal = Journal()  # and by Dream's content sweep
        self._by_id: dict[int, TopicSlot] = {}
        # Per-scene rows keep a scene's reads off the rest of the domain; each scene
        # keeps its surface and listing sorted as rows come and go, so a read of a
        # long scene copies a list instead of sorting it.
        self._by_scene: dict[int, _Scene] = {}
        # One copy of each keyword and scene id: a domain's tracks repeat a small
        # vocabulary, and a year of turns would otherwise hold a string per use.
        self._words: dict[str, str] = {}
        self._scene_ids: dict[int, int] = {}

    @classmethod
    def from_topics(
        cls, topics: Iterable[TopicSlot], pace: Callable[[], None] | None = None
    ) -> L2Meta:
        """Build a cache from topic records (a later duplicate id wins); ``pace`` is
        called every ``_PACE_EVERY`` topics (a build beside calls lets them run)."""
        meta = cls()
        by_id = meta._by_id
        for topic in topics:
            by_id[topic.id] = topic
        # Placed once each and every scene sorted once, not one insertion at a time.
        for n, (topic_id, topic) in enumerate(by_id.items(), 1):
            topic = by_id[topic_id] = meta._pooled(topic)
            held = meta._by_scene.get(topic.scene_id)
            if held is None:
                held = meta._by_scene[topic.scene_id] = _Scene()
            held.take(topic)
            if pace is not None and not n % _PACE_EVERY:
                pace()
        for n, held in enumerate(meta._by_scene.values(), 1):
            held.surface.sort(key=_surface_key)
            held.listed.sort(key=_listing_key)
            if pace is not None and not n % _PACE_EVERY:
                pace()
        return meta

    # ---- updates -----------------------------------------------------------------------

    def put(self, topic: TopicSlot) -> TopicSlot:
        """Insert or replace a topic, moving it between scenes if its scene changed.

        Returns the row as held (equal to ``topic``; its keywords may be pooled copies).
        """
        self.journal.note(topic.id)
        self.l1_journal.note(topic.id)
        self.retention_journal.note(topic.id)
        topic = self._pooled(topic)
        old = self._by_id.get(topic.id)
        if old is not None:
            self._forget(old)
        self._by_id[topic.id] = topic
        self._place(topic)
        return topic

    def remove(self, ids: Iterable[int]) -> int:
        """Forget the topics among ``ids``; return how many were held."""
        removed = 0
        for topic_id in ids:
            old = self._by_id.pop(topic_id, None)
            if old is not None:
                self.journal.note(topic_id)
                self.l1_journal.note(topic_id)
                self.retention_journal.note(topic_id)
                self._forget(old)
                removed += 1
        return removed

    def retarget(self, old_scene: int, new_scene: int) -> int:
        """Move every topic of ``old_scene`` to ``new_scene`` (a merge); return how many."""
        if old_scene == new_scene:
            return 0
        held = self._by_scene.get(old_scene)
        if held is None:
            return 0
        rows = list(held.rows.values())
        for topic in rows:
            self.put(dataclasses.replace(topic, scene_id=new_scene))
        return len(rows)

    def _pooled(self, topic: TopicSlot) -> TopicSlot:
        """``topic`` holding the pooled copies of its keywords and scene id (equal values)."""
        pool = self._words
        words = tuple([pool.setdefault(k, k) for k in topic.fused_keywords])
        scene = self._scene_ids.setdefault(topic.scene_id, topic.scene_id)
        if scene is topic.scene_id and all(map(operator.is_, words, topic.fused_keywords)):
            return topic
        return dataclasses.replace(topic, fused_keywords=words, scene_id=scene)

    def _place(self, topic: TopicSlot) -> None:
        held = self._by_scene.get(topic.scene_id)
        if held is None:
            held = self._by_scene[topic.scene_id] = _Scene()
        held.add(topic)

    def _forget(self, topic: TopicSlot) -> None:
        held = self._by_scene[topic.scene_id]
        held.drop(topic)
        if not held.rows:
            del self._by_scene[topic.scene_id]

    # ---- reads -------------------------------------------------------------------------

    def get(self, topic_id: int) -> TopicSlot | None:
        """Return the cached topic, or None."""
        return self._by_id.get(topic_id)

    def scene_of(self, topic_id: int) -> int | None:
        """Return the scene a topic belongs to, or None when it is not cached."""
        topic = self._by_id.get(topic_id)
        return None if topic is None else topic.scene_id

    def topics_of_scene(self, scene_id: int) -> list[TopicSlot]:
        """Return every topic of a scene at every depth, ascending by id."""
        held = self._by_scene.get(scene_id)
        return [] if held is None else [held.rows[i] for i in sorted(held.rows)]

    def surface(self, scene_id: int) -> list[TopicSlot]:
        """Return a scene's depth-1 topics ordered by (user_timestamp, id)."""
        held = self._by_scene.get(scene_id)
        return [] if held is None else list(held.surface)

    def surface_count(self, scene_id: int) -> int:
        """Return how many depth-1 topics a scene holds (the consolidation trigger)."""
        held = self._by_scene.get(scene_id)
        return 0 if held is None else len(held.surface)

    def listing(self, scene_id: int) -> list[ListingRow]:
        """Return a scene's depth <= 2 topics by (user_timestamp, depth, id) with child counts.

        A row's child count is the number of listed rows whose parent it is;
        deeper rows are not listed, so they are not counted.
        """
        held = self._by_scene.get(scene_id)
        if held is None:
            return []
        listed = held.listed
        counts: dict[int, int] = {}
        for topic in listed:
            if topic.parent_id is not None:
                counts[topic.parent_id] = counts.get(topic.parent_id, 0) + 1
        return [ListingRow(t, counts.get(t.id, 0)) for t in listed]

    def scene_row_ids(self, scene_id: int) -> AbstractSet[int]:
        """The ids of a scene's topics at every depth (a live view; do not hold it)."""
        held = self._by_scene.get(scene_id)
        return held.rows.keys() if held is not None else frozenset()

    def children_in_scene(self, scene_id: int) -> dict[int, list[TopicSlot]]:
        """Parent id -> the scene's rows naming it (any order), for parents that are its rows.

        Costs the scene's parented rows, not all its rows: most rows parent nothing.
        """
        held = self._by_scene.get(scene_id)
        if held is None:
            return {}
        rows = held.rows
        return {p: [rows[k] for k in kids] for p, kids in held.kids.items() if p in rows}

    def topic_ids(self) -> list[int]:
        """Every cached topic id, ascending."""
        return sorted(self._by_id)

    def unordered_ids(self) -> list[int]:
        """Every cached topic id, in no order (no sort: a copy of the keys)."""
        return list(self._by_id)

    def scenes(self) -> list[int]:
        """Return the scene ids holding at least one cached topic, ascending."""
        return sorted(self._by_scene)

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, topic_id: object) -> bool:
        return topic_id in self._by_id

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, L2Meta):
            return NotImplemented
        # The per-scene dicts are derived from _by_id, so comparing it suffices.
        return self._by_id == other._by_id

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"L2Meta({len(self._by_id)} topics in {len(self._by_scene)} scenes)"
