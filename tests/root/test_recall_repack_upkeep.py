"""A recall index due a repack is repacked on the domain's upkeep thread, not in a host's call.

Before, the repack ran inside the host's recall, under the domain lock: 135-142 ms
at 66,000-105,000 documents. Here the bound on removed documents is lowered so a
few dozen turns make it due; what is checked is where the repack ran and that
recall answers as an index built from the records would.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import memhop
from memhop.index import recall
from memhop.index.recall import RecallIndex, Repack
from memhop.root import recall_upkeep
from tests.interface.conftest import TS, open_new
from tests.interface.test_recall import answers, say

QUERIES = ("ferry noon", "kitten pier", "island", "lighthouse storm")


def _where_repacks_ran(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(part, thread name) of each repack's begin and finish, in order."""
    seen: list[tuple[str, str]] = []
    begin, finish = RecallIndex.begin_repack, RecallIndex.finish_repack

    def begun(self: RecallIndex) -> Repack:
        seen.append(("begin", threading.current_thread().name))
        return begin(self)

    def finished(self: RecallIndex, job: Repack) -> bool:
        taken = finish(self, job)
        seen.append(("finish" if taken else "refused", threading.current_thread().name))
        return taken

    monkeypatch.setattr(RecallIndex, "begin_repack", begun)
    monkeypatch.setattr(RecallIndex, "finish_repack", finished)
    return seen


def _upkeep_ended(timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while any(t.name.startswith("memhop-recall-") for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the upkeep thread did not end"
        time.sleep(0.01)


def _turns(me: memhop.Session, count: int) -> None:
    for i in range(count):
        lines = (f"the ferry to island {i} leaves at noon", f"pier {i % 5} has a kitten")
        say(me, lines, TS + i, new_scene=i % 10 == 0)
        me.recall("ferry island kitten")  # each recall redoes the rows beside the new one


def test_a_due_repack_runs_on_the_upkeep_thread_and_recall_answers_as_a_fresh_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall, "_REPACK_DEAD", 8)
    seen = _where_repacks_ran(monkeypatch)
    path = str(tmp_path / "mem.meh")
    with open_new(path) as db:
        me = db.primary()
        _turns(me, 60)
        _upkeep_ended()
        finished = [name for part, name in seen if part == "finish"]
        assert finished  # control: the turns made repacks due, and they were taken
        assert all(name.startswith("memhop-recall-") for _, name in seen)  # none in a call
        kept = answers(me, QUERIES)
        assert any(kept)  # control: the queries find rows
    os.remove(path + ".recall")  # the next open indexes every record again, from scratch
    with memhop.open(path, memhop.LocalModel()) as again:
        assert answers(again.primary(), QUERIES) == kept


def test_without_removals_past_the_bound_no_repack_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _where_repacks_ran(monkeypatch)
    path = str(tmp_path / "mem.meh")
    with open_new(path) as db:
        me = db.primary()
        _turns(me, 30)  # about 60 removed documents: under the bound of 1024
        _upkeep_ended()
        assert seen == []
        assert me.recall("ferry")  # control: the index is built and answers
    monkeypatch.setattr(recall, "_REPACK_DEAD", 8)
    with open_new(path) as db:
        _turns(db.primary(), 30)
        _upkeep_ended()
        assert seen  # control: past a lower bound, the same turns ask for one


class _Exploding(list[int]):
    """A repack's log of removals that fails as the finish reads it: after the new columns
    are in, before what changed since the repack began is redone (a half-taken index)."""

    def __iter__(self) -> Iterator[int]:
        raise MemoryError("injected while the repack was taken")


def test_a_repack_that_fails_while_taken_leaves_no_half_index_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(recall, "_REPACK_DEAD", 8)
    ran, go_on = threading.Event(), threading.Event()
    run = Repack.run

    def held_after_its_run(self: Repack, pace: Callable[[], None] = lambda: None) -> None:
        run(self, pace)
        if not ran.is_set():  # the first repack: the host changes the index meanwhile
            self.removed = _Exploding(self.removed)
            ran.set()
            go_on.wait(10)

    monkeypatch.setattr(Repack, "run", held_after_its_run)
    path = str(tmp_path / "mem.meh")
    with open_new(path) as db:
        me = db.primary()
        _turns(me, 60)
        assert ran.wait(10)  # control: a repack ran
        for i in range(3):  # rows the half-taken index would not hold
            say(me, (f"the lighthouse keeper {i} saw a storm", "it passed by noon"), TS + 100 + i)
            me.recall("lighthouse storm")
        go_on.set()
        _upkeep_ended()
        assert "repack" in caplog.text  # logged on its thread, not raised into a call
        kept = answers(me, QUERIES)  # from an index made again from the records
        assert any(hit.text.startswith("the lighthouse keeper") for hit in kept[-1])
    os.remove(path + ".recall")
    with memhop.open(path, memhop.LocalModel()) as again:
        assert answers(again.primary(), QUERIES) == kept


def test_a_repack_under_way_stops_when_the_file_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall, "_REPACK_DEAD", 8)
    entered, release = threading.Event(), threading.Event()
    paces: list[bool] = []  # one entry a pace the run made, True once the file closed

    class HeldPace:  # the run's pace, held at its first call until the test lets it go
        def __init__(self, *_: object) -> None:
            self.closing = closing

        def __call__(self) -> None:
            paces.append(self.closing.is_set())
            entered.set()
            release.wait(10)

    monkeypatch.setattr(recall_upkeep, "SharedPace", HeldPace)
    path = str(tmp_path / "mem.meh")
    db = open_new(path)
    closing = db._root.closing  # what the close sets first
    me = db.primary()
    _turns(me, 60)
    assert entered.wait(10)  # control: a repack's run is under way, held at a pace
    kept = answers(me, QUERIES)
    threading.Timer(0.2, release.set).start()  # let it go once the close has begun
    db.close()
    _upkeep_ended()
    assert paces[0] is False  # the pace held was asked before the close
    assert True not in paces  # and none after it: the run stopped at its next pace
    with memhop.open(path, memhop.LocalModel()) as again:  # the close repacked and saved
        assert answers(again.primary(), QUERIES) == kept
