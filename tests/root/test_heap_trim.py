"""The C heap's free pages go back to the system after background work, paced (``root/heap``)."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

import memhop
from memhop.root import heap

TS = 1_700_000_000_000
PROFILE = memhop.ProfileInput(name="me")
NO_AUTO = memhop.Defaults(scene_dream_topic_threshold=-1)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_trim_runs_at_most_once_per_interval() -> None:
    calls: list[int] = []
    clock = Clock()
    trim = heap.HeapTrim(calls.append, clock)
    assert trim.after_work()
    assert calls == [0]  # malloc_trim(0): every whole free page, no pad kept
    clock.now += heap.TRIM_INTERVAL_S / 2
    assert not trim.after_work()
    assert calls == [0]
    clock.now += heap.TRIM_INTERVAL_S / 2  # the interval has passed: the same call trims
    assert trim.after_work()
    assert calls == [0, 0]


def test_without_malloc_trim_nothing_runs() -> None:
    clock = Clock()
    assert not heap.HeapTrim(None, clock).after_work()
    calls: list[int] = []
    assert heap.HeapTrim(calls.append, clock).after_work()  # the same moment, a trim: runs
    assert calls == [0]


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_glibc_malloc_trim_is_found_and_runs() -> None:
    trim = heap.find_trim()
    assert trim is not None
    assert trim(0) in (0, 1)  # 1: memory was released, 0: there was none to release


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr("memhop.root.root.find_trim", lambda: calls.append)
    return calls


def _turns(session: memhop.Session, count: int) -> None:
    for i in range(count):
        session.search()
        session.update(input=f"turn {i} about the lake", output="noted", created_at=TS + i)


def test_a_dream_pass_trims_and_trim_heap_false_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _spy(monkeypatch)
    with memhop.open(str(tmp_path / "on.meh"), memhop.LocalModel(), NO_AUTO, PROFILE) as db:
        _turns(db.primary(), 3)
        assert calls == []  # turns do not trim: only background work does
        assert db.primary().dream().stages
        assert calls == [0]
    off = memhop.Defaults(scene_dream_topic_threshold=-1, trim_heap=False)
    with memhop.open(str(tmp_path / "off.meh"), memhop.LocalModel(), off, PROFILE) as db:
        _turns(db.primary(), 3)
        assert db.primary().dream().stages  # a pass ran, as above
        assert calls == [0]  # and did not trim


def test_a_compaction_trims(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _spy(monkeypatch)
    with memhop.open(str(tmp_path / "c.meh"), memhop.LocalModel(), NO_AUTO, PROFILE) as db:
        _turns(db.primary(), 3)
        assert calls == []
        db.compact()
        assert calls == [0]


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_trim_heap_must_be_a_bool(value: object) -> None:
    with pytest.raises(memhop.ConfigError, match="trim_heap must be a bool"):
        memhop.Defaults(trim_heap=value).validate()  # type: ignore[arg-type]
    memhop.Defaults(trim_heap=False).validate()  # a bool is taken
