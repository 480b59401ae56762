"""The L4 mirror's packed rows: one row of parallel arrays per content slot.

Contract:
- A row holds one slot's ``records.SlotHeader``; ``_ref`` makes it again (a
  code without an enum member stays an int).
- ``_row_of`` finds a live row by id; ``_top`` and ``_next`` chain each
  topic's live rows from its highest seq down (``_rows``: in seq order).
- A removed row stays until removed rows outnumber the live ones (and a few
  thousand); ``_repack_if_sparse`` then packs the rows again.
- The columns hold ``_count`` rows, then zeros: room for the next rows, each stored in
  place (by ``memhop.index._rows`` where the install built it) rather than appended.

Why packed: a row is about 40 bytes; an object per slot cost 160 bytes a
record, held for as long as the domain is open. The chain runs in descending
seq order (the topic's highest row, then each row's next lower one), so the
usual write, a slot above the topic's highest, and ``next_seq`` cost the same
however many slots the turn holds; the ``SlotHeader`` a read returns is made then.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from itertools import compress, islice, pairwise

from memhop.intmap import IntMap
from memhop.records import ArchiveKind, ArchiveRole, ArchiveSlot, SlotHeader
from memhop.records.codes import KIND_UTTERANCE, ROLE_DREAM, ContentType, members_of

__all__ = ["SlotRows", "no_pace"]

# Code -> enum member, as the record decoders give them (a code without a member stays an int).
_KINDS = members_of(ArchiveKind)
_TYPES = members_of(ContentType)
_ROLES = members_of(ArchiveRole)
_REPACK_MIN = 4096
_PACE_EVERY = 256  # rows (or topics) between two calls of a build's ``pace``
_CHUNK = 1024  # rows a build stores between two calls of ``pace`` (each row costs little)
# The per-row arrays, in ``SlotHeader`` order.
_COLUMNS = ("_ids", "_topic", "_seq", "_kind", "_ctype", "_role", "_node", "_created")
_ROOM_MIN = 64  # rows of room a column is grown by, at least

_compiled_store: Callable[..., bool] | None
try:  # the compiled row store (``_rows.c``), where the install built it
    from memhop.index._rows import store as _compiled_store
except ImportError:  # built without a C compiler (hatch_build.py says why)
    _compiled_store = None


def no_pace() -> None:
    """No build to make way for."""


def _is_summary(role: int, kind: int) -> bool:
    # Seq is not checked: what counts is the address, as a lookup by address sees it.
    return role == ROLE_DREAM and kind == KIND_UTTERANCE


class SlotRows:
    """A domain's content slots as rows: found by id, chained by topic from the highest seq."""

    def __init__(self) -> None:
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
        self._count = 0  # rows stored; the columns hold zeros past them (``_append_row``)
        self._columns = self._every_column()

    def _every_column(self) -> tuple[array[int], ...]:
        """The columns in ``_COLUMNS`` order, then the chain links: what a row is stored in."""
        return (*(getattr(self, name) for name in _COLUMNS), self._next)

    def _filled(self, rows: Iterable[SlotHeader], pace: Callable[[], None]) -> bool:
        """Store and index ``rows``, ``pace`` called between steps and every ``_PACE_EVERY``
        rows of the long ones; False when one replaces another (the same id or place):
        the rows are then stored unindexed, in the order given (``_given``)."""
        columns = [getattr(self, name) for name in _COLUMNS]
        # A chunk at a time, the rows freed as they are stored: one transposition or free
        # of every row at once holds the interpreter for milliseconds at 10^4 rows.
        given = iter(rows)
        while chunk := list(islice(given, _CHUNK)):
            for column, values in zip(columns, zip(*chunk, strict=True), strict=True):
                column.extend(values)
            pace()
        self._count = count = len(self._ids)
        self._next.frombytes(bytes(4 * count))
        topics = self._grouped(pace)
        row_of = IntMap.from_arrays(array("Q", self._ids), array("Q", range(count)))
        if topics is None or len(row_of) < count:
            return False
        self._row_of = row_of
        pace()
        tops = self._linked(topics, pace)
        pace()
        self._top = IntMap.from_mapping(tops)
        return True

    def _given(self) -> Iterator[SlotHeader]:
        """Every row stored, in the order stored."""
        columns = zip(*(getattr(self, name) for name in _COLUMNS), strict=True)
        return map(SlotHeader._make, islice(columns, self._count))

    def _grouped(self, pace: Callable[[], None]) -> dict[int, list[int]] | None:
        """Topic -> its rows in seq order, from the rows alone; None when a place repeats."""
        grouped: defaultdict[int, list[int]] = defaultdict(list)
        for at, topic_id in enumerate(islice(self._topic, self._count)):
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

    def _append_row(self, row: SlotHeader | ArchiveSlot, lower: int) -> int:
        """Store ``row`` last, its chain link ``lower`` (its next lower row + 1; 0 ends it)."""
        at = self._count
        if at == len(self._next):
            # A sixteenth more room, as an array grows: a row is then stored in place,
            # where nine appends converted each value through an array's general path
            # (the kernel's reason for being).
            more = max(_ROOM_MIN, at >> 4)
            for column in self._columns:
                column.frombytes(bytes(more * column.itemsize))
        if _compiled_store is None or not _compiled_store(
            self._columns,
            at,
            row.id_hash,
            row.topic_id,
            row.seq,
            row.kind,
            row.content_type,
            row.role,
            row.node_seq,
            row.created_at,
            lower,
        ):
            self._put_row(at, row, lower)
        self._count = at + 1
        return at

    def _put_row(self, at: int, row: SlotHeader | ArchiveSlot, lower: int) -> None:
        """``_append_row``'s store in Python (a value that does not fit its column raises
        there, the row not counted)."""
        self._ids[at] = row.id_hash
        self._topic[at] = row.topic_id
        self._seq[at] = row.seq
        self._kind[at] = row.kind
        self._ctype[at] = row.content_type
        self._role[at] = row.role
        self._node[at] = row.node_seq
        self._created[at] = row.created_at
        self._next[at] = lower

    def _ref(self, at: int) -> SlotHeader:
        kind, ctype, role = self._kind[at], self._ctype[at], self._role[at]
        return SlotHeader(
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

    def _summary_rows(self, pace: Callable[[], None]) -> Iterator[int]:
        """The rows holding a Dream summary, ascending, ``pace`` called a chunk at a time."""
        count = self._count
        for start in range(0, count, _CHUNK):
            pace()
            end = min(start + _CHUNK, count)
            dream = map(_is_summary, self._role[start:end], self._kind[start:end])
            yield from compress(range(start, end), dream)

    def _holds_summary(self, at: int) -> bool:
        """Whether the row holds a Dream summary."""
        return _is_summary(self._role[at], self._kind[at])

    def _repack_if_sparse(self) -> None:
        """Drop removed rows once they outnumber the live ones (and a few thousand)."""
        stale = self._count - len(self._row_of)
        if stale <= max(_REPACK_MIN, len(self._row_of)):
            return
        topics = {topic_id: self._rows(topic_id) for topic_id in self._top}
        kept = sorted(self._live_rows())
        renumbered = {old: new for new, old in enumerate(kept)}
        for name in _COLUMNS:
            column: array[int] = getattr(self, name)
            setattr(self, name, array(column.typecode, map(column.__getitem__, kept)))
        self._next = array("I", bytes(4 * len(kept)))
        self._count = len(kept)
        self._columns = self._every_column()
        self._row_of = IntMap.from_mapping(dict(zip(self._ids, range(len(kept)), strict=True)))
        renumbered_topics = {t: [renumbered[at] for at in rows] for t, rows in topics.items()}
        self._top = IntMap.from_mapping(self._linked(renumbered_topics, no_pace))
