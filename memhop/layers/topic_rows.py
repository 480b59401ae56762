"""Every topic of a domain, read for the domain load: the usual payload by one pattern.

Responsibility: the topic mirror's load decodes every topic record of the
domain; this reads the shape Go and memhop write (no whitespace, keys in
field order, strings without escapes) with one anchored pattern
(``TopicSlot.from_plain``) and decodes anything else in full, so a
long-lived domain opens faster.

Contract: the same topics, with the same field values, as
``TopicSlot.from_json`` of each record (Go's rules); damaged records are
skipped and counted by the engine; any other failure raises.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memhop.engine import Engine
from memhop.records import RecordType, TopicSlot
from memhop.records.shapes import DAMAGE

__all__ = ["all_topic_rows"]


def all_topic_rows(
    engine: Engine,
    agent_id: int,
    ints: dict[int, int] | None = None,
    misplaced: list[int] | None = None,
) -> list[TopicSlot]:
    """Every readable topic of the domain, ascending by id (damage skipped and counted).

    ``ints`` pools the int objects of ids and stamps; pass the same dict to
    ``all_content_fields`` so a turn's lines share them with its row. The
    address of a topic whose payload names another id is added to ``misplaced``.
    """
    payloads = engine.payloads_of_type(agent_id, RecordType.TOPIC)
    return _rows(engine, agent_id, payloads, ints, misplaced)


def topic_rows_of(
    engine: Engine, agent_id: int, ids: Sequence[int], misplaced: list[int]
) -> list[TopicSlot]:
    """The readable topics among ``ids``, in their order, as ``all_topic_rows`` gives them.

    An id that holds no topic is left out; damage is skipped and counted.
    """
    payloads = engine.payloads_of(agent_id, RecordType.TOPIC, ids)
    return _rows(engine, agent_id, payloads, None, misplaced)


def _rows(
    engine: Engine,
    agent_id: int,
    payloads: Iterable[tuple[int, bytes]],
    ints: dict[int, int] | None,
    misplaced: list[int] | None,
) -> list[TopicSlot]:
    found: list[TopicSlot] = []
    pool: dict[str, str] = {}  # one copy of each keyword: tracks repeat a small vocabulary
    ints = {} if ints is None else ints
    for id_hash, payload in payloads:
        try:
            row = TopicSlot.from_plain(id_hash, payload, pool, ints) or TopicSlot.from_json(payload)
        except DAMAGE as exc:
            engine.note_damaged(agent_id, id_hash, exc)
            continue
        found.append(row)
        if misplaced is not None and row.id != id_hash:
            misplaced.append(id_hash)
    return found
