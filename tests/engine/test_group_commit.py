"""group_commit: one fsync for a thread's writes in a block, made even when the block raises."""

from __future__ import annotations

import errno
import threading
from unittest import mock

import pytest

from memhop.engine import create_engine, open_engine
from memhop.engine import storefile as storefile_module
from memhop.errors import StorageIOError


def _counting() -> tuple[mock.MagicMock, object]:
    real = storefile_module.fsync_file
    counter = mock.MagicMock(side_effect=real)
    return counter, mock.patch.object(storefile_module, "fsync_file", counter)


def test_writes_in_a_block_share_one_fsync(meh_path: str) -> None:
    """Three writes and a delete inside the block sync once; outside, each syncs."""
    eng = create_engine(meh_path)
    counter, patch = _counting()
    with patch:
        with eng.group_commit():
            eng.write(0, 1, 1, b"a")
            eng.write(0, 1, 2, b"b")
            eng.delete(0, 1)
            assert counter.call_count == 0
        assert counter.call_count == 1
        eng.write(0, 1, 3, b"c")  # the control: a lone write syncs itself
        assert counter.call_count == 2
    eng.close_without_checkpoint()
    reopened = open_engine(meh_path)
    assert reopened.all_ids(0) == [2, 3]
    reopened.close()


def test_a_block_that_raises_still_syncs_what_it_wrote(meh_path: str) -> None:
    """The exception propagates, and the write before it is durable and readable."""
    eng = create_engine(meh_path)
    counter, patch = _counting()

    def close_a_turn() -> None:
        with eng.group_commit():
            eng.write(0, 1, 1, b"kept")
            raise RuntimeError("model failed")

    with patch, pytest.raises(RuntimeError, match="model failed"):
        close_a_turn()
    assert counter.call_count == 1
    assert eng.read(0, 1).payload == b"kept"
    eng.close_without_checkpoint()
    reopened = open_engine(meh_path)
    assert reopened.read(0, 1).payload == b"kept"
    reopened.close()


def test_another_threads_write_is_not_deferred(meh_path: str) -> None:
    """A write from another thread during the block syncs before it returns.

    That fsync flushes the whole file, the block's earlier frame with it, so
    the block's exit owes nothing more; a write after the other thread's is
    the control that the exit does sync what is still owed.
    """
    eng = create_engine(meh_path)
    counter, patch = _counting()
    with patch:
        with eng.group_commit():
            eng.write(0, 1, 1, b"deferred")
            worker = threading.Thread(target=eng.write, args=(0, 1, 2, b"own"), name="other")
            worker.start()
            worker.join()
            assert counter.call_count == 1  # the other thread's fsync
        assert counter.call_count == 1  # it covered the block's frame too
        with eng.group_commit():
            worker = threading.Thread(target=eng.write, args=(0, 1, 3, b"own"), name="other")
            worker.start()
            worker.join()
            eng.write(0, 1, 4, b"after it")
            assert counter.call_count == 2
        assert counter.call_count == 3  # the block's own at exit
    eng.close_without_checkpoint()
    reopened = open_engine(meh_path)
    assert reopened.all_ids(0) == [1, 2, 3, 4]
    reopened.close()


def test_a_failed_fsync_at_exit_refuses_later_writes(meh_path: str) -> None:
    """An fsync error at the block's exit is raised and poisons writes, not reads."""
    eng = create_engine(meh_path)
    failing = mock.patch.object(
        storefile_module, "fsync_file", side_effect=OSError(errno.EIO, "EIO")
    )

    def write_in_a_block() -> None:
        with eng.group_commit():
            eng.write(0, 1, 1, b"unsynced")

    with failing, pytest.raises(StorageIOError):
        write_in_a_block()
    with pytest.raises(StorageIOError, match="refuses writes"):
        eng.write(0, 1, 2, b"later")
    assert eng.read(0, 1).payload == b"unsynced"  # reads still work
    eng.close_without_checkpoint()
