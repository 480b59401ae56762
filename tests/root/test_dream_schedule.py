"""Which background passes are whole: the domain-wide stages at most once an hour (white-box).

``run_pass(..., background=True)`` is what ``update``'s trigger runs; the
clock is the root's, moved by the test.
"""

from __future__ import annotations

from memhop.config import Defaults, ProfileInput
from memhop.dream.report import STAGES
from memhop.llm import LocalModel
from memhop.records import TopicSlot
from memhop.root import Root, open_root, turn
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
