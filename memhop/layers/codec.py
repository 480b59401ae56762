"""Typed record access over the engine: one id, one record type.

A read of an id that holds a record of another type answers NotFoundError,
the same as an absent id. Every other failure keeps its own code: "cannot
read" is never reported as "not found". Strict scans, used wherever the result
decides a delete or an overwrite, stop at the first record that will not read;
lenient scans skip it and log.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from typing import ClassVar, Protocol, Self, TypeVar

from memhop.engine import Engine, RecordEntry
from memhop.errors import MemHopError, NotFoundError
from memhop.records import RecordType

log = logging.getLogger("memhop.layers")


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
    return cls.from_json(frame.payload)


def read_optional(engine: Engine, agent_id: int, id_hash: int, cls: type[R]) -> R | None:
    """Return the record, or None when it is absent; any other failure raises."""
    try:
        return read(engine, agent_id, id_hash, cls)
    except NotFoundError:
        return None


def write(engine: Engine, agent_id: int, id_hash: int, record: Record) -> None:
    """Write (or overwrite) one record durably."""
    engine.write(agent_id, record.RECORD_TYPE, id_hash, record.to_json())


def write_many(engine: Engine, agent_id: int, records: Sequence[tuple[int, Record]]) -> None:
    """Write (id, record) pairs of one domain with a single fsync."""
    engine.write_batch(
        [RecordEntry(agent_id, rec.RECORD_TYPE, id_hash, rec.to_json()) for id_hash, rec in records]
    )


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
    found: list[tuple[int, R]] = []
    for id_hash in ids:
        try:
            found.append((id_hash, read(engine, agent_id, id_hash, cls)))
        except NotFoundError:
            continue
        except MemHopError as exc:
            raise _will_not_read(id_hash, exc) from exc
    return found
