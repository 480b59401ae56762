"""L5 plan nodes: the steps of one turn's plan tree, and the rules that change them.

Responsibility: write a step at ``ids.plan_node_id(topic_id, seq)``, read one
address, scan the domain strictly, tombstone ids; and, as pure functions, the
step-update rule, the fold of a done parent's summary, and the retention
sweep's choice of steps. Ordinal allocation and the open-turn check belong to
the root.

Contract:
- The address is derived from ``(topic_id, seq)``; records come back carrying
  the id they are stored at.
- A summary is host-owned when it is non-empty and ``summary_folded`` is
  False; a fold never overwrites it. Folded summaries are re-derived whenever
  their branch changes.
- ``sweep_candidates`` groups steps by turn (``topic_id``): a turn's tree is
  exempt iff it has a step not done and its newest ``updated_at`` >= cutoff;
  otherwise every step with ``updated_at`` < cutoff goes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from memhop.engine import Engine
from memhop.ids import plan_node_id
from memhop.layers import codec
from memhop.records import PlanNode, PlanStatusCode

__all__ = [
    "FOLD_SEPARATOR",
    "all_plan_nodes",
    "delete_plan_nodes",
    "get_plan_node_optional",
    "is_host_owned",
    "is_terminal",
    "new_step",
    "plan_node_ids",
    "read_plan_nodes_strict",
    "refold",
    "sweep_candidates",
    "updated_step",
    "write_plan_node",
    "write_plan_nodes",
]

FOLD_SEPARATOR = "; "


# ---- records ---------------------------------------------------------------------------


def _addressed(id_hash: int, node: PlanNode) -> PlanNode:
    # The engine id is what deletes and mirrors key on, so it wins over the payload's.
    return node if node.id_hash == id_hash else dataclasses.replace(node, id_hash=id_hash)


def write_plan_node(engine: Engine, agent_id: int, node: PlanNode) -> PlanNode:
    """Write ``node`` at its (topic, seq) address, replacing what is there; return it as stored."""
    return write_plan_nodes(engine, agent_id, [node])[0]


def write_plan_nodes(engine: Engine, agent_id: int, nodes: Sequence[PlanNode]) -> list[PlanNode]:
    """Write several steps of one domain with one fsync (an update and its folds); return them."""
    stored = [_addressed(plan_node_id(n.topic_id, n.seq), n) for n in nodes]
    if stored:
        codec.write_many(engine, agent_id, [(n.id_hash, n) for n in stored])
    return stored


def get_plan_node_optional(
    engine: Engine, agent_id: int, topic_id: int, seq: int
) -> PlanNode | None:
    """Return the step at (topic, seq), None when absent; an unreadable record raises."""
    id_hash = plan_node_id(topic_id, seq)
    node = codec.read_optional(engine, agent_id, id_hash, PlanNode)
    return None if node is None else _addressed(id_hash, node)


def read_plan_nodes_strict(engine: Engine, agent_id: int, ids: Iterable[int]) -> list[PlanNode]:
    """Return the steps among ``ids`` that exist, ascending by id; any other failure raises."""
    pairs = codec.read_many_strict(engine, agent_id, sorted(set(ids)), PlanNode)
    return [_addressed(i, n) for i, n in pairs]


def all_plan_nodes(engine: Engine, agent_id: int) -> list[PlanNode]:
    """Return every readable step of the domain, ascending by id (damage skipped and counted)."""
    return [_addressed(i, n) for i, n in codec.collect(engine, agent_id, PlanNode)]


def plan_nodes_of(engine: Engine, agent_id: int, ids: Iterable[int]) -> list[PlanNode]:
    """The readable steps among ``ids``, in their order, as ``all_plan_nodes`` gives them."""
    return [_addressed(i, n) for i, n in codec.read_many(engine, agent_id, ids, PlanNode)]


def plan_node_ids(engine: Engine, agent_id: int) -> list[int]:
    """Return the ids of the domain's steps, ascending, without reading a record (a damaged
    one is listed too: a reader of its record meets the damage). Asked by every whole
    Dream pass: the engine keeps the answer current (``recurring``)."""
    return engine.ids_of_type(agent_id, PlanNode.RECORD_TYPE, recurring=True)


def delete_plan_nodes(engine: Engine, agent_id: int, ids: Iterable[int]) -> int:
    """Tombstone the live ids among ``ids`` (plan node ids) in one batch; return how many went."""
    return engine.delete_batch(agent_id, ids)


# ---- step rules (pure) -----------------------------------------------------------------


def is_terminal(status: int) -> bool:
    """True for done and failed; an undefined stored status counts as still open."""
    return status in (PlanStatusCode.DONE, PlanStatusCode.FAILED)


def is_host_owned(node: PlanNode) -> bool:
    """True when the host wrote the summary, so no fold may replace it."""
    return node.summary != "" and not node.summary_folded


def new_step(topic_id: int, seq: int, parent_seq: int, title: str, now: int) -> PlanNode:
    """Return a fresh in-progress step stamped ``now`` (created and updated)."""
    return PlanNode(
        id_hash=plan_node_id(topic_id, seq),
        topic_id=topic_id,
        seq=seq,
        parent_seq=parent_seq,
        status=PlanStatusCode.IN_PROGRESS,
        title=title,
        created_at=now,
        updated_at=now,
    )


def updated_step(node: PlanNode, *, status: int, title: str, summary: str, now: int) -> PlanNode:
    """Apply a host update to ``node``.

    A blank title or summary keeps the stored one; a non-blank summary
    replaces it and becomes host-owned. A terminal status stamps
    ``finished_at``; in-progress reopens the step and clears it.
    """
    host_summary = bool(summary.strip())
    return dataclasses.replace(
        node,
        status=status,
        title=title if title.strip() else node.title,
        summary=summary if host_summary else node.summary,
        summary_folded=False if host_summary else node.summary_folded,
        finished_at=now if is_terminal(status) else 0,
        updated_at=now,
    )


def _conclusion(child: PlanNode) -> str:
    # A child settled without a summary still says what it did through its title.
    return child.summary or child.title


def _folded(parent: PlanNode, children: list[PlanNode], now: int) -> PlanNode | None:
    """Return ``parent`` with its summary re-derived, or None when it must not change."""
    if parent.status != PlanStatusCode.DONE or is_host_owned(parent) or not children:
        return None
    # A child still open (or reopened) leaves the last full fold standing.
    if not all(is_terminal(c.status) for c in children):
        return None
    summary = FOLD_SEPARATOR.join(text for c in children if (text := _conclusion(c)))
    if not summary or (summary == parent.summary and parent.summary_folded):
        return None
    return dataclasses.replace(parent, summary=summary, summary_folded=True, updated_at=now)


def refold(nodes: Iterable[PlanNode], start_seq: int, now: int) -> list[PlanNode]:
    """Re-derive folded summaries from step ``start_seq`` up to its root, in one pass.

    ``nodes`` is one turn's tree as it stands after the host's update. Returns
    the steps whose summary changed (stamped ``now``), nearest first, so the
    caller writes them with the update in one batch.
    """
    by_seq = {n.seq: n for n in nodes}
    changed: list[PlanNode] = []
    seen: set[int] = set()
    seq = start_seq
    # The seen set stops a damaged parent chain that loops back on itself.
    while seq in by_seq and seq not in seen:
        seen.add(seq)
        node = by_seq[seq]
        children = sorted((n for n in by_seq.values() if n.parent_seq == seq), key=_seq_key)
        folded = _folded(node, children, now)
        if folded is not None:
            by_seq[seq] = folded
            changed.append(folded)
        seq = node.parent_seq
    return changed


def _seq_key(node: PlanNode) -> int:
    return node.seq


def sweep_candidates(nodes: Iterable[PlanNode], cutoff: int) -> list[PlanNode]:
    """Return the steps the retention sweep deletes, ordered by (topic, seq).

    Per turn: a tree with a step not done and a newest ``updated_at`` >=
    ``cutoff`` is exempt; otherwise each step with ``updated_at`` < ``cutoff``
    goes (an in-flight but silent tree entirely, a finished tree touched
    recently only its stale steps).
    """
    trees: dict[int, list[PlanNode]] = {}
    for node in nodes:
        trees.setdefault(node.topic_id, []).append(node)
    doomed: list[PlanNode] = []
    for topic_id in sorted(trees):
        tree = trees[topic_id]
        live = any(n.status != PlanStatusCode.DONE for n in tree)
        if live and max(n.updated_at for n in tree) >= cutoff:
            continue
        doomed.extend(sorted((n for n in tree if n.updated_at < cutoff), key=_seq_key))
    return doomed
