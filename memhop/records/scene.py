"""L2 scene payload (type 0x05): a conversation thread and its turn counter."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Self

from memhop.frozen import quick_init
from memhop.records.codes import RecordType
from memhop.records.compiled import scene as _compiled_json
from memhop.records.gojson import I64_MAX, I64_MIN, ObjectWriter, is_u64, plain_string
from memhop.records.goread import read_object

__all__ = ["SceneSlot"]


@quick_init
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
        """The payload, as Go's ``json.Marshal`` writes it (SerializationError if it cannot)."""
        if _compiled_json is None:
            return self._plain_json() or self._written_json()
        return (
            _compiled_json(
                self.scene_id, self.scene_name, self.turn_seq, self.last_used_at, self.l3_id
            )
            or self._written_json()
        )

    def _plain_json(self) -> bytes | None:
        """The payload in one piece when every value is plain, else None.

        Every turn writes one; ``_written_json`` is the reference it must equal.
        """
        name, turn, used = self.scene_name, self.turn_seq, self.last_used_at
        if not (
            is_u64(self.scene_id)
            and is_u64(turn)
            and is_u64(self.l3_id)
            and type(used) is int
            and I64_MIN <= used <= I64_MAX
            and plain_string(name)
        ):
            return None
        return (
            f'{{"scene_id":{self.scene_id},"scene_name":"{name}"'
            + (f',"turn_seq":{turn}' if turn else "")
            + (f',"last_used_at":{used}' if used else "")
            + f',"l3_id":{self.l3_id}}}'
        ).encode()

    def _written_json(self) -> bytes:
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
