"""LiveIndex: where each live record's frame is, and which live ids have which type.

Two maps: ``agent -> id hash -> frame offset`` (live records only), and
``agent -> record type -> ids``, built per domain from the frames' type bytes
on first use and kept current by every later change. Not thread-safe on its
own: the engine calls it under its lock, and only after the frames it names
are on disk.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memhop.engine.recovery import group_by_type
from memhop.engine.snapshot import Index
from memhop.engine.storefile import StoreFile

TypeIndex = dict[int, dict[int, set[int]]]
Placement = tuple[int, int, int, int]
"""Where a frame of an appended blob belongs: (agent id, id hash, record type, offset in blob)."""


class LiveIndex:
    """The engine's in-memory view of which records are live and where their frames sit."""

    __slots__ = ("_types", "offsets")

    def __init__(self, offsets: Index) -> None:
        # agent -> id hash -> frame offset: read it freely, change it only through the methods.
        self.offsets = offsets
        # Built per domain on first use (``types_of``): an open reads no
        # frame, and a session pays only for the domains it touches.
        self._types: TypeIndex = {}

    def count(self) -> int:
        """Return how many records are live."""
        return sum(len(ids) for ids in self.offsets.values())

    def types_of(self, agent_id: int, file: StoreFile) -> dict[int, set[int]]:
        """Return the domain's type index, building it from the frames' type bytes once."""
        by_type = self._types.get(agent_id)
        if by_type is None:
            ids = self.offsets.get(agent_id, {})
            by_type = group_by_type(file.view(), file.size, ids)
            self._types[agent_id] = by_type
        return by_type

    def typed(
        self, agent_id: int, id_hashes: Iterable[int], file: StoreFile
    ) -> list[tuple[int, int]]:
        """Return (id, record type) for each live id among ``id_hashes``, in their order.

        The type is the frame's type byte, 0 for an entry past the log.
        """
        live = self.offsets.get(agent_id, {})
        view = file.view()
        found: list[tuple[int, int]] = []
        for id_hash in id_hashes:
            offset = live.get(id_hash)
            if offset is not None:
                rec_type = view[offset] if offset < file.size else 0
                found.append((id_hash, rec_type))
        return found

    def put(self, base: int, placements: Sequence[Placement]) -> None:
        """Index appended frames in order (later duplicates win); the hot path of every write."""
        index, types = self.offsets, self._types
        for agent_id, id_hash, rec_type, rel in placements:
            ids = index.get(agent_id)
            if ids is None:  # a new domain: its (empty) type index is complete
                ids = index[agent_id] = {}
                types[agent_id] = {}
            by_type = types.get(agent_id)
            if by_type is not None:  # else it is built from the frames on first use
                if id_hash in ids:  # an overwrite may change the record's type
                    for stale in by_type.values():
                        stale.discard(id_hash)
                members = by_type.get(rec_type)
                if members is None:
                    members = by_type[rec_type] = set()
                members.add(id_hash)
            ids[id_hash] = base + rel

    def drop(self, agent_id: int, id_hash: int) -> None:
        """Forget one record (tombstoned); absent ids are ignored."""
        ids = self.offsets.get(agent_id)
        if ids is None or ids.pop(id_hash, None) is None:
            return
        by_type = self._types.get(agent_id, {})
        for rec_type in list(by_type):
            by_type[rec_type].discard(id_hash)
            if not by_type[rec_type]:
                del by_type[rec_type]
        if not ids:
            del self.offsets[agent_id]
            self._types.pop(agent_id, None)

    def adopt(self, offsets: Index) -> None:
        """Replace everything with ``offsets`` (taken over, not copied); types rebuild lazily."""
        self.offsets = {agent: ids for agent, ids in offsets.items() if ids}
        self._types = {}

    def clear(self) -> None:
        """Forget everything. New maps, so a ``live_index()`` proxy handed out keeps the old one."""
        self.offsets, self._types = {}, {}
