"""Which background passes are whole: the domain-wide stages at most once an hour (white-box).

``run_pass(..., background=True)`` is what ``update``'s trigger runs; the
clock is the root's, moved by the test.
"""

from __future__ import annotations

import pytest

from memhop.config import Defaults, ProfileInput
from memhop.dream import DreamEnv
from memhop.dream.report import STAGES
from memhop.llm import LocalModel
from memhop.records import TopicSlot
from memhop.root import Root, dreams, open_root, turn
from memhop.root.dreams import SWEEP_INTERVAL_MS, run_pass
from memhop.root.ops import AgentOps

T0 = 1_700_000_000_000
WHOLE = list(STAGES)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


def _turns(root: Root, n: int) -> int:
    """``n`` turns in a new scene of the primary; return the scene id."""
    ops = AgentOps(root, 0)
    scene = 0
    for i in range(n):
        opened = ops.run(turn.search, ops.now(), scene, 0, scene == 0)
        scene = opened.scene.scene_id
        row = ops.run(turn.update, f"order {i} for the warehouse", f"shipped {i}", "", T0 + i)
        assert isinstance(row, TopicSlot)
    return scene


def _stages(root: Root, scene: int, *, background: bool) -> list[str]:
    report, error = run_pass(root, 0, scene, None, background=background)
    assert error is None
    return [stage.name for stage in report.stages]


def test_a_background_pass_is_whole_once_an_hour_and_folds_its_scene_in_between(
    meh_path: str,
) -> None:
    clock = Clock()
    defaults = Defaults(scene_dream_topic_threshold=-1, dream_compress_min_topics=2)
    root = open_root(meh_path, LocalModel(), defaults, ProfileInput(name="p"), clock=clock)
    try:
        first, second = _turns(root, 4), _turns(root, 4)
        assert _stages(root, first, background=True) == WHOLE  # the first since the load
        clock.now += SWEEP_INTERVAL_MS - 1
        assert _stages(root, second, background=True) == ["l2_compress"]
        # The fold still happened: the scene has a row with children now.
        listing = AgentOps(root, 0).run(lambda _e, ctx: ctx.mirrors.topics.listing(second))
        assert any(row.child_count for row in listing)
        assert _stages(root, second, background=False) == WHOLE  # the host's pass is whole
        clock.now += SWEEP_INTERVAL_MS - 1  # an hour less 1 ms after the host's pass
        assert _stages(root, first, background=True) == ["l2_compress"]
        clock.now += 1
        assert _stages(root, first, background=True) == WHOLE
    finally:
        root.close()


def test_a_background_pass_beside_a_running_whole_pass_folds_only_its_scene(
    meh_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A whole pass that outlasts a scene (a reopened domain's first, at 10^5 turns) was
    # joined by one more whole pass per scene left, each redoing the cold reads.
    clock = Clock()
    defaults = Defaults(scene_dream_topic_threshold=-1, dream_compress_min_topics=2)
    root = open_root(meh_path, LocalModel(), defaults, ProfileInput(name="p"), clock=clock)
    beside: list[list[str]] = []
    real = dreams.run_dream

    def whole_pass_running(env: DreamEnv, scene_id: int = 0, *, sweep: bool = True) -> object:
        if sweep and not beside:
            clock.now += SWEEP_INTERVAL_MS  # due again, while this pass still runs
            beside.append(_stages(root, second, background=True))
            beside.append(_stages(root, second, background=False))
        return real(env, scene_id, sweep=sweep)

    monkeypatch.setattr(dreams, "run_dream", whole_pass_running)
    try:
        first, second = _turns(root, 4), _turns(root, 4)
        assert _stages(root, first, background=True) == WHOLE
        # Beside it: the background pass folds its scene only; the host's pass is whole.
        assert beside == [["l2_compress"], WHOLE]
        clock.now += SWEEP_INTERVAL_MS
        # The same background pass once none runs: whole, so the rule was the running one.
        assert _stages(root, second, background=True) == WHOLE
    finally:
        root.close()
