"""The scene map: which topics each scene holds and which records each topic holds.

A ``.meh`` file cannot say which records belong to a scene without reading
every topic of the domain, and every content line, since ids are hashes. The
scene map says it, for each domain, as of one point of the log
(``covered_end``), so a domain's first read of a scene costs that scene. It
is memhop's own file beside the ``.meh`` (``<file>.scenemap``), never part of
format 0x0012: Go readers never see it, deleting it only costs the next open
a full build, and it holds ids only (no text). Its bytes:
``memhop.domain.scene_map_codec``.

Contract:
- ``DomainMap`` is one domain's map: its scenes ascending, each scene's
  topic ids, each topic's member ids (the content and plan records whose
  payload names the topic). ``digest`` is the file's ``prefix_digest`` up to
  ``covered_end``; the reader trusts a map only while the file still gives it
  (or, cheaper, while the file still ends at ``covered_end`` in the index
  snapshot whose CRC is ``seal``).
- A decoded map checks the checksum of each block a read uses (``verify``,
  ValueError then), and ``verified`` checks every block before a map is
  written again. The order of the columns is checked whole by the writer
  (``build`` and ``spliced`` refuse a map that is not well formed) and, on
  reading, for each range a read uses (``topics_of``, ``members_of``:
  ValueError then), so a first read costs its scene, not the domain. A map
  forged with a fresh checksum can at worst hide rows from a warm read until
  the full build: every listed record is read from the engine by (agent, id)
  and kept only if its payload names the scene.
"""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TypeAlias

__all__ = ["Current", "DomainMap", "Ints", "Verify"]

Ints: TypeAlias = "array[int] | memoryview[int]"
"""A map's id or end column: an array, or a view of the map file's own bytes (no copy)."""
Current: TypeAlias = tuple[int, int, int]
"""The current scene as a map keeps it: (id, last_used_at, turn_seq); zeros for none."""
Verify: TypeAlias = Callable[[int, int, int], None]
"""Check the file's bytes under items [start, end) of a column (0-4, in file order)."""


def _unchecked(column: int, start: int, end: int) -> None:
    """A map made in memory: nothing to check."""


@dataclass(frozen=True, slots=True, eq=False)
class DomainMap:
    """One domain's scenes, their topics and the topics' members, as of ``covered_end``."""

    agent_id: int
    covered_end: int
    digest: bytes
    seal: int  # CRC32 of the index snapshot the file held at covered_end; 0 for none
    current_scene: int  # the scene last in use then; 0 when the domain had none
    current_used_at: int  # its last_used_at and turn_seq then: its rank (``scene.recency_key``)
    current_turns: int
    scene_ids: Ints  # ascending
    scene_ends: Ints  # scene k's topics are topic_ids[scene_ends[k-1]:scene_ends[k]]
    topic_ids: Ints
    topic_ends: Ints  # topic k's members are member_ids[topic_ends[k-1]:topic_ends[k]]
    member_ids: Ints
    verify: Verify = _unchecked  # a decoded map checks the blocks a read uses

    @classmethod
    def build(
        cls,
        agent_id: int,
        covered_end: int,
        digest: bytes,
        seal: int,
        current: Current,
        scenes: Iterable[tuple[int, Iterable[tuple[int, Iterable[int]]]]],
    ) -> DomainMap:
        """Make a map from (scene id, [(topic id, member ids)]) in ascending scene order."""
        out = _Columns()
        for scene_id, topics in scenes:
            out.add(scene_id, topics)
        return out.made(agent_id, covered_end, digest, seal, current)

    def topics_of(self, scene_id: int) -> list[int]:
        """The topic ids the map lists under a scene (none for a scene it does not know)."""
        k = self._scene_index(scene_id)
        if k is None:
            return []
        start, end = self._start(self.scene_ends, k), self.scene_ends[k]
        if not start <= end <= len(self.topic_ids):  # decode checks only the sums
            msg = "scene map: a scene's topic ends fall"
            raise ValueError(msg)
        self.verify(2, start, end)
        return self.topic_ids[start:end].tolist()

    def members_of(self, topic_id: int, scene_id: int) -> list[int]:
        """The member ids the map lists under a topic, looked for in ``scene_id`` first."""
        k = self._scene_index(scene_id)
        at = -1
        if k is not None:
            start, end = self._start(self.scene_ends, k), self.scene_ends[k]
            if start <= end <= len(self.topic_ids):
                self.verify(2, start, end)
                at = _position(self.topic_ids[start:end], topic_id)
                at = at + start if at >= 0 else -1
        if at < 0:  # listed under another scene (the topic moved since), or not at all
            self.verify(2, 0, len(self.topic_ids))
            at = _position(self.topic_ids, topic_id)
            if at < 0:
                return []
        self.verify(3, max(at - 1, 0), at + 1)
        start, end = self._start(self.topic_ends, at), self.topic_ends[at]
        if not start <= end <= len(self.member_ids):  # the one range decode left unchecked
            msg = "scene map: a topic's member ends fall"
            raise ValueError(msg)
        self.verify(4, start, end)
        return self.member_ids[start:end].tolist()

    def scenes_of(self, topic_ids: AbstractSet[int]) -> set[int]:
        """The scenes the map lists any of ``topic_ids`` under (one pass over its topics)."""
        self.verify(2, 0, len(self.topic_ids))
        ends = self.scene_ends
        return {
            self.scene_ids[bisect_right(ends, at)]
            for at, topic_id in enumerate(self.topic_ids.tolist())
            if topic_id in topic_ids
        }

    def spliced(
        self,
        rows: Mapping[int, Sequence[tuple[int, Sequence[int]]]],
        *,
        covered_end: int,
        digest: bytes,
        seal: int,
        current: Current,
    ) -> DomainMap:
        """This map with each scene in ``rows`` listed as given (none: left out), as of a later end.

        The other scenes are copied as they are, a range of ids at a time.
        ValueError when the result is not a well-formed map, or this map's
        bytes are not as written.
        """
        self.verified()
        out = _Columns()
        kept = {scene_id: k for k, scene_id in enumerate(self.scene_ids.tolist())}
        run: list[int] = []  # old scenes kept as they are, consecutive in this map
        for scene_id in sorted(kept.keys() | rows.keys()):
            k = kept.get(scene_id, -1)
            given = rows.get(scene_id)
            if given is None and run and run[-1] == k - 1:
                run.append(k)
                continue
            self._copy(run, out)
            run = [k] if given is None else []
            if given:
                out.add(scene_id, given)
        self._copy(run, out)
        return out.made(self.agent_id, covered_end, digest, seal, current)

    def _copy(self, run: list[int], out: _Columns) -> None:
        """Append this map's scenes ``run`` (consecutive) to ``out``, whose columns are arrays."""
        if not run:
            return
        first_scene, last_scene = run[0], run[-1] + 1
        first, last = self._start(self.scene_ends, first_scene), self.scene_ends[run[-1]]
        base = self._start(self.topic_ends, first) if last > first else 0
        end = self.topic_ends[last - 1] if last > first else base
        _extend(out.scene_ids, self.scene_ids[first_scene:last_scene])
        _extend(out.scene_ends, self.scene_ends[first_scene:last_scene], len(out.topic_ids) - first)
        _extend(out.topic_ids, self.topic_ids[first:last])
        _extend(out.topic_ends, self.topic_ends[first:last], len(out.member_ids) - base)
        _extend(out.member_ids, self.member_ids[base:end])

    def verified(self) -> None:
        """Check every byte of the map (a decoded one) as written; ValueError if one is not."""
        for column, values in enumerate(self.columns()):
            self.verify(column, 0, len(values))

    def columns(self) -> Sequence[Ints]:
        """The five columns, in file order."""
        return (self.scene_ids, self.scene_ends, self.topic_ids, self.topic_ends, self.member_ids)

    def _scene_index(self, scene_id: int) -> int | None:
        ids = self.scene_ids
        k = bisect_left(ids, scene_id)
        return k if k < len(ids) and ids[k] == scene_id else None

    @staticmethod
    def _start(ends: Ints, k: int) -> int:
        return ends[k - 1] if k else 0

    def check(self, *, whole: bool = True) -> None:
        """Raise ValueError unless the arrays describe a well-formed map.

        ``whole=False`` checks only what costs nothing per scene (the digest,
        the counts, the sums of the ends): the order checks grow with the
        domain, so a read checks the ranges it uses instead, and an open that
        reads one scene costs that scene.
        """
        if len(self.digest) != 16:
            msg = "scene map: a digest is not 16 bytes"
            raise ValueError(msg)
        if whole:
            self.verified()
        elif self.topic_ends:
            self.verify(3, len(self.topic_ends) - 1, len(self.topic_ends))
        if whole:
            scenes = self.scene_ids.tolist()
            if not _ascending(scenes) or len(set(scenes)) != len(scenes):
                msg = "scene map: scene ids are not strictly ascending"
                raise ValueError(msg)
        for ends, total, what in (
            (self.scene_ends, len(self.topic_ids), "topic"),
            (self.topic_ends, len(self.member_ids), "member"),
        ):
            if (whole and not _ascending(ends.tolist())) or (ends[-1] if ends else 0) != total:
                msg = f"scene map: the {what} ends do not add up"
                raise ValueError(msg)
        if len(self.scene_ends) != len(self.scene_ids) or len(self.topic_ends) != len(
            self.topic_ids
        ):
            msg = "scene map: a count does not match its array"
            raise ValueError(msg)


@dataclass(slots=True)
class _Columns:
    """The columns of a map being made."""

    scene_ids: array[int] = field(default_factory=lambda: array("Q"))
    scene_ends: array[int] = field(default_factory=lambda: array("I"))
    topic_ids: array[int] = field(default_factory=lambda: array("Q"))
    topic_ends: array[int] = field(default_factory=lambda: array("I"))
    member_ids: array[int] = field(default_factory=lambda: array("Q"))

    def add(self, scene_id: int, topics: Iterable[tuple[int, Iterable[int]]]) -> None:
        """Append a scene and its topics, each with its member ids."""
        for topic_id, members in topics:
            self.topic_ids.append(topic_id)
            self.member_ids.extend(members)
            self.topic_ends.append(len(self.member_ids))
        self.scene_ids.append(scene_id)
        self.scene_ends.append(len(self.topic_ids))

    def made(
        self,
        agent_id: int,
        covered_end: int,
        digest: bytes,
        seal: int,
        current: Current,
    ) -> DomainMap:
        """The map of these columns; ValueError unless it is well formed."""
        made = DomainMap(
            agent_id,
            covered_end,
            digest,
            seal,
            *current,
            self.scene_ids,
            self.scene_ends,
            self.topic_ids,
            self.topic_ends,
            self.member_ids,
        )
        made.check()
        return made


def _extend(column: array[int], values: Ints, shift: int = 0) -> None:
    """Append ``values`` to a column, each plus ``shift`` (a copy in C when 0)."""
    if shift:
        column.extend(value + shift for value in values)
    else:
        column.frombytes(bytes(values))  # both in the machine's byte order


def _position(ids: Ints, wanted: int) -> int:
    """The place of ``wanted`` in a u64 column, or -1: a byte search, in C.

    A topic written since the map is looked for here every time a view lists
    it, so this must not cost a Python object per topic of the domain.
    """
    raw = bytes(ids)  # in the machine's byte order, as decoding left it
    pattern = struct.pack("=Q", wanted)
    at = raw.find(pattern)
    while at >= 0 and at % 8:  # a match across two ids
        at = raw.find(pattern, at + 1)
    return -1 if at < 0 else at // 8


def _ascending(listed: list[int]) -> bool:
    # Sorting what is already in order is one linear pass in C: a map's arrays run
    # to millions of entries.
    return listed == sorted(listed)
