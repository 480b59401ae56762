"""L4 content slots: one utterance or event per (topic, seq) address.

Responsibility: write a slot at ``ids.content_id(topic_id, seq)`` (a second
write at the same seq replaces the first, whatever its kind), read one address,
read a set of ids or the whole domain strictly, and tombstone ids. Slot
allocation, validation and the mirror update belong to the root.

Contract:
- The address is derived from ``(topic_id, seq)``, never taken from the
  caller's ``id_hash``; records come back carrying the id they are stored at.
- ``read_slot_optional`` answers None only for "absent" (or a record of
  another type at that id); a record that will not read raises with its code.
- Strict reads stop at the first record that will not read, so a caller that
  decides an overwrite or a delete from them never acts on a partial view.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from memhop.engine import Engine
from memhop.ids import content_id
from memhop.layers import codec
from memhop.records import ArchiveSlot

__all__ = [
    "all_contents",
    "delete_contents",
    "read_contents",
    "read_slot_optional",
    "write_content",
    "write_contents",
]


def _addressed(id_hash: int, slot: ArchiveSlot) -> ArchiveSlot:
    """Return ``slot`` carrying ``id_hash``.

    The engine id is what deletes and mirrors key on, so it wins over a
    payload that names another id (a foreign or damaged writer).
    """
    if slot.id_hash == id_hash:
        return slot
    return dataclasses.replace(slot, id_hash=id_hash)


def write_content(engine: Engine, agent_id: int, slot: ArchiveSlot) -> ArchiveSlot:
    """Write ``slot`` at its (topic, seq) address, replacing what is there; return it as stored."""
    return write_contents(engine, agent_id, [slot])[0]


def write_contents(
    engine: Engine, agent_id: int, slots: Sequence[ArchiveSlot]
) -> list[ArchiveSlot]:
    """Write several slots of one domain with one fsync; return them as stored.

    Two slots with one address in the batch: the later one wins, as on disk.
    """
    stored = [_addressed(content_id(s.topic_id, s.seq), s) for s in slots]
    if stored:
        codec.write_many(engine, agent_id, [(s.id_hash, s) for s in stored])
    return stored


def read_slot_optional(
    engine: Engine, agent_id: int, topic_id: int, seq: int
) -> ArchiveSlot | None:
    """Return the slot at (topic, seq), None when absent; an unreadable record raises."""
    id_hash = content_id(topic_id, seq)
    slot = codec.read_optional(engine, agent_id, id_hash, ArchiveSlot)
    return None if slot is None else _addressed(id_hash, slot)


def read_contents(engine: Engine, agent_id: int, ids: Iterable[int]) -> list[ArchiveSlot]:
    """Return the content slots among ``ids`` that exist and read, ascending by id.

    Absent ids, ids holding another record type and damaged records (counted
    by the engine) are skipped; any other failure raises.
    """
    wanted = sorted(set(ids))
    pairs = codec.read_many(engine, agent_id, wanted, ArchiveSlot)
    return [_addressed(i, s) for i, s in pairs]


def all_contents(engine: Engine, agent_id: int) -> list[ArchiveSlot]:
    """Return every readable content slot of the domain, ascending by id (damage skipped)."""
    return [_addressed(i, s) for i, s in codec.collect(engine, agent_id, ArchiveSlot)]


def delete_contents(engine: Engine, agent_id: int, ids: Iterable[int]) -> int:
    """Tombstone the live ids among ``ids`` in one batch; return how many went.

    The caller passes content ids (from the L4 mirror or a read): the
    engine deletes any live id it is given, whatever its type.
    """
    return engine.delete_batch(agent_id, ids)
