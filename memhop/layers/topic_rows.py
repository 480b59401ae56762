"""Every topic of a domain, read for the domain load: the usual payload by one pattern.

Responsibility: the topic mirror's load decodes every topic record of the
domain; this reads the shape Go and memhop write (no whitespace, keys in
field order, strings without escapes) with one anchored pattern and decodes
anything else in full, so a long-lived domain opens faster.

Contract: the same topics, with the same field values, as
``TopicSlot.from_json`` of each record (Go's rules); damaged records are
skipped and counted by the engine; any other failure raises.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from memhop.engine import Engine
from memhop.records import RecordType, TopicSlot
from memhop.records.shapes import DAMAGE, I64, INT, U64, UINT, u8_digits

__all__ = ["all_topic_rows"]

_PLAIN = rb'"[^"\\\x00-\x1f]*"'  # a string with no escape: its bytes are its text
_DEPTHS = u8_digits()  # a depth over 255 is missing here
_SHAPE = re.compile(
    rb'\{"id":' + UINT + rb',"scene_id":' + UINT + rb'(?:,"parent_id":' + UINT + rb")?"
    + rb',"depth":' + UINT + rb'(?:,"name":(' + _PLAIN + rb"))?"
    + rb',"fused_keywords":(null|\[(?:' + _PLAIN + rb"(?:," + _PLAIN + rb")*)?\])"
    + rb',"user_timestamp":' + INT + rb',"agent_timestamp":' + INT + rb"\}",
    re.DOTALL,
)  # fmt: skip


def _fast(
    id_hash: int, payload: bytes, pool: dict[str, str], ints: dict[int, int]
) -> TopicSlot | None:
    """The topic of a payload in the usual shape, or None to decode it in full."""
    m = _SHAPE.fullmatch(payload)
    if m is None:
        return None
    topic, scene, parent, depth, name, words, user_ts, agent_ts = m.groups()
    topic_id, scene_id, user_at, agent_at = int(topic), int(scene), int(user_ts), int(agent_ts)
    parent_id = None if parent is None else int(parent)
    depth_n = _DEPTHS.get(depth)
    if (
        depth_n is None
        or max(topic_id, scene_id, parent_id or 0) >= U64
        or not (-I64 <= user_at < I64 and -I64 <= agent_at < I64)
    ):
        return None  # out of range: the full decode names the error
    try:  # invalid UTF-8 takes Go's replacement rules: the full decode applies them
        listed = words.decode("utf-8")
        text = "" if name is None else name[1:-1].decode("utf-8")
    except UnicodeDecodeError:
        return None
    # No string holds a quote or an escape, so the array splits on its separators.
    split = listed[2:-2].split('","') if len(listed) > 2 and listed[0] == "[" else ()
    # One int object per value the mirror keeps many of: the id is the engine's own key,
    # a scene's id is shared by its rows, and a turn's stamps by its row and its lines.
    return TopicSlot(
        id=ints.setdefault(topic_id, id_hash if id_hash == topic_id else topic_id),
        scene_id=ints.setdefault(scene_id, scene_id),
        parent_id=None if parent_id is None else ints.setdefault(parent_id, parent_id),
        depth=depth_n,
        name=text,
        fused_keywords=tuple(map(pool.setdefault, split, split)),
        user_timestamp=ints.setdefault(user_at, user_at),
        agent_timestamp=ints.setdefault(agent_at, agent_at),
    )


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
            row = _fast(id_hash, payload, pool, ints) or TopicSlot.from_json(payload)
        except DAMAGE as exc:
            engine.note_damaged(agent_id, id_hash, exc)
            continue
        found.append(row)
        if misplaced is not None and row.id != id_hash:
            misplaced.append(id_hash)
    return found
