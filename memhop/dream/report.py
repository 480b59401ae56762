"""The pass's report: counters, stage records in order, and how a stage's status is read."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from memhop.errors import OperationCancelledError

__all__ = [
    "CANCELLED",
    "ERROR",
    "OK",
    "SKIPPED",
    "STAGES",
    "Report",
    "StageRecord",
    "checkpoint",
    "status_of",
]

STAGES = (
    "l4_prune",
    "l5_prune",
    "l2_compress",
    "index_rebuild",
    "l1_nodes",
    "l1_hyperedges",
    "l1_rebuild",
    "l1_decay",
    "l0_distill",
)
"""The closed, ordered stage vocabulary; a stage not reached is absent from a report."""

OK = "ok"
SKIPPED = "skipped"
CANCELLED = "cancelled"
ERROR = "error"


@dataclass(frozen=True, slots=True)
class StageRecord:
    name: str
    status: str
    duration_ms: int


@dataclass(slots=True)
class Report:
    """What one pass did (dream.md §4.9); filled as the pass goes."""

    l4_records_pruned: int = 0
    l4_records_kept_unfolded: int = 0
    l5_nodes_pruned: int = 0
    consolidated_scenes: int = 0
    l2_topics_compressed: int = 0
    l1_nodes_added: int = 0
    l1_edges_added: int = 0
    l1_nodes_removed: int = 0
    l1_edges_removed: int = 0
    l0_updated: bool = False
    stages: list[StageRecord] = field(default_factory=list)

    def record(self, name: str, status: str, started: float) -> None:
        """Append a stage that started at ``started`` (``time.monotonic()``)."""
        elapsed = max(time.monotonic() - started, 0.0)
        self.stages.append(StageRecord(name, status, int(elapsed * 1000)))

    def stage_names(self) -> list[str]:
        return [s.name for s in self.stages]


def status_of(error: BaseException | None) -> str:
    """``ok`` for none; ``cancelled`` when a cancellation is anywhere in the cause chain."""
    seen: set[int] = set()
    current = error
    while current is not None and id(current) not in seen:
        if isinstance(current, OperationCancelledError):
            return CANCELLED
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return OK if error is None else ERROR


def checkpoint(cancel: threading.Event, report: Report, stage: str) -> None:
    """At a stage boundary: a set ``cancel`` records ``stage`` as cancelled and stops the pass."""
    if not cancel.is_set():
        return
    report.stages.append(StageRecord(stage, CANCELLED, 0))
    done = report.stages[-2].name if len(report.stages) > 1 else ""
    msg = f"dream: cancelled after {done} stage" if done else "dream: cancelled before it started"
    raise OperationCancelledError(msg)
