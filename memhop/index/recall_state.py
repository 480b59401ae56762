"""A domain's recall state, and the body that stores it in the recall file.

The state is the recall index (``memhop.index.recall``) and which topics each
of its documents stands for. Packed, it is a run of flat columns, so a domain
that starts again reads its state back where the bytes lie (views of the
mapped file), instead of cutting every line of the domain into terms again;
only the columns a state edits in place are copied. The file around the
bodies is ``memhop.domain.recall_sections``.

Body: ``_COLUMNS`` in order, each a type code, an item count and the items,
little endian.

Contract: ``state_of_body(body_of(state), ...)`` gives back ``state`` (tests compare
the index and the maps), or raises ValueError for bytes that do not parse.
Only a state with nothing pending and no open turn is stored: what the file
keeps is what a full build of the domain's records would index.
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import TypeAlias

from memhop.index.grouped import Grouped
from memhop.index.packed_map import IdMap, PackedMap
from memhop.index.recall import RecallIndex
from memhop.index.recall_packed import Checked, Column, PackedIndex, code_of, copied
from memhop.index.recall_terms import Terms
from memhop.intmap import IntMap

__all__ = ["RecallState", "body_of", "order_ids", "packed_order", "state_of_body"]

_ROW_ID_SIZE = array("Q").itemsize  # an order's items, in the machine's order
_COLUMN = struct.Struct("<cQ")  # type code, item count
_TERMS = b"s"  # the terms, each ended by a NUL, as UTF-8 (the count is their byte length)
_ITEM_SIZES = {"B": 1, "H": 2, "I": 4, "Q": 8, "q": 8}

# The columns of a body, in order, with the type codes each may have (ids held in two
# bytes while they fit: ``memhop.index.recall``).
_COLUMNS = (
    ("terms", "s"),
    ("post_starts", "Q"),
    ("post_docs", "HI"),
    ("post_tfs", "B"),
    ("term_max_tfs", "B"),
    ("term_min_lengths", "I"),
    ("kinds", "B"),
    ("ids", "Q"),
    ("scenes", "Q"),
    ("created", "q"),
    ("lengths", "I"),
    ("total_length", "Q"),
    ("starts", "Q"),
    ("fwd_terms", "HI"),
    ("fwd_counts", "B"),
    ("slot_rows", "B"),
    ("slot_ends", "Q"),
    ("slot_flat", "Q"),
    ("row_of_topics", "Q"),
    ("row_of_rows", "Q"),
    ("members_rows", "Q"),
    ("members_ends", "Q"),
    ("members_flat", "Q"),
    ("events_rows", "Q"),
    ("events_ends", "Q"),
    ("events_flat", "Q"),
    ("orders_rows", "Q"),
    ("orders_ends", "Q"),
    ("orders_flat", "Q"),
    ("row_scenes", "Q"),
)
# Most of a body, read an item or a run at a time (a term's postings, a document's terms,
# a hit's id, a group): checked as each is first read, so a first recall does not hash
# what it does not read. The rest is read whole as a state is decoded.
_READ_IN_RUNS = frozenset(
    (
        "post_docs",
        "post_tfs",
        "fwd_terms",
        "fwd_counts",
        "ids",
        "scenes",
        "created",
        "slot_flat",
        "members_flat",
        "events_flat",
        "orders_flat",
        "row_scenes",
    )
)


@dataclass(slots=True)
class RecallState:
    """A domain's recall index and which topics each of its documents stands for."""

    index: RecallIndex = field(default_factory=RecallIndex)
    row_of: IdMap = field(default_factory=IntMap)  # topic -> the row indexing it
    # row -> its descendants (a state read back decodes each on first use, as these two)
    members: MutableMapping[int, tuple[int, ...]] = field(default_factory=dict)
    # topic -> its event's id, or their ids when several (a tuple per turn costs 64 bytes)
    events: MutableMapping[int, int | tuple[int, ...]] = field(default_factory=dict)
    # scene -> its surface rows in order, as last indexed (``packed_order``): a row's
    # document holds the lines of the rows beside it there. Bytes: a tuple per row cost 27
    # bytes a record, and an array a scene is an object every full collection walks.
    orders: MutableMapping[int, bytes] = field(default_factory=dict)
    row_scenes: IdMap = field(default_factory=IntMap)  # surface row -> its scene, as indexed
    open_topic: int = 0  # the open turn when last brought up to date (its events take its scene)
    open_scene: int = 0  # and its scene
    # Topics still to index in a first build, a unit (a scene's topics) at a time; empty
    # once built (the root builds in steps, each under its own hold of the domain lock).
    pending: list[list[int]] = field(default_factory=list)
    read_back: bool = False  # read from the recall file (its index edited since or not)
    terms: Terms = field(default_factory=Terms, compare=False, repr=False)  # the cutter

    @property
    def storable(self) -> bool:
        """Whether the state is what a full build would make: built, no open turn in it."""
        return not self.pending and not self.open_topic


# ---- columns --------------------------------------------------------------------------


def body_of(state: RecallState) -> bytes:
    """The body that stores ``state``: its columns in order. Only a state with nothing
    pending and no open turn is stored (ValueError): what a full build would index."""
    if not state.storable:
        msg = "recall state: only a built state with no open turn is stored"
        raise ValueError(msg)
    return b"".join(_columns_of(state))


Check: TypeAlias = Callable[[int, int], None]
"""Raise unless bytes [start, end) of a body are as written."""


def state_of_body(body: memoryview, now: Check, later: Check) -> RecallState:
    """The state a body holds, its columns views of it (ValueError for bytes that do not
    parse). The columns read whole are checked by ``now`` as they are decoded; those
    read an item or a run at a time (``_READ_IN_RUNS``: most of the bytes) by ``later``
    as they are read."""
    terms, columns = _view_columns(body, now, later)
    return _state_of(terms, columns)


def _columns_of(state: RecallState) -> Iterator[bytes]:
    packed = state.index.packed()
    slot_flats = list(packed.slots.values())
    members = sorted(state.members.items())
    events = sorted((t, (e,) if isinstance(e, int) else e) for t, e in state.events.items())
    orders = sorted(state.orders.items())
    terms = "".join(f"{term}\0" for term in packed.terms).encode()
    if terms.count(b"\0") != len(packed.terms):
        msg = "recall state: a term holds a NUL"
        raise ValueError(msg)
    values: dict[str, Column | bytes] = {
        "terms": terms,
        "post_starts": packed.post_starts,
        "post_docs": packed.post_docs,
        "post_tfs": packed.post_tfs,
        "term_max_tfs": packed.term_max_tfs,
        "term_min_lengths": packed.term_min_lengths,
        "kinds": packed.kinds,
        "ids": packed.ids,
        "scenes": packed.scenes,
        "created": packed.created,
        "lengths": packed.lengths,
        "total_length": array("Q", [packed.total_length]),
        "starts": packed.starts,
        "fwd_terms": packed.fwd_terms,
        "fwd_counts": packed.fwd_counts,
        "slot_rows": array("B", packed.slots),
        "slot_ends": _ends(len(flat) for flat in slot_flats),
        "slot_flat": _joined(slot_flats),
        "row_of_topics": array("Q", state.row_of.keys()),
        "row_of_rows": array("Q", state.row_of.values()),
        "members_rows": array("Q", (row for row, _ in members)),
        "members_ends": _ends(len(ids) for _, ids in members),
        "members_flat": _joined(ids for _, ids in members),
        "events_rows": array("Q", (topic for topic, _ in events)),
        "events_ends": _ends(len(ids) for _, ids in events),
        "events_flat": _joined(ids for _, ids in events),
        "orders_rows": array("Q", (scene for scene, _ in orders)),
        "orders_ends": _ends(len(rows) // _ROW_ID_SIZE for _, rows in orders),
        "orders_flat": array("Q", b"".join(rows for _, rows in orders)),
        "row_scenes": state.row_scenes.flat(),
    }
    for name, code in _COLUMNS:
        value = values[name]
        if isinstance(value, bytes):
            yield _COLUMN.pack(_TERMS, len(value))
            yield value
        else:
            assert code_of(value) in code, name
            yield _COLUMN.pack(code_of(value).encode(), len(value))
            yield _little(value)


def _ends(lengths: Iterable[int]) -> array[int]:
    ends, total = array("Q"), 0
    for length in lengths:
        total += length
        ends.append(total)
    return ends


def _joined(groups: Iterable[Iterable[int]]) -> array[int]:
    flat = array("Q")
    for group in groups:
        flat.extend(group)
    return flat


def _little(column: Column) -> bytes:
    if isinstance(column, Checked):
        column = column.whole()
    if sys.byteorder == "little":
        return column.tobytes()
    swapped = array(code_of(column), column)  # pragma: no cover - big-endian hosts only
    swapped.byteswap()  # pragma: no cover
    return swapped.tobytes()  # pragma: no cover


def _view_columns(body: memoryview, now: Check, later: Check) -> tuple[bytes, dict[str, Column]]:
    """The body's terms, and its other columns by name, each a view of its bytes."""
    terms, columns = b"", dict[str, Column]()
    at, end = 0, len(body)
    for name, code in _COLUMNS:
        if at + _COLUMN.size > end:
            msg = f"recall state: ends before its {name} column"
            raise ValueError(msg)
        now(at, at + _COLUMN.size)
        found, count = _COLUMN.unpack(body[at : at + _COLUMN.size])
        at += _COLUMN.size
        if found.decode("ascii", "replace") not in code:
            msg = f"recall state: column {name} has type {found!r}, not one of {code!r}"
            raise ValueError(msg)
        code = found.decode("ascii")
        size = count * (1 if code == "s" else _ITEM_SIZES[code])
        if at + size > end:
            msg = f"recall state: column {name} runs past the end"
            raise ValueError(msg)
        raw = body[at : at + size]
        lazy = name in _READ_IN_RUNS and sys.byteorder == "little"
        if not lazy:
            now(at, at + size)
        if code == "s":
            terms = bytes(raw)
        elif struct.calcsize(code) != _ITEM_SIZES[code]:  # pragma: no cover - exotic platforms
            msg = f"recall state: {code!r} is not {_ITEM_SIZES[code]} bytes here"
            raise ValueError(msg)
        elif lazy:
            columns[name] = Checked(raw.cast(code), later, at)
        elif sys.byteorder == "little":
            columns[name] = raw.cast(code)
        else:  # pragma: no cover - big-endian hosts only
            column = array(code)
            column.frombytes(raw)
            column.byteswap()
            columns[name] = column
        at += size
    if at != end:
        msg = "recall state: bytes after its last column"
        raise ValueError(msg)
    return terms, columns


def _state_of(raw_terms: bytes, columns: dict[str, Column]) -> RecallState:
    try:
        terms = tuple(raw_terms.decode().split("\0")[:-1])
    except UnicodeDecodeError as exc:
        msg = f"recall state: terms are not UTF-8: {exc}"
        raise ValueError(msg) from None
    col = columns.__getitem__
    try:
        packed = PackedIndex(
            terms=terms,
            post_starts=col("post_starts"),
            post_docs=col("post_docs"),
            post_tfs=col("post_tfs"),
            term_max_tfs=col("term_max_tfs"),
            term_min_lengths=col("term_min_lengths"),
            kinds=col("kinds"),
            ids=col("ids"),
            scenes=col("scenes"),
            created=col("created"),
            lengths=col("lengths"),
            total_length=_one(col("total_length")),
            starts=col("starts"),
            fwd_terms=col("fwd_terms"),
            fwd_counts=col("fwd_counts"),
            slots=_slot_pairs(*_group_columns(columns, "slot")),
        )
        return RecallState(
            index=RecallIndex.unpacked(packed),
            row_of=PackedMap(col("row_of_topics"), col("row_of_rows")),
            members=Grouped(*_group_columns(columns, "members"), tuple),
            events=Grouped(*_group_columns(columns, "events"), _event_ids),
            orders=Grouped(*_group_columns(columns, "orders"), _own_bytes),
            row_scenes=PackedMap(col("row_scenes")),
            read_back=True,
        )
    except ValueError as exc:  # columns that do not fit together
        msg = f"recall state: {exc}"
        raise ValueError(msg) from None


def _group_columns(columns: dict[str, Column], name: str) -> tuple[Column, Column, Column]:
    """A grouped column set's keys, ends and flat items, their lengths checked."""
    keys, ends, flat = (columns[f"{name}_{part}"] for part in ("rows", "ends", "flat"))
    if len(keys) != len(ends) or (ends[-1] if ends else 0) != len(flat):
        msg = f"{name}: keys, ends and items do not fit together"
        raise ValueError(msg)
    return keys, ends, flat


def _one(column: Column) -> int:
    if len(column) != 1:
        msg = "a one-item column holds another count"
        raise ValueError(msg)
    return int(column[0])


def _event_ids(ids: Column) -> int | tuple[int, ...]:
    return ids[0] if len(ids) == 1 else tuple(ids)


def _slot_pairs(kinds: Column, ends: Column, flat: Column) -> dict[int, Column]:
    """Each kind's (id, slot) pairs, as views (checked as they are read)."""
    pairs: dict[int, Column] = {}
    start = 0
    for kind, end in zip(kinds, ends, strict=True):
        pairs[kind] = flat.part(start, end) if isinstance(flat, Checked) else flat[start:end]
        start = end
    return pairs


def _own_bytes(group: Column) -> bytes:
    return copied(group, "Q").tobytes()


def packed_order(row_ids: Iterable[int]) -> bytes:
    """A scene's surface order as ``RecallState.orders`` holds it."""
    return array("Q", row_ids).tobytes()


def order_ids(order: bytes) -> list[int]:
    """The row ids of an order ``packed_order`` made."""
    return memoryview(order).cast("Q").tolist()
