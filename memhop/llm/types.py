"""The model seam's value types and the ``Model`` protocol (re-exported by ``memhop.llm``)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from memhop.frozen import quick_init

__all__ = [
    "Distillation",
    "Group",
    "Model",
    "NodeDigest",
    "NodeMood",
    "ReportsUsage",
    "TopicDigest",
    "Usage",
]


@dataclass(frozen=True, slots=True)
class TopicDigest:
    """One surface row as the consolidation listing shows it."""

    id: int
    depth: int
    keywords: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Group:
    """A proposed fold: member topic ids (as the model echoed them) and the merged summary."""

    member_ids: tuple[int, ...]
    summary: str


@dataclass(frozen=True, slots=True)
class NodeDigest:
    """One L1 sample as the distillation listing shows it."""

    id: int
    importance: float
    keywords: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NodeMood:
    """A per-node emotion reading from distillation (values clamped to [0, 1])."""

    id: int
    valence: float
    arousal: float


@dataclass(frozen=True, slots=True)
class Distillation:
    """A distilled profile: emotion in [0, 1], MBTI axes in [-1, 1], a short personality."""

    valence: float
    arousal: float
    dominance: float
    i_e: float
    n_s: float
    t_f: float
    j_p: float
    personality: str
    per_node: tuple[NodeMood, ...] = ()


@quick_init
@dataclass(frozen=True, slots=True)
class Usage:
    """Cumulative model usage, each count on its own.

    ``operations``: keyword extractions, consolidations and distillations asked;
    ``requests``: HTTP requests they made (retries, fallbacks and escalations
    included; 0 for a model that makes none); ``failures``: operations that
    failed (for a chat client, which sees no operations: requests that failed);
    tokens as the endpoint reported them.
    """

    operations: int = 0
    requests: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.operations + other.operations,
            self.requests + other.requests,
            self.failures + other.failures,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )


@runtime_checkable
class Model(Protocol):
    """Anything that answers the three model operations.

    ``usage()`` is optional for a host's own model: without it memhop still
    counts calls and failures per domain, and reports no tokens.
    """

    def extract_keywords(
        self, text: str, *, cancel: threading.Event | None = None
    ) -> tuple[str, ...]:
        """Return the normalised keywords of ``text`` (may be empty)."""
        ...

    def consolidate(
        self, topics: Sequence[TopicDigest], floor: int, *, cancel: threading.Event | None = None
    ) -> tuple[Group, ...]:
        """Propose folds of adjacent surface rows; an empty answer declines."""
        ...

    def distill(
        self, samples: Sequence[NodeDigest], *, cancel: threading.Event | None = None
    ) -> Distillation:
        """Distil emotion, MBTI axes and personality from association samples."""
        ...


@runtime_checkable
class ReportsUsage(Protocol):
    """A model that reports its own token usage (``LocalModel`` and ``OpenAIModel`` do)."""

    def usage(self) -> Usage:
        """Return cumulative usage of this model object."""
        ...
