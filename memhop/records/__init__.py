"""Record payloads: frozen dataclasses that encode exactly as Go's encoding/json.

Responsibility: one dataclass per payload type of format 0x0012 (storage.md §3.2)
with ``to_json() -> bytes`` and ``from_json(bytes)``, plus the numeric codes
(record types and the enums payloads store). No I/O; the layers read frames.

Contract:
- Field names are the Go JSON keys; keys are written in Go's declaration order,
  ``omitempty`` keys are left out while zero, and Go pointers (``parent_id``,
  ``source_ref``) are ``None`` when nil. Field defaults are Go's zero values.
- Collections are tuples (preferences a read-only mapping). Empty ones are
  written ``[]`` / ``{}``, never ``null``; readers take ``null`` and ``[]`` alike.
  Go writes ``null`` for a nil slice, so only raw-byte digests can tell.
- Floats are written as Go writes them (``1``, ``1e-7``, ``1e+21``, ``-0``),
  strings with Go's escapes (``\\u003c`` for ``<``, ``\\b``, ``\\ufffd`` for
  bad UTF-8), ids as exact integers up to 2**64-1.
- Decoding follows Go: unknown keys ignored, keys case-insensitive, integer
  fields refuse ``1.0``; any failure is DeserializationError "unmarshal <Type>".
  Encoding a value Go could not hold (negative id, NaN) is SerializationError.
- A known stored enum number decodes to its IntEnum member; an unknown one
  stays a plain int.

Traps:
- ``MBTIScore.type`` is derived from the axes on read and never stored; a
  stored ``"type"`` key is ignored.
- Byte identity with Go matters only for digests of raw payloads; Go reads
  what memhop writes either way.

If you change this: the golden payloads in tests/records pin every key.
"""

from memhop.records.archive import SEQ_AGENT, SEQ_USER, ArchiveSlot, SlotHeader
from memhop.records.codes import (
    AgentType,
    ArchiveKind,
    ArchiveRole,
    ContentType,
    GraphEdgeKind,
    PlanStatusCode,
    RecordType,
    known,
)
from memhop.records.graph import HypergraphEdge, HypergraphNode, HypergraphSlot
from memhop.records.plan import PlanNode
from memhop.records.profile import EmotionScore, MBTIScore, ProfileSlot, derive_mbti_type
from memhop.records.registry import RegistryName
from memhop.records.scene import SceneSlot
from memhop.records.scene_node import SceneEdge, SceneNode
from memhop.records.topic import TopicSlot

__all__ = [
    "SEQ_AGENT",
    "SEQ_USER",
    "AgentType",
    "ArchiveKind",
    "ArchiveRole",
    "ArchiveSlot",
    "ContentType",
    "EmotionScore",
    "GraphEdgeKind",
    "HypergraphEdge",
    "HypergraphNode",
    "HypergraphSlot",
    "MBTIScore",
    "PlanNode",
    "PlanStatusCode",
    "ProfileSlot",
    "RecordType",
    "RegistryName",
    "SceneEdge",
    "SceneNode",
    "SceneSlot",
    "SlotHeader",
    "TopicSlot",
    "derive_mbti_type",
    "known",
]
