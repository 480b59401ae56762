"""L4 content payload (type 0x08): one utterance or event of a topic."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, NamedTuple, Self, TypeAlias

from memhop.frozen import quick_init, quick_tuple
from memhop.records.codes import (
    ArchiveKind,
    ArchiveRole,
    ContentType,
    RecordType,
    known,
    members_of,
)
from memhop.records.compiled import archive as _compiled_json
from memhop.records.gojson import I64_MAX, I64_MIN, U32_MAX, ObjectWriter, is_u64, quote_string
from memhop.records.goread import read_object
from memhop.records.shapes import I64, INT, STRING, U64, UINT, plain_text, u8_digits

__all__ = ["SEQ_AGENT", "SEQ_USER", "ArchiveSlot", "SlotHeader"]

SEQ_USER = 1
SEQ_AGENT = 2

# A byte field holds a plain int or a member of its enum; an enum member writes its number.
_BYTE_TYPES = frozenset({int, ArchiveKind, ContentType, ArchiveRole})
_ENUMS = (ArchiveKind, ContentType, ArchiveRole)

ARCHIVE_SHAPE = re.compile(
    rb'\{"id_hash":' + UINT + rb',"kind":' + UINT + rb',"seq":' + UINT
    + rb',"content_type":' + UINT + rb',"role":' + UINT + rb',"topic_id":' + UINT
    + rb'(?:,"event_type":(' + STRING + rb"))?"
    + rb'(?:,"node_seq":' + UINT + rb")?"
    + rb',"created_at":' + INT + rb',"content":(' + STRING + rb")\}",
    re.DOTALL,
)  # fmt: skip
"""A payload as Go and memhop write it; its groups: id_hash, kind, seq, content_type, role,
topic_id, event_type (quoted, or None), node_seq (or None), created_at, content (quoted)."""
# A code's digits -> its member (its int if it has none); one over 255 is missing here, and
# the full decode names the error.
_KIND_DIGITS = u8_digits(members_of(ArchiveKind))
_TYPE_DIGITS = u8_digits(members_of(ContentType))
_ROLE_DIGITS = u8_digits(members_of(ArchiveRole))

PlainNumbers: TypeAlias = tuple[int, int, int, int, int, int, int, int]
"""id_hash, kind, seq, content_type, role, topic_id, node_seq, created_at."""


def plain_numbers(m: re.Match[bytes]) -> PlainNumbers | None:
    """The numbers of an ``ARCHIVE_SHAPE`` match, each a code's member where it has one;
    None when one is out of its Go range (the full decode names the error)."""
    named, kind, seq, ctype, role, topic, _, node, created, _ = m.groups()
    kind_c, ctype_c = _KIND_DIGITS.get(kind), _TYPE_DIGITS.get(ctype)
    role_c = _ROLE_DIGITS.get(role)
    id_n, seq_n, topic_n, created_n = int(named), int(seq), int(topic), int(created)
    node_n = 0 if node is None else int(node)
    if (
        kind_c is None
        or ctype_c is None
        or role_c is None
        or max(id_n, seq_n, topic_n) >= U64
        or node_n > U32_MAX
        or not -I64 <= created_n < I64
    ):
        return None
    return id_n, kind_c, seq_n, ctype_c, role_c, topic_n, node_n, created_n


@quick_init
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
        if _compiled_json is None:
            return self._plain_json() or self._written_json()
        plain = _compiled_json(
            self.id_hash,
            self.kind,
            self.seq,
            self.content_type,
            self.role,
            self.topic_id,
            self.event_type,
            self.node_seq,
            self.created_at,
            self.content,
            _ENUMS,
        )
        return plain or self._written_json()

    def _plain_json(self) -> bytes | None:
        """The payload in one piece when every number is plain and both texts are strings,
        else None.

        Every turn writes several of these; this skips a writer call per field.
        The texts are quoted as the writer quotes them: a tool call's quotes or
        a multi-line utterance stay on this path. ``_written_json`` is the
        reference it must equal, byte for byte.
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
            and type(event) is str
            and type(content) is str
        ):
            return None
        optional = (f',"event_type":{quote_string(event)}' if event else "") + (
            f',"node_seq":{node}' if node else ""
        )
        return (
            f'{{"id_hash":{self.id_hash},"kind":{int(kind)},"seq":{self.seq},'
            f'"content_type":{int(ctype)},"role":{int(role)},"topic_id":{self.topic_id}'
            f'{optional},"created_at":{at},"content":{quote_string(content)}}}'
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
        """The slot of a payload, with Go's ``json.Unmarshal`` rules.

        A payload in the shape Go and memhop write takes a short path
        (``_plain``); ``_read`` is the reference it must equal.
        """
        return cls._plain(data) or cls._read(data)

    @classmethod
    def _plain(cls, data: bytes) -> Self | None:
        """The slot of a payload in the usual shape whose values are in range, else None."""
        m = ARCHIVE_SHAPE.fullmatch(data)
        numbers = None if m is None else plain_numbers(m)
        if m is None or numbers is None:
            return None
        id_n, kind, seq, ctype, role, topic, node, created = numbers
        event, content = m.group(7), m.group(10)
        event_text = "" if event is None else plain_text(event)
        text = plain_text(content)
        if event_text is None or text is None:
            return None  # text Go reads its own way: the full decode
        return cls(
            id_hash=id_n,
            kind=kind,
            seq=seq,
            content_type=ctype,
            role=role,
            topic_id=topic,
            event_type=event_text,
            node_seq=node,
            created_at=created,
            content=text,
        )

    @classmethod
    def _read(cls, data: bytes) -> Self:
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


@quick_tuple
class SlotHeader(NamedTuple):
    """A content slot without its text and event type (``id_hash`` is its record id):
    what the content mirror keeps of it and the domain load reads. A tuple, so a build
    takes rows of them column by column."""

    id_hash: int
    topic_id: int
    seq: int
    kind: int
    content_type: int
    role: int
    node_seq: int
    created_at: int

    @classmethod
    def of(cls, slot: ArchiveSlot) -> SlotHeader:
        return cls(
            slot.id_hash,
            slot.topic_id,
            slot.seq,
            slot.kind,
            slot.content_type,
            slot.role,
            slot.node_seq,
            slot.created_at,
        )
