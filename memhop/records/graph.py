"""L3 payloads in the shared pool: graphs (0x0B), nodes (0x06) and edges (0x07)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Self

from memhop.frozen import quick_init
from memhop.records.codes import GraphEdgeKind, RecordType, known
from memhop.records.gojson import ObjectWriter
from memhop.records.goread import read_object

__all__ = ["HypergraphEdge", "HypergraphNode", "HypergraphSlot"]


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HypergraphSlot:
    """An L3 graph; its id is ``ids.graph_id(label)`` and survives a rename."""

    RECORD_TYPE: ClassVar[RecordType] = RecordType.GRAPH_SLOT

    id_hash: int
    name: str = ""
    created_at: int = 0
    updated_at: int = 0

    def to_json(self) -> bytes:
        w = ObjectWriter("HypergraphSlot")
        w.u64("id_hash", self.id_hash)
        w.string("name", self.name)
        w.i64("created_at", self.created_at)
        w.i64("updated_at", self.updated_at)
        return w.to_bytes()

    @classmethod
    def from_json(cls, data: bytes) -> Self:
        r = read_object(data, "HypergraphSlot")
        return cls(
            id_hash=r.u64("id_hash"),
            name=r.string("name"),
            created_at=r.i64("created_at"),
            updated_at=r.i64("updated_at"),
        )


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HypergraphNode:
    """An L3 node (id ``ids.graph_node_id``); ``source_ref`` None leaves its key out."""

    RECORD_TYPE: ClassVar[RecordType] = RecordType.GRAPH_NODE

    id_hash: int
    graph_id: int = 0
    title: str = ""
    node_type: str = ""
    content: str = ""
    keywords: tuple[str, ...] = ()
    source_ref: str | None = None
    created_at: int = 0
    updated_at: int = 0

    def to_json(self) -> bytes:
        w = ObjectWriter("HypergraphNode")
        w.u64("id_hash", self.id_hash)
        w.u64("graph_id", self.graph_id)
        w.string("title", self.title)
        w.string("node_type", self.node_type)
        w.string("content", self.content)
        w.strings("keywords", self.keywords)
        w.opt_string("source_ref", self.source_ref)
        w.i64("created_at", self.created_at)
        w.i64("updated_at", self.updated_at)
        return w.to_bytes()

    @classmethod
    def from_json(cls, data: bytes) -> Self:
        r = read_object(data, "HypergraphNode")
        return cls(
            id_hash=r.u64("id_hash"),
            graph_id=r.u64("graph_id"),
            title=r.string("title"),
            node_type=r.string("node_type"),
            content=r.string("content"),
            keywords=r.strings("keywords"),
            source_ref=r.opt_string("source_ref"),
            created_at=r.i64("created_at"),
            updated_at=r.i64("updated_at"),
        )


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HypergraphEdge:
    """An L3 edge over ascending ``node_ids`` (id ``ids.graph_edge_id``); no weight."""

    RECORD_TYPE: ClassVar[RecordType] = RecordType.GRAPH_EDGE

    id_hash: int
    graph_id: int = 0
    kind: int = GraphEdgeKind.RELATED
    node_ids: tuple[int, ...] = ()
    created_at: int = 0

    def to_json(self) -> bytes:
        w = ObjectWriter("HypergraphEdge")
        w.u64("id_hash", self.id_hash)
        w.u64("graph_id", self.graph_id)
        w.u8("kind", self.kind)
        w.u64s("node_ids", self.node_ids)
        w.i64("created_at", self.created_at)
        return w.to_bytes()

    @classmethod
    def from_json(cls, data: bytes) -> Self:
        r = read_object(data, "HypergraphEdge")
        return cls(
            id_hash=r.u64("id_hash"),
            graph_id=r.u64("graph_id"),
            kind=known(GraphEdgeKind, r.u8("kind")),
            node_ids=r.u64s("node_ids"),
            created_at=r.i64("created_at"),
        )
