"""The index seed: an open after a kill starts from it only while the file vouches for it.

A "kill" is ``close_without_checkpoint`` after a write: the session's first
write cut the file's own snapshot, so without the seed the open scans the
whole log. Every open here is checked against the index a full scan of the
same bytes builds (the seed removed), and against the records written.
"""

from __future__ import annotations

import os
import shutil
import struct
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhop.engine import (
    DATA_START,
    Engine,
    RecordEntry,
    compact_into,
    create_engine,
    open_engine,
    write_live_copy,
)
from memhop.engine.inplace import compact_in_place
from memhop.engine.seed import MIN_LOG_BYTES, SUFFIX
from memhop.errors import CorruptionError
from tests.faults import flip_byte, snapshot_blob, snapshot_entries, truncate_to

AGENT = 7
PAYLOAD = b"x" * 200
BATCH = MIN_LOG_BYTES // len(PAYLOAD) + 64  # a first session's log is past the seed's floor


def _entries(ids: range, tag: bytes = b"") -> list[RecordEntry]:
    return [RecordEntry(AGENT, 0x08, i, PAYLOAD + tag + str(i).encode()) for i in ids]


def _index(engine: Engine) -> dict[int, dict[int, int]]:
    return {agent: dict(ids.items()) for agent, ids in engine.live_index().items()}


def _killed_after_a_close(path: str) -> dict[int, bytes]:
    """A closed session (the seed), then a killed one that writes and deletes; the records."""
    engine = create_engine(path)
    engine.write_batch(_entries(range(1, BATCH)))
    engine.close()
    engine = open_engine(path)
    engine.write_batch(_entries(range(BATCH - 10, BATCH + 20), b"-late"))
    engine.delete_batch(AGENT, [1, 2, 3])
    engine.close_without_checkpoint()
    live = {i: PAYLOAD + str(i).encode() for i in range(4, BATCH - 10)}
    live.update({i: PAYLOAD + b"-late" + str(i).encode() for i in range(BATCH - 10, BATCH + 20)})
    return live


def _killed_after_a_write(engine: Engine) -> dict[int, bytes]:
    """Write a few records to ``engine`` and leave the file as a kill would; those records."""
    ids = range(BATCH + 20, BATCH + 25)
    engine.write_batch(_entries(ids, b"-new"))
    engine.close_without_checkpoint()
    return {i: PAYLOAD + b"-new" + str(i).encode() for i in ids}


def _scanned(path: str) -> dict[int, dict[int, int]]:
    """The index ``path``'s own bytes give (a copy without the seed: its snapshot or a scan)."""
    copy = path + ".scan.meh"
    shutil.copyfile(path, copy)
    engine = open_engine(copy)
    try:
        assert engine.index_source != "seed"
        return _index(engine)
    finally:
        engine.close_without_checkpoint()
        os.remove(copy)


def _source(path: str) -> str:
    """Where an open of ``path`` takes its index from (closed as a crash would leave it)."""
    engine = open_engine(path)
    engine.close_without_checkpoint()
    return engine.index_source


def _open_and_check(path: str, live: dict[int, bytes]) -> str:
    """Open, check every record and the index against a full scan; return the index source."""
    expected = _scanned(path)
    engine = open_engine(path)
    try:
        assert _index(engine) == expected
        assert sorted(engine.all_ids(AGENT)) == sorted(live)
        for id_hash in (4, BATCH - 10, BATCH + 19):
            assert engine.read(AGENT, id_hash).payload == live[id_hash]
        return engine.index_source
    finally:
        engine.close_without_checkpoint()


def test_an_open_after_a_kill_starts_from_the_seed_and_finds_every_record(meh_path: str) -> None:
    live = _killed_after_a_close(meh_path)
    assert os.path.exists(meh_path + SUFFIX)
    assert _open_and_check(meh_path, live) == "seed"
    os.remove(meh_path + SUFFIX)  # control: the same bytes without a seed are scanned
    assert _open_and_check(meh_path, live) == "scan"


def test_a_clean_open_uses_the_snapshot_and_a_small_log_gets_no_seed(meh_path: str) -> None:
    engine = create_engine(meh_path)
    engine.write_batch(_entries(range(1, 50)))
    engine.close()
    assert not os.path.exists(meh_path + SUFFIX)  # 50 records: a scan costs nothing
    engine = open_engine(meh_path)
    engine.write_batch(_entries(range(50, BATCH)))
    engine.close()
    assert os.path.exists(meh_path + SUFFIX)  # control: past the floor, the close keeps one
    assert _source(meh_path) == "snapshot"  # a clean file needs none


def _frame_offset_of(path: str, marker: bytes) -> int:
    with open(path, "rb") as f:
        at = f.read().find(marker)
    assert at > DATA_START
    return at


@pytest.mark.parametrize(
    ("where", "damage"),
    [
        ("file", "a byte of an old frame"),
        ("seed", "its magic"),
        ("seed", "its end"),
        ("seed", "its digest"),
        ("seed", "its snapshot"),
        ("seed", "cut short"),
        ("seed", "another file's"),
    ],
)
def test_a_seed_the_file_does_not_vouch_for_is_refused(
    meh_path: str, tmp_path: os.PathLike[str], where: str, damage: str
) -> None:
    """Each damage falls back to the full scan; the same file undamaged opens from the seed."""
    live = _killed_after_a_close(meh_path)
    control = os.path.join(tmp_path, "control.meh")
    shutil.copyfile(meh_path, control)
    shutil.copyfile(meh_path + SUFFIX, control + SUFFIX)
    seed = meh_path + SUFFIX
    if damage == "a byte of an old frame":
        flip_byte(meh_path, _frame_offset_of(meh_path, PAYLOAD + b"100"), 0x01)
    elif damage == "its magic":
        flip_byte(seed, 0)
    elif damage == "its end":
        flip_byte(seed, 8, 0x01)
    elif damage == "its digest":
        flip_byte(seed, 20)
    elif damage == "its snapshot":
        flip_byte(seed, os.path.getsize(seed) - 10)
    elif damage == "cut short":
        truncate_to(seed, 20)
    else:  # a seed made from other bytes, beside this file
        other = os.path.join(tmp_path, "other.meh")
        engine = create_engine(other)
        engine.write_batch(_entries(range(1, BATCH), b"-other"))
        engine.close()
        shutil.copyfile(other + SUFFIX, seed)
    if where == "file":
        engine = open_engine(meh_path)
        assert engine.index_source == "scan"
        assert 100 not in engine.all_ids(AGENT)  # the damaged frame is skipped, and counted
        assert 101 in engine.all_ids(AGENT)
        assert engine.damage() != (0, 0)
        engine.close_without_checkpoint()
    else:
        assert _open_and_check(meh_path, live) == "scan"
    assert _open_and_check(control, live) == "seed"


def test_a_seed_past_the_end_of_a_cut_file_is_refused(meh_path: str) -> None:
    live = _killed_after_a_close(meh_path)
    with open(meh_path + SUFFIX, "rb") as f:
        (end,) = struct.unpack_from("<Q", f.read(16), 8)
    assert _open_and_check(meh_path, live) == "seed"  # control
    truncate_to(meh_path, end - 1)  # the seed's last frame torn away
    assert _source(meh_path) == "scan"


def test_a_compaction_copy_gets_its_own_seed_at_close(meh_path: str) -> None:
    _killed_after_a_close(meh_path)
    engine = open_engine(meh_path)
    assert engine.index_source == "seed"
    target = meh_path + ".compact.meh"
    with open(target + SUFFIX, "wb") as f:
        f.write(b"a seed left by some older file of that name")
    copy = compact_into(engine, target)
    engine.close()
    assert not os.path.exists(target + SUFFIX)  # gone with the file it was made for
    copy.close()  # its snapshot is current and it has no seed: the close keeps one
    assert os.path.exists(target + SUFFIX)
    _killed_after_a_write(open_engine(target))
    assert _source(target) == "seed"


def test_a_copy_renamed_over_the_file_takes_no_stale_seed(meh_path: str) -> None:
    """A copy's rename drops the old seed; its close keeps one (the copy's snapshot is current)."""
    _killed_after_a_close(meh_path)
    assert os.path.exists(meh_path + SUFFIX)
    engine = open_engine(meh_path)
    with engine.exclusive():
        copy = write_live_copy(engine, meh_path, replace=True)
    engine.close_without_checkpoint()
    assert not os.path.exists(meh_path + SUFFIX)
    copy.close()
    assert os.path.exists(meh_path + SUFFIX)
    _killed_after_a_write(open_engine(meh_path))
    assert _source(meh_path) == "seed"


def test_an_in_place_compaction_leaves_a_seed_of_the_copy(meh_path: str) -> None:
    """A kill after the compacted file's first write opens from the copy's seed, not a scan."""
    live = _killed_after_a_close(meh_path)
    engine = open_engine(meh_path)
    stale = _index(engine)
    engine = compact_in_place(engine, os.path.abspath(meh_path))
    fresh = _index(engine)
    assert fresh != stale  # the copy's offsets: a seed of the old file would not do
    live.update(_killed_after_a_write(engine))
    assert _open_and_check(meh_path, live) == "seed"


def test_a_file_with_damage_keeps_no_fresh_seed(meh_path: str) -> None:
    _killed_after_a_close(meh_path)
    os.remove(meh_path + SUFFIX)
    flip_byte(meh_path, _frame_offset_of(meh_path, PAYLOAD + b"100"), 0x01)
    engine = open_engine(meh_path)
    assert engine.damage() != (0, 0)
    engine.write_batch(_entries(range(BATCH + 20, BATCH + 25)))
    engine.close()
    assert not os.path.exists(meh_path + SUFFIX)


@settings(max_examples=15, deadline=None)
@given(
    sessions=st.lists(
        st.tuples(
            st.lists(st.integers(1, 400), max_size=40),  # ids written
            st.lists(st.integers(1, 400), max_size=10),  # ids deleted
            st.booleans(),  # closed cleanly (else killed)
        ),
        min_size=1,
        max_size=5,
    )
)
def test_any_run_of_closes_and_kills_reopens_to_the_written_records(
    tmp_path_factory: pytest.TempPathFactory,
    sessions: list[tuple[list[int], list[int], bool]],
) -> None:
    path = str(tmp_path_factory.mktemp("seed") / "run.meh")
    engine = create_engine(path)
    engine.write_batch(_entries(range(1000, 1000 + BATCH)))  # past the floor: seeds are kept
    model = {i: PAYLOAD + str(i).encode() for i in range(1000, 1000 + BATCH)}
    engine.close()
    for n, (written, deleted, clean) in enumerate(sessions):
        engine = open_engine(path)
        assert _index(engine) == _scanned(path)
        assert set(engine.all_ids(AGENT)) == set(model)
        tag = f"-{n}".encode()
        if written:
            engine.write_batch(
                [RecordEntry(AGENT, 0x08, i, PAYLOAD + tag + str(i).encode()) for i in written]
            )
            model.update({i: PAYLOAD + tag + str(i).encode() for i in written})
        if deleted:
            engine.delete_batch(AGENT, deleted)
            for i in deleted:
                model.pop(i, None)
        if clean:
            engine.close()
        else:
            engine.close_without_checkpoint()
    engine = open_engine(path)
    assert _index(engine) == _scanned(path)
    assert {i: engine.read(AGENT, i).payload for i in engine.all_ids(AGENT)} == model
    engine.close_without_checkpoint()


def _rewrite_seed(path: str, edit: Callable[[dict[int, int]], None]) -> None:
    """Apply ``edit`` to the seed's index of AGENT (id -> offset), CRC recomputed: a seed
    that is well formed and wrong. Its header (end, digest) is kept."""
    with open(path + SUFFIX, "rb") as f:
        data = f.read()
    ((agent, pairs),) = snapshot_entries(data[32:])
    assert agent == AGENT
    ids = dict(pairs)
    edit(ids)
    with open(path + SUFFIX, "wb") as f:
        f.write(data[:32] + snapshot_blob([(AGENT, sorted(ids.items()))]))


def _bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def test_a_seed_that_leaves_a_record_out_is_refused_by_the_headers_count(
    meh_path: str, tmp_path: os.PathLike[str]
) -> None:
    """One entry dropped: the open scans, the record is there and a compaction keeps it."""
    live = _killed_after_a_close(meh_path)
    control = os.path.join(tmp_path, "control.meh")
    shutil.copyfile(meh_path, control)
    shutil.copyfile(meh_path + SUFFIX, control + SUFFIX)
    _rewrite_seed(meh_path, lambda ids: ids.pop(100))
    assert _open_and_check(meh_path, live) == "scan"
    assert _open_and_check(control, live) == "seed"  # control: the seed as it was written
    engine = compact_in_place(open_engine(meh_path), os.path.abspath(meh_path))
    assert engine.read(AGENT, 100).payload == live[100]
    assert engine.damage() == (0, 0)
    engine.close()


def _count_keeping_seed(meh_path: str, control: str | None = None) -> dict[int, bytes]:
    """A killed file whose seed (CRC recomputed) leaves record 100 out and puts record 1,
    deleted before the close, back on its old frame; return the records it holds. ``control``
    receives an honest copy of the file and its seed first."""
    engine = create_engine(meh_path)
    engine.write_batch(_entries(range(1, BATCH)))
    old_frame = engine.offset_of(AGENT, 1)
    engine.delete(AGENT, 1)
    engine.close()  # the seed
    live = {i: PAYLOAD + str(i).encode() for i in range(2, BATCH)}
    live.update(_killed_after_a_write(open_engine(meh_path)))
    if control is not None:
        shutil.copyfile(meh_path, control)
        shutil.copyfile(meh_path + SUFFIX, control + SUFFIX)

    def swap(ids: dict[int, int]) -> None:
        del ids[100]
        ids[1] = old_frame

    _rewrite_seed(meh_path, swap)
    return live


def test_a_seed_that_keeps_the_count_is_caught_before_a_compaction_leaves_a_frame_behind(
    meh_path: str, tmp_path: os.PathLike[str]
) -> None:
    """Record 100 left out and record 1, deleted before the close, put back on its old frame:
    every entry names a frame of its own and the count holds, so the open takes the seed;
    the compaction's replay refuses, keeps the file, and the reopen scans."""
    control = os.path.join(tmp_path, "control.meh")
    live = _count_keeping_seed(meh_path, control)
    engine = open_engine(meh_path)
    assert engine.index_source == "seed"
    assert not engine.contains(AGENT, 100)  # what the seed says, until a replay
    assert engine.read(AGENT, 1).payload == PAYLOAD + b"1"
    before = _bytes(meh_path)
    with pytest.raises(CorruptionError, match="reopen"):
        compact_in_place(engine, os.path.abspath(meh_path))
    assert _bytes(meh_path) == before  # nothing left behind
    assert not os.path.exists(meh_path + SUFFIX)
    engine.close_without_checkpoint()
    engine = open_engine(meh_path)
    assert engine.index_source == "scan"
    assert {i: engine.read(AGENT, i).payload for i in engine.all_ids(AGENT)} == live
    engine.close_without_checkpoint()
    engine = open_engine(control)  # control: the honest seed compacts
    assert engine.index_source == "seed"
    engine = compact_in_place(engine, os.path.abspath(control))
    assert {i: engine.read(AGENT, i).payload for i in engine.all_ids(AGENT)} == live
    engine.close()


def test_a_seed_that_keeps_the_count_never_becomes_the_files_own_snapshot(meh_path: str) -> None:
    """The same crafted seed, then a clean close: the close replays the log before it
    would store the seed's index as the file's snapshot, refuses, and the next open scans
    and finds the record the seed left out (before the check, the close stored the seed's
    index and the record stayed hidden, for a later compaction to erase)."""
    live = _count_keeping_seed(meh_path)
    engine = open_engine(meh_path)
    assert engine.index_source == "seed"
    engine.write(AGENT, 0x08, 7_000, b'{"late":1}')  # the close has something to checkpoint
    live[7_000] = b'{"late":1}'
    with pytest.raises(CorruptionError, match="reopen"):
        engine.close()
    engine = open_engine(meh_path)
    assert engine.index_source == "scan"
    assert {i: engine.read(AGENT, i).payload for i in engine.all_ids(AGENT)} == live
    engine.close()
    engine = open_engine(meh_path)  # control: a clean close of an honest index keeps it
    assert engine.index_source in ("snapshot", "seed")
    engine.close()
