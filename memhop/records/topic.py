"""L2 topic payload (type 0x04): one turn, or a consolidation parent over turns."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Self

from memhop.frozen import quick_init
from memhop.records.codes import RecordType
from memhop.records.compiled import topic as _compiled_json
from memhop.records.gojson import I64_MAX, I64_MIN, ObjectWriter, is_u64, plain_string
from memhop.records.goread import read_object
from memhop.records.shapes import I64, INT, PLAIN_STRING, U64, UINT, u8_digits

__all__ = ["TopicSlot"]

_DEPTHS = u8_digits()  # a depth over 255 is missing here
_PLAIN_SHAPE = re.compile(
    rb'\{"id":' + UINT + rb',"scene_id":' + UINT + rb'(?:,"parent_id":' + UINT + rb")?"
    + rb',"depth":' + UINT + rb'(?:,"name":(' + PLAIN_STRING + rb"))?"
    + rb',"fused_keywords":(null|\[(?:' + PLAIN_STRING + rb"(?:," + PLAIN_STRING + rb")*)?\])"
    + rb',"user_timestamp":' + INT + rb',"agent_timestamp":' + INT + rb"\}",
    re.DOTALL,
)  # fmt: skip
"""A payload as Go and memhop write it whose strings hold no escape; its groups: id,
scene_id, parent_id (or None), depth, name (quoted, or None), fused_keywords (the array or
``null``), user_timestamp, agent_timestamp."""


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TopicSlot:
    """A topic: a turn (``ids.turn_topic_id``) or fused parent (``ids.fused_topic_id``).

    ``parent_id`` None is a depth-1 root and leaves the key out of the JSON; a
    present 0 is written as 0, as Go writes a non-nil pointer. Depth 1 is the
    surface, 2 and deeper are sunk. An empty ``name`` leaves its key out.
    """

    RECORD_TYPE: ClassVar[RecordType] = RecordType.TOPIC

    id: int
    scene_id: int = 0
    parent_id: int | None = None
    depth: int = 0
    name: str = ""
    fused_keywords: tuple[str, ...] = ()
    user_timestamp: int = 0
    agent_timestamp: int = 0

    def to_json(self) -> bytes:
        """The payload, as Go's ``json.Marshal`` writes it (SerializationError if it cannot)."""
        if _compiled_json is None:
            return self._plain_json() or self._written_json()
        return (
            _compiled_json(
                self.id,
                self.scene_id,
                self.parent_id,
                self.depth,
                self.name,
                self.fused_keywords,
                self.user_timestamp,
                self.agent_timestamp,
            )
            or self._written_json()
        )

    def _plain_json(self) -> bytes | None:
        """The payload in one piece when every value is plain, else None.

        Every turn writes one; ``_written_json`` is the reference it must equal.
        """
        parent, depth, name, words = self.parent_id, self.depth, self.name, self.fused_keywords
        user_at, agent_at = self.user_timestamp, self.agent_timestamp
        if not (
            is_u64(self.id)
            and is_u64(self.scene_id)
            and (parent is None or is_u64(parent))
            and type(depth) is int
            and 0 <= depth <= 0xFF
            and plain_string(name)
            and type(words) is tuple
            and all(map(plain_string, words))
            and type(user_at) is int
            and type(agent_at) is int
            and I64_MIN <= user_at <= I64_MAX
            and I64_MIN <= agent_at <= I64_MAX
        ):
            return None
        listed = '","'.join(words)
        return (
            f'{{"id":{self.id},"scene_id":{self.scene_id}'
            + ("" if parent is None else f',"parent_id":{parent}')
            + f',"depth":{depth}'
            + (f',"name":"{name}"' if name else "")
            + (f',"fused_keywords":["{listed}"]' if words else ',"fused_keywords":[]')
            + f',"user_timestamp":{user_at},"agent_timestamp":{agent_at}}}'
        ).encode()

    def _written_json(self) -> bytes:
        w = ObjectWriter("TopicSlot")
        w.u64("id", self.id)
        w.u64("scene_id", self.scene_id)
        w.opt_u64("parent_id", self.parent_id)
        w.u8("depth", self.depth)
        w.string("name", self.name, omitempty=True)
        w.strings("fused_keywords", self.fused_keywords)
        w.i64("user_timestamp", self.user_timestamp)
        w.i64("agent_timestamp", self.agent_timestamp)
        return w.to_bytes()

    @classmethod
    def from_plain(
        cls, id_hash: int, data: bytes, pool: dict[str, str], ints: dict[int, int]
    ) -> Self | None:
        """The topic of a payload in the usual shape with its values in range, equal to
        ``from_json``'s; None for any other payload (``from_json`` reads it).

        Keywords are taken from ``pool`` and ids and stamps from ``ints``, each added on
        first sight; an id equal to ``id_hash`` (the record's own) is kept as that object.
        """
        m = _PLAIN_SHAPE.fullmatch(data)
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
        # One int object per value a domain's mirror keeps many of: the id is the engine's
        # own key, a scene's id is shared by its rows, and a turn's stamps by its row and
        # its lines.
        return cls(
            id=ints.setdefault(topic_id, id_hash if id_hash == topic_id else topic_id),
            scene_id=ints.setdefault(scene_id, scene_id),
            parent_id=None if parent_id is None else ints.setdefault(parent_id, parent_id),
            depth=depth_n,
            name=text,
            fused_keywords=tuple(map(pool.setdefault, split, split)),
            user_timestamp=ints.setdefault(user_at, user_at),
            agent_timestamp=ints.setdefault(agent_at, agent_at),
        )

    @classmethod
    def from_json(cls, data: bytes) -> Self:
        r = read_object(data, "TopicSlot")
        return cls(
            id=r.u64("id"),
            scene_id=r.u64("scene_id"),
            parent_id=r.opt_u64("parent_id"),
            depth=r.u8("depth"),
            name=r.string("name"),
            fused_keywords=r.strings("fused_keywords"),
            user_timestamp=r.i64("user_timestamp"),
            agent_timestamp=r.i64("agent_timestamp"),
        )
