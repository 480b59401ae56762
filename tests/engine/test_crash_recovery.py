"""Crash and recovery cases ported from upstream (storage.md §13).

"Crash" is ``close_without_checkpoint``: the file is released as a crash would
leave it, with no snapshot appended and no header flipped.
"""

from __future__ import annotations

import dataclasses
import logging
import struct
import zlib

import pytest

from memhop import code_of
from memhop.engine import (
    DATA_START,
    RECORD_HEADER_SIZE,
    SNAPSHOT_VERSION,
    Engine,
    FileHeader,
    build_snapshot,
    create_engine,
    encode_frame,
    open_engine,
    parse_snapshot,
)
from memhop.engine.header import HEADER_SIZE, parse_header
from memhop.errors import CorruptionError, NotFoundError
from tests.faults import append_bytes, file_size, flip_byte, truncate_to, write_at, zero_header

LOGGER = "memhop.engine"


def _frame_size(payload: bytes) -> int:
    return RECORD_HEADER_SIZE + len(payload)


def _payload(engine: Engine, agent: int, id_hash: int) -> bytes:
    return engine.read(agent, id_hash).payload


def _active_header(path: str) -> tuple[int, FileHeader]:
    """Return (slot offset, header) of the slot a fresh open would choose."""
    with open(path, "rb") as f:
        raw = f.read(2 * HEADER_SIZE)
    a = parse_header(raw[:HEADER_SIZE])
    b = parse_header(raw[HEADER_SIZE:])
    return (0, a) if a.commit_id >= b.commit_id else (HEADER_SIZE, b)


def _three_records(path: str) -> list[int]:
    """Write ids 1, 2, 3 (payloads one/two/three), crash, and return their offsets."""
    eng = create_engine(path)
    offsets = [
        eng.write(0, 0x01, 1, b"one"),
        eng.write(0, 0x01, 2, b"two"),
        eng.write(0, 0x01, 3, b"three"),
    ]
    eng.close_without_checkpoint()
    return offsets


# ---- crash_recovery_test.go -----------------------------------------------------------------


def test_a_tombstone_is_replayed_after_a_crash(meh_path: str) -> None:
    """A delete followed by a crash stays deleted on reopen while the other record lives."""
    eng = create_engine(meh_path)
    eng.write(0, 0x01, 1, b"keep")
    eng.write(0, 0x01, 2, b"drop")
    assert eng.delete(0, 2) is True
    eng.close_without_checkpoint()

    eng = open_engine(meh_path)
    try:
        assert _payload(eng, 0, 1) == b"keep"
        assert not eng.contains(0, 2)
        with pytest.raises(NotFoundError):
            eng.read(0, 2)
        assert eng.stats()[1] == 1
        assert eng.all_ids(0) == [1]
    finally:
        eng.close()


def test_a_tombstone_written_after_a_checkpoint_overrides_the_snapshot_entry(
    meh_path: str,
) -> None:
    """Checkpoint, delete, crash: the tombstone wins over the snapshot that still lists the id."""
    eng = create_engine(meh_path)
    eng.write(0, 0x01, 1, b"keep")
    eng.write(0, 0x01, 2, b"drop")
    eng.checkpoint()
    assert eng.delete(0, 2) is True
    eng.close_without_checkpoint()

    eng = open_engine(meh_path)
    try:
        assert _payload(eng, 0, 1) == b"keep"
        assert not eng.contains(0, 2)
        with pytest.raises(NotFoundError):
            eng.read(0, 2)
        assert eng.stats()[1] == 1
    finally:
        eng.close()


def test_a_torn_tail_frame_is_truncated_on_open_and_the_next_append_lands_at_the_clean_end(
    meh_path: str,
) -> None:
    """Half a frame (then 3 garbage bytes) at the tail is cut on open; appends land at the cut."""
    eng = create_engine(meh_path)
    eng.write(0, 0x01, 1, b"hello")
    eng.close_without_checkpoint()
    clean = file_size(meh_path)
    assert clean == DATA_START + _frame_size(b"hello")

    torn = encode_frame(0, 0x01, 0, 2, b"torn payload")
    append_bytes(meh_path, torn[: len(torn) // 2])
    eng = open_engine(meh_path)
    try:
        assert file_size(meh_path) == clean
        assert not eng.contains(0, 2)
        assert _payload(eng, 0, 1) == b"hello"
        assert eng.write(0, 0x01, 3, b"world") == clean
        assert file_size(meh_path) == clean + 26 + 5
    finally:
        eng.close_without_checkpoint()

    clean2 = clean + 26 + 5
    append_bytes(meh_path, b"\xde\xad\xbe")
    eng = open_engine(meh_path)
    try:
        assert file_size(meh_path) == clean2
        assert _payload(eng, 0, 1) == b"hello"
        assert _payload(eng, 0, 3) == b"world"
        assert not eng.contains(0, 2)
        assert eng.write(0, 0x01, 4, b"again") == clean2
        assert file_size(meh_path) == clean2 + 26 + 5
    finally:
        eng.close_without_checkpoint()

    eng = open_engine(meh_path)
    try:
        assert eng.all_ids(0) == [1, 3, 4]
        assert _payload(eng, 0, 4) == b"again"
    finally:
        eng.close()


def test_a_checksum_failed_frame_in_the_middle_loses_only_itself(
    meh_path: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A flipped payload byte of the middle of 3 frames loses that record only; the log grows on."""
    offsets = _three_records(meh_path)
    size = file_size(meh_path)
    flip_byte(meh_path, offsets[1] + RECORD_HEADER_SIZE + 1)

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        eng = open_engine(meh_path)
    try:
        assert "skipped 1 damaged record(s)" in caplog.text
        assert f"the first at offset {offsets[1]}" in caplog.text
        assert _payload(eng, 0, 1) == b"one"
        assert _payload(eng, 0, 3) == b"three"
        assert not eng.contains(0, 2)
        with pytest.raises(NotFoundError):
            eng.read(0, 2)
        assert file_size(meh_path) == size  # the damaged bytes stay until compaction
        assert eng.write(0, 0x01, 4, b"four") == size
        assert file_size(meh_path) == size + _frame_size(b"four")
    finally:
        eng.close_without_checkpoint()

    eng = open_engine(meh_path)
    try:
        assert eng.all_ids(0) == [1, 3, 4]
        assert _payload(eng, 0, 4) == b"four"
    finally:
        eng.close()


def test_an_orphan_snapshot_blob_behind_the_committed_one_is_truncated_on_open(
    meh_path: str,
) -> None:
    """A blob written without its header flip is cut on open; the committed snapshot stays."""
    eng = create_engine(meh_path)
    eng.write(0, 0x01, 1, b"one")
    eng.write(0, 0x01, 2, b"two")
    eng.checkpoint()
    committed = eng.headers.current
    eng.close_without_checkpoint()
    committed_end = committed.snapshot_offset + committed.snapshot_length
    assert file_size(meh_path) == committed_end

    append_bytes(meh_path, build_snapshot({0: {1: DATA_START, 7: DATA_START}}))
    eng = open_engine(meh_path)
    try:
        assert file_size(meh_path) == committed_end
        assert eng.headers.current.snapshot_offset == committed.snapshot_offset
        assert eng.headers.current.commit_id == committed.commit_id
        assert _payload(eng, 0, 1) == b"one"
        assert _payload(eng, 0, 2) == b"two"
        assert not eng.contains(0, 7)
        eng.write(0, 0x01, 3, b"three")
    finally:
        eng.close_without_checkpoint()

    eng = open_engine(meh_path)
    try:
        assert eng.all_ids(0) == [1, 2, 3]
        assert [_payload(eng, 0, i) for i in (1, 2, 3)] == [b"one", b"two", b"three"]
    finally:
        eng.close()


def test_a_rotted_length_field_keeps_the_records_after_it(meh_path: str) -> None:
    """Flipping the low byte of the middle frame's length loses it only; the file keeps its size."""
    offsets = _three_records(meh_path)
    size = file_size(meh_path)
    flip_byte(meh_path, offsets[1] + 2)

    eng = open_engine(meh_path)
    try:
        assert file_size(meh_path) == size
        assert _payload(eng, 0, 1) == b"one"
        assert _payload(eng, 0, 3) == b"three"
        assert not eng.contains(0, 2)
        assert eng.stats() == (size, 2)
    finally:
        eng.close()


# ---- crash_recovery_snapshot_test.go --------------------------------------------------------


def test_an_append_after_reopening_with_a_tail_snapshot_survives_a_crash(meh_path: str) -> None:
    """Checkpoint, crash, reopen, write, crash, reopen: both records read back."""
    eng = create_engine(meh_path)
    eng.write(0, 0x01, 1, b"first")
    eng.checkpoint()
    eng.close_without_checkpoint()

    eng = open_engine(meh_path)
    assert eng.headers.current.snapshot_offset != 0
    assert eng.write(0, 0x01, 2, b"second") == DATA_START + _frame_size(b"first")
    eng.close_without_checkpoint()

    eng = open_engine(meh_path)
    try:
        assert _payload(eng, 0, 1) == b"first"
        assert _payload(eng, 0, 2) == b"second"
        assert eng.stats() == (DATA_START + _frame_size(b"first") + _frame_size(b"second"), 2)
    finally:
        eng.close()


def test_an_append_after_reopening_with_several_chained_tail_snapshots_survives_a_crash(
    meh_path: str,
) -> None:
    """Two chained checkpoints, crash, reopen, write, crash, reopen: both records read back."""
    eng = create_engine(meh_path)
    eng.write(0, 0x01, 1, b"first")
    eng.checkpoint()
    eng.checkpoint()
    eng.close_without_checkpoint()
    record_end = DATA_START + _frame_size(b"first")
    assert file_size(meh_path) == record_end + 2 * len(build_snapshot({0: {1: DATA_START}}))

    eng = open_engine(meh_path)
    assert eng.record_end == record_end
    assert eng.write(0, 0x01, 2, b"second") == record_end
    eng.close_without_checkpoint()
    assert file_size(meh_path) == record_end + _frame_size(b"second")

    eng = open_engine(meh_path)
    try:
        assert _payload(eng, 0, 1) == b"first"
        assert _payload(eng, 0, 2) == b"second"
        assert eng.stats()[1] == 2
    finally:
        eng.close()


def test_an_append_after_reopening_with_a_legacy_header_record_end_of_zero_survives(
    meh_path: str,
) -> None:
    """With record_end 0 in the active header, the record-area end is found by walking the log."""
    eng = create_engine(meh_path)
    eng.write(0, 0x01, 1, b"first")
    eng.checkpoint()
    slot = eng.headers.active_offset
    active = eng.headers.current
    eng.close_without_checkpoint()
    record_end = DATA_START + _frame_size(b"first")
    assert active.record_end == record_end

    legacy = dataclasses.replace(active, record_end=0)
    write_at(meh_path, slot, legacy.to_bytes())
    assert _active_header(meh_path) == (slot, legacy)

    eng = open_engine(meh_path)
    assert eng.headers.current.record_end == 0
    assert eng.record_end == record_end
    assert eng.write(0, 0x01, 2, b"second") == record_end
    eng.close_without_checkpoint()

    eng = open_engine(meh_path)
    try:
        assert _payload(eng, 0, 1) == b"first"
        assert _payload(eng, 0, 2) == b"second"
        assert eng.stats() == (record_end + _frame_size(b"second"), 2)
    finally:
        eng.close()


@pytest.mark.parametrize("slot", ["A", "B"])
def test_open_recovers_when_one_header_slot_is_corrupt(meh_path: str, slot: str) -> None:
    """Zeroing the first 4 bytes of one slot opens from the other, and the next flip repairs it."""
    eng = create_engine(meh_path)
    eng.write(0, 0x01, 1, b"survivor")
    eng.close()  # checkpoint: B (commit 1, snapshot) active, A (commit 0) older
    zero_header(meh_path, slot)

    eng = open_engine(meh_path)
    try:
        assert eng.headers.active == (1 if slot == "A" else 0)
        assert _payload(eng, 0, 1) == b"survivor"
        assert eng.stats()[1] == 1
        eng.write(0, 0x01, 2, b"later")
    finally:
        eng.close()

    with open(meh_path, "rb") as f:
        raw = f.read(2 * HEADER_SIZE)
    parse_header(raw[:HEADER_SIZE])  # both slots parse again
    parse_header(raw[HEADER_SIZE:])
    eng = open_engine(meh_path)
    try:
        assert eng.all_ids(0) == [1, 2]
    finally:
        eng.close()


@pytest.mark.parametrize("version", [*range(0x0004, 0x0012), 0x0013])
def test_a_header_version_other_than_0x0012_is_rejected(meh_path: str, version: int) -> None:
    """Both headers carrying another format version fail to open with the version in the text."""
    eng = create_engine(meh_path)
    eng.write(0, 0x01, 1, b"x")
    eng.close_without_checkpoint()
    good = FileHeader()
    eng = open_engine(meh_path)  # positive control: the unmodified file opens
    assert _payload(eng, 0, 1) == b"x"
    eng.close_without_checkpoint()

    bad = dataclasses.replace(good, version=version).to_bytes()
    write_at(meh_path, 0, bad)
    write_at(meh_path, HEADER_SIZE, bad)
    with pytest.raises(CorruptionError) as info:
        open_engine(meh_path)
    expected = f"unsupported file format version 0x{version:04x} (expected 0x0012)"
    assert expected in str(info.value)
    assert "both file headers are invalid" in str(info.value)
    assert code_of(info.value) == 5005


def test_a_snapshot_version_other_than_0x03_is_rejected() -> None:
    """A blob whose version byte is 0x7F (with a fixed CRC) fails to parse as corruption."""
    blob = bytearray(build_snapshot({0: {12345: DATA_START}}))
    assert blob[4] == SNAPSHOT_VERSION == 0x03
    assert parse_snapshot(bytes(blob)) == {0: {12345: DATA_START}}

    blob[4] = 0x7F
    struct.pack_into("<I", blob, len(blob) - 4, zlib.crc32(blob[:-4]))
    with pytest.raises(CorruptionError) as info:
        parse_snapshot(bytes(blob))
    assert code_of(info.value) == 5005
    assert "unsupported snapshot version 0x7f (expected 0x03)" in str(info.value)


# ---- reclaim_test.go ------------------------------------------------------------------------


def test_a_write_trims_the_tail_snapshots_back_to_the_record_end(meh_path: str) -> None:
    """Checkpoint, checkpoint, write: the file is exactly 8192 + 2*26 + 11 and reopens with 2."""
    eng = create_engine(meh_path)
    eng.write(0, 0x01, 1, b"hello")
    eng.checkpoint()
    eng.checkpoint()
    assert file_size(meh_path) > DATA_START + _frame_size(b"hello")
    eng.write(0, 0x01, 2, b"world!")
    assert file_size(meh_path) == DATA_START + 2 * 26 + 11
    assert eng.headers.current.snapshot_offset == 0
    eng.close_without_checkpoint()

    eng = open_engine(meh_path)
    try:
        assert eng.stats() == (DATA_START + 2 * 26 + 11, 2)
        assert _payload(eng, 0, 1) == b"hello"
        assert _payload(eng, 0, 2) == b"world!"
    finally:
        eng.close()


def test_open_after_a_crash_inside_the_trim_truncate_window_keeps_both_records(
    meh_path: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A file cut at snapshot_offset whose header still names the snapshot opens with 2 records."""
    eng = create_engine(meh_path)
    eng.write(0, 0x01, 1, b"one")
    eng.write(0, 0x01, 2, b"two")
    eng.close()
    _, header = _active_header(meh_path)
    assert header.has_snapshot
    truncate_to(meh_path, header.snapshot_offset)

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        eng = open_engine(meh_path)
    try:
        assert "snapshot out of bounds" in caplog.text
        assert _payload(eng, 0, 1) == b"one"
        assert _payload(eng, 0, 2) == b"two"
        assert eng.stats() == (header.snapshot_offset, 2)
        assert eng.headers.current.snapshot_offset == 0
        assert eng.headers.current.snapshot_length == 0
    finally:
        eng.close()


def test_open_falls_back_to_a_full_scan_on_a_corrupt_snapshot(
    meh_path: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A flipped first snapshot byte is logged, the log is scanned, and the pointers are cleared."""
    eng = create_engine(meh_path)
    eng.write(0, 0x01, 1, b"one")
    eng.write(0, 0x01, 2, b"two")
    eng.close()
    _, header = _active_header(meh_path)
    flip_byte(meh_path, header.snapshot_offset)

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        eng = open_engine(meh_path)
    try:
        assert f"index snapshot at offset {header.snapshot_offset} is unusable" in caplog.text
        assert _payload(eng, 0, 1) == b"one"
        assert _payload(eng, 0, 2) == b"two"
        assert eng.stats() == (header.snapshot_offset, 2)  # the scan cut the blob off
        assert eng.headers.current.snapshot_offset == 0
    finally:
        eng.close_without_checkpoint()
    _, reopened = _active_header(meh_path)
    assert reopened.snapshot_offset == 0
    assert reopened.snapshot_length == 0


# ---- engine_read_test.go and open preconditions ---------------------------------------------


def test_an_index_entry_the_log_does_not_hold_reads_as_corruption_not_as_not_found(
    meh_path: str,
) -> None:
    """An index entry pointing at the record end raises code 5005, never NotFoundError."""
    eng = create_engine(meh_path)
    try:
        eng.write(0, 0x01, 1, b"real")
        eng._live.offsets[0].put(99, eng.record_end, 0x01)  # white box: the index outruns the log
        with pytest.raises(CorruptionError) as info:
            eng.read(0, 99)
        assert not isinstance(info.value, NotFoundError)
        assert code_of(info.value) == 5005
        assert "the index names a record the record area does not hold" in str(info.value)
        assert _payload(eng, 0, 1) == b"real"
        with pytest.raises(NotFoundError) as absent:
            eng.read(0, 98)
        assert code_of(absent.value) == 3001
    finally:
        eng._live.offsets[0].discard(99)
        eng.close()


@pytest.mark.parametrize("size", [0, 100, DATA_START - 1])
def test_a_file_smaller_than_both_headers_is_corruption(meh_path: str, size: int) -> None:
    """A file shorter than 8192 bytes fails to open with "file too small"."""
    create_engine(meh_path).close_without_checkpoint()
    eng = open_engine(meh_path)  # positive control: exactly 8192 bytes opens
    assert eng.stats() == (DATA_START, 0)
    eng.close_without_checkpoint()

    truncate_to(meh_path, size)
    with pytest.raises(CorruptionError) as info:
        open_engine(meh_path)
    assert "file too small" in str(info.value)
    assert code_of(info.value) == 5005
    assert file_size(meh_path) == size  # a refused open changes nothing


def test_both_headers_with_bad_magic_are_corruption(meh_path: str) -> None:
    """With both slots' magic zeroed open fails naming both slots; one bad slot still opens."""
    eng = create_engine(meh_path)
    eng.write(0, 0x01, 1, b"x")
    eng.close()
    zero_header(meh_path, "A")
    eng = open_engine(meh_path)  # positive control: B alone is enough
    assert _payload(eng, 0, 1) == b"x"
    eng.close_without_checkpoint()

    zero_header(meh_path, "B")
    with pytest.raises(CorruptionError) as info:
        open_engine(meh_path)
    text = str(info.value)
    assert "both file headers are invalid" in text
    assert "A: invalid magic bytes" in text
    assert "B: invalid magic bytes" in text
    assert code_of(info.value) == 5005
