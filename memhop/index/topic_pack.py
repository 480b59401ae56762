"""PackedTopics: one scene's topic rows held in a few flat objects, not one object a row.

Responsibility: keep a scene nobody is writing compactly and hand its rows back
as ``TopicSlot`` records (all of them, or one by id) equal to the ones packed.

Why: a record object a row, with its own ints, costs about 400 bytes and is one
more object every full collection of the interpreter walks; a domain of 10^5
topics held 44 MB that way. Packed, a row is its id in an array, 26 bytes of
fixed-width fields and its keywords (pooled strings) in one tuple for the scene.

Contract:
- ``pack`` takes the rows of one scene in any order; ``rows`` gives them back
  ascending by id (those of some depths only, if asked: the others are not
  built); ``row``, ``keywords``, ``placement`` and ``holds`` look one up by
  id, and ``children`` a row's children by its id, without building the others;
  ``count_depth`` counts rows of a depth without building any.
- A row whose numbers do not fit the fixed widths (u64 ids, u8 depth, i64 stamps:
  what a stored record can hold) is kept as the record itself, so packing never fails.
"""

from __future__ import annotations

import bisect
import struct
from array import array
from collections.abc import Container, Iterable
from dataclasses import dataclass
from itertools import accumulate

from memhop.records import TopicSlot

__all__ = ["PackedTopics", "pack"]

# parent id, parent present (a present 0 differs from none), depth, user stamp, agent stamp
_ROW = struct.Struct("<QBBqq")
_WIDTH = _ROW.size
_PARENT = struct.Struct("<QB")  # a row's first bytes: its parent id, and that it has one
_DEPTH_AT = 9  # the depth's byte in a row


@dataclass(frozen=True, slots=True, eq=False)
class PackedTopics:
    """The packed rows of one scene (built by ``pack``)."""

    scene_id: int
    ids: array[int]  # ascending; position i names the i-th row of the fields below
    fields: bytes
    words: tuple[str, ...]  # every row's keywords, one row after another
    word_ends: array[int]  # where each row's keywords end in ``words``
    names: tuple[str, ...] | None  # None: every name is empty (the usual turn rows)
    loose: dict[int, TopicSlot] | None  # rows the fixed widths cannot hold

    def __len__(self) -> int:
        return len(self.ids) + (len(self.loose) if self.loose else 0)

    def rows(self, depths: Container[int] | None = None) -> list[TopicSlot]:
        """Every row, or those whose depth is in ``depths``, ascending by id."""
        if depths is None:
            rows = [self._at(i) for i in range(len(self.ids))]
        else:
            at = self.fields[_DEPTH_AT::_WIDTH]
            rows = [self._at(i) for i, depth in enumerate(at) if depth in depths]
        if self.loose:
            loose = [t for t in self.loose.values() if depths is None or t.depth in depths]
            rows = sorted([*rows, *loose], key=_by_id)
        return rows

    def count_depth(self, depth: int) -> int:
        """How many rows are at ``depth``."""
        n = self.fields[_DEPTH_AT::_WIDTH].count(depth) if 0 <= depth <= 0xFF else 0
        return n + sum(t.depth == depth for t in self.loose.values()) if self.loose else n

    def id_set(self) -> frozenset[int]:
        """The rows' ids."""
        return frozenset(self.ids).union(self.loose or ())

    def row(self, topic_id: int) -> TopicSlot | None:
        """The row with this id, or None."""
        at = self._find(topic_id)
        return self._loose(topic_id) if at is None else self._at(at)

    def keywords(self, topic_id: int) -> tuple[str, ...] | None:
        """The row's keywords, without building it; None: no such row."""
        at = self._find(topic_id)
        if at is not None:
            return self._words(at)
        row = self._loose(topic_id)
        return None if row is None else row.fused_keywords

    def placement(self, topic_id: int) -> tuple[int, int | None] | None:
        """The row's (depth, parent id), without building it; None: no such row."""
        at = self._find(topic_id)
        if at is None:
            row = self._loose(topic_id)
            return None if row is None else (row.depth, row.parent_id)
        parent, present, depth, _, _ = _ROW.unpack_from(self.fields, at * _WIDTH)
        return depth, parent if present else None

    def holds(self, topic: TopicSlot) -> bool:
        """Whether ``topic`` equals the row of its id (without building that row)."""
        at = self._find(topic.id)
        if at is None:
            return self._loose(topic.id) == topic
        parent, present, depth, user_at, agent_at = _ROW.unpack_from(self.fields, at * _WIDTH)
        return (
            topic.scene_id == self.scene_id
            and topic.parent_id == (parent if present else None)
            and topic.depth == depth
            and topic.user_timestamp == user_at
            and topic.agent_timestamp == agent_at
            and topic.fused_keywords == self._words(at)
            and topic.name == ("" if self.names is None else self.names[at])
        )

    def children(self, parent_id: int) -> list[TopicSlot]:
        """The rows naming ``parent_id`` as their parent (any order), the others not built:
        their parent field is found in the fixed-width bytes by a search in C."""
        fields, found = self.fields, []
        if 0 <= parent_id < 1 << 64:
            key = _PARENT.pack(parent_id, 1)
            at = fields.find(key)
            while at >= 0:
                if at % _WIDTH == 0:  # a row's own parent field, not bytes across two
                    found.append(self._at(at // _WIDTH))
                at = fields.find(key, at + 1)
        if self.loose:
            found += [t for t in self.loose.values() if t.parent_id == parent_id]
        return found

    def _loose(self, topic_id: int) -> TopicSlot | None:
        return None if self.loose is None else self.loose.get(topic_id)

    def _find(self, topic_id: int) -> int | None:
        ids = self.ids
        at = bisect.bisect_left(ids, topic_id)
        return at if at < len(ids) and ids[at] == topic_id else None

    def _words(self, i: int) -> tuple[str, ...]:
        return self.words[self.word_ends[i - 1] if i else 0 : self.word_ends[i]]

    def _at(self, i: int) -> TopicSlot:
        parent, present, depth, user_at, agent_at = _ROW.unpack_from(self.fields, i * _WIDTH)
        return TopicSlot(
            id=self.ids[i],
            scene_id=self.scene_id,
            parent_id=parent if present else None,
            depth=depth,
            name="" if self.names is None else self.names[i],
            fused_keywords=self._words(i),
            user_timestamp=user_at,
            agent_timestamp=agent_at,
        )


def _by_id(topic: TopicSlot) -> int:
    return topic.id


def _fits(topic: TopicSlot) -> bool:
    parent = topic.parent_id
    return (
        type(topic.id) is int
        and 0 <= topic.id < 1 << 64
        and (parent is None or (type(parent) is int and 0 <= parent < 1 << 64))
        and type(topic.depth) is int
        and 0 <= topic.depth <= 0xFF
        and type(topic.user_timestamp) is int
        and -(1 << 63) <= topic.user_timestamp < 1 << 63
        and type(topic.agent_timestamp) is int
        and -(1 << 63) <= topic.agent_timestamp < 1 << 63
        and type(topic.fused_keywords) is tuple
        and type(topic.name) is str
    )


def pack(scene_id: int, topics: Iterable[TopicSlot]) -> PackedTopics:
    """Pack one scene's rows (each row's ``scene_id`` must be ``scene_id``)."""
    packed: list[TopicSlot] = []
    loose: dict[int, TopicSlot] = {}
    for topic in topics:
        if topic.scene_id != scene_id:
            msg = f"topic {topic.id} is of scene {topic.scene_id}, not {scene_id}"
            raise ValueError(msg)
        if _fits(topic):
            packed.append(topic)
        else:
            loose[topic.id] = topic
    packed.sort(key=_by_id)
    fields = bytearray(_WIDTH * len(packed))
    for i, t in enumerate(packed):
        present = t.parent_id is not None
        _ROW.pack_into(
            fields,
            i * _WIDTH,
            t.parent_id if present else 0,
            present,
            t.depth,
            t.user_timestamp,
            t.agent_timestamp,
        )
    names = tuple(t.name for t in packed)
    return PackedTopics(
        scene_id=scene_id,
        ids=array("Q", [t.id for t in packed]),
        fields=bytes(fields),
        words=tuple([k for t in packed for k in t.fused_keywords]),
        word_ends=array("I", accumulate(len(t.fused_keywords) for t in packed)),
        names=names if any(names) else None,
        loose=loose or None,
    )
