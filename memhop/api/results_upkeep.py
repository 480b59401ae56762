"""Public results of upkeep: Dream's pass report, the file's domains, its stats, salvage.

``DreamReport`` and ``DreamStage`` are Dream's own frozen report (``memhop.dream.report``),
re-exported: the pass hands out the result itself.

Contract: as ``results`` states for every result (upstream's JSON keys and
order in ``to_dict()``, 16-hex ids, tuples for collections, read-only
mappings left out of the hash).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from memhop.api.results import _frozen_map
from memhop.api.types import Result
from memhop.frozen import quick_init
from memhop.root.dreams import DreamReport, DreamStage

__all__ = [
    "AgentInfo",
    "DBStats",
    "DamagedRecord",
    "DreamReport",
    "DreamStage",
    "ModelUsage",
    "SalvageReport",
]


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class AgentInfo(Result):
    """One domain of the file; the primary's id is ``0000000000000000``."""

    id: str
    name: str = ""
    primary: bool = False


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ModelUsage(Result):
    """Cumulative model use of one domain's model since open (memhop's addition).

    ``operations``: keyword extractions, consolidations and distillations asked;
    ``requests``: the HTTP requests they made (retries, structured-output fallbacks
    and escalations included; 0 for a model that reports none); ``failures``:
    operations that failed; tokens as the endpoint reported them.
    """

    operations: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: int = 0

    @property
    def calls(self) -> int:
        """The former name of ``operations``."""
        return self.operations


@dataclass(frozen=True, slots=True, kw_only=True)
class DBStats(Result):
    """File size as the engine logged it, live records, model usage by domain id, and damage.

    ``damaged_records``: live records whose frame or payload failed a check
    when read since the open (listings skip them; ``DB.salvage_to`` leaves
    them behind). ``damaged_frames``: damaged regions the open's scan of the
    log skipped; one may have held a tombstone, so a deleted record can be
    back (docs/internals/engine.md, "What damage can undo").
    ``tail_bytes_cut``: bytes the open cut from the end of the file: a write
    torn by a crash, or a last frame that failed its checks, which cannot be
    told apart and is not counted as damage; a delete whose tombstone was
    there is undone (docs/reliability.md).
    """

    file_bytes: int = 0
    record_count: int = 0
    model_usage: Mapping[str, ModelUsage] = field(default_factory=dict, hash=False)
    damaged_records: int = 0
    damaged_frames: int = 0
    tail_bytes_cut: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "model_usage", _frozen_map(self.model_usage))


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class DamagedRecord(Result):
    """A live record ``DB.salvage_to`` left behind: where it was, what it was, why it failed.

    ``record_type`` is the type byte found at ``offset`` (itself possibly
    damaged; -1 when the offset lies past the file) and ``record_kind`` its
    name ("topic", "archive", ... or "unknown").
    """

    agent_id: str
    id: str
    offset: int
    record_type: int
    record_kind: str
    reason: str


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SalvageReport(Result):
    """What ``DB.salvage_to`` did: records copied, and the damaged ones left behind (log order)."""

    records_copied: int = 0
    left_behind: tuple[DamagedRecord, ...] = ()
