"""A domain with a scene map answers scene reads before its mirrors are built (white-box).

Each test compares a file opened with its scene map (warm) against a copy of
the same bytes without one (built in full at the first call): the answers
must be equal. The full build of the warm domain is held at a gate
(``Root._build_mirrors`` wrapped) while the reads run, so that every one of
them is answered from the map; ``ctx.built`` stays None until a call needs
the whole domain.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import threading
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import memhop
from memhop.api.db import DB
from memhop.domain import map_file
from memhop.domain.mirrors import Mirrors
from memhop.domain.scene_map_codec import decode_maps, encode_maps
from memhop.engine import Engine
from memhop.records import SceneSlot
from memhop.root.opening import open_root
from memhop.root.root import Root, wall_clock_ms

T0 = 1_700_000_000_000
WAIT = 20.0  # seconds; only a hang comes near it
TABLE = memhop.Defaults(scene_dream_topic_threshold=-1, compact_dead_ratio=0)
MAP = ".scenemap"


@dataclass
class Gate:
    """Holds every full build while closed (tests close it); counts the builds it held."""

    opened: threading.Event = field(default_factory=threading.Event)
    builds: int = 0


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    held = Gate()
    build = Root._build_mirrors

    def gated(root: Root, agent_id: int) -> Mirrors:
        if not held.opened.is_set():
            held.builds += 1
            assert held.opened.wait(WAIT), "the test never opened the gate"
        return build(root, agent_id)

    monkeypatch.setattr(Root, "_build_mirrors", gated)
    held.opened.set()  # open while a test writes its file
    yield held
    held.opened.set()  # a failed test must not leave a build parked


# ---- writing a file -------------------------------------------------------------------------

Step = tuple[str, int, int]

steps = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.integers(0, 3), st.integers(0, 2)),
        st.tuples(st.just("delete_topic"), st.integers(0, 9), st.just(0)),
        st.tuples(st.just("delete_scene"), st.integers(0, 9), st.just(0)),
        st.tuples(st.just("merge"), st.integers(0, 9), st.integers(0, 9)),
        st.tuples(st.just("dream"), st.integers(0, 9), st.just(0)),
        st.tuples(st.just("plan"), st.integers(0, 3), st.just(0)),
    ),
    max_size=14,
)


@dataclass
class Writer:
    """Runs steps against a file; remembers the scenes and topics it made."""

    path: str
    scenes: list[str] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    clock: int = T0

    def run(self, todo: list[Step]) -> None:
        with memhop.open(
            self.path, memhop.LocalModel(), TABLE, memhop.ProfileInput(name="me")
        ) as db:
            me = db.primary()
            for step in todo:
                self._step(me, *step)

    def _step(self, me: memhop.Session, what: str, a: int, b: int) -> None:
        self.clock += 1_000
        live = [s.scene_id for s in me.list_scenes()]
        self.scenes = [s for s in self.scenes if s in live]
        if what in ("turn", "plan"):
            scene = self.scenes[a % len(self.scenes)] if a and self.scenes else ""
            opened = me.search(scene_id=scene, new_scene=not scene)
            if opened.scene.scene_id not in self.scenes:
                self.scenes.append(opened.scene.scene_id)
            for i in range(b):
                me.append_archive(content=f"line {i} at {self.clock}", created_at=self.clock)
            if what == "plan":
                me.plan_node_add(0, f"step at {self.clock}")
            row = me.update(
                input=f"asked at {self.clock}", output="answered", created_at=self.clock
            )
            self.topics.append(row.id)
        elif what == "delete_topic" and self.topics:
            topic = self.topics.pop(a % len(self.topics))
            with contextlib.suppress(memhop.NotFoundError):  # went with its scene, or was folded
                me.delete_topic(topic)
        elif what == "delete_scene" and self.scenes:
            me.delete_scene(self.scenes.pop(a % len(self.scenes)))
        elif what == "merge" and len(self.scenes) > 1:
            first, second = self.scenes[a % len(self.scenes)], self.scenes[b % len(self.scenes)]
            if first != second:
                me.merge_scenes(first, [second])
        elif what == "dream" and self.scenes:
            me.dream(self.scenes[a % len(self.scenes)])


# ---- reading it two ways --------------------------------------------------------------------


def _cold_answers(path: str, tmp: Path) -> dict[str, memhop.SceneContext]:
    """Each live scene's listing from a copy of the file without its map (built in full)."""
    copy = str(tmp / "cold.meh")
    shutil.copyfile(path, copy)
    assert not os.path.exists(copy + MAP)
    with memhop.open(copy, memhop.LocalModel(), TABLE) as db:
        me = db.primary()
        scenes = [s.scene_id for s in me.list_scenes()]
        return {s: me.scene_context(s) for s in scenes}


def _warm_answers(path: str, scenes: list[str], gate: Gate) -> dict[str, memhop.SceneContext]:
    """Each scene's listing read before the domain is built; the build is then let go."""
    if not scenes:
        return {}
    db = memhop.open(path, memhop.LocalModel(), TABLE)
    try:
        me = db.primary()
        found = {s: me.scene_context(s) for s in scenes}
        ctx = db._root._contexts[0]
        assert ctx.built is None  # every read above was answered from the map
        gate.opened.set()
        me.list_scenes()  # a call on the whole domain waits for the build
        assert ctx.built is not None
        return found
    finally:
        gate.opened.set()
        db.close()


@given(first=steps, then=steps, stale=st.booleans())
def test_a_warm_read_of_each_scene_equals_a_read_built_in_full(
    tmp_path_factory: pytest.TempPathFactory, first: list[Step], then: list[Step], stale: bool
) -> None:
    """Whatever was written before and after the map (``stale``: the map predates ``then``)."""
    tmp = tmp_path_factory.mktemp("warm")
    writer = Writer(str(tmp / "mem.meh"))
    writer.run([("turn", 0, 1), *first])
    old_map = Path(writer.path + MAP).read_bytes()
    writer.run(then)
    if stale:  # the map a crash would have left: the log has grown past it
        Path(writer.path + MAP).write_bytes(old_map)
    cold = _cold_answers(writer.path, tmp)
    held = Gate()
    build = Root._build_mirrors

    def gated(root: Root, agent_id: int) -> Mirrors:
        assert held.opened.wait(WAIT)
        return build(root, agent_id)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Root, "_build_mirrors", gated)
        warm = _warm_answers(writer.path, list(cold), held)
    assert warm == cold


@given(first=steps, then=steps)
def test_a_map_brought_up_to_date_lists_what_a_whole_map_lists(
    tmp_path_factory: pytest.TempPathFactory, first: list[Step], then: list[Step]
) -> None:
    """The close after ``then`` updates the map ``first`` left, scene by scene: each scene,
    topic and member a map made whole lists is listed there too (a deleted one may linger)."""
    tmp = tmp_path_factory.mktemp("updated")
    writer = Writer(str(tmp / "mem.meh"))
    writer.run([("turn", 0, 1), *first])
    writer.run(then)
    updated_map = decode_maps(Path(writer.path + MAP).read_bytes())
    copy = str(tmp / "whole.meh")
    shutil.copyfile(writer.path, copy)
    with memhop.open(copy, memhop.LocalModel(), TABLE) as db:
        db.primary().list_scenes()  # built in full: its close makes the map whole
    whole = decode_maps(Path(copy + MAP).read_bytes())
    assert updated_map.keys() == whole.keys() == {0}
    got, want = updated_map[0], whole[0]
    assert got.covered_end == want.covered_end
    assert got.current_scene == want.current_scene
    for scene_id in want.scene_ids.tolist():
        listed = got.topics_of(scene_id)
        assert set(want.topics_of(scene_id)) <= set(listed)
        for topic_id in want.topics_of(scene_id):
            assert set(want.members_of(topic_id, scene_id)) <= set(
                got.members_of(topic_id, scene_id)
            )


def _three_scenes(path: str) -> list[str]:
    """A closed file (so with its map) holding scenes of 2, 1 and 3 turns; the last is current."""
    writer = Writer(path)
    writer.run([("turn", 0, 1), ("turn", 1, 0), ("turn", 0, 2), ("turn", 0, 0), ("turn", 2, 1)])
    writer.run([("turn", 2, 0)])
    assert os.path.exists(path + MAP)
    return writer.scenes


def _first_read(path: str) -> tuple[memhop.SceneContext, bool]:
    """The current scene's listing at a fresh open, and whether the domain was built for it."""
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        found = db.primary().scene_context()
        return found, db._root._contexts[0].built is not None


def test_a_first_search_opens_the_current_scene_from_the_map(tmp_path: Path, gate: Gate) -> None:
    path = str(tmp_path / "mem.meh")
    scenes = _three_scenes(path)
    cold_path = str(tmp_path / "cold.meh")
    shutil.copyfile(path, cold_path)
    with memhop.open(cold_path, memhop.LocalModel(), TABLE) as db:
        cold = db.primary().search()  # the copy has no map: it is built at its first call
    gate.opened.clear()
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        warm = db.primary().search()
        assert db._root._contexts[0].built is None  # answered before the build
        gate.opened.set()
    assert warm.scene.scene_id == cold.scene.scene_id == scenes[-1]
    assert warm.topics == cold.topics
    assert len(warm.topics) == 3


def test_a_current_scene_deleted_since_the_map_is_found_among_all_scenes(tmp_path: Path) -> None:
    path = str(tmp_path / "mem.meh")
    scenes = _three_scenes(path)
    old_map = Path(path + MAP).read_bytes()
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        assert db.primary().search().scene.scene_id == scenes[-1]  # control: the last one used
        db.primary().delete_scene(scenes[-1])
    Path(path + MAP).write_bytes(old_map)  # a map that still names the deleted scene
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        opened = db.primary().search()
    assert opened.scene.scene_id == scenes[1]  # used before it
    assert len(opened.topics) == 1


def test_a_map_that_does_not_match_the_file_is_not_used(tmp_path: Path) -> None:
    first, second = str(tmp_path / "a.meh"), str(tmp_path / "b.meh")
    _three_scenes(first)
    _three_scenes(second)
    expected, built = _first_read(first)
    assert not built  # control: a file's own map is used
    own_map = Path(first + MAP).read_bytes()
    Path(first + MAP).write_bytes(Path(second + MAP).read_bytes())
    again, built = _first_read(first)
    assert built  # another file's map: the domain is built in full
    assert again == expected
    damaged = bytearray(own_map)
    damaged[len(damaged) // 2] ^= 0x40
    Path(first + MAP).write_bytes(bytes(damaged))
    again, built = _first_read(first)
    assert built  # a map that fails its checksum is not read
    assert again == expected
    Path(first + MAP).write_bytes(_with_a_falling_range(own_map))
    again, built = _first_read(first)
    assert built  # a range that falls under a good checksum: found at the read, not used
    assert again == expected
    assert len(expected.topics) == 3


def _with_a_falling_range(data: bytes) -> bytes:
    """The map with the current scene's second topic's member range made to fall."""
    (section,) = decode_maps(data).values()
    k = section.scene_ids.tolist().index(section.current_scene)
    start = section.scene_ends[k - 1] if k else 0
    ends = array("I", section.topic_ends)
    ends[start] = ends[start + 1] + 1
    return encode_maps([dataclasses.replace(section, topic_ends=ends)])


def test_a_compaction_deletes_the_map(tmp_path: Path) -> None:
    path = str(tmp_path / "mem.meh")
    _three_scenes(path)
    expected, built = _first_read(path)
    assert not built
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        db.compact()
        assert not os.path.exists(path + MAP)  # its ids named the old file's bytes
    again, built = _first_read(path)
    assert built
    assert again == expected
    _, built = _first_read(path)
    assert not built  # the close after the full build wrote a new map


def test_a_call_on_the_whole_domain_waits_for_the_build(tmp_path: Path, gate: Gate) -> None:
    path = str(tmp_path / "mem.meh")
    scenes = _three_scenes(path)
    gate.opened.clear()
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        me = db.primary()
        assert len(me.scene_context(scenes[0]).topics) == 2
        found: list[object] = []
        listing = threading.Thread(target=lambda: found.append(me.list_scenes()), daemon=True)
        listing.start()
        listing.join(0.2)
        assert listing.is_alive()  # held: the domain is not built yet
        assert len(me.scene_context(scenes[1]).topics) == 1  # scene reads still go on
        gate.opened.set()
        listing.join(WAIT)
        assert [len(found[0])] == [3]  # type: ignore[arg-type]
        assert gate.builds == 1


def test_close_stops_a_build_in_flight_and_keeps_the_map(tmp_path: Path, gate: Gate) -> None:
    path = str(tmp_path / "mem.meh")
    scenes = _three_scenes(path)
    old_map = Path(path + MAP).read_bytes()
    gate.opened.clear()
    db = memhop.open(path, memhop.LocalModel(), TABLE)
    assert len(db.primary().scene_context(scenes[0]).topics) == 2
    closing = threading.Thread(target=db.close, daemon=True)
    closing.start()
    closing.join(0.2)
    assert closing.is_alive()  # close waits for the build's thread to stop
    gate.opened.set()  # the build goes on into a closed file, and stops there
    closing.join(WAIT)
    assert not closing.is_alive()
    assert db.closed
    assert gate.builds == 1
    assert Path(path + MAP).read_bytes() == old_map  # kept: still exact for the file
    again, built = _first_read(path)
    assert not built
    assert len(again.topics) == 3


@pytest.mark.parametrize("failure", ["map", "disk"])
def test_a_map_that_cannot_be_written_costs_only_the_map(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, failure: str
) -> None:
    path = str(tmp_path / "mem.meh")
    scenes = _three_scenes(path)
    old_map = Path(path + MAP).read_bytes()

    def refuse(*_: object) -> None:
        raise (ValueError("map refused") if failure == "map" else OSError("disk refused"))

    if failure == "map":
        monkeypatch.setattr(map_file, "updated", refuse)
        monkeypatch.setattr(map_file, "map_of", refuse)
    else:
        monkeypatch.setattr(os, "replace", refuse)  # the side file is renamed into place
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        me = db.primary()
        me.search(scene_id=scenes[0])
        me.update(input="one more", output="turn", created_at=T0 + 99_000)
    assert "not written" in caplog.text
    monkeypatch.undo()
    assert Path(path + MAP).read_bytes() == old_map  # the old map stays, and is still exact
    assert sorted(os.listdir(tmp_path)) == ["mem.meh", "mem.meh" + MAP]  # no temporary left
    again, built = _first_read(path)
    assert not built  # the old map serves, with the turn written since read from the log
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        assert len(db.primary().scene_context(scenes[0]).topics) == 3
        assert len(again.topics) == 3


def _count_hashes(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """From now on, each pass the engine makes over the file's bytes: the ends it hashes."""
    hashed: list[list[int]] = []
    digests = Engine.prefix_digests

    def counted(engine: Engine, ends: Sequence[int]) -> list[bytes]:
        hashed.append(list(ends))
        return digests(engine, ends)

    monkeypatch.setattr(Engine, "prefix_digests", counted)
    return hashed


@pytest.mark.parametrize("skew", [False, True])
def test_a_close_ranks_the_current_scene_from_the_map_unless_it_lost_rank(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skew: bool
) -> None:
    """The map keeps its current scene's rank, so a close after turns on that scene ranks it
    against the scenes written since alone; a clock gone back (its rank fell) lists them all.

    Either way the next open's current scene is the one a copy built in full finds.
    """
    path = str(tmp_path / "mem.meh")
    scenes = _three_scenes(path)
    listed: list[int] = []
    every = map_file.scene.list_scenes

    def counted(engine: Engine, agent_id: int, *rest: Any) -> list[SceneSlot]:
        listed.append(agent_id)
        return every(engine, agent_id, *rest)

    monkeypatch.setattr(map_file.scene, "list_scenes", counted)
    clock = (lambda: T0 - 10**9) if skew else wall_clock_ms
    with DB(open_root(path, memhop.LocalModel(), TABLE, None, clock)) as db:
        me = db.primary()
        me.search()  # the current scene (the last), again
        me.update(input="again", output="noted", created_at=T0 + 60_000_000)
        me.list_scenes()  # built, so the close updates the map from the whole mirrors
        listed.clear()  # the call above lists them; count the close's own
    assert listed == ([0] if skew else [])  # listed only when the current scene lost rank
    again, built = _first_read(path)
    assert not built
    expected = _cold_current(path, tmp_path)
    assert again == expected
    names = {s.scene_id: s.scene_name for s in _listed_scenes(path, tmp_path)}
    assert (expected.scene_name == names[scenes[-1]]) is not skew  # the clock moved the current


def test_a_file_that_still_ends_in_the_maps_snapshot_is_not_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seal (the snapshot's CRC at the map's end) vouches for the file; else the digest."""
    path = str(tmp_path / "mem.meh")
    scenes = _three_scenes(path)
    hashed = _count_hashes(monkeypatch)
    expected, built = _first_read(path)
    assert not built
    assert hashed == []  # closed cleanly: the file still ends in the map's snapshot
    old_map = Path(path + MAP).read_bytes()
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        me = db.primary()
        me.search(scene_id=scenes[0])
        me.update(input="one more", output="turn", created_at=T0 + 99_000)
    Path(path + MAP).write_bytes(old_map)  # the log has grown past the map
    hashed.clear()
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        again = db.primary().scene_context()
        assert db._root._contexts[0].built is None
        assert len(hashed) == 1  # control: the seal no longer holds, so the prefix is hashed
    assert again.scene_name != expected.scene_name  # the turn written since moved the current
    assert len(again.topics) == 3  # scene: the first, with that turn read from the log
    hashed.clear()
    _, built = _first_read(path)
    assert not built
    assert hashed == []  # that close brought the map up to the file's end: sealed again


turns = st.lists(
    st.tuples(st.integers(0, 4), st.integers(0, 2), st.booleans()), min_size=1, max_size=6
)


@given(first=steps, warm_turns=turns, read_first=st.booleans())
def test_turns_on_a_warm_domain_are_in_its_build_and_its_next_map(
    tmp_path_factory: pytest.TempPathFactory,
    first: list[Step],
    warm_turns: list[Turn],
    read_first: bool,
) -> None:
    """Turns taken while the build is held are served by the scene views, then kept.

    Each turn (a scene of the file or a new one, some events, its update maybe
    replayed) is written with the build held: before it reads the file, or
    (``read_first``) after it read the file and before it hands its mirrors
    over, so only the turns the views took can bring them in. Every scene then
    reads as a copy built in full reads it: from the views, from the full
    build, and from the map the close wrote.
    """
    tmp = tmp_path_factory.mktemp("warm-turns")
    writer = Writer(str(tmp / "mem.meh"))
    writer.run([("turn", 0, 1), *first, ("turn", 0, 0)])  # the last makes a scene to read
    scenes = [s.scene_id for s in _listed_scenes(writer.path, tmp)]
    held = Gate()
    has_read = threading.Event()
    build = Root._build_mirrors

    def gated(root: Root, agent_id: int) -> Mirrors:
        if not read_first:
            assert held.opened.wait(WAIT)
        made = build(root, agent_id)
        has_read.set()
        assert held.opened.wait(WAIT)
        return made

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Root, "_build_mirrors", gated)
        db = memhop.open(writer.path, memhop.LocalModel(), TABLE)
        try:
            me = db.primary()
            me.scene_context(scenes[0])  # a scene read starts the build once it returns
            if read_first:
                assert has_read.wait(WAIT)
            for k, (pick, events, replay) in enumerate(warm_turns):
                _warm_turn(me, scenes, pick, events, replay, T0 + 10_000_000 + k)
            ctx = db._root._contexts[0]
            assert ctx.built is None  # every turn above was taken by the views
            warm = {s: me.scene_context(s) for s in scenes}
            assert ctx.built is None
            held.opened.set()
            me.list_scenes()  # waits for the build, which takes the turns in
            assert ctx.built is not None
            built = {s: me.scene_context(s) for s in scenes}
        finally:
            held.opened.set()
            db.close()
    cold = _cold_answers(writer.path, tmp)
    assert set(cold) == set(scenes)
    assert warm == cold
    assert built == cold
    again, from_full = _first_read(writer.path)
    assert not from_full  # read from the map this close wrote, with the turns in it
    assert again == _cold_current(writer.path, tmp)


Turn = tuple[int, int, bool]


def test_a_close_before_the_build_writes_the_map_from_the_views(
    tmp_path: Path, gate: Gate, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Turns a warm domain took are in the map its close writes, with no build finished."""
    path = str(tmp_path / "mem.meh")
    scenes = _three_scenes(path)
    old_map = Path(path + MAP).read_bytes()
    gate.opened.clear()
    db = memhop.open(path, memhop.LocalModel(), TABLE)
    me = db.primary()
    me.search(scene_id=scenes[0])
    me.update(input="taken while the build waits", output="kept", created_at=T0 + 50_000_000)
    assert db._root._contexts[0].built is None  # the turn did not wait for the build
    closing = threading.Thread(target=db.close, daemon=True)
    closing.start()
    closing.join(0.2)
    gate.opened.set()
    closing.join(WAIT)
    assert not closing.is_alive()
    assert gate.builds == 1
    assert Path(path + MAP).read_bytes() != old_map  # brought up to date from the view
    hashed = _count_hashes(monkeypatch)
    with memhop.open(path, memhop.LocalModel(), TABLE) as again:
        rows = again.primary().scene_context(scenes[0]).topics
        assert again._root._contexts[0].built is None  # read from the new map
        assert hashed == []  # which names the snapshot this file ends in
    assert len(rows) == 3  # control: the scene held 2 turns; the one taken warm is the third
    assert rows[-1].messages[0].content == "taken while the build waits"


def _listed_scenes(path: str, tmp: Path) -> list[memhop.Scene]:
    """The file's scenes, read from a copy (so the file's own domain stays warm)."""
    copy = str(tmp / "listing.meh")
    shutil.copyfile(path, copy)
    try:
        with memhop.open(copy, memhop.LocalModel(), TABLE) as db:
            return db.primary().list_scenes()
    finally:
        for leftover in (copy, copy + MAP):
            with contextlib.suppress(FileNotFoundError):
                os.remove(leftover)


def _cold_current(path: str, tmp: Path) -> memhop.SceneContext:
    """The current scene's listing from a copy of the file without its map."""
    copy = str(tmp / "current.meh")
    shutil.copyfile(path, copy)
    with memhop.open(copy, memhop.LocalModel(), TABLE) as db:
        return db.primary().scene_context()


def _warm_turn(
    me: memhop.Session, scenes: list[str], pick: int, events: int, replay: bool, at: int
) -> None:
    """One turn in scene ``pick`` (past the known scenes: a new one, remembered)."""
    opened = me.search(
        scene_id=scenes[pick] if pick < len(scenes) else "", new_scene=pick >= len(scenes)
    )
    if opened.scene.scene_id not in scenes:
        scenes.append(opened.scene.scene_id)
    for i in range(events):
        me.append_archive(content=f"warm event {i} at {at}", created_at=at)
    me.update(input=f"warm turn at {at}", output="noted", created_at=at)
    if replay:
        me.update(input=f"warm turn at {at}, said again", output="noted again", created_at=at)


def test_scene_reads_and_turns_from_several_threads_on_a_warm_domain(tmp_path: Path) -> None:
    """Readers of every scene and a writer of turns race the build; nothing is lost or mixed."""
    path = str(tmp_path / "mem.meh")
    scenes = _three_scenes(path)
    errors: list[BaseException] = []
    seen: dict[str, set[int]] = {s: set() for s in scenes}
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        me = db.primary()

        def read(scene: str) -> None:
            try:
                for _ in range(20):
                    seen[scene].add(len(me.scene_context(scene).topics))
            except BaseException as exc:  # handed to the test
                errors.append(exc)

        def write() -> None:
            try:
                for i in range(5):
                    me.search(scene_id=scenes[1])
                    me.update(input=f"late {i}", output="ok", created_at=T0 + 200_000 + i)
            except BaseException as exc:  # handed to the test
                errors.append(exc)

        threads = [threading.Thread(target=read, args=(s,)) for s in scenes]
        threads.append(threading.Thread(target=write))
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT)
        assert errors == []
        me.list_scenes()  # the writer did not wait for the build; a whole-domain call does
        assert db._root._contexts[0].built is not None
        final = {s: len(me.scene_context(s).topics) for s in scenes}
    assert final == {scenes[0]: 2, scenes[1]: 6, scenes[2]: 3}
    assert seen[scenes[0]] == {2}
    assert seen[scenes[2]] == {3}
    assert seen[scenes[1]] <= set(range(1, 7))  # each read saw a whole turn or none
    cold = _cold_answers(path, tmp_path)
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        assert {s: db.primary().scene_context(s) for s in scenes} == cold


def test_a_sub_agents_domain_starts_warm_and_reads_only_its_own_records(tmp_path: Path) -> None:
    path = str(tmp_path / "mem.meh")
    with memhop.open(path, memhop.LocalModel(), TABLE, memhop.ProfileInput(name="me")) as db:
        beta = db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="beta"))
        for session, who in ((db.primary(), "me"), (beta, "beta")):
            for i in range(2):
                session.search(new_scene=i == 0)
                session.update(input=f"{who} asks {i}", output="ok", created_at=T0 + i)
        beta_scene = beta.search().scene.scene_id
        primary_scene = db.primary().search().scene.scene_id
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        beta = db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="beta"))
        warm_rows = beta.scene_context(beta_scene).topics
        beta_ctx = next(c for a, c in db._root._contexts.items() if a != 0)
        assert beta_ctx.built is None  # answered from beta's own map
        assert [m.content for m in warm_rows[0].messages] == ["beta asks 0", "ok"]
        with pytest.raises(memhop.NotFoundError):
            beta.scene_context(primary_scene)  # the primary's scene is not beta's to read
        assert len(db.primary().scene_context(primary_scene).topics) == 2  # control: it exists
    assert len(warm_rows) == 2
