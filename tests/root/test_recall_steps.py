"""A domain's first recall builds its index in steps, each under its own hold of the domain
lock: turns go on between the steps, and the index ends as a build in one hold leaves it."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import memhop
from memhop.root import recall as recall_module
from memhop.root import recall_index
from memhop.root.ops import AgentOps
from memhop.root.recall_index import build_step, current_state

TS = 1_700_000_000_000
WORDS = ("harbour", "ferry", "kitten", "garden", "violin", "marathon", "pottery", "camping")


def _talk(me: memhop.Session, scenes: int, at: int = TS) -> None:
    for s in range(scenes):
        for t in range(2):
            me.search(new_scene=t == 0)
            word = WORDS[(s + t) % len(WORDS)]
            me.update(
                input=f"we spoke of the {word} {s}", output=f"the {word} again", created_at=at
            )
            at += 1


def _open(path: str) -> memhop.DB:
    return memhop.open(
        path,
        memhop.LocalModel(),
        memhop.Defaults(scene_dream_topic_threshold=-1),
        memhop.ProfileInput(name="p"),
    )


def test_a_build_in_steps_with_turns_between_equals_one_build(tmp_path: Path) -> None:
    with _open(str(tmp_path / "a.meh")) as db:
        me = db.primary()
        _talk(me, 12)
        ops = AgentOps(db._root, 0)
        steps = 0
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(recall_index, "BUILD_STEP_S", 0.0)  # one unit a step
            while not ops.run(build_step):
                steps += 1
                if steps in (2, 5):  # a turn in a scene indexed already, then a new scene
                    _talk(me, 1, at=TS + 10_000 + steps)
        assert steps >= 11  # a step a scene (the last answers True): the lock was free between
        stepped = ops.run(current_state)
        hits = [h.text for h in me.recall("ferry kitten", limit=10)]
    with _open(str(tmp_path / "a.meh")) as db:  # a fresh build, in one hold
        me = db.primary()
        fresh = AgentOps(db._root, 0).run(current_state)
        assert stepped.index == fresh.index
        assert [h.text for h in me.recall("ferry kitten", limit=10)] == hits
        assert hits  # control: the query finds rows


def test_a_turn_goes_on_while_another_thread_builds_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started, go = threading.Event(), threading.Event()

    def between_steps() -> None:  # the build's pause, with the lock free
        started.set()
        go.wait(10)

    with _open(str(tmp_path / "b.meh")) as db:
        me = db.primary()
        _talk(me, 6)
        monkeypatch.setattr(recall_index, "BUILD_STEP_S", 0.0)
        monkeypatch.setattr(recall_module, "between_steps", between_steps)
        found: list[Any] = []
        builder = threading.Thread(target=lambda: found.append(me.recall("harbour")))
        builder.start()
        assert started.wait(10)  # the build is between two steps
        me.search()
        closed = me.update(input="a turn while the index is built", created_at=TS + 99_999)
        assert builder.is_alive()  # the turn did not wait for the whole build
        go.set()
        builder.join(10)
        monkeypatch.undo()
        assert found[0]  # control: the recall answered once built
        assert closed.id in {h.topic_id for h in me.recall("index built", limit=10)}
