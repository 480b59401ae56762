"""The whole pass: stage order, failures, cancellation, determinism over copies of a file."""

from __future__ import annotations

import dataclasses
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from memhop.dream import STAGES, decay, flush, hyperedges, pipeline, run_dream
from memhop.dream.env import DreamEnv, Held
from memhop.dream.l1cache import L1Cache
from memhop.engine import create_engine, open_engine
from memhop.errors import ClosedError, OperationCancelledError
from memhop.layers import plan, scene, topic
from memhop.llm import LocalModel
from memhop.records import PlanNode, PlanStatusCode, SceneSlot
from tests.dream.conftest import NOW, SCENE, Domain, fold


def _scene(dom: Domain, scene_id: int) -> None:
    scene.put_scene(dom.engine, 0, SceneSlot(scene_id=scene_id, scene_name="s"))


def _seed(dom: Domain) -> None:
    for scene_id in (SCENE, SCENE + 1):
        _scene(dom, scene_id)
        for i in range(3):
            dom.turn(scene_id * 100 + i, ("retry", "policy", f"k{i}"), 1000 + i, scene=scene_id)


def test_a_pass_reports_every_stage_in_order(dom: Domain) -> None:
    _seed(dom)
    dom.model.groups = lambda t: (fold(t[0].id, t[1].id),)
    report, error = run_dream(dom.env())
    assert error is None
    assert tuple(s.name for s in report.stages) == STAGES
    assert {s.status for s in report.stages} == {"ok"}
    assert (report.consolidated_scenes, report.l2_topics_compressed) == (2, 4)
    assert report.l1_nodes_added == 2
    assert report.l1_edges_added == 1
    assert report.l0_updated
    assert not any(dom.model.locked_during_call)


def test_no_scene_gives_only_the_sweeps(dom: Domain) -> None:
    report, error = run_dream(dom.env())
    assert error is None
    assert [s.name for s in report.stages] == ["l4_prune", "l5_prune"]


def test_nothing_usable_is_an_error_at_l2_compress_and_the_pass_goes_on(dom: Domain) -> None:
    _seed(dom)
    dom.model.groups = lambda t: (fold(t[0].id),)
    report, error = run_dream(dom.env())
    assert error is None
    assert tuple(s.name for s in report.stages) == STAGES
    assert report.stages[2].name == "l2_compress"
    assert report.stages[2].status == "error"
    assert report.consolidated_scenes == 0
    assert report.l0_updated


def test_a_decline_is_not_an_error(dom: Domain) -> None:
    _seed(dom)
    report, error = run_dream(dom.env())
    assert error is None
    assert report.consolidated_scenes == 0
    assert dom.model.calls["consolidate"] == 2
    run_dream(dom.env())
    assert dom.model.calls["consolidate"] == 2  # the same listings are not asked again


def test_cancel_at_a_stage_boundary(dom: Domain) -> None:
    _seed(dom)
    cancel = threading.Event()
    cancel.set()
    report, error = run_dream(dom.env(cancel=cancel))
    assert isinstance(error, OperationCancelledError)
    assert error.code == 5008
    assert [(s.name, s.status) for s in report.stages] == [("l4_prune", "cancelled")]
    assert dom.model.calls == {}


def test_cancel_during_distill_is_reported_cancelled(dom: Domain) -> None:
    _seed(dom)
    cancel = threading.Event()
    dom.model.groups = lambda t: (fold(t[0].id, t[1].id),)
    original = dom.model.distill

    def cancelled(samples: object, *, cancel_event: object = None, **kw: object) -> object:
        cancel.set()
        return original(samples)  # type: ignore[arg-type]

    dom.model.distill = cancelled  # type: ignore[assignment,method-assign]
    report, error = run_dream(dom.env(cancel=cancel))
    assert isinstance(error, OperationCancelledError)
    assert report.stages[-1].name == "l0_distill"
    assert report.stages[-1].status == "cancelled"
    assert not report.l0_updated


@pytest.mark.parametrize("closing", [True, False])
def test_a_stage_failing_as_the_file_closes_is_a_cancel_not_a_warning(
    dom: Domain, caplog: pytest.LogCaptureFixture, closing: bool
) -> None:
    _seed(dom)
    cancel = threading.Event()
    real = pipeline._in_holds

    def swept(env: DreamEnv, stage: str, step: Callable[[Held], bool]) -> None:
        if stage != "l4_prune":
            return real(env, stage, step)
        if closing:
            cancel.set()  # the file's close, under the stage
        raise ClosedError("engine is closed")

    with mock.patch.object(pipeline, "_in_holds", swept), caplog.at_level("WARNING"):
        report, error = run_dream(dom.env(cancel=cancel))
    if closing:
        assert isinstance(error, OperationCancelledError)
        assert [(s.name, s.status) for s in report.stages] == [("l4_prune", "cancelled")]
        assert "failed" not in caplog.text
    else:  # control: the same failure with the file open is a soft stage's warning
        assert error is None  # the rest of the pass ran
        assert report.stages[0].name == "l4_prune"
        assert report.stages[0].status != "cancelled"
        assert "l4_prune failed, the pass continues: engine is closed" in caplog.text


def _layer(path: str) -> tuple[object, ...]:
    engine = open_engine(path)
    try:
        return (
            tuple(scene.list_scene_nodes(engine, 0)),
            tuple(scene.list_scene_edges(engine, 0)),
        )
    finally:
        engine.close()


def _seed_file(tmp_path: Path, scenes: int, turns: int) -> str:
    """A file of ``scenes`` scenes of ``turns`` rows, a word every scene shares and one of
    three groups: the seed that copies of it are dreamed over."""
    source = str(tmp_path / "seed.meh")
    engine = create_engine(source)
    dom = Domain(engine)
    for scene_id in range(1, scenes + 1):
        _scene(dom, scene_id)
        for i in range(turns):
            words = ("shared", f"s{scene_id % 3}", f"t{i}")
            dom.turn(scene_id * 100 + i, words, 1000 + i, scene=scene_id)
    engine.close()
    return source


def test_two_runs_over_copies_build_the_same_association_layer(tmp_path: Path) -> None:
    source = _seed_file(tmp_path, 6, 4)
    layers = []
    for name in ("a.meh", "b.meh"):
        copy = str(tmp_path / name)
        shutil.copyfile(source, copy)
        run_engine = open_engine(copy)
        run = Domain(run_engine)
        run.model = LocalModel()  # type: ignore[assignment]
        ticks = iter(range(NOW, NOW + 10_000))
        report, error = run_dream(run.env(floor=2, clock=ticks.__next__))
        assert error is None, error
        assert report.l1_edges_added > 0
        run_engine.close()
        layers.append(_layer(copy))
    assert layers[0] == layers[1]
    assert len(layers[0][0]) == 6


def _layer_at(engine: Any, now: int) -> tuple[object, ...]:
    """The layer as it stands at ``now``: a node's importance decayed by its own clock (a
    node stored earlier reads as one stored now), and the edges."""
    nodes = tuple(
        (n.scene_id, n.topic_ids, n.edge_ids, round(decay.node_importance_at(n, now), 9))
        for n in scene.list_scene_nodes(engine, 0)
    )
    return nodes, tuple(scene.list_scene_edges(engine, 0))


def test_holds_cut_short_by_time_build_the_layer_one_long_hold_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every hold's time spent at once (each bounded stage does one unit a hold, many
    holds a stage; the edge stage two pairs a hold): after each pass (the first, one with
    new scenes, one whose decay fades every node out of its edges) the layer stands as
    holds without a time limit leave it."""
    monkeypatch.setattr(hyperedges, "WEIGH_RUN", 2)
    source = _seed_file(tmp_path, 8, 3)
    runs: list[list[tuple[object, ...]]] = []
    holds = []
    for name, spent in (("long.meh", False), ("cut.meh", True)):
        copy = str(tmp_path / name)
        shutil.copyfile(source, copy)
        run = Domain(open_engine(copy))
        taken, seen = 0, []
        for hour, scenes in ((0, ()), (1, (9, 10)), (400, ()), (401, (11,))):
            for scene_id in scenes:
                _scene(run, scene_id)
                run.turn(scene_id * 100, ("shared", "s1", "late"), 2000, scene=scene_id)
            now = NOW + hour * 3_600_000
            env = run.env(clock=lambda now=now: now, spent=spent)

            def counted(hold: Any = env.hold) -> Any:
                nonlocal taken
                taken += 1
                return hold()

            _report, error = run_dream(dataclasses.replace(env, hold=counted))
            assert error is None, error
            with run.hold() as held:
                flush(held)  # the nodes' grown edge lists, stored lazily, as a close stores them
            seen.append(_layer_at(run.engine, now))
        run.engine.close()
        runs.append(seen)
        holds.append(taken)
    assert runs[0] == runs[1]
    nodes, edges = runs[0][1]
    assert len(nodes) == 10
    assert len(edges) > 10
    nodes, edges = runs[0][2]
    assert not edges
    assert all(n[3] < 0.15 for n in nodes)
    assert holds[1] > holds[0]  # the cut run took more holds to do it


def test_a_cold_cache_is_read_and_weighed_without_the_domain_lock(dom: Domain) -> None:
    """A pass on a cold cache makes its reads and weighs every pair while turns may go on,
    and the stages under the lock take them (no topic read, no pair weighed of their own);
    a second pass finds the cache warm and does neither."""
    _seed(dom)
    locked: dict[str, list[bool]] = {"preloaded": [], "similar_pairs": []}

    def unlocked(owner: Any, name: str) -> Any:
        real = getattr(owner, name)

        def spy(*args: Any) -> Any:
            locked[name].append(dom.lock.locked())
            return real(*args)

        return mock.patch.object(owner, name, spy)

    with (
        unlocked(L1Cache, "preloaded"),
        unlocked(decay, "similar_pairs"),
        mock.patch.object(topic, "iter_topics_strict", wraps=topic.iter_topics_strict) as reads,
    ):
        report, error = run_dream(dom.env())
        assert error is None
        assert (report.l1_nodes_added, report.l1_edges_added) == (2, 1)
        assert locked == {"preloaded": [False], "similar_pairs": [False]}
        assert reads.call_count == 1  # the preload's own read
        run_dream(dom.env(clock=lambda: NOW + 60_000))
        assert locked == {"preloaded": [False], "similar_pairs": [False]}  # a warm cache


def test_the_plan_sweep_lists_its_steps_without_the_domain_lock(dom: Domain) -> None:
    """The steps are listed from the engine's index while turns may go on (a typed scan
    costs what the domain holds), then read and swept under the lock: the stale step goes
    and the recent one stays, so the listing is the sweep's and not a skipped stage."""
    _seed(dom)
    month = 30 * 24 * 3_600_000
    for seq, status, at in (
        (1, PlanStatusCode.DONE, NOW - month),
        (2, PlanStatusCode.DONE, NOW),
    ):
        node = PlanNode(id_hash=0, topic_id=7, seq=seq, status=status, updated_at=at)
        dom.mirrors.plans.put(plan.write_plan_node(dom.engine, 0, node))
    locked: list[bool] = []
    real = plan.plan_node_ids

    def listed(*args: Any) -> list[int]:
        locked.append(dom.lock.locked())
        return real(*args)

    with mock.patch.object(plan, "plan_node_ids", listed):
        report, error = run_dream(dom.env())
    assert error is None, error
    assert locked == [False]
    assert report.l5_nodes_pruned == 1
    assert [
        n.seq for n in plan.read_plan_nodes_strict(dom.engine, 0, plan.plan_node_ids(dom.engine, 0))
    ] == [2]


def test_a_domain_without_plan_steps_skips_the_plan_sweeps_listing(dom: Domain) -> None:
    """No step in the mirror: the pass lists nothing (no typed scan of the domain's index
    a pass); once a stale step is written, the same pass lists the steps and sweeps it, so
    the skip is the mirror's answer and not a listing that never runs."""
    _seed(dom)
    calls: list[int] = []
    real = plan.plan_node_ids

    def listed(*args: Any) -> list[int]:
        calls.append(1)
        return real(*args)

    with mock.patch.object(plan, "plan_node_ids", listed):
        report, error = run_dream(dom.env())
        assert error is None, error
        assert (calls, report.l5_nodes_pruned) == ([], 0)
        assert "l5_prune" in [s.name for s in report.stages]
        stale = PlanNode(id_hash=0, topic_id=7, seq=1, status=PlanStatusCode.DONE, updated_at=1)
        dom.mirrors.plans.put(plan.write_plan_node(dom.engine, 0, stale))
        report, error = run_dream(dom.env(clock=lambda: NOW + 60_000))
        assert error is None, error
        assert (calls, report.l5_nodes_pruned) == ([1], 1)


def test_distillation_is_not_asked_again_for_the_samples_it_was_given(dom: Domain) -> None:
    """An idle pass shows the model nothing new, so it is not asked (beyond upstream)."""
    _seed(dom)
    first, _ = run_dream(dom.env())
    assert first.l0_updated
    assert dom.model.calls["distill"] == 1
    again, _ = run_dream(dom.env(clock=lambda: NOW + 3_600_000))
    assert not again.l0_updated
    assert [s.status for s in again.stages if s.name == "l0_distill"] == ["skipped"]
    assert dom.model.calls["distill"] == 1
    _scene(dom, SCENE + 2)  # control: a new scene's node changes the samples
    dom.turn((SCENE + 2) * 100, ("harbour", "boats"), 2000, scene=SCENE + 2)
    changed, _ = run_dream(dom.env(clock=lambda: NOW + 7_200_000))
    assert changed.l0_updated
    assert dom.model.calls["distill"] == 2


def test_a_pass_cancelled_in_its_edge_stage_leaves_the_rest_to_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warm layer, three new scenes; every hold's time spent at once, two pairs a
    weighing, and the host's cancel after the edge stage's first hold. The pass reports
    the stage cancelled, and the next pass (nothing changed meanwhile) leaves the layer a
    pass that was not cancelled leaves."""
    monkeypatch.setattr(hyperedges, "WEIGH_RUN", 2)
    source = _seed_file(tmp_path, 6, 3)
    layers, cut_short = [], []
    step, later = hyperedges.EdgeStage.step, NOW + 60_000
    for name, cut in (("whole.meh", False), ("cut.meh", True)):
        copy = str(tmp_path / name)
        shutil.copyfile(source, copy)
        run = Domain(open_engine(copy))
        assert run_dream(run.env())[1] is None  # a warm layer
        for scene_id in (7, 8, 9):
            _scene(run, scene_id)
            run.turn(scene_id * 100, ("shared", "s1", "late"), 2000, scene=scene_id)
        cancel = threading.Event()

        def first_then_cancel(
            stage: Any, held: Any, now: int, cut: bool = cut, cancel: Any = cancel
        ) -> bool:
            more = step(stage, held, now)
            if cut:
                cancel.set()
            return more

        with monkeypatch.context() as patch:
            patch.setattr(hyperedges.EdgeStage, "step", first_then_cancel)
            report, error = run_dream(run.env(spent=True, cancel=cancel, clock=lambda: later))
        if cut:
            assert isinstance(error, OperationCancelledError)
            statuses = {s.name: s.status for s in report.stages}
            assert statuses["l1_hyperedges"] == "cancelled"
            cut_short.append(len(scene.list_scene_edges(run.engine, 0)))
        assert run_dream(run.env(spent=True, clock=lambda: later + 60_000))[1] is None
        with run.hold() as held:
            flush(held)
        # The same links and weights; an edge made a pass later carries that pass's clock,
        # and a node lists its edges in the order they came.
        edges = {(e.id_hash, e.node_ids, e.weight) for e in scene.list_scene_edges(run.engine, 0)}
        nodes = {(n.scene_id, frozenset(n.edge_ids)) for n in scene.list_scene_nodes(run.engine, 0)}
        layers.append((nodes, edges))
        run.engine.close()
    assert layers[0] == layers[1]
    assert cut_short[0] < len(layers[0][1]) == 24  # control: the cancel cut edges short
