"""Engine behaviour: storage_test.go, storage_snapshot_test.go and snapshot_vs_scan_test.go."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable

import pytest

from memhop.engine import (
    DATA_START,
    RECORD_HEADER_SIZE,
    Engine,
    RecordEntry,
    create_engine,
    open_engine,
)
from memhop.errors import ClosedError, Code, NotFoundError
from tests.faults import file_size, flip_byte

JOIN_TIMEOUT = 30.0


def _run_threads(targets: list[Callable[[], None]]) -> list[BaseException]:
    """Run each target in its own thread, join them all, and return what they raised."""
    errors: list[BaseException] = []
    lock = threading.Lock()

    def wrap(target: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                target()
            except BaseException as exc:
                with lock:
                    errors.append(exc)

        return run

    threads = [threading.Thread(target=wrap(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT)
    assert not [t for t in threads if t.is_alive()], "a worker thread did not finish"
    return errors


# ---- storage_test.go --------------------------------------------------------------------


def test_create_write_read_puts_the_first_frame_at_8192(meh_path: str) -> None:
    """The first frame lands at 8192 and reads back; a missing id is NotFoundError 3001."""
    engine = create_engine(meh_path)
    try:
        offset = engine.write(0, 0x02, 12345, b"hello")
        assert offset == DATA_START == 8192
        frame = engine.read(0, 12345)
        assert (frame.rec_type, frame.payload) == (0x02, b"hello")
        assert (frame.agent_id, frame.id_hash, frame.offset) == (0, 12345, 8192)
        with pytest.raises(NotFoundError, match="record not found") as info:
            engine.read(0, 54321)
        assert info.value.code == Code.NOT_FOUND == 3001
        with pytest.raises(NotFoundError):
            engine.read(7, 12345)  # the same id in another domain is a different record
        assert engine.stats() == (8192 + RECORD_HEADER_SIZE + 5, 1)
    finally:
        engine.close()


def test_four_checkpoints_of_a_fresh_file_leave_commit_4_in_slot_a(meh_path: str) -> None:
    """Each checkpoint flips to the other slot: after four, commit_id is 4 and A is active."""
    engine = create_engine(meh_path)
    engine.write(0, 0x01, 1, b"x")
    assert engine.headers.current.commit_id == 0
    assert engine.headers.active == 0
    expected_slots = [1, 0, 1, 0]
    for n, slot in enumerate(expected_slots, start=1):
        engine.checkpoint()
        assert engine.headers.current.commit_id == n
        assert engine.headers.active == slot
    engine.close_without_checkpoint()

    reopened = open_engine(meh_path)
    try:
        assert reopened.headers.active == 0
        assert reopened.headers.current.commit_id == 4
        assert reopened.headers.slots[1].commit_id == 3
        assert reopened.read(0, 1).payload == b"x"
    finally:
        reopened.close()


def test_checkpoint_then_reopen_restores_from_the_snapshot(meh_path: str) -> None:
    """After checkpoint and close, open reads one live record through the snapshot."""
    engine = create_engine(meh_path)
    engine.write(3, 0x04, 42, b"topic")
    engine.checkpoint()
    engine.close()

    reopened = open_engine(meh_path)
    try:
        assert reopened.headers.current.snapshot_offset != 0
        assert reopened.headers.current.snapshot_length != 0
        assert reopened.stats()[1] == 1
        frame = reopened.read(3, 42)
        assert (frame.rec_type, frame.payload) == (0x04, b"topic")
        assert reopened.ids_of_type(3, 0x04) == [42]
    finally:
        reopened.close()


def test_delete_record_makes_it_unreadable_and_keeps_the_others(meh_path: str) -> None:
    """Deleting one of three records leaves two live ones, both still readable."""
    engine = create_engine(meh_path)
    try:
        for i in (1, 2, 3):
            engine.write(0, 0x02, i, f"rec{i}".encode())
        assert engine.delete(0, 2) is True
        with pytest.raises(NotFoundError) as info:
            engine.read(0, 2)
        assert info.value.code == 3001
        assert engine.stats()[1] == 2
        assert engine.read(0, 1).payload == b"rec1"
        assert engine.read(0, 3).payload == b"rec3"
        assert engine.delete(0, 2) is False  # already gone
        assert not engine.contains(0, 2)
        assert engine.contains(0, 1)
    finally:
        engine.close()


def test_delete_batch_counts_only_live_ids_and_skips_missing_ones(meh_path: str) -> None:
    """{1, 2, 99} deletes 2; a batch of only missing ids deletes 0 and leaves the file alone."""
    engine = create_engine(meh_path)
    try:
        for i in (1, 2, 3):
            engine.write(0, 0x02, i, b"v")
        before = file_size(meh_path)
        assert engine.delete_batch(0, [1, 2, 99]) == 2
        assert file_size(meh_path) == before + 2 * RECORD_HEADER_SIZE  # two tombstones appended
        assert engine.stats()[1] == 1
        assert engine.read(0, 3).payload == b"v"

        size = file_size(meh_path)
        assert engine.delete_batch(0, [99, 100, 1]) == 0
        assert engine.delete_batch(5, [3]) == 0  # id 3 lives in domain 0, not 5
        assert engine.delete_batch(0, []) == 0
        assert file_size(meh_path) == size
        assert engine.stats() == (size, 1)
    finally:
        engine.close()


def test_a_typed_delete_batch_leaves_ids_of_other_types_alone(meh_path: str) -> None:
    """Of ids {1, 2, 3, 4} typed 0x02 deletes 1 and 3 (its type); 2 and 4 (0x03) stay."""
    engine = create_engine(meh_path)
    try:
        for i in (1, 2, 3, 4):
            engine.write(0, 0x02 if i % 2 else 0x03, i, b"v")
        assert engine.delete_batch(0, [1, 2, 3, 4, 99], 0x02) == 2
        assert not engine.contains(0, 1)
        assert not engine.contains(0, 3)
        assert engine.ids_of_type(0, 0x03) == [2, 4]
        assert engine.delete_batch(0, [2, 4], 0x02) == 0  # none of the type: nothing written
        assert engine.delete_batch(0, [2, 4], 0x03) == 2
        assert engine.stats()[1] == 0
    finally:
        engine.close()


def test_delete_batch_after_a_checkpoint_trims_the_snapshot_only_when_it_deletes(
    meh_path: str,
) -> None:
    """A no-op delete batch leaves the tail snapshot in place; a real one trims it first."""
    engine = create_engine(meh_path)
    try:
        engine.write(0, 0x02, 1, b"v")
        engine.write(0, 0x02, 2, b"w")
        end = engine.record_end
        engine.checkpoint()
        with_snapshot = file_size(meh_path)
        assert with_snapshot > end
        assert engine.delete_batch(0, [99]) == 0
        assert file_size(meh_path) == with_snapshot
        assert engine.headers.current.snapshot_offset == end
        assert engine.delete_batch(0, [1]) == 1
        assert file_size(meh_path) == end + RECORD_HEADER_SIZE
        assert engine.headers.current.snapshot_offset == 0
    finally:
        engine.close()


def test_concurrent_readers_and_writers_keep_every_record(meh_path: str) -> None:
    """Five readers and three writers running together: 100 seeds intact, 250 live at the end."""
    engine = create_engine(meh_path)
    try:
        engine.write_batch([RecordEntry(0, 0x02, i, f"seed-{i}".encode()) for i in range(100)])
        start = threading.Barrier(8, timeout=JOIN_TIMEOUT)
        writers_left = [3]
        writers_done = threading.Event()
        counter_lock = threading.Lock()
        reads = [0] * 5

        def reader(n: int) -> Callable[[], None]:
            def run() -> None:
                start.wait()
                i = 0
                while not writers_done.is_set() or i < 100:
                    seed = (i * 7 + n) % 100
                    frame = engine.read(0, seed)
                    assert (frame.rec_type, frame.payload) == (0x02, f"seed-{seed}".encode())
                    i += 1
                reads[n] = i

            return run

        def writer(n: int) -> Callable[[], None]:
            def run() -> None:
                try:
                    start.wait()
                    for k in range(50):
                        ident = 1000 + n * 50 + k
                        engine.write(0, 0x04, ident, f"w{n}-{k}".encode())
                        assert engine.read(0, ident).payload == f"w{n}-{k}".encode()
                finally:
                    with counter_lock:
                        writers_left[0] -= 1
                        if writers_left[0] == 0:
                            writers_done.set()

            return run

        errors = _run_threads([reader(n) for n in range(5)] + [writer(n) for n in range(3)])
        assert errors == []
        assert all(count >= 100 for count in reads)
        assert engine.stats()[1] == 250
        for i in range(100):
            assert engine.read(0, i).payload == f"seed-{i}".encode()
        for n in range(3):
            for k in range(50):
                assert engine.read(0, 1000 + n * 50 + k).payload == f"w{n}-{k}".encode()
        assert len(engine.ids_of_type(0, 0x04)) == 150
        assert len(engine.ids_of_type(0, 0x02)) == 100
    finally:
        engine.close()

    reopened = open_engine(meh_path)
    try:
        assert reopened.stats()[1] == 250
    finally:
        reopened.close()


def test_write_batch_returns_one_offset_per_record(meh_path: str) -> None:
    """A three-record batch returns three back-to-back offsets, all readable with their types."""
    engine = create_engine(meh_path)
    try:
        batch = [
            RecordEntry(0, 0x01, 1, b"one"),
            RecordEntry(0, 0x02, 2, b"two!"),
            RecordEntry(9, 0x0F, 3, b"three"),
        ]
        offsets = engine.write_batch(batch)
        assert offsets == [8192, 8192 + 26 + 3, 8192 + 26 + 3 + 26 + 4]
        for entry, offset in zip(batch, offsets, strict=True):
            frame = engine.read(entry.agent_id, entry.id_hash)
            assert (frame.rec_type, frame.payload, frame.offset) == (
                entry.rec_type,
                entry.payload,
                offset,
            )
        assert engine.write_batch([]) == []
        assert engine.stats()[1] == 3
    finally:
        engine.close()


def test_write_batch_later_duplicates_win(meh_path: str) -> None:
    """Two entries for one id in a batch: the later one is what reads back."""
    engine = create_engine(meh_path)
    try:
        engine.write_batch([RecordEntry(0, 0x01, 5, b"old"), RecordEntry(0, 0x02, 5, b"new")])
        frame = engine.read(0, 5)
        assert (frame.rec_type, frame.payload) == (0x02, b"new")
        assert engine.ids_of_type(0, 0x01) == []
        assert engine.ids_of_type(0, 0x02) == [5]
        assert engine.stats()[1] == 1
    finally:
        engine.close()


def test_a_fresh_engine_maps_exactly_8192_bytes(meh_path: str) -> None:
    """A new file is two header slots and nothing else: 8192 bytes, no records."""
    engine = create_engine(meh_path)
    try:
        assert engine.stats() == (8192, 0)
        assert file_size(meh_path) == 8192
        assert engine.record_end == DATA_START
        engine.write(0, 0x01, 1, b"")
        assert engine.stats() == (8192 + 26, 1)  # positive control: a write grows it
    finally:
        engine.close()


def test_contains_and_ids_of_type_answer_for_live_records(meh_path: str) -> None:
    """contains is true only for a live (agent, id); ids_of_type lists ids per type, ascending."""
    engine = create_engine(meh_path)
    try:
        engine.write(0, 0x02, 77, b"a")
        engine.write(0, 0x04, 5, b"b")
        engine.write(0, 0x04, 3, b"c")
        assert engine.contains(0, 77)
        assert not engine.contains(0, 78)
        assert not engine.contains(1, 77)
        assert engine.ids_of_type(0, 0x02) == [77]
        assert engine.ids_of_type(0, 0x04) == [3, 5]
        assert engine.ids_of_type(0, 0x05) == []
        assert engine.ids_of_type(1, 0x02) == []
        assert engine.all_ids(0) == [3, 5, 77]
    finally:
        engine.close()


def test_a_closed_engine_answers_closed_error_and_enumerates_nothing(meh_path: str) -> None:
    """After close every call is ClosedError 5002, and enumerations and stats are empty."""
    engine = create_engine(meh_path)
    engine.write(0, 0x02, 1, b"v")
    assert engine.read(0, 1).payload == b"v"
    assert engine.ids_of_type(0, 0x02) == [1]
    assert engine.agents() == [0]
    assert engine.all_ids(0) == [1]
    assert engine.contains(0, 1)
    assert engine.stats()[1] == 1
    engine.close()
    assert engine.closed

    calls: list[Callable[[], object]] = [
        lambda: engine.read(0, 1),
        lambda: engine.write(0, 0x02, 2, b"w"),
        lambda: engine.write_batch([RecordEntry(0, 0x02, 3, b"x")]),
        lambda: engine.write_batch([]),
        lambda: engine.delete(0, 1),
        lambda: engine.delete_batch(0, [1]),
        engine.checkpoint,
        engine.close,
        engine.close_without_checkpoint,
    ]
    for call in calls:
        with pytest.raises(ClosedError, match="engine is closed") as info:
            call()
        assert info.value.code == Code.CLOSED == 5002
    assert engine.ids_of_type(0, 0x02) == []
    assert engine.agents() == []
    assert engine.all_ids(0) == []
    assert not engine.contains(0, 1)
    assert engine.stats() == (0, 0)


# ---- storage_snapshot_test.go -----------------------------------------------------------


def test_open_replays_frames_written_after_the_snapshot(meh_path: str) -> None:
    """Checkpoint, new id, overwrite of id 1, crash: all visible, newest wins, writes go on."""
    engine = create_engine(meh_path)
    engine.write(0, 0x02, 1, b"one-v1")
    engine.write(0, 0x02, 2, b"two")
    engine.checkpoint()
    engine.write(0, 0x02, 3, b"three")
    engine.write(0, 0x04, 1, b"one-v2")
    engine.close_without_checkpoint()

    reopened = open_engine(meh_path)
    try:
        assert reopened.stats()[1] == 3
        first = reopened.read(0, 1)
        assert (first.rec_type, first.payload) == (0x04, b"one-v2")
        assert reopened.read(0, 2).payload == b"two"
        assert reopened.read(0, 3).payload == b"three"
        assert reopened.ids_of_type(0, 0x02) == [2, 3]
        assert reopened.ids_of_type(0, 0x04) == [1]
        end = file_size(meh_path)
        offset = reopened.write(0, 0x02, 4, b"four")
        assert offset == end  # appended at the clean end: nothing earlier is overwritten
        assert reopened.record_end == end + RECORD_HEADER_SIZE + 4
        for ident, payload in [(1, b"one-v2"), (2, b"two"), (3, b"three"), (4, b"four")]:
            assert reopened.read(0, ident).payload == payload
        assert reopened.stats()[1] == 4
    finally:
        reopened.close()

    again = open_engine(meh_path)
    try:
        assert again.stats()[1] == 4
        assert again.read(0, 4).payload == b"four"
    finally:
        again.close()


def test_close_without_checkpoint_preserves_the_header_on_disk(meh_path: str) -> None:
    """A crash after a checkpoint reopens on the same commit_id and snapshot; a close moves them."""
    engine = create_engine(meh_path)
    engine.write(0, 0x02, 1, b"v")
    engine.checkpoint()
    before = engine.headers.current
    assert before.snapshot_offset != 0
    engine.close_without_checkpoint()

    reopened = open_engine(meh_path)
    after = reopened.headers.current
    assert (after.commit_id, after.snapshot_offset, after.snapshot_length) == (
        before.commit_id,
        before.snapshot_offset,
        before.snapshot_length,
    )
    reopened.write(0, 0x02, 2, b"w")
    reopened.close()  # positive control: a close after a write checkpoints once more

    third = open_engine(meh_path)
    try:
        # One flip to cut the tail snapshot before the write, one for the new snapshot.
        assert third.headers.current.commit_id == before.commit_id + 2
        assert third.headers.current.snapshot_offset != before.snapshot_offset
        assert third.read(0, 1).payload == b"v"
    finally:
        third.close()


def test_reading_inside_an_ids_of_type_loop_does_not_deadlock_with_a_writer(
    meh_path: str,
) -> None:
    """Reads inside an ids_of_type loop succeed while a writer thread writes; breaking stops it."""
    engine = create_engine(meh_path)
    try:
        engine.write_batch([RecordEntry(0, 0x02, i, f"p{i}".encode()) for i in range(10)])
        writer_started = threading.Event()
        writer_done = threading.Event()

        def writer() -> None:
            writer_started.set()
            for i in range(100, 150):
                engine.write(0, 0x02, i, b"late")
            writer_done.set()

        thread = threading.Thread(target=writer)
        seen: list[int] = []
        try:
            for ident in engine.ids_of_type(0, 0x02):
                if not seen:
                    thread.start()
                    assert writer_started.wait(JOIN_TIMEOUT)
                assert engine.read(0, ident).payload == f"p{ident}".encode()
                seen.append(ident)
                if len(seen) == 3:
                    break
        finally:
            thread.join(JOIN_TIMEOUT)
        assert not thread.is_alive()
        assert writer_done.is_set()
        assert seen == [0, 1, 2]
        assert engine.stats()[1] == 60
        assert engine.read(0, 149).payload == b"late"
    finally:
        engine.close()


def test_overwriting_an_id_with_another_type_moves_it_between_type_sets(meh_path: str) -> None:
    """A rewrite under a new type leaves the old type set, in memory and after both reopen paths."""
    engine = create_engine(meh_path)
    engine.write(4, 0x02, 7, b"as-scene-node")
    engine.write(4, 0x02, 8, b"stays")
    assert engine.ids_of_type(4, 0x02) == [7, 8]
    engine.write(4, 0x0F, 7, b"as-plan-node")
    assert engine.ids_of_type(4, 0x02) == [8]
    assert engine.ids_of_type(4, 0x0F) == [7]
    engine.close()  # checkpoint: the next open rebuilds types from the snapshot's offsets

    reopened = open_engine(meh_path)
    assert reopened.headers.current.snapshot_offset != 0
    assert reopened.ids_of_type(4, 0x02) == [8]
    assert reopened.ids_of_type(4, 0x0F) == [7]
    reopened.write(4, 0x02, 7, b"back-again")  # trims the snapshot, so the next open scans
    reopened.close_without_checkpoint()

    scanned = open_engine(meh_path)
    try:
        assert scanned.headers.current.snapshot_offset == 0
        assert scanned.ids_of_type(4, 0x02) == [7, 8]
        assert scanned.ids_of_type(4, 0x0F) == []
        assert scanned.read(4, 7).payload == b"back-again"
    finally:
        scanned.close()


def test_agents_lists_only_domains_with_live_records(meh_path: str) -> None:
    """A domain whose last record is deleted drops out of agents(); the others stay, ascending."""
    engine = create_engine(meh_path)
    try:
        engine.write(9, 0x02, 1, b"a")
        engine.write(0, 0x01, 1, b"b")
        engine.write(5, 0x02, 1, b"c")
        engine.write(5, 0x02, 2, b"d")
        assert engine.agents() == [0, 5, 9]
        assert engine.delete(5, 1)
        assert engine.agents() == [0, 5, 9]
        assert engine.delete(5, 2)
        assert engine.agents() == [0, 9]
        assert engine.all_ids(5) == []
        assert engine.ids_of_type(5, 0x02) == []
    finally:
        engine.close()

    reopened = open_engine(meh_path)
    try:
        assert reopened.agents() == [0, 9]
    finally:
        reopened.close()


# ---- snapshot_vs_scan_test.go -----------------------------------------------------------

DIGEST_TYPES = (0x01, 0x02, 0x04, 0x0F)


def _digest(engine: Engine) -> str:
    """Hash agents × types × ids × (type, payload) in the engine's own enumeration order."""
    h = hashlib.sha256()
    for agent in engine.agents():
        h.update(b"A%d;" % agent)
        for rec_type in DIGEST_TYPES:
            for ident in engine.ids_of_type(agent, rec_type):
                frame = engine.read(agent, ident)
                h.update(
                    b"T%d;I%d;R%d;L%d;" % (rec_type, ident, frame.rec_type, len(frame.payload))
                )
                h.update(frame.payload)
    return h.hexdigest()


def test_snapshot_open_and_full_scan_open_answer_identically(meh_path: str) -> None:
    """The index restored from the snapshot and the one a full scan rebuilds are identical."""
    shared = 0x22
    engine = create_engine(meh_path)
    engine.write(0, 0x01, 1, b"profile-0")
    engine.write(0, 0x02, 2, b"scene-v1")
    engine.write(0, 0x04, 3, b"topic-DELETED-PAYLOAD")
    engine.write(shared, 0x01, 1, b"profile-22")
    engine.write(shared, 0x0F, 9, b"plan")
    engine.write(0, 0x02, 2, b"scene-v2")  # overwrite
    engine.write(shared, 0x04, 4, b"topic-22")
    assert engine.delete(0, 3)
    engine.checkpoint()
    snapshot_offset = engine.headers.current.snapshot_offset
    engine.close_without_checkpoint()  # crash

    via_snapshot = open_engine(meh_path)
    assert via_snapshot.headers.current.snapshot_offset == snapshot_offset != 0
    digest_snapshot = _digest(via_snapshot)
    assert via_snapshot.stats()[1] == 5
    assert via_snapshot.agents() == [0, shared]
    assert via_snapshot.read(0, 2).payload == b"scene-v2"
    with pytest.raises(NotFoundError):
        via_snapshot.read(0, 3)
    via_snapshot.close_without_checkpoint()

    flip_byte(meh_path, snapshot_offset + 20)  # inside the first agent section: CRC fails
    via_scan = open_engine(meh_path)
    try:
        assert via_scan.headers.current.snapshot_offset == 0
        assert via_scan.stats()[1] == 5
        assert via_scan.agents() == [0, shared]
        assert via_scan.read(0, 2).payload == b"scene-v2"
        with pytest.raises(NotFoundError):
            via_scan.read(0, 3)
        assert _digest(via_scan) == digest_snapshot
        assert via_scan.ids_of_type(0, 0x04) == []
        assert via_scan.ids_of_type(shared, 0x04) == [4]
    finally:
        via_scan.close()


def test_type_index_built_after_reopen_sees_writes_made_before_it(meh_path: str) -> None:
    """Writes, retypes and deletes between an open and the first typed read all count."""
    eng = create_engine(meh_path)
    eng.write_batch([RecordEntry(0, 1, i, b"v") for i in range(1, 5)])
    eng.close()
    eng = open_engine(meh_path)
    try:
        eng.write(0, 2, 1, b"retyped")  # id 1 moves from type 1 to type 2
        eng.delete(0, 2)
        eng.write(0, 1, 9, b"new")
        eng.write(7, 1, 1, b"other domain")
        assert eng.ids_of_type(0, 1) == [3, 4, 9]
        assert eng.ids_of_type(0, 2) == [1]
        assert eng.ids_of_type(7, 1) == [1]
    finally:
        eng.close()
