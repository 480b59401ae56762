"""payloads_of_type: a domain's records of one type, read as ``read`` reads each of them.

Faults are injected into the file's bytes between a close and an open, so
the index (from the snapshot) still names the damaged frame and only the
read can find it out.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable

import pytest

import memhop.engine.reads as engine_reads
from memhop.engine import RECORD_HEADER_SIZE, Engine, create_engine, encode_frame, open_engine
from memhop.engine.frame import FLAG_DELETED, MAX_PAYLOAD_BYTES
from memhop.errors import ClosedError, CorruptionError, CRCMismatchError
from tests.faults import flip_byte, write_at

AGENT = 0x5
OTHER = 0x6
TYPE = 0x08
ELSE = 0x04


def _written(path: str) -> dict[int, int]:
    """Ids 1..6 of TYPE in AGENT, an ELSE record and another domain's; id -> frame offset."""
    engine = create_engine(path)
    try:
        offsets = {i: engine.write(AGENT, TYPE, i, b"payload %d" % i) for i in range(1, 7)}
        engine.write(AGENT, ELSE, 7, b"another type")
        engine.write(OTHER, TYPE, 1, b"another domain")
    finally:
        engine.close()
    return offsets


def _read_one_by_one(engine: Engine) -> list[tuple[int, bytes]]:
    return [(i, engine.read(AGENT, i).payload) for i in engine.ids_of_type(AGENT, TYPE)]


def test_every_record_of_the_type_reads_ascending_as_read_gives_it(meh_path: str) -> None:
    _written(meh_path)
    engine = open_engine(meh_path)
    try:
        got = list(engine.payloads_of_type(AGENT, TYPE))
        assert got == [(i, b"payload %d" % i) for i in range(1, 7)]
        assert got == _read_one_by_one(engine)
        assert list(engine.payloads_of_type(AGENT, ELSE)) == [(7, b"another type")]
        assert list(engine.payloads_of_type(0x99, TYPE)) == []
        assert engine.damage() == (0, 0)
    finally:
        engine.close()


_THIRD = b"payload 3"
_FAULTS: dict[str, tuple[Callable[[str, int], None], type[Exception]]] = {
    # How the frame of record 3 is damaged, and the error ``read`` then raises.
    "payload byte": (lambda p, at: flip_byte(p, at + RECORD_HEADER_SIZE + 2), CRCMismatchError),
    "crc byte": (lambda p, at: flip_byte(p, at + 23), CRCMismatchError),
    "another domain's frame": (
        lambda p, at: write_at(p, at, encode_frame(OTHER, TYPE, 0, 3, _THIRD)),
        CorruptionError,
    ),
    "another record's frame": (
        lambda p, at: write_at(p, at, encode_frame(AGENT, TYPE, 0, 9, _THIRD)),
        CorruptionError,
    ),
    "a tombstone": (
        lambda p, at: write_at(p, at, encode_frame(AGENT, TYPE, FLAG_DELETED, 3, _THIRD)),
        CorruptionError,
    ),
    "length over the limit": (
        lambda p, at: write_at(p, at + 2, struct.pack("<I", MAX_PAYLOAD_BYTES + 1)),
        CorruptionError,
    ),
    "length past the file": (
        lambda p, at: write_at(p, at + 2, struct.pack("<I", 1 << 23)),
        CorruptionError,
    ),
}


@pytest.mark.parametrize("fault", sorted(_FAULTS))
@pytest.mark.parametrize("chunk", [2, 4096])
def test_a_damaged_frame_in_the_middle_is_skipped_and_counted_once(
    meh_path: str, monkeypatch: pytest.MonkeyPatch, fault: str, chunk: int
) -> None:
    """The damaged record is left out and counted as ``read`` counts it; the rest read."""
    monkeypatch.setattr(engine_reads, "_READ_CHUNK", chunk)
    offsets = _written(meh_path)
    damage, error = _FAULTS[fault]
    damage(meh_path, offsets[3])
    engine = open_engine(meh_path)
    try:
        got = list(engine.payloads_of_type(AGENT, TYPE))
        assert got == [(i, b"payload %d" % i) for i in (1, 2, 4, 5, 6)]  # positive control
        assert engine.damage() == (1, 0)
        with pytest.raises(error):
            engine.read(AGENT, 3)
        assert engine.damage() == (1, 0)  # the same damage, met twice, counted once
        assert list(engine.payloads_of_type(AGENT, TYPE)) == got
    finally:
        engine.close()


def test_records_changed_between_chunks_read_as_they_are_then(
    meh_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record deleted or retyped after the listing is skipped; a rewritten one reads anew."""
    monkeypatch.setattr(engine_reads, "_READ_CHUNK", 2)
    _written(meh_path)
    engine = open_engine(meh_path)
    try:
        found = engine.payloads_of_type(AGENT, TYPE)
        got = [next(found), next(found)]  # the first chunk, read before the writes
        engine.delete(AGENT, 3)
        engine.write(AGENT, ELSE, 4, b"now another type")
        engine.write(AGENT, TYPE, 5, b"rewritten")
        got += list(found)
        assert got == [(1, b"payload 1"), (2, b"payload 2"), (5, b"rewritten"), (6, b"payload 6")]
        assert engine.damage() == (0, 0)
    finally:
        engine.close()


def test_a_close_part_way_raises(meh_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_reads, "_READ_CHUNK", 2)
    _written(meh_path)
    engine = open_engine(meh_path)
    found = engine.payloads_of_type(AGENT, TYPE)
    assert next(found) == (1, b"payload 1")  # positive control: it read before the close
    engine.close()
    with pytest.raises(ClosedError):
        list(found)


def test_no_lock_is_held_between_chunks(meh_path: str) -> None:
    """Another thread writes while the reader is suspended in its loop."""
    _written(meh_path)
    engine = open_engine(meh_path)
    try:
        found = engine.payloads_of_type(AGENT, TYPE)
        assert next(found) == (1, b"payload 1")
        writer = threading.Thread(target=engine.write, args=(AGENT, TYPE, 9, b"from a thread"))
        writer.start()
        writer.join(timeout=10)
        assert not writer.is_alive()
        assert engine.read(AGENT, 9).payload == b"from a thread"  # the write went through
        assert [i for i, _ in found] == [2, 3, 4, 5, 6]  # listed before the write
    finally:
        engine.close()
