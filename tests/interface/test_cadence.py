"""Dream at a host's natural cadence: leaving a scene, or coming back after an idle spell.

A host that opens a scene per conversation session seldom passes
``scene_dream_topic_threshold`` (24 rows), so upstream's trigger alone would
never fold its memory. With the default Defaults, ``search`` that leaves a
scene starts a background pass folding that scene toward
``settled_scene_floor`` (4), and ``search`` after ``agent_idle_ttl_ms``
without a turn starts one for the current scene, toward
``dream_compress_min_topics``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import memhop

from .conftest import TS, open_new
from .test_clock import Clock

HOUR_MS = 3_600_000


class Recording:
    """A model that folds the two oldest rows it is shown and notes each listing and floor."""

    def __init__(self) -> None:
        self._inner = memhop.LocalModel()
        self.asked: list[tuple[int, int]] = []  # (rows shown, floor)
        self.entered = threading.Event()

    def extract_keywords(self, text: str, *, cancel: threading.Event | None = None) -> Any:
        return self._inner.extract_keywords(text, cancel=cancel)

    def consolidate(
        self, topics: Sequence[Any], floor: int, *, cancel: threading.Event | None = None
    ) -> Any:
        self.asked.append((len(topics), floor))
        self.entered.set()
        if len(topics) < 2:
            return ()
        return (memhop.llm.Group(member_ids=(topics[0].id, topics[1].id), summary="a recap"),)

    def distill(self, samples: Sequence[Any], *, cancel: threading.Event | None = None) -> Any:
        return self._inner.distill(samples, cancel=cancel)

    def usage(self) -> Any:
        return memhop.llm.Usage()


def turns(me: memhop.Session, count: int, at: int, *, new_scene: bool = False) -> str:
    scene = ""
    for i in range(count):
        scene = me.search(new_scene=new_scene and i == 0).scene.scene_id
        me.update(input=f"we talk about gardens {i}", output=f"roses {i}", created_at=at + i)
    return scene


def _dream_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("memhop-dream-")]


def folded(me: memhop.Session, scene_id: str) -> bool:
    """Whether the scene shows a fold once the background passes in flight are done."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _dream_threads():
        time.sleep(0.01)
    return folded_now(me, scene_id)


def test_leaving_a_scene_folds_it_toward_the_settled_floor(meh_path: str) -> None:
    model = Recording()
    with open_new(meh_path, model, defaults=memhop.Defaults()) as db:
        me = db.primary()
        left = turns(me, 6, TS, new_scene=True)
        assert model.asked == []  # 6 rows: far below the threshold, nothing asked yet
        me.search(new_scene=True)
        assert folded(me, left)
        assert model.asked[0] == (6, memhop.DEFAULTS.settled_scene_floor)
        # The domain-wide stages ran on the same cadence: one L1 node for the scene.
        assert [n.scene_id for n in me.list_l1()] == [left]


def test_coming_back_after_an_idle_spell_folds_the_current_scene(meh_path: str) -> None:
    model = Recording()
    clock = Clock()
    with open_new(meh_path, model, defaults=memhop.Defaults(), clock=clock) as db:
        me = db.primary()
        scene = turns(me, 21, TS, new_scene=True)
        clock.now = TS + HOUR_MS // 2
        me.search()  # half an hour later: still the same conversation
        me.update(input="still gardens", created_at=clock.now)
        assert not model.entered.wait(0.2)
        assert model.asked == []
        clock.now += 2 * HOUR_MS
        me.search()  # two hours later
        assert folded(me, scene)
        assert model.asked[0] == (22, memhop.DEFAULTS.dream_compress_min_topics)


def test_a_negative_settled_floor_leaves_upstreams_trigger_alone(meh_path: str) -> None:
    model = Recording()
    knobs = memhop.Defaults(
        settled_scene_floor=-1, scene_dream_topic_threshold=3, dream_compress_min_topics=2
    )
    with open_new(meh_path, model, defaults=knobs) as db:
        me = db.primary()
        left = turns(me, 3, TS, new_scene=True)  # 3 rows: at the threshold, not above it
        me.search(new_scene=True)
        assert not model.entered.wait(0.3)
        assert model.asked == []
        assert not folded_now(me, left)
        busy = turns(me, 4, TS + 10)  # control: 4 > 3, upstream's trigger still fires
        assert folded(me, busy)
        assert model.asked == [(4, 2)]


def test_a_negative_threshold_starts_no_pass_at_all(meh_path: str) -> None:
    model = Recording()
    quiet = memhop.Defaults(scene_dream_topic_threshold=-1, dream_compress_min_topics=2)
    with open_new(meh_path, model, defaults=quiet) as db:
        me = db.primary()
        left = turns(me, 6, TS, new_scene=True)
        me.search(new_scene=True)
        assert not model.entered.wait(0.3)
        assert not folded_now(me, left)
        assert me.dream(left).consolidated_scenes == 1  # control: the scene folds when asked


def folded_now(me: memhop.Session, scene_id: str) -> bool:
    return any(t.child_count >= 2 for t in me.scene_context(scene_id).topics)


def test_a_pass_search_starts_waits_out_its_grace_and_a_close_within_it_drops_it(
    meh_path: str, monkeypatch: Any
) -> None:
    """The pass that leaving a scene starts waits ``SEARCH_GRACE_S`` before it begins, so
    the host's next calls run without it; a close within the grace drops it (its thread
    ends at once). With the grace as shipped, the same steps fold the scene: the pass is
    held back, not lost."""
    from memhop.root import dreams

    monkeypatch.setattr(dreams, "SEARCH_GRACE_S", 60.0)
    model = Recording()
    with open_new(meh_path, model, defaults=memhop.Defaults()) as db:
        me = db.primary()
        turns(me, 6, TS, new_scene=True)
        me.search(new_scene=True)
        assert len(_dream_threads()) == 1  # scheduled, and waiting
        assert me.recall("gardens roses")  # the host's call runs while the pass waits
        # Begun at once, the pass would ask the model within milliseconds (it does below).
        assert not model.entered.wait(0.5)
    assert model.asked == []  # closed within the grace: the pass never began
    assert _dream_threads() == []  # its wait ended with the close, not after 60 s

    monkeypatch.undo()
    again = Recording()
    with open_new(meh_path.replace(".meh", "-2.meh"), again, defaults=memhop.Defaults()) as db:
        me = db.primary()
        left = turns(me, 6, TS, new_scene=True)
        me.search(new_scene=True)
        assert folded(me, left)
        assert again.asked[0] == (6, memhop.DEFAULTS.settled_scene_floor)
