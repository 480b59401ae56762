"""L4 content payload (type 0x08): one utterance or event of a topic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Self

from memhop.records.codes import ArchiveKind, ArchiveRole, ContentType, RecordType, known
from memhop.records.gojson import I64_MAX, I64_MIN, U32_MAX, ObjectWriter, is_u64, plain_string
from memhop.records.goread import read_object

__all__ = ["SEQ_AGENT", "SEQ_USER", "ArchiveSlot"]

SEQ_USER = 1
SEQ_AGENT = 2

# A byte field holds a plain int or a member of its enum; an enum member writes its number.
_BYTE_TYPES = frozenset({int, ArchiveKind, ContentType, ArchiveRole})


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchiveSlot:
    """A content slot (id ``ids.content_id(topic_id, seq)``).

    Seq 1 is the user's utterance and seq 2 the agent's; auto-allocated seqs
    start at 3. ``event_type`` and ``node_seq`` (the bound plan step) belong to
    events and leave the JSON while empty. Events carry role 0.
    """

    RECORD_TYPE: ClassVar[RecordType] = RecordType.ARCHIVE

    id_hash: int
    kind: int = ArchiveKind.UTTERANCE
    seq: int = 0
    content_type: int = ContentType.TEXT
    role: int = ArchiveRole.USER
    topic_id: int = 0
    event_type: str = ""
    node_seq: int = 0
    created_at: int = 0
    content: str = ""

    def to_json(self) -> bytes:
        """The payload, as Go's ``json.Marshal`` writes it (SerializationError if it cannot)."""
        return self._plain_json() or self._written_json()

    def _plain_json(self) -> bytes | None:
        """The payload in one piece when every value is plain, else None.

        Every turn writes several of these; this skips a writer call per field.
        ``_written_json`` is the reference it must equal, byte for byte.
        """
        kind, ctype, role, node, at = (
            self.kind,
            self.content_type,
            self.role,
            self.node_seq,
            self.created_at,
        )
        event, content = self.event_type, self.content
        if not (
            is_u64(self.id_hash)
            and is_u64(self.seq)
            and is_u64(self.topic_id)
            and type(at) is int
            and I64_MIN <= at <= I64_MAX
            and type(node) is int
            and 0 <= node <= U32_MAX
            and type(kind) in _BYTE_TYPES
            and type(ctype) in _BYTE_TYPES
            and type(role) in _BYTE_TYPES
            and 0 <= kind <= 0xFF
            and 0 <= ctype <= 0xFF
            and 0 <= role <= 0xFF
            and plain_string(event)
            and plain_string(content)
        ):
            return None
        optional = (f',"event_type":"{event}"' if event else "") + (
            f',"node_seq":{node}' if node else ""
        )
        return (
            f'{{"id_hash":{self.id_hash},"kind":{int(kind)},"seq":{self.seq},'
            f'"content_type":{int(ctype)},"role":{int(role)},"topic_id":{self.topic_id}'
            f'{optional},"created_at":{at},"content":"{content}"}}'
        ).encode()

    def _written_json(self) -> bytes:
        w = ObjectWriter("ArchiveSlot")
        w.u64("id_hash", self.id_hash)
        w.u8("kind", self.kind)
        w.u64("seq", self.seq)
        w.u8("content_type", self.content_type)
        w.u8("role", self.role)
        w.u64("topic_id", self.topic_id)
        w.string("event_type", self.event_type, omitempty=True)
        w.u32("node_seq", self.node_seq, omitempty=True)
        w.i64("created_at", self.created_at)
        w.string("content", self.content)
        return w.to_bytes()

    @classmethod
    def from_json(cls, data: bytes) -> Self:
        r = read_object(data, "ArchiveSlot")
        return cls(
            id_hash=r.u64("id_hash"),
            kind=known(ArchiveKind, r.u8("kind")),
            seq=r.u64("seq"),
            content_type=known(ContentType, r.u8("content_type")),
            role=known(ArchiveRole, r.u8("role")),
            topic_id=r.u64("topic_id"),
            event_type=r.string("event_type"),
            node_seq=r.u32("node_seq"),
            created_at=r.i64("created_at"),
            content=r.string("content"),
        )
