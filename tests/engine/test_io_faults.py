"""OS failures (ENOSPC, EIO) injected into writes, truncates and fsyncs.

Seams: the StoreFile's file handle is swapped for a proxy that fails chosen
writes or truncates (``StoreFile.write_at`` and ``truncate`` then convert the
OSError themselves), and ``memhop.engine.storefile.fsync_file`` (or ``os.fsync``)
is patched to fail chosen calls. The contract (storage.md §7.2, §8, and the
engine docstring): the failing call raises StorageIOError (5001) caused by the
OSError, nothing acknowledged is lost, the failed operation is invisible, and
the engine refuses writes but still serves reads until the file is reopened.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest.mock import patch

import pytest

from memhop import code_of
from memhop.engine import (
    DATA_START,
    RECORD_HEADER_SIZE,
    Engine,
    RecordEntry,
    build_snapshot,
    create_engine,
    open_engine,
    storefile,
)
from memhop.engine.header import HEADER_SIZE, parse_header
from memhop.errors import NotFoundError, StorageIOError
from tests.faults import file_size

ERRNOS = pytest.mark.parametrize("err", [errno.ENOSPC, errno.EIO], ids=lambda e: errno.errorcode[e])
_real_fsync_file = storefile.fsync_file
_real_write_some = storefile._write_some


# ---- fault helpers --------------------------------------------------------------------------


class FaultyHandle:
    """Fails the writes of one engine's file that ``when(position, size)`` selects, at the
    store file's write seam (``storefile._write_some``), and its truncates.

    With ``torn`` the first selected write stores half its bytes and reports a
    short write; the next selected one fails, as a disk filling up mid-write would.
    A nonzero ``truncate_err`` makes every truncate fail with that errno.
    """

    def __init__(
        self,
        inner: Any,
        err: int,
        when: Callable[[int, int], bool] | None = None,
        *,
        torn: bool = False,
        truncate_err: int = 0,
    ) -> None:
        self._inner = inner
        self._err = err
        self._when = when
        self._torn = torn
        self._truncate_err = truncate_err
        self.failures = 0

    def _error(self, err: int) -> OSError:
        self.failures += 1
        return OSError(err, os.strerror(err))

    def write_some(self, handle: Any, data: Any, offset: int) -> int:
        if handle is self and self._when is not None and self._when(offset, len(data)):
            if self._torn:
                self._torn = False
                return int(_real_write_some(self._inner, data[: max(1, len(data) // 2)], offset))
            raise self._error(self._err)
        return int(_real_write_some(handle, data, offset))

    def truncate(self, size: int) -> int:
        if self._truncate_err:
            raise self._error(self._truncate_err)
        return int(self._inner.truncate(size))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def records_area(position: int, size: int) -> bool:
    return position >= DATA_START


def header_slots(position: int, size: int) -> bool:
    return position < DATA_START


@contextmanager
def faulty_handle(eng: Engine, err: int, when: Any = None, **kw: Any) -> Iterator[FaultyHandle]:
    # An append lands in the room mapped past the last frame, with no write call to fail;
    # without one, the next append makes room, by a write call first (the fence).
    eng._file._drop_room()
    proxy = FaultyHandle(eng._file._handle, err, when, **kw)
    with (
        patch.object(eng._file, "_handle", proxy),
        patch.object(storefile, "_write_some", proxy.write_some),
    ):
        yield proxy


@contextmanager
def failing_fsync(err: int, calls: set[int] | None = None) -> Iterator[list[int]]:
    """Fail the fsync calls numbered in ``calls`` (1-based; None = every call)."""
    count: list[int] = []

    def fake(fd: int) -> None:
        count.append(fd)
        if calls is None or len(count) in calls:
            raise OSError(err, os.strerror(err))
        _real_fsync_file(fd)

    with patch("memhop.engine.storefile.fsync_file", side_effect=fake):
        yield count


def _cause_chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__
    return chain


def _all_linked(exc: BaseException) -> list[BaseException]:
    """Every exception reachable through causes, contexts and exception groups."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.append(current)
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
    return seen


def assert_io_error(exc: BaseException, err: int, fragment: str = "") -> None:
    """StorageIOError, code 5001, with the injected OSError in its __cause__ chain."""
    assert isinstance(exc, StorageIOError)
    assert code_of(exc) == 5001
    assert fragment in str(exc)
    causes = _cause_chain(exc)
    assert any(isinstance(e, OSError) and e.errno == err for e in causes), causes


def assert_refuses_writes(eng: Engine, err: int) -> None:
    """Every mutating call now fails with 5001 pointing back at the first failure; no bytes move."""
    size = file_size(eng.path)
    calls: list[Callable[[], object]] = [
        lambda: eng.write(0, 0x01, 500, b"refused"),
        lambda: eng.write_batch([RecordEntry(0, 0x01, 501, b"refused")]),
        lambda: eng.delete(0, 1),
        lambda: eng.delete_batch(0, [1, 2]),
        eng.checkpoint,
    ]
    for call in calls:
        with pytest.raises(StorageIOError) as info:
            call()
        assert_io_error(info.value, err, "refuses writes")
    assert file_size(eng.path) == size
    assert not eng.contains(0, 500)
    assert not eng.contains(0, 501)


def _live(eng: Engine) -> dict[int, dict[int, bytes]]:
    return {
        agent: {i: eng.read(agent, i).payload for i in eng.all_ids(agent)} for agent in eng.agents()
    }


def _reopen_and_check(path: str, expected: dict[int, dict[int, bytes]]) -> None:
    """Reopen: exactly ``expected`` is served and a new write is accepted and lasts."""
    eng = open_engine(path)
    try:
        assert _live(eng) == expected
        eng.write(3, 0x01, 1, b"after reopen")
    finally:
        eng.close()
    eng = open_engine(path)
    try:
        assert _live(eng) == {**expected, 3: {1: b"after reopen"}}
    finally:
        eng.close()


def _seeded(path: str, *, checkpoint: bool = False) -> Engine:
    eng = create_engine(path)
    eng.write(0, 0x01, 1, b"one")
    eng.write(0, 0x02, 2, b"two")
    if checkpoint:
        eng.checkpoint()
    return eng


SEEDED = {0: {1: b"one", 2: b"two"}}


# ---- single writes --------------------------------------------------------------------------


@ERRNOS
@pytest.mark.parametrize("torn", [False, True], ids=["nothing-written", "short-write"])
@pytest.mark.parametrize("closing", ["crash", "close"])
def test_a_failed_frame_write_is_undone_and_later_writes_are_refused(
    meh_path: str, err: int, torn: bool, closing: str
) -> None:
    """A write that fails leaves the file at its old size, the record unreadable, reads served."""
    eng = _seeded(meh_path)
    size = file_size(meh_path)
    with (
        faulty_handle(eng, err, records_area, torn=torn) as proxy,
        pytest.raises(StorageIOError) as info,
    ):
        eng.write(0, 0x01, 3, b"three")
    assert proxy.failures == 1
    assert_io_error(info.value, err, "write")
    assert file_size(meh_path) == size  # undone, even after a short write
    assert eng.stats() == (size, 2)
    assert not eng.contains(0, 3)
    with pytest.raises(NotFoundError):
        eng.read(0, 3)
    assert _live(eng) == SEEDED
    assert_refuses_writes(eng, err)
    assert _live(eng) == SEEDED  # reads still served after the refusals

    if closing == "crash":
        eng.close_without_checkpoint()
    else:
        eng.close()  # no checkpoint after a failure: nothing is appended
    assert file_size(meh_path) == size
    _reopen_and_check(meh_path, SEEDED)


@ERRNOS
@pytest.mark.parametrize("seam", ["fsync_file", "os.fsync"])
def test_a_failed_fsync_after_a_write_refuses_further_writes(
    meh_path: str, err: int, seam: str
) -> None:
    """An fsync failure is fatal: the record is not served now, but its frame stays in the file."""
    # storage.md §7.2 step 4: on a sync failure the index is not updated and the
    # frames remain, so the next open finds them (the caller never learned either way).
    eng = _seeded(meh_path)
    size = file_size(meh_path)
    target = "memhop.engine.storefile.fsync_file" if seam == "fsync_file" else "os.fsync"
    fake = patch(target, side_effect=OSError(err, os.strerror(err)))
    with fake as mocked, pytest.raises(StorageIOError) as info:
        eng.write(0, 0x01, 3, b"three")
    assert mocked.call_count == 1
    assert_io_error(info.value, err, "sync")
    assert not eng.contains(0, 3)
    with pytest.raises(NotFoundError):
        eng.read(0, 3)
    assert eng.stats() == (size + RECORD_HEADER_SIZE + 5, 2)
    assert _live(eng) == SEEDED
    assert_refuses_writes(eng, err)
    eng.close()
    assert file_size(meh_path) == size + RECORD_HEADER_SIZE + 5  # close did not checkpoint
    _reopen_and_check(meh_path, {0: {**SEEDED[0], 3: b"three"}})


@ERRNOS
def test_a_failed_fsync_inside_an_exclusive_hold_is_fatal_like_any_other(
    meh_path: str, err: int
) -> None:
    """A write in ``exclusive()`` syncs without letting go of the lock; its failure is the
    same: the record is not served, the block raises, later writes are refused."""
    eng = _seeded(meh_path)
    with eng.exclusive():
        eng.write(0, 0x01, 4, b"four")  # the control: a held write that syncs is served
        assert eng.read(0, 4).payload == b"four"
        with failing_fsync(err) as calls, pytest.raises(StorageIOError) as info:
            eng.write(0, 0x01, 3, b"three")
    assert len(calls) == 1
    assert_io_error(info.value, err, "sync")
    assert not eng.contains(0, 3)
    assert eng.read(0, 4).payload == b"four"
    assert_refuses_writes(eng, err)
    eng.close_without_checkpoint()
    _reopen_and_check(meh_path, {0: {**SEEDED[0], 3: b"three", 4: b"four"}})


# ---- batches --------------------------------------------------------------------------------

BATCH = [
    RecordEntry(0, 0x01, 1, b"one, overwritten"),
    RecordEntry(0, 0x04, 10, b"ten"),
    RecordEntry(5, 0x02, 11, b"eleven"),
]


@ERRNOS
@pytest.mark.parametrize("torn", [False, True], ids=["nothing-written", "short-write"])
def test_a_failed_batch_write_cuts_the_file_back_to_its_size_before_the_batch(
    meh_path: str, err: int, torn: bool
) -> None:
    """No frame of a failed batch survives: the file returns to its pre-batch size (undo)."""
    eng = _seeded(meh_path, checkpoint=True)
    with faulty_handle(eng, err, records_area, torn=torn), pytest.raises(StorageIOError) as info:
        eng.write_batch(BATCH)
    assert_io_error(info.value, err, "write")
    # The trim before the append already cut the tail snapshot; the batch itself left nothing.
    record_end = DATA_START + 2 * RECORD_HEADER_SIZE + 6
    assert file_size(meh_path) == record_end
    assert eng.record_end == record_end
    assert not eng.contains(0, 10)
    assert not eng.contains(5, 11)
    assert eng.read(0, 1).payload == b"one"  # the overwrite did not happen
    assert _live(eng) == SEEDED
    assert_refuses_writes(eng, err)
    eng.close_without_checkpoint()
    assert file_size(meh_path) == record_end
    _reopen_and_check(meh_path, SEEDED)


@ERRNOS
def test_a_failed_batch_write_without_a_tail_snapshot_restores_the_exact_size(
    meh_path: str, err: int
) -> None:
    """With no snapshot to trim, a short then failing batch write leaves exactly the old size."""
    eng = _seeded(meh_path)
    before = file_size(meh_path)
    with faulty_handle(eng, err, records_area, torn=True), pytest.raises(StorageIOError):
        eng.write_batch(BATCH)
    assert file_size(meh_path) == before
    assert eng.stats() == (before, 2)
    assert _live(eng) == SEEDED
    eng.close_without_checkpoint()
    _reopen_and_check(meh_path, SEEDED)


@ERRNOS
def test_a_failed_fsync_after_a_batch_leaves_the_index_untouched(meh_path: str, err: int) -> None:
    """After a batch's fsync fails none of it is served; the old version of id 1 still is."""
    eng = _seeded(meh_path)
    with failing_fsync(err), pytest.raises(StorageIOError) as info:
        eng.write_batch(BATCH)
    assert_io_error(info.value, err, "sync")
    assert eng.read(0, 1).payload == b"one"
    assert not eng.contains(0, 10)
    assert not eng.contains(5, 11)
    assert eng.agents() == [0]
    assert_refuses_writes(eng, err)
    eng.close_without_checkpoint()
    # §7.2 step 4: the frames remain in the file, so a reopen replays the whole batch.
    _reopen_and_check(
        meh_path, {0: {1: b"one, overwritten", 2: b"two", 10: b"ten"}, 5: {11: b"eleven"}}
    )


# ---- deletes --------------------------------------------------------------------------------


@ERRNOS
@pytest.mark.parametrize("torn", [False, True], ids=["nothing-written", "short-write"])
def test_a_failed_tombstone_write_is_undone_and_the_records_stay_live(
    meh_path: str, err: int, torn: bool
) -> None:
    """A delete batch whose write fails deletes nothing, in memory or after reopen."""
    eng = _seeded(meh_path)
    eng.write(0, 0x01, 3, b"three")
    size = file_size(meh_path)
    with faulty_handle(eng, err, records_area, torn=torn), pytest.raises(StorageIOError) as info:
        eng.delete_batch(0, [1, 3, 99])
    assert_io_error(info.value, err, "write")
    assert file_size(meh_path) == size
    expected = {0: {1: b"one", 2: b"two", 3: b"three"}}
    assert _live(eng) == expected
    assert_refuses_writes(eng, err)
    eng.close_without_checkpoint()
    _reopen_and_check(meh_path, expected)


@ERRNOS
def test_a_failed_fsync_after_tombstones_keeps_the_records_served_until_reopen(
    meh_path: str, err: int
) -> None:
    """Ids 1 and 3 stay served after "sync tombstones" fails; the tombstones stay in the file."""
    eng = _seeded(meh_path)
    eng.write(0, 0x01, 3, b"three")
    size = file_size(meh_path)
    with failing_fsync(err), pytest.raises(StorageIOError) as info:
        eng.delete_batch(0, [1, 3])
    assert_io_error(info.value, err, "sync tombstones")
    assert file_size(meh_path) == size + 2 * RECORD_HEADER_SIZE
    assert _live(eng) == {0: {1: b"one", 2: b"two", 3: b"three"}}
    assert_refuses_writes(eng, err)
    eng.close_without_checkpoint()
    _reopen_and_check(meh_path, {0: {2: b"two"}})


# ---- checkpoint -----------------------------------------------------------------------------

CHECKPOINT_FAULTS = {
    # name: (write predicate, torn, failing fsync calls, message fragment, header commits)
    "blob write": (records_area, False, None, "write", False),
    "blob write torn": (records_area, True, None, "write", False),
    "blob fsync": (None, False, {1}, "sync snapshot", False),
    "header write": (header_slots, False, None, "write", False),
    "header write torn": (header_slots, True, None, "write", False),
    "header fsync": (None, False, {2}, "sync header", True),
}


@ERRNOS
@pytest.mark.parametrize("step", list(CHECKPOINT_FAULTS))
def test_a_failed_checkpoint_loses_no_record_and_refuses_further_writes(
    meh_path: str, err: int, step: str
) -> None:
    """A checkpoint failing at any step keeps every record; reopen uses the old or new header."""
    # Only when the header itself reached the disk (its fsync failed afterwards)
    # does the next open take the new snapshot; otherwise the older header stays
    # active, the stray blob is cut, and the log is scanned.
    when, torn, fsyncs, fragment, committed = CHECKPOINT_FAULTS[step]
    eng = _seeded(meh_path)
    record_end = file_size(meh_path)
    blob_len = len(build_snapshot({0: {1: DATA_START, 2: DATA_START + 29}}))
    before = eng.headers
    with (
        faulty_handle(eng, err, when, torn=torn),
        failing_fsync(err, fsyncs or set()),
        pytest.raises(StorageIOError) as info,
    ):
        eng.checkpoint()
    assert_io_error(info.value, err, fragment)
    assert eng.headers == before  # the in-memory flip never happened
    assert _live(eng) == SEEDED
    assert_refuses_writes(eng, err)
    eng.close_without_checkpoint()

    eng = open_engine(meh_path)
    try:
        assert _live(eng) == SEEDED
        if committed:
            assert eng.headers.current.commit_id == 1
            assert eng.headers.current.snapshot_offset == record_end
            assert eng.stats()[0] == record_end + blob_len
        else:
            assert eng.headers.current.commit_id == 0
            assert eng.headers.current.snapshot_offset == 0
            assert eng.stats()[0] == record_end  # any stray blob bytes were cut
    finally:
        eng.close_without_checkpoint()
    _reopen_and_check(meh_path, SEEDED)
    with open(meh_path, "rb") as f:
        raw = f.read(2 * HEADER_SIZE)
    parse_header(raw[:HEADER_SIZE])  # a torn slot was rewritten by the later checkpoints
    parse_header(raw[HEADER_SIZE:])


# ---- the tail-snapshot trim before an append ------------------------------------------------

TRIM_FAULTS = {
    # name: (write predicate, truncate fails, failing fsync calls, message fragment, file cut)
    "truncate": (None, True, None, "truncate", False),
    "fsync after truncate": (None, False, {1}, "sync after truncate", True),
    "null header write": (header_slots, False, None, "write", True),
    "null header fsync": (None, False, {2}, "sync header", True),
}


@ERRNOS
@pytest.mark.parametrize("step", list(TRIM_FAULTS))
@pytest.mark.parametrize("op", ["write_batch", "delete_batch"])
def test_a_failed_tail_snapshot_trim_appends_nothing_and_loses_no_record(
    meh_path: str, err: int, step: str, op: str
) -> None:
    """A trim failing at any step raises before the append; every record survives a reopen."""
    when, truncate_fails, fsyncs, fragment, cut = TRIM_FAULTS[step]
    eng = _seeded(meh_path, checkpoint=True)
    record_end = eng.record_end
    snapshot = eng.headers.current
    assert snapshot.snapshot_offset == record_end
    full = file_size(meh_path)
    assert full == record_end + snapshot.snapshot_length

    def action() -> object:
        if op == "write_batch":
            return eng.write_batch(BATCH)
        return eng.delete_batch(0, [1, 2])

    with (
        faulty_handle(eng, err, when, truncate_err=err if truncate_fails else 0),
        failing_fsync(err, fsyncs or set()),
        pytest.raises(StorageIOError) as info,
    ):
        action()
    assert_io_error(info.value, err, fragment)
    assert file_size(meh_path) == (record_end if cut else full)
    assert _live(eng) == SEEDED  # no frame appended, no index change
    assert not eng.contains(0, 10)
    assert_refuses_writes(eng, err)
    eng.close()

    eng = open_engine(meh_path)
    try:
        assert _live(eng) == SEEDED
        # Uncut: the snapshot is still good. Cut: the header names a blob past the end
        # (or the null header landed), so the log was scanned and no snapshot is named.
        expected_snapshot = 0 if cut else snapshot.snapshot_offset
        assert eng.headers.current.snapshot_offset == expected_snapshot
        assert eng.stats()[0] == (record_end if cut else full)
    finally:
        eng.close_without_checkpoint()
    _reopen_and_check(meh_path, SEEDED)


# ---- a failed undo --------------------------------------------------------------------------


def test_a_write_failure_whose_undo_also_fails_reports_both_causes_and_reopens_clean(
    meh_path: str,
) -> None:
    """ENOSPC mid-frame then EIO on the cut-back: both causes stay reachable; open cuts the tail."""
    # storage.md §7.2 step 2: undoAppend returns "the original error joined with
    # any truncate error", so neither cause may be dropped.
    eng = _seeded(meh_path)
    size = file_size(meh_path)
    with (
        faulty_handle(eng, errno.ENOSPC, records_area, torn=True, truncate_err=errno.EIO),
        pytest.raises(StorageIOError) as info,
    ):
        eng.write(0, 0x01, 3, b"a payload long enough to tear")
    assert code_of(info.value) == 5001
    # The cut-back failed: bytes past the log stay on disk (half a fence over the reserve).
    assert os.path.getsize(meh_path) > size
    assert _live(eng) == SEEDED
    assert not eng.contains(0, 3)
    with pytest.raises(StorageIOError, match="refuses writes"):
        eng.write(0, 0x01, 4, b"refused")
    eng.close_without_checkpoint()
    _reopen_and_check(meh_path, SEEDED)  # open cut them

    errnos = {e.errno for e in _all_linked(info.value) if isinstance(e, OSError)}
    assert errno.EIO in errnos  # the truncate's cause
    assert errno.ENOSPC in errnos, "the original write error was dropped from the chain"
