"""A domain's first call builds its mirrors without the registry lock (white-box, via the root).

The build is held at a gate here (``Root._build_mirrors`` wrapped), so each test
can act while one domain is being built and see what waits for it and what
does not.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

import memhop
import memhop.engine.reads as engine_reads
import memhop.root.pacing as pacing_module
from memhop.domain.mirrors import Mirrors
from memhop.errors import ClosedError
from memhop.root.root import Root

T0 = 1_700_000_000_000
PRIMARY = 0
WAIT = 20.0  # seconds; only a hang comes near it


@dataclass
class Gate:
    """Once armed, holds the primary's builds until opened and counts every build by domain."""

    armed: bool = False
    entered: threading.Event = field(default_factory=threading.Event)
    opened: threading.Event = field(default_factory=threading.Event)
    builds: dict[int, int] = field(default_factory=dict)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    held = Gate()
    build = Root._build_mirrors

    def gated(root: Root, agent_id: int) -> Mirrors:
        if not held.armed:
            return build(root, agent_id)
        held.builds[agent_id] = held.builds.get(agent_id, 0) + 1
        if agent_id == PRIMARY:
            held.entered.set()
            assert held.opened.wait(WAIT), "the test never opened the gate"
        return build(root, agent_id)

    monkeypatch.setattr(Root, "_build_mirrors", gated)
    yield held
    held.opened.set()  # a failed test must not leave a build parked


def _written(path: str) -> dict[str, str]:
    """A closed file with three turns in the primary and three in "beta"; their scene ids."""
    scenes = {}
    with memhop.open(path, memhop.LocalModel(), None, memhop.ProfileInput(name="p")) as db:
        beta = db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="beta"))
        for name, session in (("primary", db.primary()), ("beta", beta)):
            for i in range(3):
                opened = session.search(new_scene=i == 0)
                session.update(input=f"{name} asks {i}", output=f"answer {i}", created_at=T0 + i)
            scenes[name] = opened.scene.scene_id
    os.remove(path + ".scenemap")  # these domains are built in full at their first call
    return scenes


def _held_read(path: str, gate: Gate) -> tuple[memhop.DB, dict[str, str], Call]:
    """Open the written file and start the primary's first read; return once it is held."""
    scenes = _written(path)
    gate.armed = True
    db = memhop.open(path, memhop.LocalModel())
    building = Call(lambda: db.primary().scene_context(scenes["primary"]))
    building.start()
    assert gate.entered.wait(WAIT)
    return db, scenes, building


def _release(gate: Gate, *calls: Call) -> None:
    """Let the held build go on; wait for ``calls``, each of which must have succeeded."""
    gate.opened.set()
    for call in calls:
        call.join(WAIT)
        assert call.error is None


class Call(threading.Thread):
    """Run ``work`` in a thread; keep its result or its exception."""

    def __init__(self, work: Callable[[], object]) -> None:
        super().__init__(daemon=True)
        self.work = work
        self.result: object = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.work()
        except BaseException as exc:  # handed to the test
            self.error = exc


def test_another_domain_goes_on_while_one_is_built_and_the_build_is_made_once(
    meh_path: str, gate: Gate
) -> None:
    db, scenes, first = _held_read(meh_path, gate)
    try:
        second = Call(lambda: db.primary().scene_context(scenes["primary"]))
        second.start()
        # Beta's first call builds beta and runs a whole turn while the primary's build is held.
        beta = db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="beta"))
        beta.search(scene_id=scenes["beta"])
        row = beta.update(input="beta asks again", output="and is answered", created_at=T0 + 9)
        assert not gate.opened.is_set()
        assert len(beta.scene_context(scenes["beta"]).topics) == 4
        assert row.id in {t.topic_id for t in beta.scene_context(scenes["beta"]).topics}
        assert first.is_alive()  # the primary's calls wait for its build
        assert second.is_alive()
        _release(gate, first, second)
        for call in (first, second):
            assert isinstance(call.result, memhop.SceneContext)
            assert len(call.result.topics) == 3
        assert gate.builds == {PRIMARY: 1, beta_id(db): 1}
    finally:
        gate.opened.set()
        db.close()


def beta_id(db: memhop.DB) -> int:
    (entry,) = [a for a in db.agents() if not a.primary]
    return int(entry.id, 16)


def test_close_waits_for_a_build_in_flight_and_the_building_call_is_told_the_file_closed(
    meh_path: str, gate: Gate
) -> None:
    db, scenes, building = _held_read(meh_path, gate)
    closing = Call(db.close)
    closing.start()
    closing.join(0.2)
    assert closing.is_alive()  # the build still reads the file: close waits for it
    gate.opened.set()
    closing.join(WAIT)
    building.join(WAIT)
    assert closing.error is None
    assert db.closed
    assert isinstance(building.error, ClosedError)
    # The file was left whole: a fresh open reads the same three turns.
    with memhop.open(meh_path, memhop.LocalModel()) as again:
        assert len(again.primary().scene_context(scenes["primary"]).topics) == 3


def test_an_in_place_compaction_waits_for_a_build_in_flight(meh_path: str, gate: Gate) -> None:
    db, scenes, building = _held_read(meh_path, gate)
    try:
        compacting = Call(db.compact)
        compacting.start()
        compacting.join(0.2)
        assert compacting.is_alive()  # the engine is not replaced under a build
        _release(gate, building, compacting)
        assert isinstance(building.result, memhop.SceneContext)
        assert len(building.result.topics) == 3
        # The context built before the compaction reads the new file.
        session = db.primary()
        session.search(scene_id=scenes["primary"])
        session.update(input="after", output="the compaction", created_at=T0 + 9)
        assert len(session.scene_context(scenes["primary"]).topics) == 4
    finally:
        gate.opened.set()
        db.close()


def test_a_build_pauses_between_its_reads_only_while_a_call_is_in_flight(
    meh_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build's reads call the root's pacer between parts (``Engine.paced``), and the
    pacer sleeps only while some domain's call holds its lock: a turn beside a build
    gets the interpreter, and a build alone is not slowed.

    Control: the same pacer with the lock held sleeps once, for the pause.
    """
    monkeypatch.setattr(engine_reads, "_READ_CHUNK", 2)
    scenes = _written(meh_path)
    slept: list[float] = []
    monkeypatch.setattr(
        pacing_module, "time", SimpleNamespace(sleep=slept.append, monotonic=time.monotonic)
    )
    paced: list[int] = []
    make_way = Root.make_way

    def counted(root: Root, longest: float = 0.0, building: int | None = None) -> None:
        paced.append(1)
        make_way(root, longest, building)

    monkeypatch.setattr(Root, "make_way", counted)
    with memhop.open(meh_path, memhop.LocalModel()) as db:
        db.primary().scene_context(scenes["primary"])  # built in full: nothing else in flight
        assert paced
        assert not slept
        ctx = db._root._contexts[PRIMARY]
        with ctx.lock:  # as a call in flight holds it
            make_way(db._root)
            assert slept == [pacing_module.BUILD_PAUSE_S]
            make_way(db._root, 0.005)  # a build's: it waits on, until its time is up
        assert len(slept) > 2


def test_a_build_makes_way_for_a_smaller_domains_first_call(
    meh_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A domain's first call builds that domain while another's build may be running (the
    primary's, reopened at 10^5 turns, takes seconds): the larger build makes way for the
    smaller one, whose host is waiting (a sub-agent's first search beside the primary's
    build at 10^5 turns: 54 -> 7.5 ms). The smaller build does not wait for the larger,
    nor does any build for nothing, nor a compaction's copy for a build."""
    with memhop.open(meh_path, memhop.LocalModel(), None, memhop.ProfileInput(name="p")) as db:
        small = db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="small"))
        small.search(new_scene=True)
        small.update(input="one turn", output="only", created_at=T0)
        for i in range(6):
            db.primary().search(new_scene=i == 0)
            db.primary().update(input=f"turn {i}", output="answer", created_at=T0 + i)
        small_id = int(small.agent_id, 16)
    slept: list[float] = []
    monkeypatch.setattr(
        pacing_module, "time", SimpleNamespace(sleep=slept.append, monotonic=time.monotonic)
    )
    with memhop.open(meh_path, memhop.LocalModel()) as db:
        root = db._root
        root._loading.add(small_id)  # as the small domain's first call builds it
        root.make_way(0.001, building=PRIMARY)
        assert slept  # the primary's build waits for it
        slept.clear()
        root._loading = {PRIMARY}  # the primary builds: the small domain's build goes on
        root.make_way(0.001, building=small_id)
        root._loading = set()
        root.make_way(0.001, building=PRIMARY)  # no other build: no pause
        root._loading = {small_id}
        root.make_way(0.001)  # a compaction's copy pauses for calls, not for builds
        assert not slept
        root._loading = set()
