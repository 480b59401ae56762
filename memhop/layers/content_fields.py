"""Every content slot of a domain without its text: what the L4 mirror is built from.

Responsibility: read each live content record once and return the fields the
mirror filters on, skipping the decode of the text itself, which is most of a
record and which the mirror never holds.

Contract:
- The same slots, with the same field values, as decoding each record with
  ``ArchiveSlot.from_json`` (Go's rules) and addressing it by its record id:
  a payload in the exact shape Go and memhop write is read by one anchored
  pattern; any other shape (whitespace, another key order, a repeated key, a
  value out of range) is decoded in full.
- Damaged records are skipped and counted by the engine, as the other
  domain-wide reads do; any other failure (I/O, a closed file) raises.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memhop.engine import Engine
from memhop.records import ArchiveSlot, RecordType, SlotHeader
from memhop.records.archive import ARCHIVE_SHAPE, plain_numbers
from memhop.records.shapes import DAMAGE

__all__ = ["all_content_fields", "content_fields_of"]


def _fast(id_hash: int, payload: bytes, pool: dict[int, int]) -> SlotHeader | None:
    """The fields of a payload in the usual shape, or None to decode it in full."""
    m = ARCHIVE_SHAPE.fullmatch(payload)
    numbers = None if m is None else plain_numbers(m)
    if numbers is None:
        return None  # another shape, or out of range: the full decode names the error
    _, kind, seq, ctype, role, topic, node, created = numbers
    return SlotHeader(
        id_hash,
        pool.setdefault(topic, topic),
        seq,
        kind,
        ctype,
        role,
        node,
        pool.setdefault(created, created),
    )


def _decoded(id_hash: int, payload: bytes, pool: dict[int, int]) -> SlotHeader:
    slot = ArchiveSlot.from_json(payload)
    return SlotHeader(
        id_hash,
        pool.setdefault(slot.topic_id, slot.topic_id),
        slot.seq,
        slot.kind,
        slot.content_type,
        slot.role,
        slot.node_seq,
        pool.setdefault(slot.created_at, slot.created_at),
    )


def all_content_fields(
    engine: Engine, agent_id: int, ints: dict[int, int] | None = None
) -> list[SlotHeader]:
    """Every readable content slot of the domain, ascending by id, text left out.

    ``ints`` pools int objects (``all_topic_rows`` may have filled it).
    """
    return _fields(engine, agent_id, engine.payloads_of_type(agent_id, RecordType.ARCHIVE), ints)


def content_fields_of(engine: Engine, agent_id: int, ids: Sequence[int]) -> list[SlotHeader]:
    """The readable content slots among ``ids``, in their order, as ``all_content_fields``.

    An id that holds no content slot is left out; damage is skipped and counted.
    """
    return _fields(engine, agent_id, engine.payloads_of(agent_id, RecordType.ARCHIVE, ids), None)


def _fields(
    engine: Engine,
    agent_id: int,
    payloads: Iterable[tuple[int, bytes]],
    ints: dict[int, int] | None,
) -> list[SlotHeader]:
    found: list[SlotHeader] = []
    # One int object per topic id and per stamp: a topic's slots share both, and the
    # mirror holds these rows for as long as the domain is open.
    pool: dict[int, int] = {} if ints is None else ints
    for id_hash, payload in payloads:
        try:
            found.append(_fast(id_hash, payload, pool) or _decoded(id_hash, payload, pool))
        except DAMAGE as exc:
            engine.note_damaged(agent_id, id_hash, exc)
    return found
