"""Session methods: host-only administration of scenes and topics (never a tool)."""

from __future__ import annotations

from memhop.root.ops import AgentOps


class AdminFace:
    """Mixed into ``Session``; every method maps arguments in and results out."""

    _ops: AgentOps
