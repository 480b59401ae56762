"""LiveIndex: where each live record's frame is, and which live ids have which type.

One map, ``agent -> IntMap`` (id hash -> frame offset, live records
only, with each frame's type byte read on the domain's first typed question
and kept current after). A typed question asked again and again (``recurring``:
a background pass's, of a rare type) keeps its answer, an ascending array kept
current by every write and delete after it, so the next costs a copy of what it
lists rather than a scan of the domain. Not thread-safe on its own: the engine
calls it under its lock, and only after the frames it names are on disk.

Every record it indexes or drops is counted by (agent, type) as the change is
made (``changes_of``): a reader that keeps copies of some records (Dream's
structure cache) compares two readings, and equal counts mean no record of that
type changed between them. Counted with the change, not with the append before
its fsync, a count never runs ahead of what a read can see.
"""

from __future__ import annotations

import mmap
from array import array
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from memhop.engine.storefile import StoreFile
from memhop.intmap import UNTYPED, IntMap

Placement = tuple[int, int, int, int]
"""Where a frame of an appended blob belongs: (agent id, id hash, record type, offset in blob)."""


class LiveIndex:
    """The engine's in-memory view of which records are live and where their frames sit."""

    __slots__ = ("_changes", "_kept", "offsets")

    def __init__(self, offsets: Mapping[int, Mapping[int, int]]) -> None:
        # agent -> id hash -> frame offset: read it freely, change it only through the methods.
        self.offsets: dict[int, IntMap] = {}
        # (agent, type) -> the live ids of that type, ascending: the recurring questions.
        self._kept: dict[tuple[int, int], array[int]] = {}
        # agent -> records indexed or dropped so far, by type (a type is a byte): a count
        # a write adds to by place, with no key to build and hash; kept across ``adopt``.
        self._changes: defaultdict[int, list[int]] = defaultdict(_no_changes)
        self.adopt(offsets)

    def changes_of(self, agent_id: int, rec_type: int) -> int:
        """Records of ``rec_type`` the domain had indexed or dropped (writes and deletes)."""
        counts = self._changes.get(agent_id)
        return 0 if counts is None else counts[rec_type]

    def changes(self) -> int:
        """Every change counted, every domain and type together."""
        return sum(map(sum, self._changes.values()))

    def count(self) -> int:
        """Return how many records are live."""
        return sum(len(ids) for ids in self.offsets.values())

    def ids_of_type(
        self, agent_id: int, rec_type: int, file: StoreFile, *, recurring: bool = False
    ) -> list[int]:
        """Return the domain's live ids whose frame has type ``rec_type``, ascending.

        The first typed question about a domain reads every frame's type byte
        once: an open reads no frame, and a session pays only for the domains
        it touches. Entries past the log have no type and are left out.
        ``recurring``: keep the answer current from here on (see the module).
        """
        kept = self._kept.get((agent_id, rec_type))
        if kept is not None:
            return kept.tolist()
        ids = self.offsets.get(agent_id)
        if ids is None:
            return []
        view, size = _for_tags(ids, file)
        found = ids.ids_of_type(rec_type, view, size)
        if recurring and ids.type_some(b"", 0, 0):  # every tag known: puts keep it so
            self._kept[(agent_id, rec_type)] = array("Q", found)
        return found

    def type_some(self, agent_id: int, file: StoreFile, budget: int) -> bool:
        """Read about ``budget`` of the domain's untyped tags (``IntMap.type_some``); True
        when a typed question reads no frame any more."""
        ids = self.offsets.get(agent_id)
        return ids is None or ids.type_some(*_for_tags(ids, file), budget)

    def typed(
        self, agent_id: int, id_hashes: Iterable[int], file: StoreFile
    ) -> list[tuple[int, int]]:
        """Return (id, record type) for each live id among ``id_hashes``, in their order.

        The type is the frame's type byte, 0 for an entry past the log.
        """
        live = self.offsets.get(agent_id)
        if live is None:
            return []
        placed = [(i, offset) for i in id_hashes if (offset := live.get(i)) is not None]
        inside = [offset for _, offset in placed if offset < file.size]
        # The mapping made last when it holds every type byte asked for (a remap after each
        # write costs what the process has touched of the file).
        view = file.view_to(max(inside) + 1) if inside else b""
        return [(i, view[offset] if offset < file.size else 0) for i, offset in placed]

    def put(self, base: int, placements: Sequence[Placement]) -> None:
        """Index appended frames in order (later duplicates win); the hot path of every write."""
        index, kept, changes = self.offsets, self._kept, self._changes
        for agent_id, id_hash, rec_type, rel in placements:
            ids = index.get(agent_id)
            if ids is None:
                ids = index[agent_id] = IntMap()
            was = ids.put(id_hash, base + rel, rec_type)
            changes[agent_id][rec_type] += 1
            if (
                kept
                and was != rec_type
                and ((agent_id, rec_type) in kept or (agent_id, was) in kept or was == UNTYPED)
            ):
                self._retype(agent_id, id_hash, was, rec_type)

    def drop(self, agent_id: int, id_hash: int, rec_type: int) -> None:
        """Forget one record of ``rec_type`` (tombstoned); absent ids are ignored."""
        ids = self.offsets.get(agent_id)
        if ids is None or not ids.discard(id_hash):
            return
        self._changes[agent_id][rec_type] += 1
        if self._kept:
            self._retype(agent_id, id_hash, rec_type, None)
        if not ids:
            del self.offsets[agent_id]
            self._kept = {key: found for key, found in self._kept.items() if key[0] != agent_id}

    def _retype(self, agent_id: int, id_hash: int, was: int, now: int | None) -> None:
        """Move ``id_hash`` between the kept answers: out of ``was``'s (every one's when
        its tag was unknown), into ``now``'s (None: deleted)."""
        for (agent, rec_type), found in self._kept.items():
            if agent != agent_id or (was not in (rec_type, UNTYPED) and rec_type != now):
                continue
            at = bisect_left(found, id_hash)
            present = at < len(found) and found[at] == id_hash
            if rec_type == now and not present:
                found.insert(at, id_hash)
            elif rec_type != now and present:
                del found[at]

    def adopt(self, offsets: Mapping[int, Mapping[int, int]]) -> None:
        """Replace every entry with ``offsets`` (packed ones taken over, not copied); the
        counts go on (a swap to a compacted copy changes no record)."""
        self.offsets = {agent: IntMap.from_mapping(ids) for agent, ids in offsets.items() if ids}
        self._kept = {}

    def clear(self) -> None:
        """Forget every entry (a new map: a ``live_index()`` proxy handed out keeps the old
        one); the counts go on."""
        self.offsets = {}
        self._kept = {}


def _no_changes() -> list[int]:
    return [0] * 256  # one count for each type a frame's byte can name


def _for_tags(ids: IntMap, file: StoreFile) -> tuple[mmap.mmap | bytes, int]:
    """What ``ids``'s typed questions read: nothing once every tag is known (a map of the
    file made again after each write costs what the process has touched of it)."""
    if ids.type_some(b"", 0, 0):
        return b"", 0
    return file.view(), file.size
