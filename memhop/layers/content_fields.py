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

import re
from collections.abc import Iterator
from typing import NamedTuple

from memhop.engine import Engine
from memhop.errors import CorruptionError, CRCMismatchError, DeserializationError, NotFoundError
from memhop.records import ArchiveSlot, RecordType
from memhop.records.codes import ArchiveKind, ArchiveRole, ContentType

__all__ = ["ContentFields", "all_content_fields", "live_payloads"]

_DAMAGE = (CRCMismatchError, CorruptionError, DeserializationError)
# Code -> enum member, as ``known`` maps it (a code without a member stays an int).
_KINDS: dict[int, int] = {int(m): m for m in ArchiveKind}
_TYPES: dict[int, int] = {int(m): m for m in ContentType}
_ROLES: dict[int, int] = {int(m): m for m in ArchiveRole}
_U64 = 1 << 64
_I64 = 1 << 63

_UINT = rb"(0|[1-9][0-9]*)"
_STRING = rb'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"'
_SHAPE = re.compile(
    rb'\{"id_hash":' + _UINT + rb',"kind":' + _UINT + rb',"seq":' + _UINT
    + rb',"content_type":' + _UINT + rb',"role":' + _UINT + rb',"topic_id":' + _UINT
    + rb'(?:,"event_type":' + _STRING + rb")?"
    + rb'(?:,"node_seq":' + _UINT + rb")?"
    + rb',"created_at":(-?(?:0|[1-9][0-9]*)),"content":' + _STRING + rb"\}",
    re.DOTALL,
)  # fmt: skip


class ContentFields(NamedTuple):
    """One content slot's fields, text left out; ``id_hash`` is its record id."""

    id_hash: int
    topic_id: int
    seq: int
    kind: int
    content_type: int
    role: int
    node_seq: int
    created_at: int


def _fast(id_hash: int, payload: bytes, pool: dict[int, int]) -> ContentFields | None:
    """The fields of a payload in the usual shape, or None to decode it in full."""
    m = _SHAPE.fullmatch(payload)
    if m is None:
        return None
    _, kind, seq, ctype, role, topic, node, created = m.groups()
    seq_n, topic_n, created_n = int(seq), int(topic), int(created)
    kind_n, ctype_n, role_n = int(kind), int(ctype), int(role)
    node_n = int(node) if node is not None else 0
    if (
        max(kind_n, ctype_n, role_n) > 0xFF
        or seq_n >= _U64
        or topic_n >= _U64
        or node_n >= 1 << 32
        or not -_I64 <= created_n < _I64
        or int(m.group(1)) >= _U64
    ):
        return None  # out of range: the full decode names the error
    return ContentFields(
        id_hash,
        pool.setdefault(topic_n, topic_n),
        seq_n,
        _KINDS.get(kind_n, kind_n),
        _TYPES.get(ctype_n, ctype_n),
        _ROLES.get(role_n, role_n),
        node_n,
        pool.setdefault(created_n, created_n),
    )


def _decoded(id_hash: int, payload: bytes, pool: dict[int, int]) -> ContentFields:
    slot = ArchiveSlot.from_json(payload)
    return ContentFields(
        id_hash,
        pool.setdefault(slot.topic_id, slot.topic_id),
        slot.seq,
        slot.kind,
        slot.content_type,
        slot.role,
        slot.node_seq,
        pool.setdefault(slot.created_at, slot.created_at),
    )


def live_payloads(engine: Engine, agent_id: int, rec_type: int) -> Iterator[tuple[int, bytes]]:
    """(id, payload) of every readable record of one type in the domain, ascending by id.

    A record gone since the listing is skipped; a damaged frame is skipped and
    counted by the engine; any other failure raises.
    """
    for id_hash in engine.ids_of_type(agent_id, rec_type):
        try:
            frame = engine.read(agent_id, id_hash)
        except NotFoundError:
            continue  # gone since the listing
        except _DAMAGE:
            continue  # the engine logged and counted it
        if frame.rec_type == rec_type:
            yield id_hash, frame.payload


def all_content_fields(
    engine: Engine, agent_id: int, ints: dict[int, int] | None = None
) -> list[ContentFields]:
    """Every readable content slot of the domain, ascending by id, text left out.

    ``ints`` pools int objects (``all_topic_rows`` may have filled it).
    """
    found: list[ContentFields] = []
    # One int object per topic id and per stamp: a topic's slots share both, and the
    # mirror holds these rows for as long as the domain is open.
    pool: dict[int, int] = {} if ints is None else ints
    for id_hash, payload in live_payloads(engine, agent_id, RecordType.ARCHIVE):
        try:
            found.append(_fast(id_hash, payload, pool) or _decoded(id_hash, payload, pool))
        except _DAMAGE as exc:
            engine.note_damaged(agent_id, id_hash, exc)
    return found
