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

The scenes being written (``HOT_SCENES``, the most recently written) hold
their rows as records; the rest are packed (``topic_pack``). A write to a
packed scene unpacks it, packing the least recently written instead; a read
of one builds the rows it answers with and leaves it packed (a scan of every
scene by Dream moves nothing). ``get`` of a packed row builds a new record
each call; ``holds`` compares one in place.

Traps: not thread-safe; the root holds the domain lock around every call.
``get`` and ``holds`` alone may be called without it, and may then answer
None / False for a row whose scene a write is packing or unpacking meanwhile:
a caller there treats that as "read it again".
"""

from __future__ import annotations

import dataclasses
import operator
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from memhop.index.journal import Journal
from memhop.index.scene_rows import LISTING_MAX_DEPTH, SceneRows, listing_key, surface_key
from memhop.index.topic_pack import PackedState, PackedTopics, pack
from memhop.records import TopicSlot

__all__ = ["HOT_SCENES", "LISTING_MAX_DEPTH", "L2Meta", "ListingRow"]

HOT_SCENES = 64
"""Scenes whose rows the cache keeps as records, the most recently written; the rest are packed."""

_PACE_EVERY = 128  # topics (or scenes) placed between two calls of a build's ``pace``


@dataclass(frozen=True, slots=True)
class ListingRow:
    """One row of a scene listing: the topic and how many listed rows it parents."""

    topic: TopicSlot
    child_count: int


_SURFACE = frozenset({1})
_LISTED = range(LISTING_MAX_DEPTH + 1)


class L2Meta:
    """The topic cache of one domain."""

    __slots__ = (
        "_cold",
        "_hot",
        "_hot_max",
        "_scene_ids",
        "_scene_of",
        "_words",
        "journal",
        "l1_journal",
        "retention_journal",
        "scene_journal",
    )

    def __init__(self, hot_scenes: int = HOT_SCENES) -> None:
        if hot_scenes < 1:
            msg = f"hot_scenes must be at least 1, got {hot_scenes}"
            raise ValueError(msg)
        self.journal = Journal()  # notes every topic put, removed or moved
        self.l1_journal = Journal()  # the same notes, drained by Dream's association layer
        self.retention_journal = Journal()  # and by Dream's content sweep
        self.scene_journal = Journal()  # the scenes whose rows changed, for consolidation
        self._hot_max = hot_scenes
        # Topic id -> its scene's id. A dict, not a packed IntMap (1.6 MB against 8.5 MB at
        # 10^5 turns): Dream's cold reads look rows up without the domain lock while turns
        # write, and a dict read is whole where an IntMap read can meet a fold midway.
        self._scene_of: dict[int, int] = {}
        # Per-scene rows keep a scene's reads off the rest of the domain. The scenes
        # being written hold their rows as records, surface and listing sorted as rows
        # come and go (a read of a long scene copies a list instead of sorting it); the
        # rest are packed, a few objects a scene instead of one a row (most recently
        # written last: the first is the next to pack).
        self._hot: OrderedDict[int, SceneRows] = OrderedDict()
        self._cold: dict[int, PackedState] = {}  # each one tuple the collector leaves alone
        # One copy of each keyword and scene id: a domain's tracks repeat a small
        # vocabulary, and a year of turns would otherwise hold a string per use.
        self._words: dict[str, str] = {}
        self._scene_ids: dict[int, int] = {}

    @classmethod
    def from_topics(
        cls,
        topics: Iterable[TopicSlot],
        pace: Callable[[], None] | None = None,
        *,
        hot_scenes: int = HOT_SCENES,
    ) -> L2Meta:
        """Build a cache from topic records (a later duplicate id wins), every scene
        packed; ``pace`` is called every ``_PACE_EVERY`` topics (a build beside calls
        lets them run)."""
        meta = cls(hot_scenes)
        by_id: dict[int, TopicSlot] = {}
        for topic in topics:
            by_id[topic.id] = topic
        by_scene: dict[int, list[TopicSlot]] = {}
        for n, topic in enumerate(by_id.values(), 1):
            topic = meta._pooled(topic)
            meta._scene_of[topic.id] = topic.scene_id
            by_scene.setdefault(topic.scene_id, []).append(topic)
            if pace is not None and not n % _PACE_EVERY:
                pace()
        del by_id
        for n, (scene_id, rows) in enumerate(by_scene.items(), 1):
            meta._cold[scene_id] = pack(scene_id, rows).state
            if pace is not None and not n % _PACE_EVERY:
                pace()
        return meta

    # ---- updates -----------------------------------------------------------------------

    def put(self, topic: TopicSlot) -> TopicSlot:
        """Insert or replace a topic, moving it between scenes if its scene changed.

        Returns the row as held (equal to ``topic``; its keywords may be pooled copies).
        """
        # Each journal asked first: one that nobody watches yet (the usual) costs no call.
        for journal in (self.journal, self.l1_journal, self.retention_journal):
            if journal.watching:
                journal.note(topic.id)
        topic = self._pooled(topic)
        old_scene = self._scene_of.get(topic.id)
        if old_scene is not None:
            self._drop(old_scene, topic.id)
            self.scene_journal.note(old_scene)
        self._scene_of[topic.id] = topic.scene_id
        if self.scene_journal.watching:
            self.scene_journal.note(topic.scene_id)
        held = self._warm(topic.scene_id)
        if held is None:
            held = self._hot[topic.scene_id] = SceneRows()
        held.add(topic)
        if len(self._hot) > self._hot_max:
            self._cool()
        return topic

    def remove(self, ids: Iterable[int]) -> int:
        """Forget the topics among ``ids``; return how many were held."""
        removed = 0
        for topic_id in ids:
            scene_id = self._scene_of.pop(topic_id, None)
            if scene_id is not None:
                self.journal.note(topic_id)
                self.l1_journal.note(topic_id)
                self.retention_journal.note(topic_id)
                self.scene_journal.note(scene_id)
                self._drop(scene_id, topic_id)
                self._cool()
                removed += 1
        return removed

    def retarget(self, old_scene: int, new_scene: int) -> int:
        """Move every topic of ``old_scene`` to ``new_scene`` (a merge); return how many."""
        if old_scene == new_scene:
            return 0
        rows = self.topics_of_scene(old_scene)
        for topic in rows:
            self.put(dataclasses.replace(topic, scene_id=new_scene))
        return len(rows)

    def _pooled(self, topic: TopicSlot) -> TopicSlot:
        """``topic`` holding the pooled copies of its keywords and scene id (equal values)."""
        pool = self._words
        given = topic.fused_keywords
        words = tuple(map(pool.setdefault, given, given))
        scene = self._scene_ids.setdefault(topic.scene_id, topic.scene_id)
        if scene is topic.scene_id and all(map(operator.is_, words, given)):
            return topic
        # Built field by field: ``dataclasses.replace`` costs several times that, every turn.
        return TopicSlot(
            id=topic.id,
            scene_id=scene,
            parent_id=topic.parent_id,
            depth=topic.depth,
            name=topic.name,
            fused_keywords=words,
            user_timestamp=topic.user_timestamp,
            agent_timestamp=topic.agent_timestamp,
        )

    def _drop(self, scene_id: int, topic_id: int) -> None:
        held = self._warm(scene_id)
        assert held is not None, "a topic's scene is held"
        held.drop(held.rows[topic_id])
        if not held.rows:
            del self._hot[scene_id]

    # A scene changes form held in both forms a moment (the new one first), so that
    # ``get`` and ``holds`` called without the domain lock rarely find it in neither.

    def _warm(self, scene_id: int) -> SceneRows | None:
        """A scene's rows as records, now the most recently written (None: no such scene)."""
        held = self._hot.get(scene_id)
        if held is not None:
            self._hot.move_to_end(scene_id)
            return held
        packed = self._packed(scene_id)
        if packed is None:
            return None
        held = self._hot[scene_id] = SceneRows.of(packed.rows())
        del self._cold[scene_id]
        return held

    def _cool(self) -> None:
        """Pack the least recently written scenes past the number kept as records."""
        hot = self._hot
        while len(hot) > self._hot_max:
            scene_id, held = next(iter(hot.items()))
            self._cold[scene_id] = pack(scene_id, held.rows.values()).state
            del hot[scene_id]

    # ---- reads -------------------------------------------------------------------------

    def _packed(self, scene_id: int) -> PackedTopics | None:
        state = self._cold.get(scene_id)
        return None if state is None else PackedTopics(state)

    def _where(self, topic_id: int) -> TopicSlot | PackedTopics | None:
        """The topic's row when its scene is held as records, else the packed scene that
        holds it; None when it is not cached (or, without the lock, its scene is moving)."""
        scene_id = self._scene_of.get(topic_id)
        if scene_id is None:
            return None
        held = self._hot.get(scene_id)
        return held.rows.get(topic_id) if held is not None else self._packed(scene_id)

    def get(self, topic_id: int) -> TopicSlot | None:
        """Return the cached topic, or None (a packed row is built anew for each call)."""
        where = self._where(topic_id)
        return where.row(topic_id) if isinstance(where, PackedTopics) else where

    def holds(self, topic: TopicSlot) -> bool:
        """Whether the cache holds exactly ``topic`` (a packed row is compared in place)."""
        where = self._where(topic.id)
        return where.holds(topic) if isinstance(where, PackedTopics) else where == topic

    def keywords(self, topic_id: int) -> tuple[str, ...] | None:
        """A topic's keywords, or None (no record built)."""
        where = self._where(topic_id)
        if isinstance(where, PackedTopics):
            return where.keywords(topic_id)
        return None if where is None else where.fused_keywords

    def placement(self, topic_id: int) -> tuple[int, int | None] | None:
        """A topic's (depth, parent id), or None: what a depth check needs, no record built."""
        where = self._where(topic_id)
        if isinstance(where, PackedTopics):
            return where.placement(topic_id)
        return None if where is None else (where.depth, where.parent_id)

    def scene_of(self, topic_id: int) -> int | None:
        """Return the scene a topic belongs to, or None when it is not cached."""
        return self._scene_of.get(topic_id)

    def topics_of_scene(self, scene_id: int) -> list[TopicSlot]:
        """Return every topic of a scene at every depth, ascending by id."""
        held = self._hot.get(scene_id)
        if held is not None:
            return [held.rows[i] for i in sorted(held.rows)]
        packed = self._packed(scene_id)
        return [] if packed is None else packed.rows()

    def surface(self, scene_id: int) -> list[TopicSlot]:
        """Return a scene's depth-1 topics ordered by (user_timestamp, id)."""
        held = self._hot.get(scene_id)
        if held is not None:
            return list(held.surface)
        packed = self._packed(scene_id)
        return [] if packed is None else sorted(packed.rows(_SURFACE), key=surface_key)

    def surface_count(self, scene_id: int) -> int:
        """Return how many depth-1 topics a scene holds (the consolidation trigger)."""
        held = self._hot.get(scene_id)
        if held is not None:
            return len(held.surface)
        packed = self._packed(scene_id)
        return 0 if packed is None else packed.count_depth(1)

    def listing(self, scene_id: int) -> list[ListingRow]:
        """Return a scene's depth <= 2 topics by (user_timestamp, depth, id) with child counts.

        A row's child count is the number of listed rows whose parent it is;
        deeper rows are not listed, so they are not counted.
        """
        held = self._hot.get(scene_id)
        if held is not None:
            listed = held.listed
        else:
            packed = self._packed(scene_id)
            if packed is None:
                return []
            listed = sorted(packed.rows(_LISTED), key=listing_key)
        counts: dict[int, int] = {}
        for topic in listed:
            if topic.parent_id is not None:
                counts[topic.parent_id] = counts.get(topic.parent_id, 0) + 1
        return [ListingRow(t, counts.get(t.id, 0)) for t in listed]

    def scene_row_ids(self, scene_id: int) -> AbstractSet[int]:
        """The ids of a scene's topics at every depth (a live view; do not hold it)."""
        held = self._hot.get(scene_id)
        if held is not None:
            return held.rows.keys()
        packed = self._packed(scene_id)
        return frozenset() if packed is None else packed.id_set()

    def children_in_scene(self, scene_id: int) -> dict[int, list[TopicSlot]]:
        """Parent id -> the scene's rows naming it (any order), for parents that are its rows.

        Costs the scene's parented rows, not all its rows: most rows parent nothing.
        """
        held = self._hot.get(scene_id)
        if held is None:
            packed = self._packed(scene_id)
            if packed is None:
                return {}
            held = SceneRows.of(packed.rows())  # read once: the scene stays packed
        if not held.kids:  # no row of the scene names a parent (the usual scene)
            return {}
        rows = held.rows
        return {p: [rows[k] for k in kids] for p, kids in held.kids.items() if p in rows}

    def children_of(self, scene_id: int, topic_id: int) -> list[TopicSlot]:
        """The scene's rows naming ``topic_id`` as their parent (any order), the scene's
        other rows not built: what one row's provenance needs."""
        held = self._hot.get(scene_id)
        if held is not None:
            rows = held.rows
            return [rows[k] for k in held.kids.get(topic_id, ())] if topic_id in rows else []
        packed = self._packed(scene_id)
        if packed is None or packed.placement(topic_id) is None:  # not a row of the scene
            return []
        return packed.children(topic_id)

    def topic_ids(self) -> list[int]:
        """Every cached topic id, ascending."""
        return sorted(self._scene_of)

    def unordered_ids(self) -> tuple[int, ...]:
        """Every cached topic id, in no order (no sort: a copy of the keys). A tuple: held
        long, a tuple of ints leaves the collector's view at the first collection it
        survives, where a list would be walked, an id at a time, by every collection."""
        return tuple(self._scene_of)

    def scenes(self) -> list[int]:
        """Return the scene ids holding at least one cached topic, ascending."""
        return sorted([*self._hot, *self._cold])

    def __len__(self) -> int:
        return len(self._scene_of)

    def __contains__(self, topic_id: object) -> bool:
        return topic_id in self._scene_of

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, L2Meta):
            return NotImplemented
        return self._scene_of == other._scene_of and all(
            other.holds(topic) for topic in self._rows()
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        scenes = len(self._hot) + len(self._cold)
        return f"L2Meta({len(self._scene_of)} topics in {scenes} scenes)"

    def _rows(self) -> Iterator[TopicSlot]:
        """Every row, hot or packed, in no order (no scene changes temperature)."""
        for held in self._hot.values():
            yield from held.rows.values()
        for state in self._cold.values():
            yield from PackedTopics(state).rows()
