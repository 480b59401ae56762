"""Typed record access over the engine: one id, one record type.

A read of an id that holds a record of another type answers NotFoundError,
the same as an absent id. Every other failure keeps its own code: "cannot
read" is never reported as "not found". A read of a damaged record (its frame
fails a check, or its payload will not decode) names the record and its
offset, and the engine counts it (``Engine.damage``, reported by ``DB.stats``).

Two families read many records. The contained ones (``collect``,
``read_many``), for listings, skip a damaged record, so damage costs only the
record it hits. The strict ones (``collect_strict``, ``read_many_strict``, ``iter_strict``),
used where the records read decide a delete, stop at the first record that
will not read: a record nobody can read must not decide what else goes.
``iter_lenient`` skips every failure.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from typing import ClassVar, Protocol, Self, TypeVar

from memhop.engine import Engine, RecordEntry
from memhop.errors import (
    CorruptionError,
    CRCMismatchError,
    DeserializationError,
    MemHopError,
    NotFoundError,
)
from memhop.records import RecordType

log = logging.getLogger("memhop.layers")

DAMAGE = (CRCMismatchError, CorruptionError, DeserializationError)
"""The failures that mean "this record is damaged", as opposed to "the file cannot be read"."""


class Record(Protocol):
    """What every payload dataclass in ``memhop.records`` provides."""

    RECORD_TYPE: ClassVar[RecordType]

    def to_json(self) -> bytes: ...

    @classmethod
    def from_json(cls, data: bytes) -> Self: ...


R = TypeVar("R", bound=Record)


def read(engine: Engine, agent_id: int, id_hash: int, cls: type[R]) -> R:
    """Return the record at (agent, id); NotFoundError if absent or of another type."""
    frame = engine.read(agent_id, id_hash)
    if frame.rec_type != cls.RECORD_TYPE:
        msg = "record not found"
        raise NotFoundError(msg)
    try:
        return cls.from_json(frame.payload)
    except DAMAGE as exc:
        engine.note_damaged(agent_id, id_hash, exc)
        msg = f"record {id_hash:016x} of agent {agent_id:016x} at offset {frame.offset}: {exc}"
        raise type(exc)(msg, code=exc.code) from exc


def read_optional(engine: Engine, agent_id: int, id_hash: int, cls: type[R]) -> R | None:
    """Return the record, or None when it is absent; any other failure raises."""
    if engine.offset_of(agent_id, id_hash) is None and not engine.closed:
        return None  # absent: spare the read its NotFoundError (a closed engine still raises)
    try:
        return read(engine, agent_id, id_hash, cls)
    except NotFoundError:
        return None


def write(engine: Engine, agent_id: int, id_hash: int, record: Record) -> int:
    """Write (or overwrite) one record durably; return its frame offset."""
    return engine.write(agent_id, record.RECORD_TYPE, id_hash, record.to_json())


def write_many(engine: Engine, agent_id: int, records: Sequence[tuple[int, Record]]) -> None:
    """Write (id, record) pairs of one domain with a single fsync."""
    entries = []  # a loop: on 3.11 a comprehension makes a function each call, thrice a turn
    for id_hash, rec in records:
        entries.append(RecordEntry(agent_id, rec.RECORD_TYPE, id_hash, rec.to_json()))
    engine.write_batch(entries)


def delete_many(engine: Engine, agent_id: int, ids: Iterable[int], cls: type[Record]) -> int:
    """Tombstone the live records of ``cls``'s type among ``ids`` in one batch; return how
    many. An id holding another type is left alone (one id, one record type); each id's
    type is read from its frame, so this costs what it deletes, not what the domain holds."""
    return engine.delete_batch(agent_id, sorted(set(ids)), cls.RECORD_TYPE)


def collect(engine: Engine, agent_id: int, cls: type[R]) -> list[tuple[int, R]]:
    """Return every readable (id, record) of the type in the domain, ascending by id.

    A damaged record is skipped (logged once and counted by the engine); any
    other failure aborts.
    """
    return read_many(engine, agent_id, engine.ids_of_type(agent_id, cls.RECORD_TYPE), cls)


def read_many(
    engine: Engine, agent_id: int, ids: Iterable[int], cls: type[R]
) -> list[tuple[int, R]]:
    """Return the records among ``ids`` that exist and read; a damaged one is skipped.

    In the order of ``ids``. An id of another type is passed over on its
    frame's type byte; a frame or payload that fails a check is counted by
    the engine (``read`` counts it the same way).
    """
    found: list[tuple[int, R]] = []
    for id_hash, payload in engine.payloads_of(agent_id, cls.RECORD_TYPE, list(ids)):
        try:
            found.append((id_hash, cls.from_json(payload)))
        except DAMAGE as exc:
            engine.note_damaged(agent_id, id_hash, exc)
    return found


def _will_not_read(id_hash: int, exc: MemHopError) -> MemHopError:
    msg = f"record {id_hash:016x} will not read: {exc}"
    return type(exc)(msg, code=exc.code)


def collect_strict(engine: Engine, agent_id: int, cls: type[R]) -> list[tuple[int, R]]:
    """Return every (id, record) of the type in the domain, ascending by id.

    A record that vanished between listing and reading is skipped; any other
    failure aborts with "record <hex16> will not read" and the original code.
    """
    return read_many_strict(engine, agent_id, engine.ids_of_type(agent_id, cls.RECORD_TYPE), cls)


def iter_lenient(engine: Engine, agent_id: int, cls: type[R]) -> Iterator[tuple[int, R]]:
    """Yield every readable (id, record) of the type, ascending; skip and log the rest."""
    for id_hash in engine.ids_of_type(agent_id, cls.RECORD_TYPE):
        try:
            yield id_hash, read(engine, agent_id, id_hash, cls)
        except NotFoundError:
            continue
        except MemHopError as exc:
            log.warning("skipping record %016x of agent %016x: %s", id_hash, agent_id, exc)


def read_many_strict(
    engine: Engine, agent_id: int, ids: Iterable[int], cls: type[R]
) -> list[tuple[int, R]]:
    """Return the records among ``ids`` that exist; any failure but absence aborts."""
    return list(iter_strict(engine, agent_id, ids, cls))


def iter_strict(
    engine: Engine, agent_id: int, ids: Iterable[int], cls: type[R]
) -> Iterator[tuple[int, R]]:
    """``read_many_strict`` one record at a time: a pass over a domain that keeps none of
    them (the failure is raised where the record is reached)."""
    for id_hash in ids:
        try:
            record = read(engine, agent_id, id_hash, cls)
        except NotFoundError:
            continue
        except MemHopError as exc:
            raise _will_not_read(id_hash, exc) from exc
        yield id_hash, record
