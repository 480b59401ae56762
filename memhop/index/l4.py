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

The rows it keeps, and why they are packed: ``l4_rows``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet

from memhop.ids import content_id
from memhop.index.journal import Journal
from memhop.index.l4_rows import SlotRows, _is_summary, no_pace
from memhop.records import SEQ_AGENT, SEQ_USER, ArchiveKind, ArchiveSlot, SlotHeader

__all__ = ["L4Index"]


class L4Index(SlotRows):
    """Content slots of one domain, grouped by topic; ``journal`` notes the topics touched."""

    def __init__(self) -> None:
        super().__init__()
        self.journal = Journal()
        self.retention_journal = Journal()  # the same notes, drained by Dream's content sweep
        # Topics whose slot 1 is a Dream summary, so a scene's provenance costs its
        # Dream rows rather than a lookup per row; a summary stored at another
        # topic's address (a foreign payload) is kept apart by its address. Dicts of
        # ids as keys, not sets: a dict of ints stays out of the collector's view.
        self._dreamed: dict[int, None] = {}
        self._foreign_dreamed: dict[int, None] = {}

    @classmethod
    def from_records(cls, slots: Iterable[ArchiveSlot]) -> L4Index:
        """Build the mirror from records read back from the engine."""
        return cls.from_fields(map(SlotHeader.of, slots))

    @classmethod
    def from_fields(
        cls, rows: Iterable[SlotHeader], pace: Callable[[], None] | None = None
    ) -> L4Index:
        """Build the mirror from each slot's fields: the same as a ``put`` of each in turn.
        ``pace`` is called between steps and within the long ones (a build beside calls
        lets them run)."""
        pace = pace or no_pace
        mirror = cls()
        if not mirror._filled(rows, pace):
            # Something replaces something: store each in turn, in the order given.
            again = cls()
            for row in mirror._given():
                again.put(row)
            return again
        for at in mirror._summary_rows(pace):
            mirror._stored(at)
        return mirror

    # ---- updates -----------------------------------------------------------------------

    def _summary_mark(self, at: int) -> tuple[dict[int, None], int] | None:
        """Where the row is noted if it is a Dream summary: its topic, or its foreign address."""
        if not self._holds_summary(at):
            return None
        id_hash, topic_id = self._ids[at], self._topic[at]
        if id_hash == content_id(topic_id, SEQ_USER):
            return self._dreamed, topic_id
        return self._foreign_dreamed, id_hash

    def _stored(self, at: int) -> None:
        mark = self._summary_mark(at)
        if mark is not None:
            mark[0][mark[1]] = None

    def _dropped(self, at: int) -> None:
        self._row_of.discard(self._ids[at])
        mark = self._summary_mark(at)
        if mark is not None:
            mark[0].pop(mark[1], None)

    def put(self, entry: SlotHeader | ArchiveSlot) -> None:
        """Record a slot just written; it replaces whatever held its id or its (topic, seq)."""
        if entry.id_hash in self._row_of:  # an overwrite (a turn's writes are new ids)
            self.remove(entry.id_hash)
        topic_id, seq = entry.topic_id, entry.seq
        if self.journal.watching:
            self.journal.note(topic_id)
        if self.retention_journal.watching:
            self.retention_journal.note(topic_id)
        seqs, lower = self._seq, self._next
        top = self._top.get(topic_id)
        if top is None or seqs[top] < seq:  # the usual write: a new highest slot
            at = self._append_row(entry, 0 if top is None else top + 1)
            self._top.put(topic_id, at)
        else:
            # Walk down from the top to the first row below the slot: a turn's lines
            # (seq 1 and 2) land under its events, a step or two down.
            above, below = -1, top
            while below >= 0 and seqs[below] > seq:
                above, below = below, lower[below] - 1
            if below >= 0 and seqs[below] == seq:
                # Only a payload naming a foreign id gets here: keep one entry per address.
                self._dropped(below)
                below = lower[below] - 1
            at = self._append_row(entry, below + 1)  # 0 ends the chain
            if above < 0:
                self._top.put(topic_id, at)
            else:
                lower[above] = at + 1
        self._row_of.put(entry.id_hash, at)
        if _is_summary(entry.role, entry.kind):  # only a summary is noted
            self._stored(at)

    def remove(self, id_hash: int) -> bool:
        """Forget one entry; False when the mirror did not hold it."""
        at = self._row_of.get(id_hash)
        if at is None:
            return False
        topic_id = self._topic[at]
        self.journal.note(topic_id)
        self.retention_journal.note(topic_id)
        self._dropped(at)
        rows = self._rows(topic_id)
        self._unsplice(topic_id, rows, rows.index(at))
        self._repack_if_sparse()
        return True

    def remove_many(self, ids: Iterable[int]) -> int:
        """Forget several entries (after a tombstone batch); return how many the mirror held."""
        return sum(1 for id_hash in ids if self.remove(id_hash))

    def remove_topic(self, topic_id: int) -> list[int]:
        """Forget every entry of a topic; return their ids ascending."""
        rows = self._rows(topic_id)
        if rows:
            self.journal.note(topic_id)
            self.retention_journal.note(topic_id)
            self._top.discard(topic_id)
        ids = sorted(self._ids[at] for at in rows)
        for at in rows:
            self._dropped(at)
        self._repack_if_sparse()
        return ids

    # ---- reads -------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._row_of)

    def __contains__(self, id_hash: object) -> bool:
        return id_hash in self._row_of

    def get(self, id_hash: int) -> SlotHeader | None:
        at = self._row_of.get(id_hash)
        return None if at is None else self._ref(at)

    def topics(self) -> list[int]:
        """Topics holding at least one entry, ascending."""
        return list(self._top)

    def highest_seq(self, topic_id: int) -> int:
        """The highest seq the topic holds; 0 when it holds none."""
        top = self._top.get(topic_id)
        return 0 if top is None else self._seq[top]

    def next_seq(self, topic_id: int) -> int:
        """The seq an auto-allocated slot of the topic takes: ``max(highest, 2) + 1``."""
        highest = self.highest_seq(topic_id)
        return (highest if highest > SEQ_AGENT else SEQ_AGENT) + 1  # no max(): every event asks

    def slots_of(self, topic_id: int) -> list[SlotHeader]:
        """The topic's slots in seq order."""
        return [self._ref(at) for at in self._rows(topic_id)]

    def _kind_rows(self, topic_id: int, kind: int) -> list[int]:
        kinds = self._kind
        return [at for at in self._rows(topic_id) if kinds[at] == kind]

    def _of_kind(self, topic_id: int, kind: int) -> list[SlotHeader]:
        return [self._ref(at) for at in self._kind_rows(topic_id, kind)]

    def ids_of(self, topic_id: int, kind: int) -> list[int]:
        """The ids of the topic's slots of ``kind`` in seq order, no ``SlotHeader`` made."""
        ids, kinds = self._ids, self._kind
        return [ids[at] for at in self._rows(topic_id) if kinds[at] == kind]

    def ids_in(self, topic_id: int) -> list[int]:
        """The ids of every slot of the topic, in seq order."""
        ids = self._ids
        return [ids[at] for at in self._rows(topic_id)]

    def ids_by_topic(self) -> dict[int, list[int]]:
        """Topic -> the ids of its slots in seq order, for every topic, in one pass."""
        ids = self._ids
        return {
            topic_id: [ids[at] for at in self._chain(top)]
            for topic_id, top in self._top.unordered_items()
        }

    def utterances_of(self, topic_id: int) -> list[SlotHeader]:
        """The topic's utterances in seq order (what a turn distils from)."""
        return self._of_kind(topic_id, ArchiveKind.UTTERANCE)

    def events_of(self, topic_id: int) -> list[SlotHeader]:
        """The topic's events in seq order."""
        return self._of_kind(topic_id, ArchiveKind.EVENT)

    def summarised_topics(self) -> AbstractSet[int] | None:
        """Topics whose own slot 1 is a Dream summary (a live view; do not hold it).

        None when some summary sits at an address its payload does not name:
        then only a lookup per row (``get(content_id(topic, 1))``) is exact.
        """
        return None if self._foreign_dreamed else self._dreamed.keys()

    def highest_node_seq(self, topic_id: int) -> int:
        """The highest plan ordinal an event of the topic names; 0 when none does.

        A plan ordinal still named by a surviving event is never reissued.
        """
        return max(map(self._node.__getitem__, self._rows(topic_id)), default=0)

    def created_in(self, topic_id: int) -> list[int]:
        """The ``created_at`` of every slot of the topic, in seq order (``ids_in``'s): one
        list, no object a slot (Dream's retention asks this under the domain lock, and a
        burst of objects there is where the collector's pauses start)."""
        return list(map(self._created.__getitem__, self._rows(topic_id)))

    def created_before(self, cutoff: int) -> list[tuple[int, int]]:
        """(id, topic) of every slot with ``created_at < cutoff`` (strict), ascending by id.

        No ``SlotHeader`` is made: a retention sweep asks this of the whole domain.
        """
        created, ids, topics = self._created, self._ids, self._topic
        return [(ids[at], topics[at]) for at in self._live_rows() if created[at] < cutoff]

    def all_slots(self) -> list[SlotHeader]:
        """Every slot of the domain ordered by (created_at, id): the domain-wide read order."""
        refs = [self._ref(at) for at in self._live_rows()]
        return sorted(refs, key=lambda r: (r.created_at, r.id_hash))

    # ---- comparison --------------------------------------------------------------------

    def _contents(self) -> tuple[dict[int, SlotHeader], dict[int, list[int]]]:
        by_id = {self._ids[at]: self._ref(at) for at in self._live_rows()}
        ids = self._ids
        return by_id, {t: [ids[at] for at in self._rows(t)] for t in self._top}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, L4Index):
            return NotImplemented
        return self._contents() == other._contents()

    __hash__ = None  # type: ignore[assignment]  # mutable: not hashable

    def __repr__(self) -> str:
        return f"L4Index(topics={len(self._top)}, slots={len(self._row_of)})"
