"""PackedTopics: one scene's topic rows held as one tuple of flat values, not one object a row.

Responsibility: keep a scene nobody is writing compactly and hand its rows back
as ``TopicSlot`` records (all of them, or one by id) equal to the ones packed.

Why: a record object a row, with its own ints, costs about 400 bytes and is one
more object every full collection of the interpreter walks; a domain of 10^5
topics held 44 MB that way. Packed, a row is its id (the int its mirror already
holds), 26 bytes of fixed-width fields in a byte string and its keywords (pooled
strings) in one tuple for the scene. What a cache keeps is ``state``, an exact
tuple of those values: the collector stops tracking such a tuple at a collection
it survives once its items are untracked (the tuples inside it at the first), so
a packed scene soon costs a full collection nothing (an object of a class, or an
``array``, stays tracked: at 10^5 turns those were 17 of a full collection's
32 ms).

Contract:
- ``pack`` takes the rows of one scene in any order; ``rows`` gives them back
  ascending by id (those of some depths only, if asked: the others are not
  built); ``row``, ``keywords``, ``placement`` and ``holds`` look one up by
  id, and ``children`` a row's children by its id, without building the others;
  ``count_depth`` counts rows of a depth without building any.
- ``PackedTopics(state)`` is a view of a kept ``state``, as cheap as a call.
- A row whose numbers do not fit the fixed widths (u64 ids, u8 depth, i64 stamps:
  what a stored record can hold) is kept as the record itself, so packing never fails.
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Container, Iterable
from itertools import accumulate

from memhop.records import TopicSlot

__all__ = ["PackedState", "PackedTopics", "pack"]

# parent id, parent present (a present 0 differs from none), depth, user stamp, agent stamp
_ROW = struct.Struct("<QBBqq")
_WIDTH = _ROW.size
_PARENT = struct.Struct("<QB")  # a row's first bytes: its parent id, and that it has one
_DEPTH_AT = 9  # the depth's byte in a row

PackedState = tuple[
    int,  # the scene's id
    tuple[int, ...],  # the rows' ids, ascending; position i names the i-th row below
    bytes,  # the rows' fixed-width fields (``_ROW``)
    tuple[str, ...],  # every row's keywords, one row after another
    tuple[int, ...],  # where each row's keywords end in the tuple above
    tuple[str, ...] | None,  # the rows' names; None: every name is empty (the usual turn rows)
    dict[int, TopicSlot] | None,  # rows the fixed widths cannot hold
]


class PackedTopics:
    """A view of one packed scene's rows (``pack`` makes one; keep its ``state``)."""

    __slots__ = ("state",)

    def __init__(self, state: PackedState) -> None:
        self.state = state

    @property
    def scene_id(self) -> int:
        return self.state[0]

    @property
    def loose(self) -> dict[int, TopicSlot] | None:
        """The rows kept whole (their numbers do not fit the fixed widths), or None."""
        return self.state[6]

    def __len__(self) -> int:
        loose = self.state[6]
        return len(self.state[1]) + (len(loose) if loose else 0)

    def rows(self, depths: Container[int] | None = None) -> list[TopicSlot]:
        """Every row, or those whose depth is in ``depths``, ascending by id."""
        fields, loose = self.state[2], self.state[6]
        if depths is None:
            rows = [self._at(i) for i in range(len(self.state[1]))]
        else:
            at = fields[_DEPTH_AT::_WIDTH]
            rows = [self._at(i) for i, depth in enumerate(at) if depth in depths]
        if loose:
            kept = [t for t in loose.values() if depths is None or t.depth in depths]
            rows = sorted([*rows, *kept], key=_by_id)
        return rows

    def count_depth(self, depth: int) -> int:
        """How many rows are at ``depth``."""
        loose = self.state[6]
        n = self.state[2][_DEPTH_AT::_WIDTH].count(depth) if 0 <= depth <= 0xFF else 0
        return n + sum(t.depth == depth for t in loose.values()) if loose else n

    def id_set(self) -> frozenset[int]:
        """The rows' ids."""
        return frozenset(self.state[1]).union(self.state[6] or ())

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
        parent, present, depth, _, _ = _ROW.unpack_from(self.state[2], at * _WIDTH)
        return depth, parent if present else None

    def holds(self, topic: TopicSlot) -> bool:
        """Whether ``topic`` equals the row of its id (without building that row)."""
        at = self._find(topic.id)
        if at is None:
            return self._loose(topic.id) == topic
        scene_id, _, fields, _, _, names, _ = self.state
        parent, present, depth, user_at, agent_at = _ROW.unpack_from(fields, at * _WIDTH)
        return (
            topic.scene_id == scene_id
            and topic.parent_id == (parent if present else None)
            and topic.depth == depth
            and topic.user_timestamp == user_at
            and topic.agent_timestamp == agent_at
            and topic.fused_keywords == self._words(at)
            and topic.name == ("" if names is None else names[at])
        )

    def children(self, parent_id: int) -> list[TopicSlot]:
        """The rows naming ``parent_id`` as their parent (any order), the others not built:
        their parent field is found in the fixed-width bytes by a search in C."""
        fields, loose, found = self.state[2], self.state[6], []
        if 0 <= parent_id < 1 << 64:
            key = _PARENT.pack(parent_id, 1)
            at = fields.find(key)
            while at >= 0:
                if at % _WIDTH == 0:  # a row's own parent field, not bytes across two
                    found.append(self._at(at // _WIDTH))
                at = fields.find(key, at + 1)
        if loose:
            found += [t for t in loose.values() if t.parent_id == parent_id]
        return found

    def _loose(self, topic_id: int) -> TopicSlot | None:
        loose = self.state[6]
        return None if loose is None else loose.get(topic_id)

    def _find(self, topic_id: int) -> int | None:
        ids = self.state[1]
        at = bisect.bisect_left(ids, topic_id)
        return at if at < len(ids) and ids[at] == topic_id else None

    def _words(self, i: int) -> tuple[str, ...]:
        words, ends = self.state[3], self.state[4]
        return words[ends[i - 1] if i else 0 : ends[i]]

    def _at(self, i: int) -> TopicSlot:
        scene_id, ids, fields, _, _, names, _ = self.state
        parent, present, depth, user_at, agent_at = _ROW.unpack_from(fields, i * _WIDTH)
        return TopicSlot(
            id=ids[i],
            scene_id=scene_id,
            parent_id=parent if present else None,
            depth=depth,
            name="" if names is None else names[i],
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
        (
            scene_id,
            tuple([t.id for t in packed]),
            bytes(fields),
            tuple([k for t in packed for k in t.fused_keywords]),
            tuple(accumulate(len(t.fused_keywords) for t in packed)),
            names if any(names) else None,
            loose or None,
        )
    )
