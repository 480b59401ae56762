"""``run_dream``: the nine stages in order, with a cancellation check at every boundary."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from memhop.dream import compress, distill, hyperedges, l1domain, prune, structure
from memhop.dream.env import DreamEnv, Held
from memhop.dream.report import ERROR, OK, DreamReport, Report, checkpoint, status_of
from memhop.errors import MemHopError, OperationCancelledError
from memhop.layers import plan, scene

if TYPE_CHECKING:  # the type only: dream reaches the file through the layers
    from memhop.engine import Engine

__all__ = ["run_dream"]

log = logging.getLogger("memhop.dream")


def _stage(
    env: DreamEnv, report: Report, name: str, body: Callable[[], str], *, soft: bool = False
) -> None:
    """Run one stage after the boundary check; record it; a failure stops the pass unless soft."""
    checkpoint(env.cancel, report, name)
    started = time.monotonic()
    try:
        status = body()
    except MemHopError as exc:
        # A cancel set by the time the stage failed (the file closing under it: its engine
        # closed meanwhile) ends the pass as at a boundary: no failure to warn a host of.
        checkpoint(env.cancel, report, name)
        report.record(name, status_of(exc), started)
        if not soft:
            raise
        log.warning("dream: %s failed, the pass continues: %s", name, exc)
        return
    report.record(name, status, started)


def _scenes(env: DreamEnv, scene_id: int) -> list[int]:
    if scene_id:
        with env.hold() as held:
            return [scene.get_scene(held.engine, held.agent_id, scene_id).scene_id]
    # A scene made meanwhile waits for the next pass; one deleted meanwhile lists no
    # surface when consolidation looks at it under the lock.
    return _listed(env, scene.scene_ids)


def _listed(env: DreamEnv, ids_of: Callable[[Engine, int], list[int]]) -> list[int]:
    """Ids of one record type from the engine's index, no record read (decoding every
    scene cost 0.15 s of CPU at 10^5 turns), and without the domain lock: turns go on
    (the typed scan costs what the domain holds: 0.11 ms at 10^3 turns, 1.0-1.9 ms
    at 10^5)."""
    with env.hold() as held:
        engine, agent_id = held.engine, held.agent_id
    try:
        return ids_of(engine, agent_id)
    except MemHopError:  # the engine was replaced meanwhile (a compaction): under the lock
        with env.hold() as held:
            return ids_of(held.engine, held.agent_id)


def _in_holds(env: DreamEnv, stage: str, step: Callable[[Held], bool]) -> None:
    """Call ``step`` under one hold of the domain lock after another until it answers that
    nothing is left: turns go on between two holds, and a cancel between them ends the
    stage."""
    while True:
        with env.hold() as held:
            more = step(held)
        if not more:
            return
        if env.cancel.is_set():
            msg = f"dream: cancelled during {stage} stage"
            raise OperationCancelledError(msg)


def _compress(env: DreamEnv, report: Report, scenes: list[int], whole: bool) -> str:
    outcomes = compress.compress_scenes(env, scenes, whole=whole)
    for outcome in outcomes:
        if outcome.failure is not None:
            raise outcome.failure
    landed = [o for o in outcomes if o.groups]
    report.add(consolidated_scenes=len(landed), l2_topics_compressed=sum(o.sunk for o in outcomes))
    unusable = sum(o.unusable for o in outcomes)
    if env.cancel.is_set():
        msg = "dream: cancelled during l2_compress stage"
        raise OperationCancelledError(msg)
    if not landed and unusable:
        # The model failed every scene it was asked about: recorded (each scene backs
        # off, see compress), and the pass goes on to L1 and distillation.
        log.warning("dream: consolidation produced nothing usable; the pass continues")
        return ERROR
    return OK


def run_dream(
    env: DreamEnv, scene_id: int = 0, *, sweep: bool = True
) -> tuple[DreamReport, MemHopError | None]:
    """Run one pass over the domain; ``scene_id`` (0 = all) scopes consolidation only.

    ``sweep`` False runs consolidation alone (``l2_compress``): no retention
    sweep, no L1 stage, no distillation, each of which costs what the whole
    domain holds. Returns the report and the error that stopped the pass
    (None on success): a failing pass still reports every stage it reached.
    """
    report = Report()
    try:
        _run(env, report, scene_id, sweep)
    except MemHopError as exc:
        return report.done(), exc
    return report.done(), None


def _run(env: DreamEnv, report: Report, scene_id: int, sweep: bool) -> None:
    if not sweep:
        scenes = _scenes(env, scene_id)
        if scenes:
            _stage(env, report, "l2_compress", lambda: _compress(env, report, scenes, not scene_id))
        return
    line = prune.cutoff(env.clock(), env.retention_ms)

    def swept_step(held: Held) -> bool:
        swept = prune.prune_contents(held, line, sweep_unfolded=env.sweep_unfolded)
        report.add(l4_records_pruned=swept.pruned)
        report.put(l4_records_kept_unfolded=swept.kept_unfolded)
        return not swept.done

    def l4() -> str:
        _in_holds(env, "l4_prune", swept_step)  # a bounded number of topics a hold
        return OK

    def l5() -> str:
        with env.hold() as held:
            # No readable step in the mirror: none to sweep (a damaged one sweeps nothing),
            # so no typed scan of the domain's index (1-2 ms at 10^5 turns) a pass.
            stepless = not held.mirrors.plans
        steps = [] if stepless else _listed(env, plan.plan_node_ids)  # later: the next sweep's
        pruned = 0
        if steps:
            with env.hold() as held:
                pruned = prune.prune_plans(held, line, steps)
        report.put(l5_nodes_pruned=pruned)
        return OK

    _stage(env, report, "l4_prune", l4, soft=True)
    _stage(env, report, "l5_prune", l5, soft=True)
    scenes = _scenes(env, scene_id)
    if not scenes:
        return
    _stage(env, report, "l2_compress", lambda: _compress(env, report, scenes, not scene_id))

    def rebuild() -> str:
        preload = structure.preload_cold(env)
        with env.hold() as held:
            structure.rebuild_index(held, preload)
        return OK

    touched: set[int] = set()

    def sync(held: Held) -> bool:
        touched.update(structure.sync_nodes(held, env.clock(), structure.SYNC_SCENES))
        return l1domain.pending_scenes(held)

    def nodes() -> str:
        _in_holds(env, "l1_nodes", sync)  # a bounded number of scenes a hold
        report.add(l1_nodes_added=len(touched))
        return OK

    def edges() -> str:
        stage = hyperedges.EdgeStage(touched, hyperedges.weigh_cold(env, touched))
        try:  # a bounded number of pairs a hold
            _in_holds(env, "l1_hyperedges", lambda held: stage.step(held, env.clock()))
        except OperationCancelledError:
            with contextlib.suppress(MemHopError), env.hold() as held:  # closing: no hold
                stage.leave(held)
            raise
        finally:
            report.add(l1_edges_added=stage.written)
        return OK

    def judge(held: Held) -> bool:
        gone_nodes, gone_edges = structure.rebuild_from_l2(held, structure.STALE_NODES)
        report.add(l1_nodes_removed=gone_nodes, l1_edges_removed=gone_edges)
        return l1domain.stale_pending(held)

    def stale() -> str:
        _in_holds(env, "l1_rebuild", judge)  # a bounded number of nodes a hold
        return OK

    def decay() -> str:
        now = env.clock()

        def due(held: Held) -> bool:
            gone_nodes, gone_edges = structure.decay_network(held, now, structure.DECAY_NODES)
            report.add(l1_nodes_removed=gone_nodes, l1_edges_removed=gone_edges)
            return l1domain.decay_pending(held, now)

        _in_holds(env, "l1_decay", due)  # a bounded number of due nodes a hold
        return OK

    def l0() -> str:
        status = distill.run_distill(env)
        report.put(l0_updated=status == OK)
        return status

    _stage(env, report, "index_rebuild", rebuild)
    _stage(env, report, "l1_nodes", nodes)
    _stage(env, report, "l1_hyperedges", edges)
    _stage(env, report, "l1_rebuild", stale)
    _stage(env, report, "l1_decay", decay)
    _stage(env, report, "l0_distill", l0)
