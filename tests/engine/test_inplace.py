"""Compaction in place at the engine: the dead-bytes measure, and a refusal that changes nothing."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhop.engine import RecordEntry, create_engine, inplace, open_engine
from memhop.engine.inplace import compact_in_place, occupancy
from memhop.engine.publish import TEMP_SUFFIX
from memhop.engine.side_files import SIDECAR_SUFFIXES
from memhop.engine.storefile import StoreFile
from memhop.errors import CRCMismatchError

# (agent, id, payload size or None for a delete)
_ops = st.lists(
    st.tuples(st.integers(0, 2), st.integers(1, 40), st.none() | st.integers(0, 900)),
    min_size=1,
    max_size=60,
)


@settings(max_examples=25, deadline=None)
@given(ops=_ops, checkpoints=st.booleans())
def test_live_bytes_is_the_size_a_compaction_leaves(
    tmp_path_factory: pytest.TempPathFactory,
    ops: list[tuple[int, int, int | None]],
    checkpoints: bool,
) -> None:
    """Exactly, after any writes, overwrites, deletes and checkpoints; the estimate is bounded.

    A sample can miss every large record, so the sound bound on the estimate is
    the spread of record sizes within each domain (its count times largest less
    smallest payload); it is exact when the sample covers every record.
    """
    path = str(tmp_path_factory.mktemp("occ") / "db.meh")
    engine = create_engine(path)
    live: dict[tuple[int, int], int] = {}
    try:
        for n, (agent, id_hash, size) in enumerate(ops):
            if size is None:
                engine.delete(agent, id_hash)
                live.pop((agent, id_hash), None)
            else:
                engine.write(agent, 0x08, id_hash, b"p" * size)
                live[(agent, id_hash)] = size
            if checkpoints and n % 7 == 0:
                engine.checkpoint()
        measured = occupancy(engine)
        assert measured.file_bytes == engine.stats()[0]
        spread = 0
        for agent in {a for a, _ in live}:
            sizes = [s for (a, _), s in live.items() if a == agent]
            spread += len(sizes) * (max(sizes) - min(sizes))
        estimate = occupancy(engine, sample=4).live_bytes
        assert abs(estimate - measured.live_bytes) <= spread + 1
        assert occupancy(engine, sample=len(live) or 1).live_bytes == measured.live_bytes
        engine = compact_in_place(engine, path)
        compacted = engine.stats()[0]
        assert measured.live_bytes == min(compacted, measured.file_bytes)  # an empty file is 8192
        assert occupancy(engine).live_bytes == compacted
    finally:
        engine.close()


def test_the_estimate_waits_for_no_fsync_in_flight_and_the_exact_measure_does(
    tmp_path: Path,
) -> None:
    """The policy's estimate holds the engine lock, so writers wait on it: it must not also
    wait there for another writer's fsync to end (the disk's time, 0.2-4 ms here and up to
    tens of ms). The exact measure, which needs every waiting write indexed, still does."""
    engine = create_engine(str(tmp_path / "db.meh"))
    try:
        for n in range(40):
            engine.write(0, 0x08, n + 1, b"p" * 100)
        in_flight = engine._commits._io  # held across a leader's fsync (Commits._lead)
        done: dict[str, float] = {}

        def measure(name: str, sample: int) -> None:
            done[name] = occupancy(engine, sample=sample).live_bytes

        with in_flight:  # an fsync under way on another thread
            estimate = threading.Thread(target=measure, args=("estimate", 8))
            exact = threading.Thread(target=measure, args=("exact", 0))
            estimate.start()
            estimate.join(10)
            assert "estimate" in done  # read the durable records as they stand
            exact.start()
            exact.join(0.3)
            assert "exact" not in done  # control: the drain waits for the fsync to end
        exact.join(10)
        assert done["exact"] > 0
        assert abs(done["estimate"] - done["exact"]) <= 8  # same-sized records: the same
    finally:
        engine.close()


def test_the_estimate_reads_its_lengths_with_the_engine_lock_let_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer goes on while the estimate reads its records' lengths (cold pages: 3-7 ms at
    40,000 turns, every few dozen turns a pass asks); the exact measure holds it."""
    engine = create_engine(str(tmp_path / "db.meh"))
    went_on: list[bool] = []
    writers: list[threading.Thread] = []
    real = inplace._measured

    def measured(*args: object) -> inplace.Occupancy:
        writer = threading.Thread(target=engine.write, args=(0, 0x08, 999, b"w"))
        writers.append(writer)
        writer.start()
        writer.join(0.5)
        went_on.append(not writer.is_alive())
        return real(*args)  # type: ignore[arg-type]

    try:
        for n in range(40):
            engine.write(0, 0x08, n + 1, b"p" * 100)
        monkeypatch.setattr(inplace, "_measured", measured)
        occupancy(engine, sample=8)
        occupancy(engine)
        for writer in writers:
            writer.join(10)
        assert went_on == [True, False]  # the estimate let the writer in; the exact one not
    finally:
        engine.close()


def test_a_record_that_will_not_read_refuses_and_leaves_the_file_in_use(tmp_path: Path) -> None:
    """A flipped payload byte: CRC refusal naming the record; old engine open, no temp file."""
    path = str(tmp_path / "db.meh")
    engine = create_engine(path)
    engine.write(1, 0x08, 7, b"a" * 100)
    at = engine.write(1, 0x08, 8, b"b" * 100)
    engine.write(1, 0x08, 9, b"c" * 100)
    engine.delete(1, 7)
    engine.close()
    with open(path, "r+b") as raw:
        raw.seek(at + 26 + 10)
        raw.write(b"X")
    before = Path(path).read_bytes()
    engine = open_engine(path)
    try:
        with pytest.raises(CRCMismatchError, match="0000000000000008"):
            compact_in_place(engine, path)
        assert not engine.closed
        assert engine.read(1, 9).payload == b"c" * 100  # the old file still serves
        assert Path(path).read_bytes() == before
        assert not [n for n in os.listdir(tmp_path) if n.endswith(TEMP_SUFFIX)]
    finally:
        engine.close_without_checkpoint()


def test_writes_after_a_compaction_go_to_the_new_file(tmp_path: Path) -> None:
    """The returned engine holds the name: a write, a close and a reopen find it."""
    path = str(tmp_path / "db.meh")
    engine = create_engine(path)
    engine.write_batch([RecordEntry(0, 0x08, i, b"x" * 50) for i in range(1, 20)])
    engine.delete_batch(0, range(1, 10))
    engine = compact_in_place(engine, path)
    engine.write(0, 0x08, 99, b"after")
    engine.close()
    again = open_engine(path)
    try:
        assert again.read(0, 99).payload == b"after"
        assert again.stats()[1] == 11
    finally:
        again.close()


def test_an_open_removes_stale_temporary_siblings_but_not_one_being_built(
    tmp_path: Path,
) -> None:
    """Only a sibling whose lock can be taken is removed; other names are never touched."""
    path = tmp_path / "db.meh"
    create_engine(str(path)).close()
    stale = tmp_path / f".db.meh.{'a1' * 6}{TEMP_SUFFIX}"
    building = tmp_path / f".db.meh.{'b2' * 6}{TEMP_SUFFIX}"
    other = tmp_path / f".other.meh.{'c3' * 6}{TEMP_SUFFIX}"  # another file's build
    other.write_bytes(b"not ours")
    # Side files' temporaries are written under db.meh's lock: the open holds it.
    side_temps = [tmp_path / f".db.meh{s}.{'d4' * 6}{TEMP_SUFFIX}" for s in SIDECAR_SUFFIXES]
    others = [
        tmp_path / f".other.meh.seed.{'e5' * 6}{TEMP_SUFFIX}",  # another file's side file
        tmp_path / f".db.meh.notes.{'f6' * 6}{TEMP_SUFFIX}",  # not a side file of memhop's
        tmp_path / f"db.meh{SIDECAR_SUFFIXES[0]}",  # a side file itself, not a temporary
    ]
    for leftover in [stale, *side_temps, *others]:
        leftover.write_bytes(b"left by a kill")
    held = StoreFile.create_new(str(building), 0o644, exact=False)  # a builder holds it
    try:
        open_engine(str(path)).close()
    finally:
        held.close()
    assert not stale.exists()
    assert not any(t.exists() for t in side_temps)
    assert building.exists()
    assert other.exists()
    assert all(o.exists() for o in others)
