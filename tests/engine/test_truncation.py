"""Torn tails at every byte, garbage and zero tails, and one flipped byte per region.

Each case states the outcome storage.md §6.3/§9 prescribes and checks it
against a model of the acknowledged operations: after a cut at byte ``c`` the
file must hold exactly the operations whose frames end at or before ``c``.
"""

from __future__ import annotations

import itertools
import logging
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from memhop import code_of
from memhop.engine import (
    DATA_START,
    RECORD_HEADER_SIZE,
    Engine,
    create_engine,
    encode_frame,
    open_engine,
)
from memhop.engine.header import HEADER_SIZE, FileHeader, parse_header
from memhop.errors import CRCMismatchError, NotFoundError
from tests.faults import append_bytes, file_size, flip_byte, truncate_to

LOGGER = "memhop.engine"
State = dict[int, dict[int, bytes]]


@dataclass(frozen=True)
class Op:
    """One acknowledged operation and where its frame sits; ``payload`` None is a delete."""

    agent: int
    id_hash: int
    payload: bytes | None
    start: int
    end: int


def _build(path: str, *, tail_snapshot: bool) -> list[Op]:
    """Write a small history (checkpoint, overwrite, delete) and close or crash.

    Frames: a1, b2 | checkpoint | c3, a1 again, tombstone b2, d4; then either a
    crash (no snapshot at the tail) or a close (a tail snapshot).
    """
    eng = create_engine(path)
    ops: list[Op] = []

    def put(agent: int, id_hash: int, payload: bytes) -> None:
        start = eng.write(agent, 0x02, id_hash, payload)
        ops.append(Op(agent, id_hash, payload, start, start + RECORD_HEADER_SIZE + len(payload)))

    def drop(agent: int, id_hash: int) -> None:
        assert eng.delete(agent, id_hash) is True
        end = eng.record_end
        ops.append(Op(agent, id_hash, None, end - RECORD_HEADER_SIZE, end))

    put(0, 1, b"a1")
    put(7, 2, b"b2")
    eng.checkpoint()
    put(0, 3, b"c3")
    put(0, 1, b"a1v2")
    drop(7, 2)
    put(7, 4, b"d4")
    if tail_snapshot:
        eng.close()
        assert file_size(path) > ops[-1].end
    else:
        eng.close_without_checkpoint()
        assert file_size(path) == ops[-1].end
    for before, after in itertools.pairwise(ops):
        assert before.end == after.start  # frames are back to back
    return ops


def _expected(ops: list[Op], cut: int) -> State:
    """The state after replaying exactly the operations whose frames end by ``cut``."""
    state: State = {}
    for op in ops:
        if op.end > cut:
            break
        if op.payload is None:
            state.get(op.agent, {}).pop(op.id_hash, None)
        else:
            state.setdefault(op.agent, {})[op.id_hash] = op.payload
    return {agent: ids for agent, ids in state.items() if ids}


def _clean_end(ops: list[Op], cut: int) -> int:
    return max([DATA_START] + [op.end for op in ops if op.end <= cut])


def _live(eng: Engine) -> State:
    """Everything the engine serves, read back through ``read``."""
    return {
        agent: {i: eng.read(agent, i).payload for i in eng.all_ids(agent)} for agent in eng.agents()
    }


def _with(state: State, agent: int, id_hash: int, payload: bytes) -> State:
    out = {a: dict(ids) for a, ids in state.items()}
    out.setdefault(agent, {})[id_hash] = payload
    return out


def _check_cut(source: str, work: str, ops: list[Op], cut: int) -> None:
    """Open a copy cut at ``cut``; check the prefix, then that an append lands cleanly and lasts."""
    shutil.copyfile(source, work)
    truncate_to(work, cut)
    expected = _expected(ops, cut)
    clean = _clean_end(ops, cut)
    eng = open_engine(work)
    try:
        assert _live(eng) == expected, f"cut at {cut}"
        assert eng.stats()[1] == sum(len(ids) for ids in expected.values())
        assert eng.write(9, 0x01, 99, b"new") == clean, f"cut at {cut}"
    finally:
        eng.close_without_checkpoint()
    assert file_size(work) == clean + RECORD_HEADER_SIZE + 3
    eng = open_engine(work)
    try:
        assert _live(eng) == _with(expected, 9, 99, b"new"), f"cut at {cut}"
    finally:
        eng.close_without_checkpoint()


# ---- torn tails at every byte ---------------------------------------------------------------


def test_every_cut_through_the_last_three_frames_opens_to_an_exact_prefix(
    tmp_path: Path, meh_path: str
) -> None:
    """A crashed log cut at any byte of its last 3 frames keeps exactly the frames before it."""
    ops = _build(meh_path, tail_snapshot=False)
    size = file_size(meh_path)
    work = str(tmp_path / "cut.meh")
    first = ops[-3].start
    states = set()
    for cut in range(first, size + 1):
        _check_cut(meh_path, work, ops, cut)
        states.add(repr(_expected(ops, cut)))
    # The sweep crossed the overwrite, the tombstone and the last put: 4 distinct prefixes.
    assert len(states) == 4
    assert _expected(ops, first)[7] == {2: b"b2"}
    assert 7 not in _expected(ops, size - 1)


def test_every_cut_through_the_last_frames_and_the_tail_snapshot_opens_to_an_exact_prefix(
    tmp_path: Path, meh_path: str
) -> None:
    """A closed file cut anywhere in its last 2 frames or tail snapshot keeps the frames before."""
    # A cut inside the snapshot leaves the header naming a blob past the end of the
    # file, so open scans the whole log (every frame is there) and clears the pointers.
    ops = _build(meh_path, tail_snapshot=True)
    size = file_size(meh_path)
    with open(meh_path, "rb") as f:
        raw = f.read(2 * HEADER_SIZE)
    header = max(
        parse_header(raw[:HEADER_SIZE]),
        parse_header(raw[HEADER_SIZE:]),
        key=lambda h: h.commit_id,
    )
    assert header.snapshot_offset == ops[-1].end
    assert header.snapshot_offset + header.snapshot_length == size
    work = str(tmp_path / "cut.meh")
    for cut in range(ops[-2].start, size + 1):
        _check_cut(meh_path, work, ops, cut)
        eng = open_engine(work)  # the append above trimmed or cleared the snapshot
        try:
            assert eng.headers.current.snapshot_offset == 0
        finally:
            eng.close_without_checkpoint()

    shutil.copyfile(meh_path, work)
    truncate_to(work, size - 1)
    eng = open_engine(work)
    try:
        assert eng.headers.current.snapshot_offset == 0  # out of bounds: full scan, cleared
        assert file_size(work) == header.snapshot_offset  # the partial blob was cut
    finally:
        eng.close_without_checkpoint()
    eng = open_engine(meh_path)
    try:
        assert eng.headers.current.snapshot_offset == header.snapshot_offset  # intact: used
        assert _live(eng) == _expected(ops, size)
    finally:
        eng.close_without_checkpoint()


# ---- garbage and zero tails -----------------------------------------------------------------


def _random_bytes(n: int, seed: int) -> bytes:
    rng = random.Random(seed)
    data = bytes(rng.randrange(1, 256) for _ in range(n))  # never a zero header
    assert data.count(0) == 0
    return data


_BAD_CRC_FRAME = bytearray(encode_frame(0, 0x02, 0, 5, b"fake"))
_BAD_CRC_FRAME[22] ^= 0xFF

GARBAGE = {
    "1 byte": _random_bytes(1, 1),
    "25 bytes": _random_bytes(25, 2),
    "26 bytes": _random_bytes(26, 3),
    "27 bytes": _random_bytes(27, 4),
    "300 bytes": _random_bytes(300, 5),
    "4000 bytes": _random_bytes(4000, 6),
    "a frame with a bad crc": bytes(_BAD_CRC_FRAME),
    "a frame with a bad crc and more": bytes(_BAD_CRC_FRAME) + _random_bytes(40, 7),
}


@pytest.mark.parametrize("tail_snapshot", [False, True], ids=["crashed", "closed"])
@pytest.mark.parametrize("kind", list(GARBAGE))
def test_a_garbage_tail_is_cut_and_every_acknowledged_record_survives(
    meh_path: str, tail_snapshot: bool, kind: str
) -> None:
    """Random bytes after the log are cut on open; the next append lands at the record end."""
    ops = _build(meh_path, tail_snapshot=tail_snapshot)
    clean = file_size(meh_path)
    record_end = ops[-1].end
    everything = _expected(ops, record_end)
    append_bytes(meh_path, GARBAGE[kind])

    eng = open_engine(meh_path)
    try:
        assert _live(eng) == everything
        assert file_size(meh_path) == clean
        assert eng.write(9, 0x01, 99, b"new") == record_end
        assert file_size(meh_path) == record_end + RECORD_HEADER_SIZE + 3
    finally:
        eng.close_without_checkpoint()
    eng = open_engine(meh_path)
    try:
        assert _live(eng) == _with(everything, 9, 99, b"new")
    finally:
        eng.close()


@pytest.mark.parametrize("tail_snapshot", [False, True], ids=["crashed", "closed"])
@pytest.mark.parametrize("zeros", [10, 100, 5000])
def test_a_zero_filled_tail_keeps_every_record_and_the_next_append_survives_reopen(
    meh_path: str, tail_snapshot: bool, zeros: int
) -> None:
    """Zeros after the log (a file extended by a crash) lose nothing, and a later append lasts."""
    ops = _build(meh_path, tail_snapshot=tail_snapshot)
    record_end = ops[-1].end
    everything = _expected(ops, record_end)
    append_bytes(meh_path, bytes(zeros))

    eng = open_engine(meh_path)
    try:
        assert _live(eng) == everything
        assert eng.record_end == record_end
        offset = eng.write(9, 0x01, 99, b"new")
        assert eng.read(9, 99).payload == b"new"
    finally:
        eng.close_without_checkpoint()
    eng = open_engine(meh_path)
    try:
        assert _live(eng) == _with(everything, 9, 99, b"new"), "an acknowledged append was lost"
        assert offset == record_end, "the append did not land at the end of the record area"
    finally:
        eng.close()


# ---- one flipped byte per region ------------------------------------------------------------


PAYLOADS = {1: b"one111", 2: b"two222", 3: b"three3", 4: b"four44"}


def _four(path: str, *, tail_snapshot: bool) -> list[int]:
    """Write ids 1-4 to agent 0, then close (B active with a tail snapshot) or crash."""
    eng = create_engine(path)
    offsets = [eng.write(0, 0x01, i, p) for i, p in PAYLOADS.items()]
    if tail_snapshot:
        eng.close()
    else:
        eng.close_without_checkpoint()
    return offsets


def _headers(path: str) -> tuple[FileHeader, FileHeader]:
    with open(path, "rb") as f:
        raw = f.read(2 * HEADER_SIZE)
    return parse_header(raw[:HEADER_SIZE]), parse_header(raw[HEADER_SIZE:])


HEADER_BYTES = {"magic": 0, "commit id": 8, "snapshot offset": 16, "reserved": 2000, "crc": 4088}


@pytest.mark.parametrize("field", list(HEADER_BYTES))
def test_a_flipped_byte_in_the_stale_header_a_changes_nothing(meh_path: str, field: str) -> None:
    """Damage to the older slot A leaves B active: snapshot used, all records, size unchanged."""
    _four(meh_path, tail_snapshot=True)
    size = file_size(meh_path)
    _, b = _headers(meh_path)
    assert b.commit_id == 1
    flip_byte(meh_path, HEADER_BYTES[field])

    eng = open_engine(meh_path)
    try:
        assert eng.headers.active == 1
        assert eng.headers.current == b
        assert _live(eng) == {0: PAYLOADS}
        assert eng.stats() == (size, 4)
        eng.checkpoint()  # the next header write goes to the broken slot A and repairs it
    finally:
        eng.close_without_checkpoint()
    a, b2 = _headers(meh_path)
    assert a.commit_id == 2
    assert b2 == b


@pytest.mark.parametrize("field", list(HEADER_BYTES))
def test_a_flipped_byte_in_the_active_header_b_falls_back_to_a_and_a_full_scan(
    meh_path: str, field: str
) -> None:
    """Damage to the active slot B opens from A (no snapshot): all records, the blob is cut."""
    offsets = _four(meh_path, tail_snapshot=True)
    record_end = offsets[-1] + RECORD_HEADER_SIZE + 6
    flip_byte(meh_path, HEADER_SIZE + HEADER_BYTES[field])

    eng = open_engine(meh_path)
    try:
        assert eng.headers.active == 0
        assert eng.headers.current == FileHeader()
        assert _live(eng) == {0: PAYLOADS}
        assert eng.stats() == (record_end, 4)  # A names no snapshot, so the blob was unknown
        assert eng.write(0, 0x01, 5, b"five") == record_end
    finally:
        eng.close_without_checkpoint()
    eng = open_engine(meh_path)
    try:
        assert _live(eng) == {0: {**PAYLOADS, 5: b"five"}}
    finally:
        eng.close()


FRAME_BYTES = {"type": 0, "flags": 1, "length": 2, "agent id": 6, "id hash": 14, "crc": 22}


@pytest.mark.parametrize("field", [*FRAME_BYTES, "payload"])
def test_a_flipped_byte_in_a_middle_frame_of_a_crashed_log_loses_only_that_record(
    meh_path: str, field: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Without a snapshot the scan skips the damaged frame 2 and resyncs: 1, 3, 4 survive intact."""
    offsets = _four(meh_path, tail_snapshot=False)
    size = file_size(meh_path)
    at = RECORD_HEADER_SIZE + 3 if field == "payload" else FRAME_BYTES[field]
    flip_byte(meh_path, offsets[1] + at)

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        eng = open_engine(meh_path)
    try:
        assert f"skipped 1 damaged record(s), the first at offset {offsets[1]}" in caplog.text
        assert _live(eng) == {0: {i: PAYLOADS[i] for i in (1, 3, 4)}}
        assert not eng.contains(0, 2)
        with pytest.raises(NotFoundError):
            eng.read(0, 2)
        assert eng.stats() == (size, 3)  # the damaged bytes stay; nothing is cut
        assert eng.write(0, 0x01, 5, b"five") == size
    finally:
        eng.close_without_checkpoint()
    eng = open_engine(meh_path)
    try:
        assert eng.all_ids(0) == [1, 3, 4, 5]
    finally:
        eng.close()


def test_a_flipped_payload_byte_in_the_last_frame_of_a_crashed_log_cuts_it(
    meh_path: str,
) -> None:
    """Nothing decodes after a damaged last frame, so it is cut and the next append reuses it."""
    offsets = _four(meh_path, tail_snapshot=False)
    flip_byte(meh_path, offsets[3] + RECORD_HEADER_SIZE)

    eng = open_engine(meh_path)
    try:
        assert _live(eng) == {0: {i: PAYLOADS[i] for i in (1, 2, 3)}}
        assert not eng.contains(0, 4)
        assert eng.stats() == (offsets[3], 3)
        assert eng.write(0, 0x01, 4, b"four again") == offsets[3]
    finally:
        eng.close_without_checkpoint()
    eng = open_engine(meh_path)
    try:
        assert eng.read(0, 4).payload == b"four again"
        assert eng.stats()[1] == 4
    finally:
        eng.close()


@pytest.mark.parametrize("field", ["id hash", "payload"])
def test_a_flipped_byte_in_a_snapshotted_frame_reads_as_a_checksum_error_not_as_absent(
    meh_path: str, field: str
) -> None:
    """The snapshot still lists record 2, so reading it raises 5004; 1, 3 and 4 read fine."""
    offsets = _four(meh_path, tail_snapshot=True)
    size = file_size(meh_path)
    at = RECORD_HEADER_SIZE + 3 if field == "payload" else FRAME_BYTES[field]
    flip_byte(meh_path, offsets[1] + at)

    eng = open_engine(meh_path)
    try:
        assert eng.headers.current.snapshot_offset != 0  # the snapshot path was taken
        assert eng.stats() == (size, 4)
        assert eng.contains(0, 2)
        with pytest.raises(CRCMismatchError) as info:
            eng.read(0, 2)
        assert code_of(info.value) == 5004
        assert f"record at offset {offsets[1]} failed CRC32 check" in str(info.value)
        for i in (1, 3, 4):
            assert eng.read(0, i).payload == PAYLOADS[i]
    finally:
        eng.close_without_checkpoint()


def _mixed(path: str) -> None:
    """Two domains, an overwrite and a delete, then close (tail snapshot)."""
    eng = create_engine(path)
    eng.write(0, 0x01, 1, b"old")
    eng.write(0, 0x02, 2, b"gone")
    eng.write(0x22, 0x04, 3, b"other domain")
    eng.write(0, 0x01, 1, b"new")
    eng.delete(0, 2)
    eng.write(0, 0x0F, 4, b"plan")
    eng.close()


SNAPSHOT_BYTES = {"magic": 0, "version": 4, "agent count": 5, "first entry": 30, "crc": -1}


@pytest.mark.parametrize("where", list(SNAPSHOT_BYTES))
def test_a_flipped_byte_in_the_snapshot_blob_gives_the_same_live_set_by_full_scan(
    tmp_path: Path, meh_path: str, where: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A damaged snapshot is logged and skipped; the full scan serves the identical records."""
    _mixed(meh_path)
    reference = open_engine(meh_path)
    try:
        header = reference.headers.current
        assert header.snapshot_offset != 0  # the reference took the snapshot path
        expected = _live(reference)
        types = {a: {t: reference.ids_of_type(a, t) for t in (1, 2, 4, 15)} for a in (0, 0x22)}
    finally:
        reference.close_without_checkpoint()
    assert expected == {0: {1: b"new", 4: b"plan"}, 0x22: {3: b"other domain"}}

    damaged = str(tmp_path / "damaged.meh")
    shutil.copyfile(meh_path, damaged)
    offset = SNAPSHOT_BYTES[where]
    end = header.snapshot_offset + header.snapshot_length
    flip_byte(damaged, header.snapshot_offset + offset if offset >= 0 else end + offset)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        eng = open_engine(damaged)
    try:
        assert "is unusable" in caplog.text
        assert eng.headers.current.snapshot_offset == 0  # the full-scan path was taken
        assert _live(eng) == expected
        assert {a: {t: eng.ids_of_type(a, t) for t in (1, 2, 4, 15)} for a in (0, 0x22)} == types
        assert eng.stats() == (header.snapshot_offset, 3)  # the scan cut the damaged blob off
    finally:
        eng.close_without_checkpoint()


def test_damage_behind_a_legacy_non_tail_snapshot_cuts_the_log_there_without_resync(
    meh_path: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Damage behind a loaded snapshot truncates there, dropping even an intact later frame."""
    # storage.md §9.2 step 5a: any failure at or after snapshot_offset cuts the log
    # (no resync); §9.3: frames after a legacy non-tail snapshot are merged until then.
    eng = create_engine(meh_path)
    eng.write(0, 0x01, 1, b"one")
    eng.checkpoint()
    snapshot = eng.headers.current
    eng.close_without_checkpoint()
    blob_end = snapshot.snapshot_offset + snapshot.snapshot_length
    assert file_size(meh_path) == blob_end

    # A legacy writer appended frames behind its snapshot; the third one has rotted.
    damaged = bytearray(encode_frame(0, 0x01, 0, 3, b"three"))
    damaged[RECORD_HEADER_SIZE] ^= 0xFF
    two = encode_frame(0, 0x01, 0, 2, b"two")
    append_bytes(meh_path, two + bytes(damaged) + encode_frame(0, 0x01, 0, 4, b"four"))
    cut_at = blob_end + len(two)

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        eng = open_engine(meh_path)
    try:
        assert f"the first at offset {cut_at}" in caplog.text
        assert "truncate=True" in caplog.text
        assert eng.headers.current.snapshot_offset == snapshot.snapshot_offset  # snapshot path
        assert _live(eng) == {0: {1: b"one", 2: b"two"}}
        assert not eng.contains(0, 3)
        assert not eng.contains(0, 4)
        assert eng.stats() == (cut_at, 2)
        assert eng.write(0, 0x01, 5, b"five") == cut_at
    finally:
        eng.close_without_checkpoint()
    eng = open_engine(meh_path)
    try:
        assert _live(eng) == {0: {1: b"one", 2: b"two", 5: b"five"}}
    finally:
        eng.close()
