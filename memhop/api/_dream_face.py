"""Session methods: Dream, the background consolidation pass."""

from __future__ import annotations

import threading

from memhop.api import _args
from memhop.api.results_upkeep import DreamReport, DreamStage
from memhop.errors import InvalidQueryError
from memhop.root import dreams
from memhop.root.dreams import Report
from memhop.root.ops import AgentOps


def dream_report(report: Report) -> DreamReport:
    """The pass's report as the public result (stages in the order reached)."""
    return DreamReport(
        l4_records_pruned=report.l4_records_pruned,
        l4_records_kept_unfolded=report.l4_records_kept_unfolded,
        l5_nodes_pruned=report.l5_nodes_pruned,
        consolidated_scenes=report.consolidated_scenes,
        l2_topics_compressed=report.l2_topics_compressed,
        l1_nodes_added=report.l1_nodes_added,
        l1_edges_added=report.l1_edges_added,
        l1_nodes_removed=report.l1_nodes_removed,
        l1_edges_removed=report.l1_edges_removed,
        l0_updated=report.l0_updated,
        stages=tuple(
            DreamStage(name=s.name, status=s.status, duration_ms=s.duration_ms)
            for s in report.stages
        ),
    )


class DreamFace:
    """Mixed into ``Session``; every method maps arguments in and results out."""

    _ops: AgentOps

    def dream(self, scene_id: str = "", *, cancel: threading.Event | None = None) -> DreamReport:
        """Run one Dream pass over this domain now and return its report.

        Stages, in order: ``l4_prune`` and ``l5_prune`` (retention sweeps, whole
        domain), ``l2_compress`` (fold adjacent surface rows, one model call per
        scene), ``index_rebuild``, ``l1_nodes``, ``l1_hyperedges``, ``l1_rebuild``,
        ``l1_decay`` (the association layer) and ``l0_distill`` (one model call).
        ``scene_id`` ("" = every scene) scopes consolidation only; an unknown
        scene is NotFoundError (after the sweeps ran). The model is never asked
        while the domain is locked: turns on this domain go on meanwhile.

        A consolidation that yields nothing usable does not stop the pass:
        ``l2_compress`` reads "error" and the L1 stages and distillation still
        run; a scene whose model call failed is not asked again until its
        surface changes and a back-off has passed. A failing pass raises its
        error (OperationCancelledError when ``cancel`` was set or the file is
        closing; LLMError from distillation) with the partial report as the
        exception's ``report``.
        """
        scene = _args.id_or_unset(scene_id, "scene_id")
        if cancel is not None and not isinstance(cancel, threading.Event):
            msg = f"cancel must be a threading.Event, not {type(cancel).__name__}"
            raise InvalidQueryError(msg)
        self._ops.root.check_open()
        report, error = dreams.run_pass(self._ops.root, self._ops.agent_id, scene, cancel)
        result = dream_report(report)
        if error is not None:
            error.report = result  # type: ignore[attr-defined]
            raise error
        return result
