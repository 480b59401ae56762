"""Session methods: the shared L3 knowledge graph and the L1 read."""

from __future__ import annotations

from memhop.root.ops import AgentOps


class GraphFace:
    """Mixed into ``Session``; every method maps arguments in and results out."""

    _ops: AgentOps
