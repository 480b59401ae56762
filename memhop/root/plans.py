"""L5 steps of the open turn: add a step, update one (folding its branch), read the tree.

All three act on the domain's open turn and name no turn id; without one they
refuse with "no turn is open" (InvalidQueryError). Every refusal happens
before anything is written. The mirrors are updated only after the write.
"""

from __future__ import annotations

from memhop.domain.context import DomainContext
from memhop.engine import Engine
from memhop.errors import InvalidQueryError, NotFoundError
from memhop.layers import plan
from memhop.records import PlanNode
from memhop.root.content import require_turn

MAX_STEP_SEQ = 2**32 - 1  # ordinals are uint32 on the wire


def _check_seq(value: int, what: str) -> None:
    if not 0 <= value <= MAX_STEP_SEQ:
        msg = f"{what} {value} is out of range: want 0..{MAX_STEP_SEQ}"
        raise InvalidQueryError(msg)


def next_ordinal(ctx: DomainContext, topic_id: int) -> int:
    """1 + the highest ordinal a live step or a surviving event of the turn names.

    An ordinal still named by an event is never reissued, so a swept or
    deleted step's events cannot come to describe a new step.
    """
    highest = max(
        ctx.mirrors.plans.highest_seq(topic_id),
        ctx.mirrors.contents.highest_node_seq(topic_id),
    )
    return highest + 1


def plan_node_add(engine: Engine, ctx: DomainContext, now: int, parent_seq: int, title: str) -> int:
    """Add an in-progress step under ``parent_seq`` (0 = a new root); return its ordinal.

    NotFoundError when the parent is not a live step of the open turn. The
    target address is read first: a record there that will not read refuses
    the add with its own code, on every retry alike.
    """
    turn = require_turn(ctx)
    _check_seq(parent_seq, "parent_seq")
    plans = ctx.mirrors.plans
    if parent_seq and not plans.has_live_step(turn.topic_id, parent_seq):
        msg = f"parent step {parent_seq} is not on this turn's plan tree"
        raise NotFoundError(msg)
    seq = next_ordinal(ctx, turn.topic_id)
    if seq > MAX_STEP_SEQ:
        msg = "this turn has used every plan ordinal"
        raise InvalidQueryError(msg)
    plan.get_plan_node_optional(engine, ctx.agent_id, turn.topic_id, seq)
    step = plan.new_step(turn.topic_id, seq, parent_seq, title, now)
    stored = plan.write_plan_node(engine, ctx.agent_id, step)
    plans.put(stored)
    return seq


def plan_node_update(
    engine: Engine,
    ctx: DomainContext,
    now: int,
    seq: int,
    title: str,
    status: int,
    summary: str,
) -> None:
    """Apply a host update to step ``seq`` and re-fold its branch up to the root.

    The status code is validated by the caller (the facade's word table).
    NotFoundError for a step not on the open turn's tree; a step record that
    will not read refuses with its own code. The step and every re-derived
    parent summary are written in one batch.
    """
    turn = require_turn(ctx)
    _check_seq(seq, "seq")
    plans = ctx.mirrors.plans
    if not plans.has_live_step(turn.topic_id, seq):
        msg = f"plan step {seq} is not on this turn's plan tree"
        raise NotFoundError(msg)
    stored = plan.get_plan_node_optional(engine, ctx.agent_id, turn.topic_id, seq)
    if stored is None:
        msg = f"plan step {seq} is not on this turn's plan tree"
        raise NotFoundError(msg)
    updated = plan.updated_step(stored, status=status, title=title, summary=summary, now=now)
    tree = {n.seq: n for n in plans.nodes_of(turn.topic_id)}
    tree[seq] = updated
    writes: dict[int, PlanNode] = {seq: updated}
    for folded in plan.refold(tree.values(), seq, now):
        writes[folded.seq] = folded  # the step itself may be folded: the last version wins
    for node in plan.write_plan_nodes(engine, ctx.agent_id, list(writes.values())):
        plans.put(node)


def plan_state(engine: Engine, ctx: DomainContext) -> list[PlanNode]:
    """Every step of the open turn's plan, in seq order (no step: an empty list)."""
    del engine  # served from the mirror; the signature is AgentOps.run's
    turn = require_turn(ctx)
    return ctx.mirrors.plans.nodes_of(turn.topic_id)
