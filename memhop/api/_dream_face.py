"""Session methods: Dream, the background consolidation pass."""

from __future__ import annotations

import threading

from memhop.api import _args
from memhop.api.results_upkeep import DreamReport
from memhop.errors import InvalidQueryError
from memhop.root import dreams
from memhop.root.ops import AgentOps


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
        if error is not None:
            error.report = report  # type: ignore[attr-defined]
            raise error
        return report
