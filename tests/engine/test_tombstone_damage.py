"""What damage can undo a delete, and that the open then says so through its damage count.

A delete is a tombstone frame. When the open replays the log (a crash left no
snapshot, or the snapshot is damaged) and the tombstone fails its checks, the
record it deleted is live again. That is the documented limit
(docs/internals/engine.md): the open counts the damaged frame, so
``Engine.damage()`` (``DB.stats().damaged_frames``) reports it.
"""

from __future__ import annotations

import pytest

from memhop.engine import RECORD_HEADER_SIZE, create_engine, open_engine
from tests.faults import file_size, flip_byte


def _deleted_then_more(path: str, *, checkpoint: bool) -> int:
    """Write 1 and 2, delete 1, write 3; return the tombstone's offset."""
    engine = create_engine(path)
    engine.write(0, 0x04, 1, b"deleted")
    engine.write(0, 0x04, 2, b"kept")
    stone = engine.record_end
    assert engine.delete(0, 1)
    engine.write(0, 0x04, 3, b"after")
    if checkpoint:
        engine.close()
    else:
        engine.close_without_checkpoint()
    return stone


@pytest.mark.parametrize("at", range(RECORD_HEADER_SIZE), ids=lambda i: f"byte{i}")
def test_a_damaged_tombstone_in_a_replayed_log_undoes_the_delete_and_is_counted(
    meh_path: str, at: int
) -> None:
    """After a crash, any flipped byte of the tombstone brings record 1 back, counted once."""
    stone = _deleted_then_more(meh_path, checkpoint=False)
    flip_byte(meh_path, stone + at, 0x01)
    engine = open_engine(meh_path)
    try:
        assert engine.read(0, 3).payload == b"after"  # the frames after it are intact
        assert engine.damage() == (0, 1)
        assert engine.read(0, 1).payload == b"deleted"  # the documented limit
    finally:
        engine.close()


def test_without_damage_the_delete_holds(meh_path: str) -> None:
    """The control: the same crashed file, undamaged, keeps record 1 deleted and counts nothing."""
    _deleted_then_more(meh_path, checkpoint=False)
    engine = open_engine(meh_path)
    try:
        assert not engine.contains(0, 1)
        assert engine.damage() == (0, 0)
    finally:
        engine.close()


def test_a_snapshot_protects_the_delete_until_it_is_damaged_too(meh_path: str) -> None:
    """Closed cleanly, the snapshot keeps the delete; a damaged snapshot as well undoes it."""
    stone = _deleted_then_more(meh_path, checkpoint=True)
    flip_byte(meh_path, stone + 10, 0x01)
    engine = open_engine(meh_path)
    try:
        assert not engine.contains(0, 1)  # the index came from the snapshot
        assert engine.damage() == (0, 0)  # no frame was replayed, so none was seen damaged
        snapshot = engine.headers.current.snapshot_offset
    finally:
        engine.close_without_checkpoint()
    flip_byte(meh_path, snapshot + 6, 0x01)
    engine = open_engine(meh_path)
    try:
        assert engine.read(0, 1).payload == b"deleted"
        assert engine.damage() == (0, 1)
    finally:
        engine.close()


@pytest.mark.parametrize("damaged", [False, True], ids=["control", "damaged"])
def test_a_damaged_last_tombstone_is_cut_as_a_torn_tail_and_the_cut_is_reported(
    meh_path: str, damaged: bool
) -> None:
    """The tombstone is the crashed log's last frame: damaged, it cannot be told from a torn
    write, so it is cut (not counted as damage), the delete is undone, and the open says
    how many bytes it cut."""
    engine = create_engine(meh_path)
    engine.write(0, 0x04, 1, b"deleted")
    stone = engine.record_end
    assert engine.delete(0, 1)
    end = engine.record_end
    engine.close_without_checkpoint()
    if damaged:
        flip_byte(meh_path, stone + 10, 0x01)
    engine = open_engine(meh_path)
    try:
        assert engine.damage() == (0, 0)
        assert engine.tail_bytes_cut == (end - stone if damaged else 0)
        assert engine.contains(0, 1) == damaged
        assert file_size(meh_path) == (stone if damaged else end)
    finally:
        engine.close()
