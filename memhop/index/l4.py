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

Held packed: a slot is a row of parallel arrays (about 40 bytes), found by id
through an ``IntMap`` and by topic through a chain of rows in descending seq
order (the topic's highest row, then each row's next lower one), so the usual
write, a slot above the topic's highest, and ``next_seq`` cost the same however
many slots the turn holds; the ``SlotRef`` a read returns is made then. An
object per slot cost 160 bytes a record, held for as long as the domain is
open. A removed slot's row stays until removed rows outnumber the live ones,
then the rows are packed again.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import compress, islice, pairwise

from memhop.ids import content_id
from memhop.index.journal import Journal
from memhop.intmap import IntMap
from memhop.records import SEQ_AGENT, SEQ_USER, ArchiveKind, ArchiveRole, ArchiveSlot
from memhop.records.codes import ContentType, members_of

__all__ = ["L4Index", "SlotFields", "SlotRef"]

SlotFields = tuple[int, int, int, int, int, int, int, int]
"""(id_hash, topic_id, seq, kind, content_type, role, node_seq, created_at)."""

# Code -> enum member, as the record decoders give them (a code without a member stays an int).
_KINDS = members_of(ArchiveKind)
_TYPES = members_of(ContentType)
_ROLES = members_of(ArchiveRole)
_REPACK_MIN = 4096
_PACE_EVERY = 256  # rows (or topics) between two calls of a build's ``pace``
_CHUNK = 1024  # rows a build stores between two calls of ``pace`` (each row costs little)
# The per-row arrays, in ``SlotFields`` order.
_COLUMNS = ("_ids", "_topic", "_seq", "_kind", "_ctype", "_role", "_node", "_created")


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


def _fields_of(slot: SlotRef | ArchiveSlot) -> SlotFields:
    return (
        slot.id_hash,
        slot.topic_id,
        slot.seq,
        slot.kind,
        slot.content_type,
        slot.role,
        slot.node_seq,
        slot.created_at,
    )


def _no_pace() -> None:
    """No build to make way for."""


def _is_summary(role: int, kind: int) -> bool:
    # Seq is not checked: what counts is the address, as a lookup by address sees it.
    return role == ArchiveRole.DREAM and kind == ArchiveKind.UTTERANCE


class L4Index:
    """Content slots of one domain, grouped by topic; ``journal`` notes the topics touched."""

    def __init__(self) -> None:
        self.journal = Journal()
        self.retention_journal = Journal()  # the same notes, drained by Dream's content sweep
        self._row_of = IntMap()  # id -> row
        # A topic's rows as a chain from its highest seq down: its top row, then
        # each row's next lower one (+1; 0 ends it). An array per topic cost 30
        # bytes a record more.
        self._top = IntMap()  # topic -> its row of the highest seq
        self._next: array[int] = array("I")
        # One row per slot stored (a removed slot's row stays until a repack).
        self._ids: array[int] = array("Q")
        self._topic: array[int] = array("Q")
        self._seq: array[int] = array("Q")
        self._kind: array[int] = array("B")
        self._ctype: array[int] = array("B")
        self._role: array[int] = array("B")
        self._node: array[int] = array("I")
        self._created: array[int] = array("q")
        # Topics whose slot 1 is a Dream summary, so a scene's provenance costs its
        # Dream rows rather than a lookup per row; a summary stored at another
        # topic's address (a foreign payload) is kept apart by its address.
        self._dreamed: set[int] = set()
        self._foreign_dreamed: set[int] = set()

    @classmethod
    def from_records(cls, slots: Iterable[ArchiveSlot]) -> L4Index:
        """Build the mirror from records read back from the engine."""
        return cls.from_fields(map(_fields_of, slots))

    @classmethod
    def from_fields(
        cls, rows: Iterable[SlotFields], pace: Callable[[], None] | None = None
    ) -> L4Index:
        """Build the mirror from each slot's fields: the same as a ``put`` of each in turn.
        ``pace`` is called between steps and every ``_PACE_EVERY`` rows of the long ones
        (a build beside calls lets them run)."""
        pace = pace or _no_pace
        mirror = cls()
        columns = [getattr(mirror, name) for name in _COLUMNS]
        # A chunk at a time, the rows freed as they are stored: one transposition or free
        # of every row at once holds the interpreter for milliseconds at 10^4 rows.
        given = iter(rows)
        while chunk := list(islice(given, _CHUNK)):
            for column, values in zip(columns, zip(*chunk, strict=True), strict=True):
                column.extend(values)
            pace()
        count = len(mirror._ids)
        mirror._next.frombytes(bytes(4 * count))
        topics = mirror._grouped(pace)
        row_of = IntMap.from_arrays(array("Q", mirror._ids), array("Q", range(count)))
        if topics is None or len(row_of) < count:
            # Something replaces something: store each in turn, in the order given.
            again = cls()
            for row in zip(*columns, strict=True):
                again._put(SlotRef(*row))
            return again
        mirror._row_of = row_of
        pace()
        tops = mirror._linked(topics, pace)
        pace()
        mirror._top = IntMap.from_mapping(tops)
        for start in range(0, count, _CHUNK):
            pace()
            end = min(start + _CHUNK, count)
            dream = map(_is_summary, mirror._role[start:end], mirror._kind[start:end])
            for at in compress(range(start, end), dream):
                mirror._stored(at)
        return mirror

    def _grouped(self, pace: Callable[[], None]) -> dict[int, list[int]] | None:
        """Topic -> its rows in seq order, from the rows alone; None when a place repeats."""
        grouped: defaultdict[int, list[int]] = defaultdict(list)
        for at, topic_id in enumerate(self._topic):
            grouped[topic_id].append(at)
            if not at % _PACE_EVERY:
                pace()
        seqs = self._seq
        for n, held in enumerate(grouped.values()):
            if len(held) > 1:
                held.sort(key=seqs.__getitem__)
                if any(seqs[a] == seqs[b] for a, b in pairwise(held)):
                    return None
            if not n % _PACE_EVERY:
                pace()
        return grouped

    def _linked(self, topics: dict[int, list[int]], pace: Callable[[], None]) -> dict[int, int]:
        """Chain each topic's rows (given in seq order); return topic -> its top row."""
        lower = self._next
        for n, rows in enumerate(topics.values()):
            for a, b in pairwise(rows):
                lower[b] = a + 1
            lower[rows[0]] = 0
            if not n % _PACE_EVERY:
                pace()
        return {topic_id: rows[-1] for topic_id, rows in topics.items()}

    def _rows(self, topic_id: int) -> list[int]:
        """The topic's rows in seq order."""
        top = self._top.get(topic_id)
        return [] if top is None else self._chain(top)

    def _chain(self, at: int) -> list[int]:
        """The rows from a topic's top row down its chain, in seq order."""
        rows = [at]
        lower = self._next
        while lower[at]:
            at = lower[at] - 1
            rows.append(at)
        rows.reverse()
        return rows

    def _unsplice(self, topic_id: int, rows: list[int], i: int) -> None:
        """Unlink ``rows[i]`` from the topic's chain (``rows``: its rows before, in seq order)."""
        lower = rows[i - 1] + 1 if i else 0
        if i + 1 < len(rows):
            self._next[rows[i + 1]] = lower
        elif lower:
            self._top.put(topic_id, lower - 1)
        else:
            self._top.discard(topic_id)

    # ---- rows --------------------------------------------------------------------------

    def _append_row(self, row: SlotFields) -> int:
        at = len(self._ids)
        id_hash, topic_id, seq, kind, ctype, role, node_seq, created_at = row
        self._ids.append(id_hash)
        self._topic.append(topic_id)
        self._seq.append(seq)
        self._kind.append(kind)
        self._ctype.append(ctype)
        self._role.append(role)
        self._node.append(node_seq)
        self._created.append(created_at)
        self._next.append(0)
        return at

    def _ref(self, at: int) -> SlotRef:
        kind, ctype, role = self._kind[at], self._ctype[at], self._role[at]
        return SlotRef(
            self._ids[at],
            self._topic[at],
            self._seq[at],
            _KINDS.get(kind, kind),
            _TYPES.get(ctype, ctype),
            _ROLES.get(role, role),
            self._node[at],
            self._created[at],
        )

    def _live_rows(self) -> Iterator[int]:
        """Every live row, ascending by id."""
        return iter(self._row_of.values())

    # ---- updates -----------------------------------------------------------------------

    def _summary_mark(self, at: int) -> tuple[set[int], int] | None:
        """Where the row is noted if it is a Dream summary: its topic, or its foreign address."""
        if not _is_summary(self._role[at], self._kind[at]):
            return None
        id_hash, topic_id = self._ids[at], self._topic[at]
        if id_hash == content_id(topic_id, SEQ_USER):
            return self._dreamed, topic_id
        return self._foreign_dreamed, id_hash

    def _stored(self, at: int) -> None:
        mark = self._summary_mark(at)
        if mark is not None:
            mark[0].add(mark[1])

    def _dropped(self, at: int) -> None:
        self._row_of.discard(self._ids[at])
        mark = self._summary_mark(at)
        if mark is not None:
            mark[0].discard(mark[1])

    def put(self, slot: ArchiveSlot) -> None:
        """Record a slot just written; it replaces whatever held its id or its (topic, seq)."""
        self._put(slot)

    def _put(self, entry: SlotRef | ArchiveSlot) -> None:
        self.remove(entry.id_hash)
        topic_id, seq = entry.topic_id, entry.seq
        self.journal.note(topic_id)
        self.retention_journal.note(topic_id)
        seqs, lower = self._seq, self._next
        top = self._top.get(topic_id)
        if top is None or seqs[top] < seq:  # the usual write: a new highest slot
            at = self._append_row(_fields_of(entry))
            lower[at] = 0 if top is None else top + 1
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
            at = self._append_row(_fields_of(entry))
            lower[at] = below + 1  # 0 ends the chain
            if above < 0:
                self._top.put(topic_id, at)
            else:
                lower[above] = at + 1
        self._row_of.put(entry.id_hash, at)
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

    def _repack_if_sparse(self) -> None:
        """Drop removed rows once they outnumber the live ones (and a few thousand)."""
        stale = len(self._ids) - len(self._row_of)
        if stale <= max(_REPACK_MIN, len(self._row_of)):
            return
        topics = {topic_id: self._rows(topic_id) for topic_id in self._top}
        kept = sorted(self._live_rows())
        renumbered = {old: new for new, old in enumerate(kept)}
        for name in _COLUMNS:
            column: array[int] = getattr(self, name)
            setattr(self, name, array(column.typecode, map(column.__getitem__, kept)))
        self._next = array("I", bytes(4 * len(kept)))
        self._row_of = IntMap.from_mapping(dict(zip(self._ids, range(len(kept)), strict=True)))
        renumbered_topics = {t: [renumbered[at] for at in rows] for t, rows in topics.items()}
        self._top = IntMap.from_mapping(self._linked(renumbered_topics, _no_pace))

    # ---- reads -------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._row_of)

    def __contains__(self, id_hash: object) -> bool:
        return id_hash in self._row_of

    def get(self, id_hash: int) -> SlotRef | None:
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
        return max(self.highest_seq(topic_id), SEQ_AGENT) + 1

    def slots_of(self, topic_id: int) -> list[SlotRef]:
        """The topic's slots in seq order."""
        return [self._ref(at) for at in self._rows(topic_id)]

    def _kind_rows(self, topic_id: int, kind: int) -> list[int]:
        kinds = self._kind
        return [at for at in self._rows(topic_id) if kinds[at] == kind]

    def _of_kind(self, topic_id: int, kind: int) -> list[SlotRef]:
        return [self._ref(at) for at in self._kind_rows(topic_id, kind)]

    def ids_of(self, topic_id: int, kind: int) -> list[int]:
        """The ids of the topic's slots of ``kind`` in seq order, no ``SlotRef`` made."""
        ids = self._ids
        return [ids[at] for at in self._kind_rows(topic_id, kind)]

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

    def utterances_of(self, topic_id: int) -> list[SlotRef]:
        """The topic's utterances in seq order (what a turn distils from)."""
        return self._of_kind(topic_id, ArchiveKind.UTTERANCE)

    def events_of(self, topic_id: int) -> list[SlotRef]:
        """The topic's events in seq order."""
        return self._of_kind(topic_id, ArchiveKind.EVENT)

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
        return max(map(self._node.__getitem__, self._rows(topic_id)), default=0)

    def created_in(self, topic_id: int) -> list[tuple[int, int]]:
        """(id, created_at) of every slot of the topic, in seq order, no ``SlotRef`` made."""
        ids, created = self._ids, self._created
        return [(ids[at], created[at]) for at in self._rows(topic_id)]

    def created_before(self, cutoff: int) -> list[tuple[int, int]]:
        """(id, topic) of every slot with ``created_at < cutoff`` (strict), ascending by id.

        No ``SlotRef`` is made: a retention sweep asks this of the whole domain.
        """
        created, ids, topics = self._created, self._ids, self._topic
        return [(ids[at], topics[at]) for at in self._live_rows() if created[at] < cutoff]

    def all_slots(self) -> list[SlotRef]:
        """Every slot of the domain ordered by (created_at, id): the domain-wide read order."""
        refs = [self._ref(at) for at in self._live_rows()]
        return sorted(refs, key=lambda r: (r.created_at, r.id_hash))

    # ---- comparison --------------------------------------------------------------------

    def _contents(self) -> tuple[dict[int, SlotRef], dict[int, list[int]]]:
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
