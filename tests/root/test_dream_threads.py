"""Background passes: one per (domain, scene), a few per domain in flight, the rest queued."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from memhop.root.dream_threads import PASSES_PER_DOMAIN, DreamThreads, thread_name

WAIT_S = 5.0


class Gate:
    """A pass body that says it began (and on which thread), then waits to be let go."""

    def __init__(self, log: list[str], name: str) -> None:
        self.began = threading.Event()
        self.go = threading.Event()
        self.thread: threading.Thread | None = None
        self._log, self._name = log, name

    def __call__(self) -> None:
        self.thread = threading.current_thread()
        self.began.set()
        assert self.go.wait(WAIT_S)
        self._log.append(self._name)


def _done(
    log: list[str], name: str, event: threading.Event, ran_on: list[threading.Thread] | None = None
) -> Callable[[], None]:
    def body() -> None:
        log.append(name)
        if ran_on is not None:
            ran_on.append(threading.current_thread())
        event.set()

    return body


def test_a_domain_runs_a_few_passes_and_queues_the_rest_one_per_scene() -> None:
    threads = DreamThreads()
    log: list[str] = []
    gates = [Gate(log, f"scene {i}") for i in range(PASSES_PER_DOMAIN)]
    for scene, gate in enumerate(gates):
        assert threads.start(1, scene, gate)
        assert gate.began.wait(WAIT_S)
    queued_ran = threading.Event()
    ran_on: list[threading.Thread] = []
    # Past the domain's places: queued, not started; asked twice, the last body wins.
    assert not threads.start(1, 100, lambda: log.append("superseded"))
    assert not threads.start(1, 100, _done(log, "queued", queued_ran, ran_on))
    # Control: another domain is not held back by this one's queue.
    other_ran = threading.Event()
    assert threads.start(2, 100, _done(log, "other domain", other_ran))
    assert other_ran.wait(WAIT_S)
    assert not queued_ran.wait(0.05)
    # The queued pass holds no thread: only those of the passes in flight are named so.
    assert thread_name(1, 100) not in {t.name for t in threading.enumerate()}
    assert thread_name(1, 0) in {t.name for t in threading.enumerate()}  # control
    gates[0].go.set()  # one place frees: the queued pass takes it, and its thread
    assert queued_ran.wait(WAIT_S)
    assert ran_on == [gates[0].thread]
    assert ran_on[0].name == thread_name(1, 100)
    gates[1].go.set()
    threads.close_and_join()
    assert log == ["other domain", "scene 0", "queued", "scene 1"]


def test_a_scene_asked_again_while_running_runs_after_it_even_with_a_queue() -> None:
    threads = DreamThreads(per_domain=1)
    log: list[str] = []
    first = Gate(log, "first")
    assert threads.start(1, 7, first)
    assert first.began.wait(WAIT_S)
    waiting_ran, again_ran = threading.Event(), threading.Event()
    assert not threads.start(1, 8, _done(log, "waiting", waiting_ran))
    assert not threads.start(1, 7, _done(log, "again", again_ran))
    first.go.set()
    assert waiting_ran.wait(WAIT_S)
    assert again_ran.wait(WAIT_S)
    threads.close_and_join()
    # Both ran once, in the order asked (the scene asked again waited behind the other).
    assert log == ["first", "waiting", "again"]


def _one_running() -> tuple[DreamThreads, list[str], Gate]:
    """A domain of one place, its pass running (held at its gate)."""
    threads = DreamThreads(per_domain=1)
    log: list[str] = []
    running = Gate(log, "running")
    assert threads.start(1, 1, running)
    assert running.began.wait(WAIT_S)
    return threads, log, running


def test_close_drops_the_queued_passes_and_joins_the_running() -> None:
    threads, log, running = _one_running()
    dropped = threading.Event()
    assert not threads.start(1, 2, dropped.set)
    closer = threading.Thread(target=threads.close_and_join)
    closer.start()
    deadline = time.monotonic() + WAIT_S
    while not threads._closed and time.monotonic() < deadline:  # close has begun
        time.sleep(0.001)
    running.go.set()  # the running pass ends while close waits for it
    closer.join(WAIT_S)
    assert log == ["running"]  # control: the running pass was joined, to its end
    assert not dropped.wait(0.05)
    assert threads.start(1, 3, lambda: None) is False


def test_a_pause_holds_the_queue_too() -> None:
    threads, log, running = _one_running()
    queued_ran = threading.Event()
    assert not threads.start(1, 2, _done(log, "queued", queued_ran))
    threads.pause()
    running.go.set()
    assert not queued_ran.wait(0.1)  # its place is free, but passes are paused
    threads.resume()
    assert queued_ran.wait(WAIT_S)  # control: the resume starts it
    threads.close_and_join()
    assert log == ["running", "queued"]


def test_a_domain_needs_a_place() -> None:
    with pytest.raises(ValueError, match="per_domain must be at least 1, got 0"):
        DreamThreads(per_domain=0)
    threads = DreamThreads(per_domain=1)
    assert threads.start(1, 1, lambda: None)  # control
    threads.close_and_join()
