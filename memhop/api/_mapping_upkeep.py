"""Record -> result conversions of the file's bookkeeping: its domains and its stats.

Contract: pure functions, as ``_mapping`` states; listings keep the order given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from memhop.api.results_upkeep import AgentInfo, DBStats, ModelUsage
from memhop.ids import format_id

__all__ = ["UsageCounts", "agent_info", "db_stats"]


class UsageCounts(Protocol):
    """Anything counting model use (the model seam's ``Usage`` is one)."""

    @property
    def operations(self) -> int: ...
    @property
    def requests(self) -> int: ...
    @property
    def prompt_tokens(self) -> int: ...
    @property
    def completion_tokens(self) -> int: ...
    @property
    def failures(self) -> int: ...


def agent_info(agent_id: int, name: str, *, primary: bool) -> AgentInfo:
    return AgentInfo(id=format_id(agent_id), name=name, primary=primary)


def db_stats(
    file_bytes: int,
    record_count: int,
    usage: Mapping[int, UsageCounts],
    damage: tuple[int, int, int] = (0, 0, 0),
) -> DBStats:
    """File stats, each domain's model usage keyed by domain id in hex, and damage met
    (records, frames, bytes cut from the tail)."""
    return DBStats(
        file_bytes=file_bytes,
        record_count=record_count,
        damaged_records=damage[0],
        damaged_frames=damage[1],
        tail_bytes_cut=damage[2],
        model_usage={
            format_id(agent): ModelUsage(
                operations=u.operations,
                requests=u.requests,
                prompt_tokens=u.prompt_tokens,
                completion_tokens=u.completion_tokens,
                failures=u.failures,
            )
            for agent, u in sorted(usage.items())
        },
    )
