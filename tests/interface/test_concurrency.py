"""Concurrency: domains in parallel threads, and the one-process-per-file lock (api.md §17)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

import memhop

from .conftest import TS, footprint, open_new

EVENT = memhop.ArchiveKind.EVENT


def run_all(workers: dict[str, Callable[[], None]]) -> dict[str, BaseException]:
    """Start every worker together, join every thread, return the failures by worker."""
    barrier = threading.Barrier(len(workers))
    errors: dict[str, BaseException] = {}

    def wrap(name: str, work: Callable[[], None]) -> Callable[[], None]:
        def body() -> None:
            try:
                barrier.wait(timeout=10)
                work()
            except BaseException as exc:  # reported by the caller
                errors[name] = exc

        return body

    threads = [threading.Thread(target=wrap(n, w), name=n) for n, w in workers.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not [t.name for t in threads if t.is_alive()], "a worker never finished"
    return errors


def rounds(session: memhop.Session, word: str, n: int, minted: list[str]) -> None:
    for i in range(n):
        opened = session.search()
        session.append_archive(
            content=f"{word} event {i}", created_at=TS + i, kind=EVENT, event_type="e"
        )
        closed = session.update(
            input=f"{word} asks {i}", output=f"{word} hears {i}", outcome="ok", created_at=TS + i
        )
        assert closed.id == opened.new_topic_id
        minted.append(closed.id)


def test_primary_and_a_sub_agent_run_turns_in_parallel(meh_path: str) -> None:
    with open_new(meh_path) as db:
        sessions = {
            "primary": db.primary(),
            "alpha": db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="alpha")),
        }
        minted: dict[str, list[str]] = {name: [] for name in sessions}
        errors = run_all(
            {name: (lambda n=name, s=s: rounds(s, n, 5, minted[n])) for name, s in sessions.items()}
        )
        assert errors == {}
        for name, session in sessions.items():
            rows = session.scene_context().topics
            assert [r.topic_id for r in rows] == minted[name]
            for row in rows:
                assert len(session.search_l4(topic_id=row.topic_id)) == 4
            other = "alpha" if name == "primary" else "primary"
            assert session.search_l4(keyword=f"{name} asks")
            assert session.search_l4(keyword=f"{other} asks") == []
        assert not set(minted["primary"]) & set(minted["alpha"])


def test_e09_concurrent_workers_on_their_own_domains(meh_path: str) -> None:
    with open_new(meh_path) as db:
        names = [f"worker-{i}" for i in range(6)]
        sessions = {
            n: db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name=n)) for n in names
        }
        minted: dict[str, list[str]] = {n: [] for n in names}
        errors = run_all({n: (lambda n=n: rounds(sessions[n], n, 4, minted[n])) for n in names})
        assert errors == {}
        every = [t for n in names for t in minted[n]]
        assert len(every) == len(set(every)) == 24, "a turn id was handed out twice"
        for n in names:
            rows = sessions[n].scene_context().topics
            assert [r.topic_id for r in rows] == minted[n]
            for row in rows:
                assert len(sessions[n].search_l4(topic_id=row.topic_id)) == 4
                assert all(n in m.content for m in row.messages)


def test_e08_two_libraries_concurrently_in_one_process(tmp_path: Path) -> None:
    parent = open_new(str(tmp_path / "parent.meh"))
    worker = open_new(str(tmp_path / "worker.meh"))
    try:
        helper = worker.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="helper"))
        minted: dict[str, list[str]] = {"parent": [], "worker": [], "helper": []}
        sessions = {"parent": parent.primary(), "worker": worker.primary(), "helper": helper}
        errors = run_all({n: (lambda n=n: rounds(sessions[n], n, 6, minted[n])) for n in sessions})
        assert errors == {}
        for n, s in sessions.items():
            assert len(set(minted[n])) == 6
            assert len(s.scene_context().topics) == 6
        parent_count = parent.stats().record_count
        assert worker.stats().record_count > parent_count > 0
        turn_worker = worker.primary()
        turn_worker.search()
        turn_worker.update(input="one more", created_at=TS)
        assert parent.stats().record_count == parent_count
    finally:
        parent.close()
        worker.close()


def test_e10_readers_never_see_an_empty_scene_during_writes(meh_path: str) -> None:
    with open_new(meh_path) as db:
        me = db.primary()
        for i in range(3):
            me.search()
            me.update(input=f"seed {i}", created_at=TS + i)
        baseline = me.scene_context().to_dict()
        stop = threading.Event()
        seen: list[int] = []

        def reader() -> None:
            while not stop.is_set():
                rows = me.scene_context().topics
                assert rows, "a reader saw an empty scene"
                seen.append(len(rows))

        def writer() -> None:
            try:
                for i in range(6):
                    me.search()
                    me.update(input=f"more {i}", created_at=TS + 10 + i)
            finally:
                stop.set()

        workers: dict[str, Callable[[], None]] = {f"reader-{i}": reader for i in range(4)}
        workers["writer"] = writer
        errors = run_all(workers)
        assert errors == {}
        assert seen
        assert me.scene_context().to_dict() != baseline
        assert len(me.scene_context().topics) == 9


def test_a_second_open_in_this_process_is_refused_while_the_holder_works(meh_path: str) -> None:
    holder = open_new(meh_path)
    try:
        me = holder.primary()
        me.search()
        before = footprint(holder)
        for attempt in (
            lambda: memhop.open(meh_path, memhop.LocalModel()),
            lambda: open_new(meh_path),
        ):
            with pytest.raises(memhop.StorageIOError) as info:
                attempt()
            assert memhop.code_of(info.value) == 5001
            assert "another instance" in str(info.value)
        assert footprint(holder) == before
        # the holder's open turn survived the refused opens
        closed = me.update(input="still mine", created_at=TS)
        assert [r.topic_id for r in me.scene_context().topics] == [closed.id]
    finally:
        holder.close()
    memhop.open(meh_path, memhop.LocalModel()).close()  # control: released on close


PROBE = textwrap.dedent(
    """
    import sys
    import memhop
    try:
        memhop.open(sys.argv[1], memhop.LocalModel()).close()
    except memhop.MemHopError as exc:
        print(type(exc).__name__, memhop.code_of(exc), exc)
        sys.exit(3)
    print("opened")
    """
)


def probe(path: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROBE, path], capture_output=True, text=True, timeout=60, check=False
    )


def test_a_second_open_from_another_process_is_refused(meh_path: str) -> None:
    holder = open_new(meh_path)
    try:
        me = holder.primary()
        opened = me.search()
        result = probe(meh_path)
        assert result.returncode == 3, result.stderr
        assert result.stdout.startswith("StorageIOError 5001")
        assert "another instance" in result.stdout
        closed = me.update(input="the holder still works", created_at=TS)
        assert closed.id == opened.new_topic_id
    finally:
        holder.close()
    result = probe(meh_path)  # control: once released, the other process opens it
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "opened"
