"""The pass's report: counters, stages in order, and how a stage's status is read.

``DreamReport`` is the public result itself (``memhop.DreamReport``): the pass
hands it out as it is, with no copy at the face.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace

from memhop.errors import OperationCancelledError
from memhop.render.shape import Result

__all__ = [
    "CANCELLED",
    "ERROR",
    "OK",
    "SKIPPED",
    "STAGES",
    "DreamReport",
    "DreamStage",
    "Report",
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


@dataclass(frozen=True, slots=True, kw_only=True)
class DreamStage(Result):
    """One stage a Dream pass reached; status is ok, skipped, cancelled or error."""

    name: str
    status: str
    duration_ms: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DreamReport(Result):
    """What one Dream pass did, stage by stage (a stage never reached is absent)."""

    _OMITEMPTY = frozenset({"stages"})
    _OFF_WIRE = frozenset({"l4_records_kept_unfolded"})

    l4_records_pruned: int = 0
    l4_records_kept_unfolded: int = 0
    """Originals past the window kept because no Dream row carries their turn or the words
    they alone hold (memhop's own)."""
    l5_nodes_pruned: int = 0
    consolidated_scenes: int = 0
    l2_topics_compressed: int = 0
    l1_nodes_added: int = 0
    l1_edges_added: int = 0
    l1_nodes_removed: int = 0
    l1_edges_removed: int = 0
    l0_updated: bool = False
    stages: tuple[DreamStage, ...] = ()


class Report:
    """The pass's report as the pass fills it (dream.md §4.9); ``done()`` is what it did."""

    __slots__ = ("_counts", "stages")

    def __init__(self) -> None:
        self._counts = DreamReport()
        self.stages: list[DreamStage] = []

    def add(self, **counts: int) -> None:
        """Add to the named counters."""
        now = self._counts
        self._counts = replace(now, **{k: getattr(now, k) + v for k, v in counts.items()})

    def put(self, **values: int | bool) -> None:
        """Set the named fields."""
        self._counts = replace(self._counts, **values)  # type: ignore[arg-type]

    def record(self, name: str, status: str, started: float) -> None:
        """Append a stage that started at ``started`` (``time.monotonic()``)."""
        elapsed = max(time.monotonic() - started, 0.0)
        self.stages.append(DreamStage(name=name, status=status, duration_ms=int(elapsed * 1000)))

    def done(self) -> DreamReport:
        """The report so far, stages in the order reached."""
        return replace(self._counts, stages=tuple(self.stages))


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
    report.stages.append(DreamStage(name=stage, status=CANCELLED))
    done = report.stages[-2].name if len(report.stages) > 1 else ""
    msg = f"dream: cancelled after {done} stage" if done else "dream: cancelled before it started"
    raise OperationCancelledError(msg)
