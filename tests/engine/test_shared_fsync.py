"""Writers on several threads share fsyncs, made without the engine lock.

``fsync_file`` is replaced by a stand-in that can hold an fsync open (an
``Event``) or fail it, so each test can look at the engine while a flush is
in flight: the write is not visible yet, other threads still read, a close
waits for it, and a failure reaches every writer the fsync covered.
"""

from __future__ import annotations

import errno
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from unittest import mock

import pytest

from memhop.engine import create_engine, open_engine
from memhop.engine import storefile as storefile_module
from memhop.engine.engine import Engine
from memhop.errors import NotFoundError, StorageIOError

_real_fsync = storefile_module.fsync_file


@contextmanager
def fsyncs(hook: Callable[[], None] = lambda: None) -> Iterator[list[str]]:
    """Run ``hook`` before each real fsync; yield the names of the threads that fsynced."""
    calls: list[str] = []

    def fake(fd: int) -> None:
        calls.append(threading.current_thread().name)
        hook()
        _real_fsync(fd)

    with mock.patch.object(storefile_module, "fsync_file", side_effect=fake):
        yield calls


@contextmanager
def writer_fsync_held() -> Iterator[tuple[threading.Event, threading.Event]]:
    """Hold the fsync of the thread named "writer" open until ``gate`` is set; yield
    (gate, inside), ``inside`` set once that fsync has begun."""
    gate, inside = threading.Event(), threading.Event()

    def hold() -> None:
        if threading.current_thread().name == "writer":
            inside.set()
            assert gate.wait(10)

    with fsyncs(hold):
        yield gate, inside


def _start(target: Callable[[], object], name: str) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            target()
        except BaseException as exc:  # handed to the test, which asserts on it
            errors.append(exc)

    thread = threading.Thread(target=run, name=name)
    thread.start()
    return thread, errors


def _wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "condition never held"
        time.sleep(0.001)


def test_threads_writing_at_once_share_fsyncs_and_every_write_survives(meh_path: str) -> None:
    """Eight threads x 10 writes on their own domains: fewer fsyncs than writes, none lost.

    The control: one thread's 10 writes make 10 fsyncs, so sharing is what cuts the count.
    """
    eng = create_engine(meh_path)
    with fsyncs() as alone:
        for i in range(10):
            eng.write(99, 1, i + 1, b"alone")
    assert len(alone) == 10

    def slow() -> None:
        time.sleep(0.005)  # long enough for the other threads to queue behind it

    def writer(agent: int) -> Callable[[], None]:
        def ten_writes() -> None:
            for i in range(10):
                eng.write(agent, 1, i + 1, b"x" * agent)

        return ten_writes

    with fsyncs(slow) as shared:
        started = [_start(writer(agent), f"w{agent}") for agent in range(1, 9)]
        for thread, _ in started:
            thread.join()
    assert all(not errors for _, errors in started)
    assert len(shared) < 80
    eng.close_without_checkpoint()
    reopened = open_engine(meh_path)
    assert all(reopened.all_ids(agent) == list(range(1, 11)) for agent in range(1, 9))
    assert reopened.all_ids(99) == list(range(1, 11))
    reopened.close()


def test_a_write_is_hidden_until_its_fsync_returns_and_the_lock_is_free_meanwhile(
    meh_path: str,
) -> None:
    eng = create_engine(meh_path)
    eng.write(0, 1, 1, b"before")
    gate, inside = threading.Event(), threading.Event()

    def hold() -> None:
        inside.set()
        assert gate.wait(10)

    with fsyncs(hold):
        thread, errors = _start(lambda: eng.write(0, 1, 2, b"pending"), "writer")
        assert inside.wait(10)
        # The fsync is in flight: another thread reads and enumerates freely ...
        assert eng.read(0, 1).payload == b"before"
        # ... but not the record whose bytes are not durable yet.
        assert not eng.contains(0, 2)
        assert eng.all_ids(0) == [1]
        gate.set()
        thread.join()
    assert not errors
    assert eng.read(0, 2).payload == b"pending"
    eng.close()


def test_a_close_waits_for_the_fsync_in_flight_and_the_write_is_kept(meh_path: str) -> None:
    eng = create_engine(meh_path)
    with writer_fsync_held() as (gate, inside):
        writer, write_errors = _start(lambda: eng.write(0, 1, 7, b"kept"), "writer")
        assert inside.wait(10)
        closer, close_errors = _start(eng.close, "closer")
        time.sleep(0.05)
        assert closer.is_alive()  # held by the fsync in flight, not closing under it
        gate.set()
        writer.join()
        closer.join()
    assert not write_errors
    assert not close_errors
    reopened = open_engine(meh_path)
    assert reopened.read(0, 7).payload == b"kept"
    reopened.close()


def test_a_failed_shared_fsync_fails_every_writer_it_covered(meh_path: str) -> None:
    """Both writers queued on one failing fsync get StorageIOError; neither record is served."""
    eng = create_engine(meh_path)
    eng.write(0, 1, 1, b"acknowledged")
    gate, inside = threading.Event(), threading.Event()

    def fail() -> None:
        inside.set()
        assert gate.wait(10)
        raise OSError(errno.EIO, "EIO")

    with fsyncs(fail):
        first, first_errors = _start(lambda: eng.write(1, 1, 2, b"a"), "first")
        assert inside.wait(10)
        second, second_errors = _start(lambda: eng.write(2, 1, 3, b"b"), "second")
        _wait_for(lambda: eng.record_end > 0 and _queued(eng) == 2)
        gate.set()
        first.join()
        second.join()
    assert [type(e) for e in first_errors + second_errors] == [StorageIOError, StorageIOError]
    assert not eng.contains(1, 2)
    assert not eng.contains(2, 3)
    assert eng.read(0, 1).payload == b"acknowledged"  # the control: reads still serve
    with pytest.raises(StorageIOError, match="refuses writes"):
        eng.write(0, 1, 4, b"later")
    eng.close_without_checkpoint()


def _queued(eng: Engine) -> int:
    """How many writes wait for an fsync (white-box: the engine's commit queue)."""
    return len(eng._commits._waiting)


def test_deferred_writes_are_made_durable_by_the_next_fsync(meh_path: str) -> None:
    """Deferred writes make no fsync; a later write's fsync covers them, and both reopen."""
    eng = create_engine(meh_path)
    with fsyncs() as calls:
        with eng.deferred():
            eng.write(0, 1, 1, b"deferred")
            assert eng.read(0, 1).payload == b"deferred"  # readable at once
        assert calls == []
        eng.write(0, 1, 2, b"synced")
        assert len(calls) == 1
        eng.sync()  # nothing is left to flush: the explicit sync makes no second fsync
        assert len(calls) == 1
    eng.close_without_checkpoint()
    reopened = open_engine(meh_path)
    assert reopened.all_ids(0) == [1, 2]
    reopened.close()


def test_threads_writing_deleting_and_checkpointing_at_once_agree_with_a_model(
    meh_path: str,
) -> None:
    """Four writers (own domains, writes and deletes), a checkpointer and a reader at once.

    Each writer keeps a dict of what it was acknowledged; at the end the engine, and the
    file reopened after a crash-like close, hold exactly those dicts. The reader checks
    that what it sees of a domain is always something that writer wrote.
    """
    eng = create_engine(meh_path)
    written: dict[int, set[bytes]] = {agent: set() for agent in range(1, 5)}
    models: dict[int, dict[int, bytes]] = {}
    stop = threading.Event()
    seen_bad: list[str] = []

    def writer(agent: int) -> None:
        rng = random.Random(agent)
        model: dict[int, bytes] = {}
        for step in range(100):
            id_hash = rng.randint(1, 40)
            if model and rng.random() < 0.25:
                doomed = rng.sample(sorted(model), min(3, len(model)))
                eng.delete_batch(agent, doomed)
                for d in doomed:
                    del model[d]
            else:
                payload = f"{agent}:{step}".encode()
                written[agent].add(payload)
                eng.write(agent, 1, id_hash, payload)
                model[id_hash] = payload
        models[agent] = model

    def checkpointer() -> None:
        while not stop.is_set():
            eng.checkpoint()
            time.sleep(0.002)

    def reader() -> None:
        while not stop.is_set():
            for agent in range(1, 5):
                for id_hash in eng.all_ids(agent):
                    try:
                        payload = eng.read(agent, id_hash).payload
                    except NotFoundError:
                        continue  # deleted since the listing
                    if payload not in written[agent]:
                        seen_bad.append(f"{agent}/{id_hash}: {payload!r}")

    with fsyncs():
        side = [_start(checkpointer, "checkpointer"), _start(reader, "reader")]
        writers = [_start(lambda a=agent: writer(a), f"w{agent}") for agent in range(1, 5)]
        for thread, _ in writers:
            thread.join()
        stop.set()
        for thread, _ in side:
            thread.join()
    assert [errors for _, errors in writers + side] == [[]] * 6
    assert seen_bad == []
    for agent, model in models.items():
        assert {i: eng.read(agent, i).payload for i in eng.all_ids(agent)} == model
    assert sum(map(len, models.values())) > 0  # the control: there was something to keep
    eng.close_without_checkpoint()
    reopened = open_engine(meh_path)
    for agent, model in models.items():
        assert {i: reopened.read(agent, i).payload for i in reopened.all_ids(agent)} == model
    reopened.close()
