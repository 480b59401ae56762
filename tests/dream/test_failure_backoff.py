"""A failed consolidation is remembered like a decline, with a back-off; the pass goes on."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from memhop.dream import STAGES, compress, run_dream
from memhop.errors import LLMError, OperationCancelledError
from memhop.layers import scene
from memhop.llm import Group, TopicDigest
from memhop.records import SceneSlot
from tests.dream.conftest import NOW, SCENE, Domain, fold

MINUTE_MS = 60_000


def _seed(dom: Domain, *ids: int) -> None:
    scene.put_scene(dom.engine, 0, SceneSlot(scene_id=SCENE, scene_name="s"))
    for i, tid in enumerate(ids):
        dom.turn(tid, ("retry", "policy", f"k{tid}"), 1000 + tid + i)


def _failing(_topics: Sequence[TopicDigest]) -> Sequence[Group]:
    raise LLMError("consolidation: the model answered off contract")


def test_a_failed_consolidation_lets_the_pass_reach_l1_and_distillation(dom: Domain) -> None:
    _seed(dom, 1, 2, 3)
    dom.model.groups = _failing
    report, error = run_dream(dom.env())
    assert error is None
    assert tuple(s.name for s in report.stages) == STAGES
    statuses = {s.name: s.status for s in report.stages}
    assert statuses["l2_compress"] == "error"
    assert statuses["l0_distill"] == "ok"
    assert report.l0_updated
    assert report.consolidated_scenes == 0
    assert dom.model.calls["distill"] == 1


def test_a_failed_scene_is_not_asked_again_on_the_same_surface(dom: Domain) -> None:
    _seed(dom, 1, 2, 3)
    dom.model.groups = _failing
    late = NOW + 365 * 24 * 60 * MINUTE_MS  # long past any back-off
    compress.compress_scenes(dom.env(), [SCENE])
    compress.compress_scenes(dom.env(clock=lambda: late), [SCENE])
    assert dom.model.calls["consolidate"] == 1  # unchanged surface: never again
    dom.turn(4, ("retry",), 5000)
    compress.compress_scenes(dom.env(clock=lambda: late), [SCENE])
    assert dom.model.calls["consolidate"] == 2  # positive control: a new surface, past the wait


def test_a_changed_surface_still_waits_out_a_doubling_back_off(dom: Domain) -> None:
    _seed(dom, 1, 2, 3)
    dom.model.groups = _failing
    clock = [NOW]
    env = dom.env(clock=lambda: clock[0])
    compress.compress_scenes(env, [SCENE])  # the first failure: wait 5 minutes
    waits = []
    for tid in (4, 5, 6):
        dom.turn(tid, ("retry",), 5000 + tid)  # the surface changes every time
        asked, waited = dom.model.calls["consolidate"], 0
        while dom.model.calls["consolidate"] == asked and waited < 1000:
            waited += 1
            clock[0] += MINUTE_MS
            compress.compress_scenes(env, [SCENE])
        waits.append(waited)
    assert waits == [5, 10, 20]


def test_a_success_or_a_decline_clears_the_failure(dom: Domain) -> None:
    _seed(dom, 1, 2, 3)
    dom.model.groups = _failing
    compress.compress_scenes(dom.env(), [SCENE])
    assert isinstance(dom.declined[SCENE], compress.Failed)
    dom.turn(4, ("retry",), 5000)
    dom.model.groups = lambda t: (fold(t[0].id, t[1].id),)
    later = NOW + 6 * MINUTE_MS
    (out,) = compress.compress_scenes(dom.env(clock=lambda: later), [SCENE])
    assert out.groups == 1
    assert SCENE not in dom.declined


def test_a_cancelled_call_is_not_a_failure(dom: Domain) -> None:
    _seed(dom, 1, 2, 3)
    cancel = threading.Event()

    def cancelled(_topics: Sequence[TopicDigest]) -> Sequence[Group]:
        cancel.set()
        raise OperationCancelledError("llm call cancelled")

    dom.model.groups = cancelled
    compress.compress_scenes(dom.env(cancel=cancel), [SCENE])
    assert SCENE not in dom.declined
    dom.model.groups = _failing  # positive control: a real failure is remembered
    compress.compress_scenes(dom.env(), [SCENE])
    assert isinstance(dom.declined[SCENE], compress.Failed)
