"""Compaction (storage.md §10): a copy holding only live records, refusals, and source safety."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memhop.engine import (
    RECORD_HEADER_SIZE,
    Engine,
    RecordEntry,
    compact_into,
    compact_to,
    create_engine,
    open_engine,
)
from memhop.errors import (
    ClosedError,
    Code,
    CorruptionError,
    CRCMismatchError,
    InvalidQueryError,
    NotFoundError,
)
from tests.faults import file_size, flip_byte

DELETED_SENTINEL = b"SENTINEL-DELETED-7f3a9c"
LIVE_SENTINEL = b"SENTINEL-LIVE-2b8e41"


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _contents(engine: Engine) -> dict[tuple[int, int], tuple[int, bytes]]:
    """Every live record as {(agent, id): (type, payload)}, read through the public surface."""
    out: dict[tuple[int, int], tuple[int, bytes]] = {}
    for agent in engine.agents():
        for ident in engine.all_ids(agent):
            frame = engine.read(agent, ident)
            assert (frame.agent_id, frame.id_hash) == (agent, ident)
            out[(agent, ident)] = (frame.rec_type, frame.payload)
    return out


def _five_with_two_deleted(path: str) -> Engine:
    engine = create_engine(path)
    engine.write(0, 0x01, 1, b"profile")
    engine.write(0, 0x02, 2, b"scene-node " + LIVE_SENTINEL)
    engine.write(0, 0x04, 3, b"topic " + DELETED_SENTINEL)
    engine.write(0x22, 0x06, 4, b"graph-node")
    engine.write(0x22, 0x07, 5, b"graph-edge")
    assert engine.delete(0, 3)
    assert engine.delete(0x22, 5)
    engine.checkpoint()
    return engine


def test_compact_keeps_the_live_records_and_drops_the_deleted_ones(
    meh_path: str, tmp_path: Path
) -> None:
    """Five records with two deleted compact to a smaller copy of three with its own snapshot."""
    dest = str(tmp_path / "copy.meh")
    source = _five_with_two_deleted(meh_path)
    try:
        assert source.stats()[1] == 3
        compact_to(source, dest)
        source_size = file_size(meh_path)
    finally:
        source.close()

    copy = open_engine(dest)
    try:
        assert copy.headers.current.snapshot_offset != 0
        assert copy.headers.current.snapshot_length != 0
        assert copy.headers.current.record_count == 3
        assert copy.stats()[1] == 3
        assert file_size(dest) < source_size
        assert copy.contains(0, 1)
        assert not copy.contains(0, 3)
        assert not copy.contains(0x22, 5)
        with pytest.raises(NotFoundError):
            copy.read(0, 3)
        with pytest.raises(NotFoundError):
            copy.read(0x22, 5)
        assert copy.read(0x22, 4).payload == b"graph-node"
    finally:
        copy.close()


def test_compact_preserves_types_agents_ids_and_payload_bytes_exactly(
    meh_path: str, tmp_path: Path
) -> None:
    """Every live record's type, agent id, id hash and payload survive; old versions do not."""
    dest = str(tmp_path / "copy.meh")
    source = create_engine(meh_path)
    try:
        source.write_batch(
            [
                RecordEntry(0, 0x01, 0x3861C5F61D35793A, b'{"name":"primary"}'),
                RecordEntry(0, 0x02, 2**64 - 1, bytes(range(256))),
                RecordEntry(2**64 - 1, 0x10, 2**64 - 1, b'"worker"'),
                RecordEntry(0x1122334455667788, 0xFF, 7, b""),
                RecordEntry(0x22, 0x0B, 1, b"old version"),
            ]
        )
        source.write(0x22, 0x0F, 1, "новая версия ✓".encode())  # overwrite with another type
        expected = _contents(source)
        assert len(expected) == 5
        assert expected[(0x22, 1)] == (0x0F, "новая версия ✓".encode())
        compact_to(source, dest)
    finally:
        source.close()

    copy = open_engine(dest)
    try:
        assert _contents(copy) == expected
        assert copy.ids_of_type(0x22, 0x0F) == [1]
        assert copy.ids_of_type(0x22, 0x0B) == []
        assert copy.ids_of_type(0x1122334455667788, 0xFF) == [7]
        assert b"old version" not in _read_bytes(dest)
    finally:
        copy.close()


def test_deleted_payload_bytes_stay_in_the_source_and_leave_with_compaction(
    meh_path: str, tmp_path: Path
) -> None:
    """A deleted payload's sentinel is in the source file after delete and absent from the copy."""
    dest = str(tmp_path / "copy.meh")
    source = _five_with_two_deleted(meh_path)
    try:
        original = _read_bytes(meh_path)
        assert DELETED_SENTINEL in original  # the privacy caveat: delete only tombstones
        assert LIVE_SENTINEL in original
        compact_to(source, dest)
    finally:
        source.close()
    copied = _read_bytes(dest)
    assert LIVE_SENTINEL in copied  # positive control: live payloads are copied verbatim
    assert DELETED_SENTINEL not in copied


def test_compacting_a_compacted_file_is_a_fixed_point(meh_path: str, tmp_path: Path) -> None:
    """Compacting the copy again yields a byte-identical file."""
    first, second = str(tmp_path / "first.meh"), str(tmp_path / "second.meh")
    source = _five_with_two_deleted(meh_path)
    try:
        source.write_batch([RecordEntry(i % 3, 0x02, i * 7919, b"p%d" % i) for i in range(40)])
        compact_to(source, first)
    finally:
        source.close()

    copy = open_engine(first)
    try:
        compact_to(copy, second)
    finally:
        copy.close_without_checkpoint()  # a real close would append a snapshot to `first`
    first_bytes, second_bytes = _read_bytes(first), _read_bytes(second)
    assert first_bytes == second_bytes
    assert len(first_bytes) > 8192 + 43 * RECORD_HEADER_SIZE  # the copy is not trivially empty


def test_compact_refuses_an_empty_path(meh_path: str, tmp_path: Path) -> None:
    """An empty destination is InvalidQueryError 1003 "compact: newPath is required"."""
    source = create_engine(meh_path)
    try:
        source.write(0, 0x01, 1, b"v")
        with pytest.raises(InvalidQueryError, match="compact: newPath is required") as info:
            compact_to(source, "")
        assert info.value.code == Code.INVALID_QUERY == 1003
        ok = str(tmp_path / "ok.meh")
        compact_to(source, ok)  # positive control: a fresh path is accepted
        assert os.path.exists(ok)
    finally:
        source.close()


def test_compact_refuses_the_open_file_itself(meh_path: str, tmp_path: Path) -> None:
    """The source's own path, however spelled, is refused with "must differ" and left unchanged."""
    source = create_engine(meh_path)
    try:
        source.write(0, 0x01, 1, b"v")
        before = _read_bytes(meh_path)
        parent = os.path.dirname(meh_path)
        spellings = [
            meh_path,
            os.path.join(parent, ".", os.path.basename(meh_path)),
            os.path.relpath(meh_path),
        ]
        for spelling in spellings:
            with pytest.raises(
                InvalidQueryError,
                match="compact: newPath must differ from the open database file",
            ) as info:
                compact_to(source, spelling)
            assert info.value.code == 1003
        assert _read_bytes(meh_path) == before
        assert source.read(0, 1).payload == b"v"
        compact_to(source, str(tmp_path / "other.meh"))  # positive control
    finally:
        source.close()


def test_compact_refuses_an_existing_path_and_leaves_its_bytes_alone(
    meh_path: str, tmp_path: Path
) -> None:
    """An existing destination is refused with "already exists" and its bytes do not change."""
    existing = tmp_path / "precious.bin"
    existing.write_bytes(b"do not touch" * 100)
    before = existing.read_bytes()
    source = create_engine(meh_path)
    try:
        source.write(0, 0x01, 1, b"v")
        with pytest.raises(InvalidQueryError) as info:
            compact_to(source, str(existing))
        assert info.value.code == 1003
        assert str(info.value) == f"compact: newPath already exists: {existing}"
        assert existing.read_bytes() == before
        fresh = tmp_path / "fresh.meh"
        compact_to(source, str(fresh))  # positive control
        assert fresh.exists()
        with pytest.raises(InvalidQueryError, match="already exists"):
            compact_to(source, str(fresh))  # the copy just made is now an existing path
    finally:
        source.close()


def test_compact_of_a_closed_engine_is_closed_error_before_any_path_check(
    meh_path: str, tmp_path: Path
) -> None:
    """A closed source is ClosedError 5002 whatever the path: §10.2 checks "closed" first."""
    source = create_engine(meh_path)
    source.write(0, 0x01, 1, b"v")
    compact_to(source, str(tmp_path / "while-open.meh"))  # positive control: open compacts
    source.close()
    fresh = str(tmp_path / "fresh.meh")
    for destination in (fresh, "", meh_path, str(tmp_path / "while-open.meh")):
        with pytest.raises(ClosedError, match="engine is closed") as info:
            compact_to(source, destination)
        assert info.value.code == Code.CLOSED == 5002
    assert not os.path.exists(fresh)


def test_compact_refusal_names_the_record_it_cannot_read(meh_path: str, tmp_path: Path) -> None:
    """A snapshotted record with a flipped payload byte makes compact raise 5004 naming its id."""
    damaged_id = 0x0123456789ABCDEF
    good = str(tmp_path / "good.meh")
    bad = str(tmp_path / "bad.meh")
    engine = create_engine(meh_path)
    engine.write(0, 0x02, 1, b"first")
    offset = engine.write(0, 0x02, damaged_id, b"will rot")
    engine.write(0, 0x02, 3, b"third")
    compact_to(engine, good)  # positive control: the healthy file compacts
    engine.close()  # checkpoints, so the next open takes the index from the snapshot
    flip_byte(meh_path, offset + RECORD_HEADER_SIZE + 2)

    reopened = open_engine(meh_path)
    try:
        assert reopened.headers.current.snapshot_offset != 0
        assert reopened.contains(0, damaged_id)
        assert reopened.read(0, 1).payload == b"first"
        with pytest.raises(CRCMismatchError):
            reopened.read(0, damaged_id)
        with pytest.raises(CRCMismatchError) as info:
            compact_to(reopened, bad)
        assert info.value.code == Code.CRC_MISMATCH == 5004
        assert f"{damaged_id:016x}" in str(info.value)
        assert "0123456789abcdef" in str(info.value)
        assert f"at offset {offset}" in str(info.value)
        assert not os.path.exists(bad)
        assert os.path.exists(good)
        assert reopened.read(0, 3).payload == b"third"
    finally:
        reopened.close()


def test_two_thousand_records_compact_correctly(meh_path: str, tmp_path: Path) -> None:
    """A 2000-record file compacts quickly (batched writes) into a copy with every record."""
    dest = str(tmp_path / "copy.meh")
    source = create_engine(meh_path)
    try:
        source.write_batch(
            [RecordEntry(i % 4, 0x04, i * 2654435761, b"payload-%05d" % i) for i in range(2000)]
        )
        started = time.monotonic()
        compact_to(source, dest)
        elapsed = time.monotonic() - started
    finally:
        source.close()
    assert elapsed < 10.0  # upstream pins < 2 s; generous here for slow CI disks

    copy = open_engine(dest)
    try:
        assert copy.stats()[1] == 2000
        for i in range(2000):
            assert copy.read(i % 4, i * 2654435761).payload == b"payload-%05d" % i
        assert sum(len(copy.ids_of_type(a, 0x04)) for a in copy.agents()) == 2000
    finally:
        copy.close()


def test_compaction_does_not_touch_the_source(meh_path: str, tmp_path: Path) -> None:
    """The source file's bytes are identical before and after compaction, and it stays usable."""
    source = _five_with_two_deleted(meh_path)
    try:
        before = _read_bytes(meh_path)
        headers = source.headers
        compact_to(source, str(tmp_path / "copy.meh"))
        copy = compact_into(source, str(tmp_path / "copy2.meh"))
        copy.close_without_checkpoint()
        assert _read_bytes(meh_path) == before
        assert source.headers == headers
        source.write(0, 0x02, 99, b"after")  # positive control: the source is still writable
        assert _read_bytes(meh_path) != before
        assert source.read(0, 99).payload == b"after"
    finally:
        source.close()


def test_compact_refuses_two_index_entries_sharing_one_frame(meh_path: str, tmp_path: Path) -> None:
    """An index entry pointing at another record's frame is refused (5005), naming that entry."""
    dest = str(tmp_path / "copy.meh")
    engine = create_engine(meh_path)
    try:
        engine.write(0, 0x02, 1, b"first")
        shared = engine.write(0, 0x02, 2, b"second")
        compact_to(engine, str(tmp_path / "good.meh"))  # positive control
        engine._live.offsets[0].put(0x99, shared, 0x02)  # a damaged index: two ids, one frame
        with pytest.raises(CorruptionError) as info:
            compact_to(engine, dest)
        assert info.value.code == Code.CORRUPTION
        assert f"{0x99:016x}" in str(info.value)
        assert f"at offset {shared}" in str(info.value)
        assert not os.path.exists(dest)
    finally:
        engine.close_without_checkpoint()


def test_compact_refuses_a_frame_whose_id_differs_from_its_index_entry(
    meh_path: str, tmp_path: Path
) -> None:
    """An entry naming a frame of another id is refused even when that frame's CRC is sound."""
    dest = str(tmp_path / "copy.meh")
    engine = create_engine(meh_path)
    try:
        engine.write(7, 0x02, 1, b"first")
        other = engine.write(8, 0x02, 2, b"second")
        engine.write(9, 0x02, 3, b"third")
        engine._live.offsets[8].put(2, engine.offset_of(9, 3) or 0, 0x02)
        engine._live.offsets[9].put(3, other, 0x02)
        # The first entry in log order is id 3, now pointing at id 2's frame.
        with pytest.raises(CorruptionError, match=f"record {3:016x} at offset {other}"):
            compact_to(engine, dest)
        assert not os.path.exists(dest)
    finally:
        engine.close_without_checkpoint()


def test_compact_returns_an_engine_that_serves_every_record_and_type(
    meh_path: str, tmp_path: Path
) -> None:
    """compact_into's engine reads every record, lists types, and reopens from its snapshot."""
    dest = str(tmp_path / "copy.meh")
    source = _five_with_two_deleted(meh_path)
    try:
        source.write_batch(
            [RecordEntry(i % 5, 0x10 + i % 3, i * 31, b"r%d" % i) for i in range(300)]
        )
        assert source.delete_batch(1, [i * 31 for i in range(1, 300, 5)]) > 0
        expected = _contents(source)
        types = {(a, t): source.ids_of_type(a, t) for a in source.agents() for t in range(256)}
        copy = compact_into(source, dest)
    finally:
        source.close()
    try:
        assert _contents(copy) == expected
        assert {(a, t): copy.ids_of_type(a, t) for a in copy.agents() for t in range(256)} == types
        copy.write(1, 0x10, 31 * 6, b"after")  # the copy takes writes like any engine
        assert copy.read(1, 31 * 6).payload == b"after"
        expected[(1, 31 * 6)] = (0x10, b"after")
    finally:
        copy.close_without_checkpoint()
    reopened = open_engine(dest)
    try:
        assert reopened.stats()[1] == len(expected)
        assert _contents(reopened) == expected
    finally:
        reopened.close_without_checkpoint()


def test_compact_takes_a_pathlike_and_refuses_other_types(meh_path: str, tmp_path: Path) -> None:
    """A pathlib destination works; an int is InvalidQueryError, not a TypeError."""
    eng = create_engine(meh_path)
    eng.write(0, 1, 1, b"kept")
    with pytest.raises(InvalidQueryError, match=r"must be a str or os\.PathLike"):
        compact_to(eng, 123)  # type: ignore[arg-type]
    target = tmp_path / "copy.meh"
    compact_to(eng, target)
    eng.close()
    copy = open_engine(str(target))
    assert copy.read(0, 1).payload == b"kept"
    copy.close()
