"""Session methods: L5 plan steps of the open turn (issue: plans)."""

from __future__ import annotations

from memhop.api import _args, _mapping
from memhop.api.results import PlanTree
from memhop.api.types import PlanStatus
from memhop.config import MAX_TITLE_BYTES
from memhop.root import plans
from memhop.root.ops import AgentOps


class PlanFace:
    """Mixed into ``Session``; every method maps arguments in and results out.

    All three act on the domain's open turn and name no turn: without one they
    refuse with InvalidQueryError "no turn is open" (for ``plan_state``, read
    that as "nothing in progress"). A refused call writes nothing.
    """

    _ops: AgentOps

    def plan_node_add(self, parent_seq: int, title: str = "") -> int:
        """Add an in-progress step (``parent_seq`` 0 = a new root); return its ordinal.

        Ordinals run 1, 2, 3 per turn and never reuse one an event still names.
        NotFoundError when ``parent_seq`` is not a step of the open turn.
        """
        parent = _args.uint32(parent_seq, "parent_seq")
        name = _args.text(title, "title", MAX_TITLE_BYTES)
        return self._ops.run(plans.plan_node_add, self._ops.now(), parent, name)

    def plan_node_update(
        self,
        seq: int,
        *,
        title: str = "",
        status: PlanStatus | str = PlanStatus.IN_PROGRESS,
        summary: str = "",
    ) -> None:
        """Set a step's status; a non-blank title or summary replaces the stored one.

        A host summary is never re-folded. Once every child of a done parent is
        settled, the parent's summary is the children's joined by "; " (up to the
        root). InvalidQueryError for a status other than in_progress, done or
        failed; NotFoundError for a step not on the open turn's tree.
        """
        step = _args.uint32(seq, "seq")
        code = _args.plan_status_code(status)
        title = _args.text(title, "title", MAX_TITLE_BYTES)
        summary = _args.text(summary, "summary")
        self._ops.run(plans.plan_node_update, self._ops.now(), step, title, code, summary)

    def plan_state(self) -> PlanTree:
        """The open turn's plan forest with done and total counts (no step: empty)."""
        return _mapping.plan_tree(self._ops.run(plans.plan_state))
