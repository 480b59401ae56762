"""L4 mirror: each topic's content slots, seq-ordered and kind-tagged.

Responsibility: answer "which slots does this topic hold", "which seq comes
next" and "what is older than the cutoff" without touching the file. Entries
carry the fields the hot paths filter on, never the text: content is read from
the engine (strictly) when a caller needs it.

Contract:
- Keyed by the record's id (the address it is stored at); one (topic, seq)
  holds at most one entry, and a later ``put`` replaces an earlier one there,
  across kinds, as the engine does.
- ``next_seq`` is ``max(highest_seq, 2) + 1``: slots 1 and 2 belong to the
  dialogue, so a topic's first auto-allocated slot is 3.
- Per-topic answers cost time proportional to that topic's slots.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from memhop.ids import content_id
from memhop.index.journal import Journal
from memhop.index.slots import TopicSeqStore
from memhop.records import SEQ_AGENT, SEQ_USER, ArchiveKind, ArchiveRole, ArchiveSlot

__all__ = ["L4Index", "SlotFields", "SlotRef"]

SlotFields = tuple[int, int, int, int, int, int, int, int]
"""(id_hash, topic_id, seq, kind, content_type, role, node_seq, created_at)."""


@dataclass(frozen=True, slots=True)
class SlotRef:
    """What the mirror keeps of one content slot."""

    id_hash: int
    topic_id: int
    seq: int
    kind: int
    content_type: int
    role: int
    node_seq: int
    created_at: int

    @classmethod
    def of(cls, slot: ArchiveSlot) -> SlotRef:
        return cls(
            id_hash=slot.id_hash,
            topic_id=slot.topic_id,
            seq=slot.seq,
            kind=slot.kind,
            content_type=slot.content_type,
            role=slot.role,
            node_seq=slot.node_seq,
            created_at=slot.created_at,
        )


def _is_summary(entry: SlotRef) -> bool:
    # Seq is not checked: what counts is the address, as a lookup by address sees it.
    return entry.role == ArchiveRole.DREAM and entry.kind == ArchiveKind.UTTERANCE


class L4Index(TopicSeqStore[SlotRef]):
    """Content slots of one domain, grouped by topic; ``journal`` notes the topics touched."""

    def __init__(self) -> None:
        super().__init__()
        self.journal = Journal()
        # Topics whose slot 1 is a Dream summary, so a scene's provenance costs its
        # Dream rows rather than a lookup per row; a summary stored at another
        # topic's address (a foreign payload) is kept apart by its address.
        self._dreamed: set[int] = set()
        self._foreign_dreamed: set[int] = set()

    @classmethod
    def from_records(cls, slots: Iterable[ArchiveSlot]) -> L4Index:
        """Build the mirror from records read back from the engine."""
        return cls._built(SlotRef.of(slot) for slot in slots)

    @classmethod
    def from_fields(cls, rows: Iterable[SlotFields]) -> L4Index:
        """Build the mirror from each slot's fields, in ``SlotRef``'s field order."""
        return cls._built(SlotRef(*row) for row in rows)

    # ---- updates (remove, remove_many, remove_topic: TopicSeqStore) -------------------

    def _touched(self, topic_id: int) -> None:
        self.journal.note(topic_id)

    def _stored(self, entry: SlotRef) -> None:
        if _is_summary(entry):
            if entry.id_hash == content_id(entry.topic_id, SEQ_USER):
                self._dreamed.add(entry.topic_id)
            else:
                self._foreign_dreamed.add(entry.id_hash)

    def _dropped(self, entry: SlotRef) -> None:
        if _is_summary(entry):
            if entry.id_hash == content_id(entry.topic_id, SEQ_USER):
                self._dreamed.discard(entry.topic_id)
            else:
                self._foreign_dreamed.discard(entry.id_hash)

    def put(self, slot: ArchiveSlot) -> None:
        """Record a slot just written; it replaces whatever held its id or its (topic, seq)."""
        self._put(SlotRef.of(slot))

    # ---- reads (len, topics, highest_seq: TopicSeqStore) -----------------------------

    def __contains__(self, id_hash: object) -> bool:
        return id_hash in self._by_id

    def get(self, id_hash: int) -> SlotRef | None:
        return self._by_id.get(id_hash)

    def next_seq(self, topic_id: int) -> int:
        """The seq an auto-allocated slot of the topic takes: ``max(highest, 2) + 1``."""
        return max(self.highest_seq(topic_id), SEQ_AGENT) + 1

    def slots_of(self, topic_id: int) -> list[SlotRef]:
        """The topic's slots in seq order."""
        return self._entries_of(topic_id)

    def utterances_of(self, topic_id: int) -> list[SlotRef]:
        """The topic's utterances in seq order (what a turn distils from)."""
        return [r for r in self.slots_of(topic_id) if r.kind == ArchiveKind.UTTERANCE]

    def events_of(self, topic_id: int) -> list[SlotRef]:
        """The topic's events in seq order."""
        return [r for r in self.slots_of(topic_id) if r.kind == ArchiveKind.EVENT]

    def summarised_topics(self) -> AbstractSet[int] | None:
        """Topics whose own slot 1 is a Dream summary (a live view; do not hold it).

        None when some summary sits at an address its payload does not name:
        then only a lookup per row (``get(content_id(topic, 1))``) is exact.
        """
        return None if self._foreign_dreamed else self._dreamed

    def highest_node_seq(self, topic_id: int) -> int:
        """The highest plan ordinal an event of the topic names; 0 when none does.

        A plan ordinal still named by a surviving event is never reissued.
        """
        return max((self._by_id[i].node_seq for i in self._topics.get(topic_id, ())), default=0)

    def refs_created_before(self, cutoff: int) -> list[SlotRef]:
        """Every slot with ``created_at < cutoff`` (strict), ascending by id, across topics."""
        return sorted(
            (r for r in self._by_id.values() if r.created_at < cutoff), key=lambda r: r.id_hash
        )

    def all_slots(self) -> list[SlotRef]:
        """Every slot of the domain ordered by (created_at, id): the domain-wide read order."""
        return sorted(self._by_id.values(), key=lambda r: (r.created_at, r.id_hash))

    # ---- comparison --------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        return self._same_entries(other) if isinstance(other, L4Index) else NotImplemented

    def __repr__(self) -> str:
        return f"L4Index(topics={len(self._topics)}, slots={len(self._by_id)})"
