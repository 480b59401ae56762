"""Compaction from the root: Dream paused and resumed, calls of every domain waiting, none lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

import memhop
from memhop.dream.l1cache import L1Cache
from memhop.root import compaction
from memhop.root.dream_threads import DreamThreads
from tests.faults import file_size

TS = 1_700_000_000_000


def test_a_pass_asked_for_while_paused_starts_on_the_last_resume() -> None:
    threads = DreamThreads()
    ran = threading.Event()
    threads.pause()
    threads.pause()
    assert not threads.start(1, 2, ran.set)
    assert not threads.start(1, 2, ran.set)  # one per scene, as when running
    threads.resume()
    assert not ran.is_set()  # still paused once
    threads.resume()
    assert ran.wait(5)
    threads.close_and_join()


def test_a_pass_deferred_past_close_never_starts() -> None:
    threads = DreamThreads()
    ran = threading.Event()
    threads.pause()
    threads.start(1, 2, ran.set)
    threads.close_and_join()
    threads.resume()
    assert not ran.wait(0.05)
    assert threads.start(1, 3, lambda: None) is False  # control: closed refuses anything


def test_turns_in_two_domains_run_through_repeated_compactions(tmp_path: Path) -> None:
    """Every acknowledged turn of both domains is readable after compactions ran among them."""
    defaults = memhop.Defaults(scene_dream_topic_threshold=-1, compact_dead_ratio=0)
    profile = memhop.ProfileInput(name="me")
    path = str(tmp_path / "mem.meh")
    with memhop.open(path, memhop.LocalModel(), defaults, profile) as db:
        sessions = [db.primary(), db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="b"))]
        done: dict[str, list[str]] = {s.agent_id: [] for s in sessions}
        errors: list[BaseException] = []

        def talk(me: memhop.Session) -> None:
            try:
                for i in range(25):
                    me.search(new_scene=i % 10 == 0)
                    me.append_archive(content=f"line {i}", created_at=TS + i)
                    done[me.agent_id].append(me.update(input=f"turn {i}", created_at=TS + i).id)
            except BaseException as exc:  # reported by the assertion below
                errors.append(exc)

        workers = [threading.Thread(target=talk, args=(s,)) for s in sessions]
        for w in workers:
            w.start()
        compactions = 0
        while any(w.is_alive() for w in workers):
            db.compact()
            compactions += 1
        for w in workers:
            w.join()

        assert not errors
        assert compactions >= 2
        for me in sessions:
            ids = done[me.agent_id]
            assert len(ids) == 25
            stored = {row.topic_id for row in me.search_l4()}
            assert set(ids) <= stored


def test_a_compaction_drops_the_slot_caches_and_reads_stay_the_same(tmp_path: Path) -> None:
    """Cached slots are keyed by frame offsets, which all move: the caches start empty."""
    defaults = memhop.Defaults(scene_dream_topic_threshold=-1, compact_dead_ratio=0)
    path = str(tmp_path / "mem.meh")
    with memhop.open(path, memhop.LocalModel(), defaults, memhop.ProfileInput(name="me")) as db:
        me = db.primary()
        for i in range(5):
            me.search()
            me.update(input=f"turn {i}", output=f"reply {i}", created_at=TS + i)
        before = me.scene_context()
        ctx = db._root._contexts[0]
        assert len(ctx.slots) > 0  # the scene read filled it
        db.compact()
        assert len(ctx.slots) == 0
        assert me.scene_context() == before
        assert len(ctx.slots) > 0  # and it fills again from the new file


_CRASHING_WRITER = textwrap.dedent(
    """
    import os, signal, sys, memhop
    table = memhop.Defaults(scene_dream_topic_threshold=-1, compact_dead_ratio=0)
    me = memhop.open(sys.argv[1], memhop.LocalModel(), table).primary()
    for i in range(3):
        me.search()
        me.update(input=f"late turn {i} " + "w" * 200, output="ok", created_at=1_700_000_010_000)
    os.kill(os.getpid(), signal.SIGKILL)  # no checkpoint: the open must scan these frames
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_a_file_with_a_damaged_region_is_kept_as_it_is(tmp_path: Path) -> None:
    """A frame the open skipped refuses the compaction (the bytes stay); salvage is the way out."""
    table = memhop.Defaults(scene_dream_topic_threshold=-1, compact_dead_ratio=0)
    path = str(tmp_path / "mem.meh")
    with memhop.open(path, memhop.LocalModel(), table, memhop.ProfileInput(name="me")) as db:
        me = db.primary()
        for i in range(3):
            me.search()
            me.update(input=f"early {i}", output="ok", created_at=TS + i)
    killed = subprocess.run([sys.executable, "-c", _CRASHING_WRITER, path], check=False)
    assert killed.returncode == -signal.SIGKILL
    data = bytearray(Path(path).read_bytes())
    data[data.find(b"late turn 1") + 5] ^= 0xFF
    Path(path).write_bytes(bytes(data))
    # The killed writer's reserve past its last frame is cut by the open; what the
    # refused compaction must leave alone is everything before it.
    del data[file_size(path) :]

    with memhop.open(path, memhop.LocalModel(), table) as db:
        assert db.stats().damaged_frames == 1
        with pytest.raises(memhop.CorruptionError, match="damaged region"):
            db.compact()
        assert Path(path).read_bytes() == bytes(data)
        copy = str(tmp_path / "salvaged.meh")
        db.salvage_to(copy)
    with memhop.open(copy, memhop.LocalModel(), table) as saved:
        saved.compact()  # control: the salvaged copy compacts
        assert len(saved.primary().scene_context().topics) >= 5
    # No temporary file is left; each file may keep its own scene map and index seed beside it.
    left = sorted(n for n in os.listdir(tmp_path) if not n.endswith((".scenemap", ".seed")))
    assert left == ["mem.meh", "salvaged.meh"]


def _turns(me: memhop.Session, n: int, at: int = 0, text: str = "turn") -> list[str]:
    ids = []
    for i in range(n):
        me.search(new_scene=i % 10 == 0)
        ids.append(me.update(input=f"{text} {at + i}", created_at=TS + at + i).id)
    return ids


class _Paused:
    """Stands in for ``Root.make_way`` (the copy's pacer): the copy stops at its first
    pace, in phase 1, until released; ``body`` runs there first."""

    def __init__(self, body: Callable[[], None] = lambda: None) -> None:
        self.reached = threading.Event()
        self.go = threading.Event()
        self.body = body

    def __call__(self, longest: float = 0.0, building: int | None = None) -> None:  # as make_way
        if not self.reached.is_set():
            self.body()
            self.reached.set()
            assert self.go.wait(30)


def _compacting(db: memhop.DB, errors: list[BaseException]) -> threading.Thread:
    def run() -> None:
        try:
            db.compact()
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    return worker


def _file(tmp_path: Path, turns: int = 120) -> str:
    path = str(tmp_path / "mem.meh")
    with memhop.open(path, memhop.LocalModel(), QUIET, memhop.ProfileInput(name="me")) as db:
        me = db.primary()
        doomed = _turns(me, turns)
        me.delete_topic(doomed[0])
    return path


QUIET = memhop.Defaults(scene_dream_topic_threshold=-1, compact_dead_ratio=0)


def test_turns_go_on_while_the_copy_is_made(tmp_path: Path) -> None:
    """A compaction stopped in phase 1: turns of the file run to the end meanwhile (before,
    every call waited for the whole copy), and are in the compacted file."""
    path = _file(tmp_path)
    inode = os.stat(path).st_ino
    with memhop.open(path, memhop.LocalModel(), QUIET) as db:
        me = db.primary()
        paused = _Paused()
        db._root.make_way = paused  # type: ignore[method-assign]
        errors: list[BaseException] = []
        worker = _compacting(db, errors)
        assert paused.reached.wait(30)  # the copy is under way
        during = _turns(me, 3, at=1000, text="during the copy")
        assert worker.is_alive()  # they ran while it waited
        paused.go.set()
        worker.join(30)
        assert not errors
        assert set(during) <= {row.topic_id for row in me.search_l4()}
        assert os.stat(path).st_ino != inode  # the copy has the name
    with memhop.open(path, memhop.LocalModel(), QUIET) as again:
        assert set(during) <= {row.topic_id for row in again.primary().search_l4()}


def test_one_compaction_at_a_time(tmp_path: Path) -> None:
    """While one runs, the policy's does not start, and DB.compact waits for it, then runs."""
    path = _file(tmp_path)
    with memhop.open(path, memhop.LocalModel(), QUIET) as db:
        root = db._root
        paused = _Paused()
        root.make_way = paused  # type: ignore[method-assign]
        errors: list[BaseException] = []
        first = _compacting(db, errors)
        assert paused.reached.wait(30)
        assert compaction.compact(root, above=0.0001) is False  # the policy leaves it be
        second = _compacting(db, errors)
        second.join(0.2)
        assert second.is_alive()  # waits for the first
        paused.go.set()
        first.join(30)
        second.join(30)
        assert not errors
        assert not second.is_alive()  # control: it ran once the first was over
        assert compaction.compact(root, above=0.0) is True


@pytest.mark.parametrize("trouble", ["moved", "damage", "closed"])
def test_trouble_met_during_the_copy_refuses_the_swap_and_keeps_the_old_file(
    tmp_path: Path, trouble: str
) -> None:
    """The file moved, damage met by a read, or the handle closed while the copy was made:
    the compaction raises at the swap (or at its next chunk), nothing is left beside the
    file, and the old file, whole, is the one under the name."""
    path = _file(tmp_path)
    inode = os.stat(path).st_ino
    db = memhop.open(path, memhop.LocalModel(), QUIET)
    root = db._root
    engine = root.engine
    kept = {row.topic_id for row in db.primary().search_l4()}

    def meanwhile() -> None:
        if trouble == "moved":
            os.rename(path, path + ".moved")
        elif trouble == "damage":
            engine.note_damaged(0, engine.all_ids(0)[0], ValueError("injected"))
        else:
            closer = threading.Thread(target=db.close)
            closer.start()
            closer.join(30)

    paused = _Paused(meanwhile)
    root.make_way = paused  # type: ignore[method-assign]
    paused.go.set()
    error = {
        "moved": memhop.StorageIOError,
        "damage": memhop.CorruptionError,
        "closed": memhop.ClosedError,
    }[trouble]
    with pytest.raises(error):
        db.compact()
    if trouble == "moved":
        os.rename(path + ".moved", path)
    left = sorted(n for n in os.listdir(tmp_path) if not n.endswith((".scenemap", ".seed")))
    assert left == ["mem.meh"]
    assert os.stat(path).st_ino == inode
    if trouble != "closed":
        assert root.engine is engine
        assert not engine.closed
        db.close()
    with memhop.open(path, memhop.LocalModel(), QUIET) as again:
        assert {row.topic_id for row in again.primary().search_l4()} == kept
        again.compact()  # control: the same file compacts
        assert os.stat(path).st_ino != inode


def test_a_compaction_leaves_dreams_copies_standing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy takes the file's name while no call runs: Dream's copies of the nodes follow
    it (the same records) and are not read again at the next pass; a node written elsewhere
    afterwards still is."""
    path = str(tmp_path / "c.meh")
    with memhop.open(path, memhop.LocalModel(), QUIET, memhop.ProfileInput(name="p")) as db:
        me = db.primary()
        scenes = []
        for i in range(3):
            scenes.append(me.search(new_scene=True).scene.scene_id)
            me.update(input=f"we spoke of boats {i}", output="boats", created_at=TS + i)
        me.dream()
        reads: list[int] = []
        real = L1Cache._refresh_nodes

        def counted(self: L1Cache, live: dict[int, int]) -> None:
            reads.append(len(live))
            real(self, live)

        monkeypatch.setattr(L1Cache, "_refresh_nodes", counted)
        db.compact()
        me.dream()
        assert reads == []
        me.delete_scene(scenes[0])  # control: the scene's node goes behind Dream's copies
        me.dream()
        assert reads


def test_a_pass_asked_for_while_its_scene_has_one_running_runs_once_after_it() -> None:
    threads = DreamThreads()
    order: list[str] = []
    release, again_ran, other_ran = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:
        release.wait(5)
        order.append("first")

    assert threads.start(1, 2, first)
    assert not threads.start(1, 2, lambda: order.append("dropped"))  # the last asked wins
    assert not threads.start(1, 2, lambda: (order.append("again"), again_ran.set()))
    # Control: another scene is not held back by it.
    assert threads.start(1, 3, other_ran.set)
    assert other_ran.wait(5)
    assert order == []
    release.set()
    assert again_ran.wait(5)
    assert order == ["first", "again"]
    threads.close_and_join()
