"""Session methods: L5 plan steps of the open turn (issue: plans)."""

from __future__ import annotations

from memhop.root.ops import AgentOps


class PlanFace:
    """Mixed into ``Session``; every method maps arguments in and results out."""

    _ops: AgentOps
