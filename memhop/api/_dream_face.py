"""Session methods: Dream, the background consolidation pass."""

from __future__ import annotations

from memhop.root.ops import AgentOps


class DreamFace:
    """Mixed into ``Session``; every method maps arguments in and results out."""

    _ops: AgentOps
