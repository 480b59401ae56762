"""The rows one DB mapped lately, so a turn maps only what is new on its scene's surface.

Contract:
- One ``Surfaces`` per DB: its sessions share it and its close empties it, so two
  DBs of one process share no row and a closed DB keeps none of its records alive.
- Answers equal what ``_mapping`` makes from the same records: the memo changes
  what a turn costs, never what it returns.
- Safe to share between threads (one lock around each memo's writes).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from itertools import islice
from typing import Generic, TypeVar

import memhop.records as rec
from memhop.api import _mapping
from memhop.api._mapping import ProvenanceLike
from memhop.api.results import ProfileSlot, SceneSlot, SearchResult, TopicSlot
from memhop.ids import format_id

__all__ = ["Surfaces"]

K = TypeVar("K")
V = TypeVar("V")

# Rows mapped lately: a turn maps what is new on its scene's surface (the row its update
# mapped, mostly), the surfaces' memo keeps the rest. Each entry keeps a record and its row
# alive, a dozen references the collector walks at every full collection: 4,096 of them
# were a fifth of that walk at 20,000 turns.
ROWS_LIMIT = 512
SCENES_LIMIT = 64  # surfaces, and profiles: the scenes and domains in use


class _Memo(Generic[K, V]):
    """A dict bounded at ``limit`` entries, the oldest quarter dropped when it is full."""

    __slots__ = ("_entries", "_limit", "_lock")

    def __init__(self, limit: int, lock: threading.Lock) -> None:
        self._entries: dict[K, V] = {}
        self._limit = limit
        self._lock = lock

    def get(self, key: K) -> V | None:
        return self._entries.get(key)

    def put(self, key: K, value: V) -> None:
        lock = self._lock
        lock.acquire()  # not ``with``: on 3.11 that costs twice the two calls, twice a turn
        try:
            entries = self._entries
            if key not in entries and len(entries) >= self._limit:
                # The oldest quarter at once: dropping the oldest one a put scanned the
                # holes every drop before it had left at the dict's front (0.8 us a put).
                for old in list(islice(entries, self._limit // 4 or 1)):
                    del entries[old]
            entries[key] = value
        finally:
            lock.release()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


class Surfaces:
    """A DB's memo of mapped topic rows, scene surfaces and profiles."""

    __slots__ = ("_profiles", "_rows", "_scene_rows", "_scenes")

    def __init__(self) -> None:
        lock = threading.Lock()
        # By the identity of the record a row came from; the entry holds the record, so
        # its id is not reused while the entry lives.
        self._rows: _Memo[int, tuple[rec.TopicSlot, ProvenanceLike | None, TopicSlot]]
        self._rows = _Memo(ROWS_LIMIT, lock)
        # Per scene, the surface last mapped: (its records, their provenance, the rows).
        self._scenes: _Memo[
            int, tuple[tuple[rec.TopicSlot, ...], dict[int, ProvenanceLike], tuple[TopicSlot, ...]]
        ]
        self._scenes = _Memo(SCENES_LIMIT, lock)
        # The profile last seen, with its brief (the root hands back the same one while it
        # stays); the record is the result itself.
        self._profiles: _Memo[int, tuple[ProfileSlot, str]]
        self._profiles = _Memo(SCENES_LIMIT, lock)
        # Per scene, its row (a fresh record each turn, its counter moved on): (the name and
        # anchor it was mapped from, the row).
        self._scene_rows: _Memo[int, tuple[str, int, SceneSlot]]
        self._scene_rows = _Memo(SCENES_LIMIT, lock)

    def clear(self) -> None:
        """Forget every row (at the DB's close)."""
        self._rows.clear()
        self._scenes.clear()
        self._profiles.clear()
        self._scene_rows.clear()

    def topic_slot(self, topic: rec.TopicSlot, made_by: ProvenanceLike | None = None) -> TopicSlot:
        """``_mapping.topic_slot``, the row reused while its record is the one mapped."""
        held = self._rows.get(id(topic))
        if held is not None and held[0] is topic and (held[1] is made_by or held[1] == made_by):
            return held[2]
        row = _mapping.topic_slot(topic, made_by)
        self._rows.put(id(topic), (topic, made_by, row))
        return row

    def search_result(
        self,
        profile: ProfileSlot,
        scene: rec.SceneSlot,
        topics: Iterable[rec.TopicSlot],
        new_topic_id: int,
        made_by: Mapping[int, ProvenanceLike] | None = None,
    ) -> SearchResult:
        """A turn's opening read; the brief is rendered from the same profile.

        ``made_by`` holds the provenance of dream rows; a topic absent from it is a turn row.
        """
        return SearchResult(
            profile=profile,
            profile_brief=self._brief(profile),
            scene=self._scene(scene),
            topics=self._surface(scene.scene_id, tuple(topics), made_by or {}),
            new_topic_id=format_id(new_topic_id),
        )

    def _scene(self, scene: rec.SceneSlot) -> SceneSlot:
        held = self._scene_rows.get(scene.scene_id)
        if held is not None and held[0] == scene.scene_name and held[1] == scene.l3_id:
            return held[2]
        row = _mapping.scene_slot(scene)
        self._scene_rows.put(scene.scene_id, (scene.scene_name, scene.l3_id, row))
        return row

    def _surface(
        self,
        scene_id: int,
        topics: tuple[rec.TopicSlot, ...],
        made_by: Mapping[int, ProvenanceLike],
    ) -> tuple[TopicSlot, ...]:
        # A turn adds one row to its scene, so the rows before it are reused while the
        # records and provenance they came from are the same.
        last = self._scenes.get(scene_id)
        start = 0
        rows: tuple[TopicSlot, ...] = ()
        if last is not None and last[1] == made_by:
            done = len(last[0])
            # Equal records give equal rows, so equality (identity, mostly) is enough.
            if len(topics) >= done and topics[:done] == last[0]:
                if len(topics) == done:
                    return last[2]  # nothing new on the surface: the memo stands as it is
                start, rows = done, last[2]
        new = topics[start:]
        if len(new) == 1:  # the usual turn: its one new row, without a generator made
            rows += (self.topic_slot(new[0], made_by.get(new[0].id)),)
        else:
            rows += tuple(self.topic_slot(t, made_by.get(t.id)) for t in new)
        self._scenes.put(scene_id, (topics, dict(made_by), rows))
        return rows

    def _brief(self, profile: ProfileSlot) -> str:
        last = self._profiles.get(id(profile))
        if last is not None and last[0] is profile:
            return last[1]
        brief = _mapping.profile_brief(profile)  # frozen: safe to share
        self._profiles.put(id(profile), (profile, brief))
        return brief
