"""Consolidation looks at the scenes that changed since its last look, and at no other.

``SceneLooks`` against a model restated (Hypothesis), then through ``compress_scenes``:
a whole look after no change reads no surface; a change, a failure's back-off running
out and a cancelled call each bring a scene back.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from memhop.dream import compress
from memhop.dream.scene_looks import SceneLooks
from memhop.errors import LLMError
from memhop.index.journal import Journal
from memhop.index.l2meta import L2Meta
from tests.dream.conftest import NOW, SCENE, Domain, fold

SCENES = (1, 2, 3, 4)

_change = st.tuples(st.just("change"), st.sampled_from(SCENES))
_again = st.tuples(st.just("again"), st.sampled_from(SCENES))
_whole = st.tuples(st.just("whole"), st.sampled_from((2, 3)))
_scoped = st.tuples(st.just("scoped"), st.tuples(st.sampled_from(SCENES), st.sampled_from((2, 3))))


@given(st.lists(st.one_of(_change, _again, _whole, _scoped), max_size=40))
def test_looks_take_every_scene_whose_answer_may_differ(ops: list[tuple[str, object]]) -> None:
    looks, journal = SceneLooks(), Journal()
    # The rule restated: a scene is settled at floor f once looked at with f since its
    # last change (or "again"); a look takes the scenes not settled at its floor.
    settled: dict[int, int | None] = dict.fromkeys(SCENES)
    whole_floor: int | None = None
    for op, arg in ops:
        if op == "change":
            assert isinstance(arg, int)
            journal.note(arg)
            if journal.watching:
                settled[arg] = None
        elif op == "again":
            assert isinstance(arg, int)
            looks.again(arg)
            settled[arg] = None
        else:
            scenes: tuple[int, ...]
            if op == "whole":
                assert isinstance(arg, int)
                scenes, floor = SCENES, arg
            else:
                assert isinstance(arg, tuple)
                scenes, floor = (arg[0],), arg[1]
            took = looks.to_look_at(journal, scenes, floor, whole=op == "whole")
            if floor != whole_floor:
                expected = list(scenes)  # nothing is settled at a floor no whole look used
                if op == "whole":
                    whole_floor = floor
            else:
                expected = [s for s in scenes if settled[s] != floor]
            assert took == expected
            looks.looked(took, floor)
            if floor == whole_floor:
                for s in took:
                    settled[s] = floor


def test_a_second_look_without_a_change_takes_nothing() -> None:
    looks, journal = SceneLooks(), Journal()
    assert looks.to_look_at(journal, SCENES, 2, whole=True) == list(SCENES)
    looks.looked(SCENES, 2)
    assert looks.to_look_at(journal, SCENES, 2, whole=True) == []
    journal.note(3)  # the same look after a change takes that scene, and it alone
    assert looks.to_look_at(journal, SCENES, 2, whole=True) == [3]


@contextmanager
def _surfaces_read() -> Iterator[list[int]]:
    seen: list[int] = []
    real = L2Meta.surface_count

    def counted(meta: L2Meta, scene_id: int) -> int:
        seen.append(scene_id)
        return real(meta, scene_id)

    with mock.patch.object(L2Meta, "surface_count", counted):
        yield seen


def _three(dom: Domain, scene: int, first: int) -> None:
    for i in range(3):
        dom.turn(first + i, user_ts=1000 + first + i, scene=scene)


def test_a_whole_look_reads_only_the_scenes_that_changed(dom: Domain) -> None:
    _three(dom, SCENE, 10)
    _three(dom, SCENE + 1, 20)
    env = dom.env()
    with _surfaces_read() as seen:
        compress.compress_scenes(env, [SCENE, SCENE + 1], whole=True)  # both declined
    assert sorted(set(seen)) == [SCENE, SCENE + 1]
    assert dom.model.calls["consolidate"] == 2
    with _surfaces_read() as seen:  # asked last time: looked at once more, found declined
        compress.compress_scenes(env, [SCENE, SCENE + 1], whole=True)
    assert sorted(set(seen)) == [SCENE, SCENE + 1]
    with _surfaces_read() as seen:
        compress.compress_scenes(env, [SCENE, SCENE + 1], whole=True)
    assert seen == []  # nothing changed: no surface read
    assert dom.model.calls["consolidate"] == 2
    dom.turn(30, user_ts=5000, scene=SCENE + 1)
    dom.model.groups = lambda t: (fold(t[0].id, t[1].id),)
    with _surfaces_read() as seen:
        outcomes = compress.compress_scenes(env, [SCENE, SCENE + 1], whole=True)
    assert set(seen) == {SCENE + 1}
    assert [o.scene_id for o in outcomes] == [SCENE + 1]
    assert outcomes[0].groups == 1


def test_a_scene_held_back_is_asked_once_its_back_off_ends_without_a_change(
    dom: Domain,
) -> None:
    _three(dom, SCENE, 10)
    now = [NOW]
    env = dom.env(clock=lambda: now[0])

    def refuse(_t: object) -> tuple[()]:
        raise LLMError("model down")

    dom.model.groups = refuse
    compress.compress_scenes(env, [SCENE], whole=True)
    dom.turn(40, user_ts=4000)  # a new listing, but the back-off has not ended
    compress.compress_scenes(env, [SCENE], whole=True)
    assert dom.model.calls["consolidate"] == 1
    now[0] += compress.BACKOFF_BASE_MS  # time passes; the scene does not change
    dom.model.groups = lambda t: (fold(t[0].id, t[1].id),)
    outcomes = compress.compress_scenes(env, [SCENE], whole=True)
    assert dom.model.calls["consolidate"] == 2
    assert outcomes[0].groups == 1


def test_a_cancelled_pass_leaves_its_scenes_due(dom: Domain) -> None:
    _three(dom, SCENE, 10)
    cancel = threading.Event()
    cancel.set()
    assert compress.compress_scenes(dom.env(cancel=cancel), [SCENE], whole=True)[0].unusable
    assert dom.model.calls["consolidate"] == 0
    dom.model.groups = lambda t: (fold(t[0].id, t[1].id),)
    outcomes = compress.compress_scenes(dom.env(), [SCENE], whole=True)
    assert dom.model.calls["consolidate"] == 1
    assert outcomes[0].groups == 1


def test_the_topic_mirror_notes_the_scenes_it_changes(dom: Domain) -> None:
    meta = dom.mirrors.topics
    meta.scene_journal.drain()  # watch from here
    row = dom.turn(10, scene=SCENE)
    dom.turn(20, scene=SCENE + 1)
    assert meta.scene_journal.drain() == {SCENE, SCENE + 1}
    meta.put(dataclasses.replace(row, scene_id=SCENE + 2))  # a move changes both scenes
    assert meta.scene_journal.drain() == {SCENE, SCENE + 2}
    meta.remove([20])
    assert meta.scene_journal.drain() == {SCENE + 1}
    assert meta.scene_journal.drain() == set()
