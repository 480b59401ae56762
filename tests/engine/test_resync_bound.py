"""The open's resync is bounded: crafted bytes after a crashed log cannot make it scan forever.

Costs are counted, not timed: ``frame_bounds`` (the only checksum a resync
makes) is wrapped to count its calls and the bytes it would checksum.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from unittest.mock import patch

import pytest

from memhop.engine import RecordEntry, create_engine, encode_frame, open_engine, recovery
from memhop.engine.recovery import RESYNC_CRC_BUDGET, RESYNC_MAX_CANDIDATES, RESYNC_MAX_CHECKS
from memhop.errors import CorruptionError
from tests.faults import append_bytes, file_size, write_at

GARBAGE = 64 << 20
RECORDS = 200


@pytest.fixture
def checks() -> Iterator[list[int]]:
    """The offsets ``frame_bounds`` was asked to check during a resync."""
    seen: list[int] = []
    real = recovery.frame_bounds

    def counting(buf: object, offset: int, size: int) -> object:
        seen.append(offset)
        return real(buf, offset, size)  # type: ignore[arg-type]

    with patch.object(recovery, "frame_bounds", counting):
        yield seen


def _crashed_log(path: str) -> int:
    """RECORDS records, no snapshot (a crash); return where the log ends."""
    engine = create_engine(path)
    engine.write_batch([RecordEntry(0, 0x08, i, b"r%05d" % i) for i in range(1, RECORDS + 1)])
    end = engine.record_end
    engine.close_without_checkpoint()
    return end


def test_64_mib_of_0x01_after_a_crashed_log_is_cut_without_a_checksum(
    meh_path: str, checks: list[int]
) -> None:
    """The campaign's tail (0x01 bytes) holds no candidate: cut at once, every record kept."""
    end = _crashed_log(meh_path)
    append_bytes(meh_path, b"\x01" * GARBAGE)
    engine = open_engine(meh_path)
    try:
        assert len(checks) == RECORDS + 1  # one per frame, one at the garbage, none inside it
        assert file_size(meh_path) == end
        assert engine.stats()[1] == RECORDS
        engine.write(0, 0x08, 9999, b"after")  # the next append lands at the real end
        assert engine.damage() == (0, 0)  # a torn tail is not damage to the log
    finally:
        engine.close()
    engine = open_engine(meh_path)
    try:
        assert engine.read(0, 9999).payload == b"after"
    finally:
        engine.close()


_FAKE = bytearray(encode_frame(0, 0x08, 0, 7, b"f" * 100))
_FAKE[-1] ^= 0xFF  # a frame-shaped unit whose checksum fails
CRAFTED = {
    "x07-x00": b"\x07\x00" * (GARBAGE // 2),  # a zero high length byte every other offset
    "failing-frames": bytes(_FAKE) * (GARBAGE // len(_FAKE)),  # each one checksummed
}


@pytest.mark.parametrize("tail", CRAFTED.values(), ids=CRAFTED.keys())
def test_crafted_candidates_exhaust_the_budget_and_are_reported_not_scanned(
    meh_path: str, checks: list[int], tail: bytes
) -> None:
    """Bytes crafted to look like frame starts stop the resync at its budget.

    Nothing is cut, every record before them reads, writes are refused with a
    CorruptionError naming the region, and one damaged frame is counted.
    """
    end = _crashed_log(meh_path)
    append_bytes(meh_path, tail)
    size = file_size(meh_path)
    engine = open_engine(meh_path)
    try:
        resync_checks = len(checks) - (RECORDS + 1)
        assert resync_checks <= RESYNC_MAX_CHECKS + len(tail) // 4096
        assert file_size(meh_path) == size  # nothing cut: what lies past the region is kept
        assert engine.stats()[1] == RECORDS
        assert engine.read(0, RECORDS).payload == b"r%05d" % RECORDS
        assert engine.damage() == (0, 1)
        with pytest.raises(CorruptionError, match=f"damaged region at offset {end}"):
            engine.write(0, 0x08, 1, b"refused")
    finally:
        engine.close()


def test_64_mib_of_random_bytes_after_a_crashed_log_are_cut(meh_path: str) -> None:
    """Random bytes hold no frame that passes its checksum: cut, and the file stays writable."""
    end = _crashed_log(meh_path)
    append_bytes(meh_path, random.Random(7).randbytes(GARBAGE))
    engine = open_engine(meh_path)
    try:
        assert file_size(meh_path) == end
        engine.write(0, 0x08, 9999, b"after")
        assert engine.stats()[1] == RECORDS + 1
    finally:
        engine.close()


def test_damage_inside_the_log_is_resynced_past_within_the_budget(
    meh_path: str, checks: list[int]
) -> None:
    """A 1 MiB frame with zeroed pages loses only itself; the frames after it read."""
    engine = create_engine(meh_path)
    engine.write_batch([RecordEntry(0, 0x08, i, b"a%05d" % i) for i in range(1, 51)])
    hole = engine.record_end
    engine.write(0, 0x08, 500, b"z" * (1 << 20))  # becomes the damaged region
    engine.write_batch([RecordEntry(0, 0x08, i, b"b%05d" % i) for i in range(51, 101)])
    engine.close_without_checkpoint()
    write_at(meh_path, hole + 4096, bytes(1 << 19))  # zeroed pages: payload and CRC disagree
    engine = open_engine(meh_path)
    try:
        assert engine.stats()[1] == 100
        assert engine.read(0, 100).payload == b"b00100"
        assert engine.damage() == (0, 1)  # one damaged region resynced past
        assert len(checks) < 102 + 200  # the zero run is stepped over, not checked
    finally:
        engine.close()


def test_the_budget_constants_are_what_the_docs_say() -> None:
    """docs/internals/engine.md documents these limits."""
    assert RESYNC_MAX_CANDIDATES == 65_536
    assert RESYNC_MAX_CHECKS == 16_384
    assert RESYNC_CRC_BUDGET == 64 << 20
