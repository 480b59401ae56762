"""Decoded content slots of one domain, kept while the file still holds them unchanged.

Decoding a record costs far more than finding it, and a scene read decodes
every line of the scene. Slots are kept as they are read, never as they are
written (a write cannot know whether anyone reads it back, and holding every
written slot cost each turn 5% of its CPU). An entry is valid only while the
engine's index still points at the same frame offset: an overwrite moves the
offset and a delete removes it, so no writer has to remember to invalidate
anything.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from memhop.engine import Engine
from memhop.layers import archive
from memhop.records import ArchiveSlot

DEFAULT_LIMIT = 4_096
"""Decoded slots kept: a bound on memory, not on correctness. About 1 KiB and a dozen
objects every full collection of the interpreter walks each (16,384 held 16 MB and
a third of a full collection's work at 20,000 turns); a few long scenes' worth."""
RECORD_LIMIT = 64  # other decoded records (the profile, scenes in use)

R = TypeVar("R")


class SlotCache:
    """A bounded LRU of decoded slots, keyed by id and checked against the frame offset."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self._limit = limit
        # Least recently used first; a slot's frame offset apart, in a dict of ints the
        # collector does not walk (a tuple a slot would be one more object it does).
        self._slots: OrderedDict[int, ArchiveSlot] = OrderedDict()
        self._slot_at: dict[int, int] = {}
        # Each value is what its id's reader returned (``record``'s R for that id).
        self._records: OrderedDict[int, tuple[int, Any]] = OrderedDict()

    @property
    def limit(self) -> int:
        return self._limit

    def __len__(self) -> int:
        return len(self._slots)

    def record(
        self, engine: Engine, agent_id: int, id_hash: int, read: Callable[[Engine, int, int], R]
    ) -> R:
        """Return ``read(engine, agent_id, id_hash)``, the decoded record at ``id_hash``,
        reusing it while its frame stays.

        For the few other records a turn reads every time (the profile, its
        scene). An absent record is read every time (``read`` answers for it).
        A reader, not a closure: a turn asks three times.
        """
        offset = engine.offset_of(agent_id, id_hash)
        held = self._records.get(id_hash)
        if offset is not None and held is not None and held[0] == offset:
            self._records.move_to_end(id_hash)
            kept: R = held[1]  # stored by a reader of this id
            return kept
        value = read(engine, agent_id, id_hash)
        # Kept only if nothing moved the record while it was read.
        if (
            value is not None
            and offset is not None
            and engine.offset_of(agent_id, id_hash) == offset
        ):
            self._hold(id_hash, offset, value)
        return value

    def keep_at(self, id_hash: int, offset: int, value: object) -> None:
        """Keep a record just written at ``offset`` (the write's own answer), for
        ``record``'s next read of it."""
        self._hold(id_hash, offset, value)

    def _hold(self, id_hash: int, offset: int, value: object) -> None:
        self._records[id_hash] = (offset, value)
        self._records.move_to_end(id_hash)
        while len(self._records) > RECORD_LIMIT:
            self._records.popitem(last=False)

    def remember(self, engine: Engine, agent_id: int, slots: Iterable[ArchiveSlot]) -> None:
        """Keep slots just read, at the frame offsets the engine's index holds for them now
        (a record moved or deleted meanwhile is not kept)."""
        given = list(slots)
        offsets = engine.offsets_of(agent_id, [s.id_hash for s in given])
        held, held_at = self._slots, self._slot_at
        for slot, offset in zip(given, offsets, strict=True):
            if offset is not None:
                held[slot.id_hash] = slot
                held.move_to_end(slot.id_hash)
                held_at[slot.id_hash] = offset
        while len(held) > self._limit:
            del self._slot_at[self._slots.popitem(last=False)[0]]

    def read(
        self, engine: Engine, agent_id: int, ids: Iterable[int], *, keep: bool = True
    ) -> list[ArchiveSlot]:
        """Return the live slots among ``ids``, ascending by id, reading only what changed.

        Reads are as ``archive.read_contents``: a damaged record is left out
        (the engine logs and counts it); any other failure raises.
        """
        found: dict[int, ArchiveSlot] = {}
        misses: list[int] = []
        wanted = list(ids)
        for id_hash, offset in zip(wanted, engine.offsets_of(agent_id, wanted), strict=True):
            if offset is None:
                continue
            held = self._slots.get(id_hash)
            if held is not None and self._slot_at.get(id_hash) == offset:
                found[id_hash] = held
                self._slots.move_to_end(id_hash)
            else:
                misses.append(id_hash)
        if misses:
            fresh = archive.read_contents(engine, agent_id, misses)
            if keep:
                self.remember(engine, agent_id, fresh)
            found.update((s.id_hash, s) for s in fresh)
        return [found[i] for i in sorted(found)]
