"""L4 content on the open turn: the write contract, slot allocation, and ``search_l4``.

Every refusal happens before anything is written and before any model call;
over-budget text is refused, never truncated.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from memhop import ids
from memhop.domain.context import DomainContext, OpenTurn
from memhop.domain.mirrors import Mirrors
from memhop.engine import Engine
from memhop.errors import InvalidQueryError
from memhop.frozen import quick_init
from memhop.layers import archive, codec, scene
from memhop.layers.codec import Record
from memhop.records import ArchiveKind, ArchiveRole, ArchiveSlot, ContentType, TopicSlot
from memhop.records.codes import KIND_EVENT, ROLE_DREAM, ROLE_USER, TYPE_TEXT, members_of

MAX_EVENT_PAYLOAD_BYTES = 4 * 1024
MAX_UTTERANCE_PAYLOAD_BYTES = 64 * 1024
FIRST_FREE_SEQ = 3  # slots 1 and 2 hold the turn's user input and agent output

_KINDS = frozenset(int(k) for k in ArchiveKind)
_CONTENT_TYPES = frozenset(int(t) for t in ContentType)
_SPEAKERS = frozenset({ArchiveRole.USER, ArchiveRole.AGENT, ArchiveRole.SYSTEM})
# Code -> member, as a read gives a defined number back (``validate`` admitted only these).
_KIND_OF = members_of(ArchiveKind)
_TYPE_OF = members_of(ContentType)
_ROLE_OF = members_of(ArchiveRole)


def require_turn(ctx: DomainContext) -> OpenTurn:
    """Return the open turn, or refuse with upstream's "no turn is open"."""
    if ctx.open_turn is None:
        msg = "no turn is open: call search to open one"
        raise InvalidQueryError(msg)
    return ctx.open_turn


def check_created(created_at: int) -> None:
    """Refuse a record's time unless it is positive milliseconds (``validate``'s rule)."""
    if created_at <= 0:
        msg = "a positive timestamp is required"
        raise InvalidQueryError(msg)
    check_ms(created_at)


def check_ms(value: int, what: str = "created_at") -> None:
    """Refuse a timestamp in the seconds or microseconds band (0 is the caller's business)."""
    if 1_000_000_000 <= value < 100_000_000_000 or value > 100_000_000_000_000:
        msg = (
            f"{what} {value} is not milliseconds since the epoch: values in [1e9, 1e11) look"
            " like seconds and values above 1e14 like microseconds"
        )
        raise InvalidQueryError(msg)


@quick_init
@dataclass(frozen=True, slots=True)
class ContentInput:
    """One record the host (or ``update``) asks to append to the open turn."""

    content: str
    created_at: int
    kind: int = ArchiveKind.UTTERANCE
    seq: int = 0
    content_type: int = ContentType.TEXT
    role: int = ArchiveRole.USER
    event_type: str = ""
    node_seq: int = 0

    def validate(self) -> None:
        """Apply the write contract, in upstream's order, to fields the face has typed
        (``memhop.api._args``: ints, and strs of valid Unicode): each value is checked
        once, there for its type and here for what it may be."""
        kind = self.kind
        if kind not in _KINDS:
            msg = f"undefined content kind {kind}"
            raise InvalidQueryError(msg)
        if self.content == "":
            msg = "content is required"
            raise InvalidQueryError(msg)
        check_created(self.created_at)
        if self.content_type not in _CONTENT_TYPES:
            msg = f"undefined content type {self.content_type}"
            raise InvalidQueryError(msg)
        if self.seq < 0 or self.seq >= 2**64 or not 0 <= self.node_seq < 2**32:
            msg = "seq and node_seq must be non-negative and in range"
            raise InvalidQueryError(msg)
        if kind == KIND_EVENT:
            if self.event_type == "":
                msg = "an event requires EventType"
                raise InvalidQueryError(msg)
            self.check_budget()
            return
        if self.event_type != "":
            msg = "an utterance carries no EventType"
            raise InvalidQueryError(msg)
        if self.node_seq != 0:
            msg = "an utterance hangs on no plan node"
            raise InvalidQueryError(msg)
        role = self.role
        if role == ROLE_DREAM:
            msg = "an utterance speaks as user, agent or system"
            raise InvalidQueryError(msg)
        if role not in _SPEAKERS:
            msg = f"undefined content role {role}"
            raise InvalidQueryError(msg)
        self.check_budget()

    def check_budget(self) -> None:
        """Refuse a payload over its kind's budget: ``validate``'s last rule, and with the
        time the only one a turn's closing lines (made whole by ``update``) can break."""
        size = len(self.event_type.encode()) + len(self.content.encode())
        if self.kind == KIND_EVENT:
            if size > MAX_EVENT_PAYLOAD_BYTES:
                msg = f"event of {size} bytes exceeds the {MAX_EVENT_PAYLOAD_BYTES}-byte budget"
                raise InvalidQueryError(msg)
        elif size > MAX_UTTERANCE_PAYLOAD_BYTES:
            msg = f"utterance of {size} bytes exceeds the {MAX_UTTERANCE_PAYLOAD_BYTES}-byte budget"
            raise InvalidQueryError(msg)

    def to_slot(self, id_hash: int, topic_id: int, seq: int) -> ArchiveSlot:
        """The record a validated input stores at ``id_hash``: ``content_id(topic_id, seq)``."""
        event = self.kind == KIND_EVENT
        # Stored as a read gives it back: a defined number as its enum member.
        return ArchiveSlot(
            id_hash=id_hash,
            kind=_KIND_OF[self.kind],
            seq=seq,
            # Events are not spoken: their role and type are fixed.
            content_type=TYPE_TEXT if event else _TYPE_OF[self.content_type],
            role=ROLE_USER if event else _ROLE_OF[self.role],
            topic_id=topic_id,
            event_type=self.event_type,
            node_seq=self.node_seq,
            created_at=self.created_at,
            content=self.content,
        )


def addressed(
    engine: Engine, ctx: DomainContext, turn: OpenTurn, items: Sequence[ContentInput]
) -> list[ArchiveSlot]:
    """The records validated ``items`` store on the open turn, each at its address.

    A record with seq 0 takes the next free slot (3 or later). Each target
    address is read first: a record there that will not read refuses the
    whole write rather than being overwritten blind.
    """
    next_free = 0  # asked of the mirror once, and only if an item takes the next slot
    slots: list[ArchiveSlot] = []
    for item in items:
        seq = item.seq
        if seq == 0:
            if not next_free:
                mirrors = ctx.scene_mirrors(engine, turn.scene_id)
                next_free = mirrors.contents.next_seq(turn.topic_id)
            seq, next_free = next_free, next_free + 1
        id_hash = ids.content_id(turn.topic_id, seq)
        if engine.contains(ctx.agent_id, id_hash):
            archive.read_slot_optional(engine, ctx.agent_id, turn.topic_id, seq)
        slots.append(item.to_slot(id_hash, turn.topic_id, seq))
    return slots


def write_addressed(
    engine: Engine,
    ctx: DomainContext,
    turn: OpenTurn,
    slots: Sequence[ArchiveSlot],
    row: TopicSlot | None = None,
) -> None:
    """Write ``addressed`` records (and the turn's topic ``row``) with one fsync, and mirror
    the records. The topic row's mirror is the caller's: it lists the row it holds.

    The decoded records are not kept in the slot cache: a read keeps what it decodes, so
    a host that reads its lines back pays for them once, and one that does not pays
    nothing (kept on every write, 4,096 slots held live cost a turn 5% in the interpreter's
    memory traffic, with no read to show for it)."""
    # A loop: on 3.11 a comprehension makes a function each call (three times a turn).
    records: list[tuple[int, Record]] = []
    for slot in slots:
        records.append((slot.id_hash, slot))
    if row is not None:
        records.append((row.id, row))
    codec.write_many(engine, ctx.agent_id, records)
    ctx.apply(engine, turn.scene_id, functools.partial(_held, slots))


def _held(stored: Sequence[ArchiveSlot], mirrors: Mirrors) -> None:
    for slot in stored:
        mirrors.contents.put(slot)


def append_archive(engine: Engine, ctx: DomainContext, item: ContentInput) -> int:
    """Append one record to the open turn and return its slot number."""
    turn = require_turn(ctx)
    if item.kind == KIND_EVENT and item.node_seq != 0:
        step = item.node_seq
        if not ctx.scene_mirrors(engine, turn.scene_id).plans.has_live_step(turn.topic_id, step):
            msg = f"the event names step {step}, which is not on this turn's plan tree"
            raise InvalidQueryError(msg)
    item.validate()
    (slot,) = addressed(engine, ctx, turn, [item])
    write_addressed(engine, ctx, turn, [slot])
    return slot.seq


@dataclass(frozen=True, slots=True)
class ArchiveQuery:
    """The conditions of ``search_l4``; all optional, combined with AND."""

    keyword: str = ""
    start: int = 0
    end: int = 0
    ids: tuple[int, ...] = ()
    topic_id: int | None = None
    type: int | None = None
    kind: int | None = None
    node_seq: int = 0
    limit: int = 0


def check_query(engine: Engine, ctx: DomainContext, q: ArchiveQuery) -> None:
    """Refuse a query that cannot mean anything, before reading."""
    if q.node_seq and q.topic_id is None:
        msg = "a step filter needs its turn's topic id"
        raise InvalidQueryError(msg)
    if q.kind is not None and q.kind not in _KINDS:
        msg = f"undefined content kind {q.kind}"
        raise InvalidQueryError(msg)
    if q.type is not None and q.type not in _CONTENT_TYPES:
        msg = f"undefined content type {q.type}"
        raise InvalidQueryError(msg)
    for bound, what in ((q.start, "start"), (q.end, "end")):
        if bound:
            check_ms(bound, what)
    if q.topic_id is not None and scene.get_scene_optional(engine, ctx.agent_id, q.topic_id):
        msg = (
            f"topic id {ids.format_id(q.topic_id)} names a scene; pass the turn id search"
            " returned (new_topic_id)"
        )
        raise InvalidQueryError(msg)


def search_l4(engine: Engine, ctx: DomainContext, q: ArchiveQuery) -> list[ArchiveSlot]:
    """Return the domain's content matching every condition, in upstream's order."""
    check_query(engine, ctx, q)
    mirror = ctx.mirrors.contents
    if q.ids:
        refs = [r for r in (mirror.get(i) for i in dict.fromkeys(q.ids)) if r is not None]
    elif q.topic_id is not None:
        refs = mirror.slots_of(q.topic_id)
    else:
        refs = mirror.all_slots()
    if q.topic_id is not None:
        refs = [r for r in refs if r.topic_id == q.topic_id]
    if q.kind is not None:
        refs = [r for r in refs if r.kind == q.kind]
    if q.type is not None:
        refs = [r for r in refs if r.content_type == q.type]
    if q.start:
        refs = [r for r in refs if r.created_at >= q.start]
    if q.end:
        refs = [r for r in refs if r.created_at <= q.end]
    if q.node_seq and q.topic_id is not None:
        steps = ctx.mirrors.plans.subtree_seqs(q.topic_id, q.node_seq)
        refs = [r for r in refs if r.node_seq in steps]
    if q.topic_id is not None:
        refs.sort(key=lambda r: r.seq)
    else:
        refs.sort(key=lambda r: (r.created_at, r.id_hash))
    slots = ctx.slots.read(engine, ctx.agent_id, [r.id_hash for r in refs])
    by_id = {s.id_hash: s for s in slots}
    found = [by_id[r.id_hash] for r in refs if r.id_hash in by_id]
    if q.keyword:
        needle = q.keyword.casefold()
        found = [s for s in found if needle in s.content.casefold()]
    return found[-q.limit :] if q.limit > 0 else found
