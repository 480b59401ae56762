"""The salvage report: what ``DB.salvage_to`` copied and the damaged records it left behind."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from memhop.api.results_upkeep import DamagedRecord, SalvageReport
from memhop.ids import format_id
from memhop.records import RecordType


class LeftBehindLike(Protocol):
    """One record a salvage left behind (``memhop.engine.LeftBehind``)."""

    @property
    def agent_id(self) -> int: ...
    @property
    def id_hash(self) -> int: ...
    @property
    def offset(self) -> int: ...
    @property
    def rec_type(self) -> int: ...
    @property
    def reason(self) -> str: ...


def _record_kind(rec_type: int) -> str:
    try:
        return RecordType(rec_type).name.lower()
    except ValueError:
        return "unknown"


def salvage_report(copied: int, left_behind: Iterable[LeftBehindLike]) -> SalvageReport:
    """What a salvage copied and what it left behind, ids in hex."""
    return SalvageReport(
        records_copied=copied,
        left_behind=tuple(
            DamagedRecord(
                agent_id=format_id(r.agent_id),
                id=format_id(r.id_hash),
                offset=r.offset,
                record_type=r.rec_type,
                record_kind=_record_kind(r.rec_type),
                reason=r.reason,
            )
            for r in left_behind
        ),
    )
