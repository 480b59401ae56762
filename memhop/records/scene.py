"""L2 scene payload (type 0x05): a conversation thread and its turn counter."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Self

from memhop.records.codes import RecordType
from memhop.records.gojson import ObjectWriter
from memhop.records.goread import read_object

__all__ = ["SceneSlot"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SceneSlot:
    """A scene; its record id is ``scene_id`` itself (random, never 0).

    ``turn_seq`` counts turns opened so far and ``last_used_at`` stamps the
    last one (both absent from the JSON while 0); ``l3_id`` 0 means no L3 graph
    is anchored.
    """

    RECORD_TYPE: ClassVar[RecordType] = RecordType.SCENE

    scene_id: int
    scene_name: str = ""
    turn_seq: int = 0
    last_used_at: int = 0
    l3_id: int = 0

    def to_json(self) -> bytes:
        w = ObjectWriter("SceneSlot")
        w.u64("scene_id", self.scene_id)
        w.string("scene_name", self.scene_name)
        w.u64("turn_seq", self.turn_seq, omitempty=True)
        w.i64("last_used_at", self.last_used_at, omitempty=True)
        w.u64("l3_id", self.l3_id)
        return w.to_bytes()

    @classmethod
    def from_json(cls, data: bytes) -> Self:
        r = read_object(data, "SceneSlot")
        return cls(
            scene_id=r.u64("scene_id"),
            scene_name=r.string("scene_name"),
            turn_seq=r.u64("turn_seq"),
            last_used_at=r.i64("last_used_at"),
            l3_id=r.u64("l3_id"),
        )
