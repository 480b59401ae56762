"""L1 payloads: scene nodes (type 0x02) and the hyperedges joining them (0x03)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import ClassVar, Self, TypeAlias

from memhop.frozen import quick_init
from memhop.records.codes import RecordType
from memhop.records.gojson import ObjectWriter
from memhop.records.goread import read_object
from memhop.records.shapes import INT, UINT_DIGITS

__all__ = ["EdgeClock", "SceneEdge", "SceneNode", "plain_edge_clock"]


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SceneNode:
    """A scene's node in the L1 associative layer (id ``ids.scene_node_id``).

    ``importance``, ``valence`` and ``arousal`` are in [0, 1], where 0 is a real
    reading; ``emotion_set`` tells a never-stamped node apart. ``updated_at`` is
    also the decay clock.
    """

    RECORD_TYPE: ClassVar[RecordType] = RecordType.SCENE_NODE

    id_hash: int
    scene_id: int = 0
    topic_ids: tuple[int, ...] = ()
    importance: float = 0.0
    valence: float = 0.0
    arousal: float = 0.0
    emotion_set: bool = False
    created_at: int = 0
    updated_at: int = 0
    edge_ids: tuple[int, ...] = ()

    def to_json(self) -> bytes:
        w = ObjectWriter("SceneNode")
        w.u64("id_hash", self.id_hash)
        w.u64("scene_id", self.scene_id)
        w.u64s("topic_ids", self.topic_ids)
        w.f64("importance", self.importance)
        w.f64("valence", self.valence)
        w.f64("arousal", self.arousal)
        w.boolean("emotion_set", self.emotion_set, omitempty=True)
        w.i64("created_at", self.created_at)
        w.i64("updated_at", self.updated_at)
        w.u64s("edge_ids", self.edge_ids)
        return w.to_bytes()

    @classmethod
    def from_json(cls, data: bytes) -> Self:
        r = read_object(data, "SceneNode")
        return cls(
            id_hash=r.u64("id_hash"),
            scene_id=r.u64("scene_id"),
            topic_ids=r.u64s("topic_ids"),
            importance=r.f64("importance"),
            valence=r.f64("valence"),
            arousal=r.f64("arousal"),
            emotion_set=r.boolean("emotion_set"),
            created_at=r.i64("created_at"),
            updated_at=r.i64("updated_at"),
            edge_ids=r.u64s("edge_ids"),
        )


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SceneEdge:
    """An L1 hyperedge over scene nodes (id ``ids.l1_edge_id``); 0 = never decayed."""

    RECORD_TYPE: ClassVar[RecordType] = RecordType.SCENE_EDGE

    id_hash: int
    node_ids: tuple[int, ...] = ()
    weight: float = 0.0
    created_at: int = 0
    last_decay_at: int = 0

    def to_json(self) -> bytes:
        w = ObjectWriter("SceneEdge")
        w.u64("id_hash", self.id_hash)
        w.u64s("node_ids", self.node_ids)
        w.f64("weight", self.weight)
        w.i64("created_at", self.created_at)
        w.i64("last_decay_at", self.last_decay_at)
        return w.to_bytes()

    @classmethod
    def from_json(cls, data: bytes) -> Self:
        r = read_object(data, "SceneEdge")
        return cls(
            id_hash=r.u64("id_hash"),
            node_ids=r.u64s("node_ids"),
            weight=r.f64("weight"),
            created_at=r.i64("created_at"),
            last_decay_at=r.i64("last_decay_at"),
        )


_EDGE_SHAPE = re.compile(
    rb'\{"id_hash":' + UINT_DIGITS
    + rb',"node_ids":\[((?:' + UINT_DIGITS + rb"(?:," + UINT_DIGITS + rb")*)?)\]"
    + rb',"weight":(-?[0-9][0-9.eE+-]*),"created_at":' + INT + rb',"last_decay_at":' + INT
    + rb"\}"
)  # fmt: skip

EdgeClock: TypeAlias = tuple[tuple[int, ...], float, int]
"""(members, weight, decay clock) of one edge; the clock is ``last_decay_at``, else
``created_at``."""


def plain_edge_clock(data: bytes) -> EdgeClock | None:
    """The ``EdgeClock`` of a ``SceneEdge`` payload in the usual shape with a finite
    weight, equal to ``SceneEdge.from_json``'s; None for any other payload.

    Ids and stamps are not checked against Go's ranges, nor the weight against
    JSON's number grammar: a damaged payload may be answered (its full decode fails).
    """
    m = _EDGE_SHAPE.fullmatch(data)
    if m is None:
        return None
    members, weight_text, created, last = m.groups()
    try:
        weight = float(weight_text)
    except ValueError:
        return None
    if not math.isfinite(weight):
        return None
    nodes = tuple(map(int, members.split(b","))) if members else ()
    return nodes, weight, int(last) or int(created)
