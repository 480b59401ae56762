"""L5 plan-node payload (type 0x0F): one step of a topic's plan tree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Self

from memhop.frozen import quick_init
from memhop.records.codes import PlanStatusCode, RecordType, known
from memhop.records.gojson import ObjectWriter
from memhop.records.goread import read_object

__all__ = ["PlanNode"]


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PlanNode:
    """A plan step (id ``ids.plan_node_id(topic_id, seq)``), ``seq`` >= 1.

    ``parent_seq`` 0 is a root. ``title``, ``summary``, ``summary_folded`` and
    ``finished_at`` leave the JSON while empty.
    """

    RECORD_TYPE: ClassVar[RecordType] = RecordType.PLAN_NODE

    id_hash: int
    topic_id: int = 0
    seq: int = 0
    parent_seq: int = 0
    status: int = PlanStatusCode.IN_PROGRESS
    title: str = ""
    summary: str = ""
    summary_folded: bool = False
    created_at: int = 0
    finished_at: int = 0
    updated_at: int = 0

    def to_json(self) -> bytes:
        w = ObjectWriter("PlanNode")
        w.u64("id_hash", self.id_hash)
        w.u64("topic_id", self.topic_id)
        w.u32("seq", self.seq)
        w.u32("parent_seq", self.parent_seq)
        w.u8("status", self.status)
        w.string("title", self.title, omitempty=True)
        w.string("summary", self.summary, omitempty=True)
        w.boolean("summary_folded", self.summary_folded, omitempty=True)
        w.i64("created_at", self.created_at)
        w.i64("finished_at", self.finished_at, omitempty=True)
        w.i64("updated_at", self.updated_at)
        return w.to_bytes()

    @classmethod
    def from_json(cls, data: bytes) -> Self:
        r = read_object(data, "PlanNode")
        return cls(
            id_hash=r.u64("id_hash"),
            topic_id=r.u64("topic_id"),
            seq=r.u32("seq"),
            parent_seq=r.u32("parent_seq"),
            status=known(PlanStatusCode, r.u8("status")),
            title=r.string("title"),
            summary=r.string("summary"),
            summary_folded=r.boolean("summary_folded"),
            created_at=r.i64("created_at"),
            finished_at=r.i64("finished_at"),
            updated_at=r.i64("updated_at"),
        )
