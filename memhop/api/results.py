"""Public results: frozen, slotted, keyword-only dataclasses named as upstream's facade types.

This module holds what a turn reads (profile, scenes, topics, listings, L4
lines, the plan tree, recall hits) and the base every result shares;
``results_graph`` holds the L1 and L3 results, ``results_upkeep`` Dream's
report, the domains, stats and salvage. ``memhop.api`` re-exports them all.

Contract (for every result, wherever it lives):
- Field names are upstream's JSON keys and ``to_dict()`` (see ``types.Shape``)
  writes them in upstream's order; api.md §13 is the table.
- Ids are 16 lowercase hex digits; ``""`` stands for "none" where upstream
  renders an unset id that way (``SceneSlot.l3_id``), ``None`` where upstream
  has a nil pointer (``TopicSlot.parent_id``).
- Collections are tuples and mappings read-only ``MappingProxyType``s (left
  out of the hash, so a result holding one is equal-comparable, not hashable).
- A stored enum number with no name stays a plain int, as the records keep it.

Traps:
- ``MBTIScore.type`` is derived from the axes and never on the wire.
- ``origin``, ``derived_from`` and ``grounding`` on ``TopicSlot`` and
  ``SceneContextTopic`` are memhop's provenance (docs/internals/dream.md):
  ``origin`` "dream" marks a row Dream wrote — a model reconstruction of the
  turns in ``derived_from``, not something that was said — and ``grounding``
  is the share of its keywords found in those turns' keywords. They are
  Python attributes only and stay out of ``to_dict()``, which keeps
  upstream's JSON shape exactly; a host that renders rows for a prompt reads
  them from the attributes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TypeVar

from memhop.api.types import (
    ArchiveKind,
    ArchiveRole,
    ContentType,
    PlanStatus,
    Result,
)
from memhop.frozen import quick_init
from memhop.records import EmotionScore, MBTIScore, ProfileSlot

__all__ = [
    "ArchiveSlot",
    "EmotionScore",
    "MBTIScore",
    "PlanNodeView",
    "PlanTree",
    "ProfileSlot",
    "RecallHit",
    "SceneContext",
    "SceneContextTopic",
    "SceneMessage",
    "SceneSlot",
    "SearchResult",
    "TopicSlot",
]

_PROVENANCE = frozenset({"origin", "derived_from", "grounding"})
_NO_PROFILE = ProfileSlot()  # one for every default: frozen, its preferences read-only


_V = TypeVar("_V")


def _frozen_map(value: Mapping[str, _V]) -> Mapping[str, _V]:
    """A private read-only copy, so the caller's dict cannot change a frozen result."""
    return MappingProxyType(dict(value))


# ---- L0 ---------------------------------------------------------------------------------


# ---- L2 -----------------------------------------------------------------------------------


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SceneSlot(Result):
    """A scene (one host session); ``l3_id`` is "" when no graph anchors it."""

    _OMITEMPTY = frozenset({"l3_id"})

    scene_id: str
    scene_name: str = ""
    l3_id: str = ""


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TopicSlot(Result):
    """A settled turn or a Dream-fused group; ``parent_id`` None is a depth-1 root."""

    _OMITEMPTY = frozenset({"parent_id", "name"})
    _OFF_WIRE = _PROVENANCE

    id: str
    scene_id: str = ""
    parent_id: str | None = None
    depth: int = 0
    name: str = ""
    fused_keywords: tuple[str, ...] = ()
    user_timestamp: int = 0
    agent_timestamp: int = 0
    origin: str = "turn"
    derived_from: tuple[str, ...] = ()
    grounding: float | None = None


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SearchResult(Result):
    """One turn's opening read: profile and its brief, the scene, its surface, the new turn."""

    profile: ProfileSlot = _NO_PROFILE
    profile_brief: str = ""
    scene: SceneSlot
    topics: tuple[TopicSlot, ...] = ()
    new_topic_id: str


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SceneMessage(Result):
    """One utterance of a listed topic, in seq order."""

    role: ArchiveRole | int = ArchiveRole.USER
    type: ContentType | int = ContentType.TEXT
    content: str = ""
    seq: int = 0
    created_at: int = 0


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SceneContextTopic(Result):
    """One row of a scene's depth <= 2 listing; ``child_count`` > 0 marks a fused group."""

    _OMITEMPTY = frozenset({"name", "messages"})
    _OFF_WIRE = _PROVENANCE

    topic_id: str
    depth: int = 0
    name: str = ""
    keywords: tuple[str, ...] = ()
    messages: tuple[SceneMessage, ...] = ()
    child_count: int = 0
    user_timestamp: int = 0
    agent_timestamp: int = 0
    origin: str = "turn"
    derived_from: tuple[str, ...] = ()
    grounding: float | None = None


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SceneContext(Result):
    """A scene's whole listing; a domain with no scene yet answers ``scene_name`` ""."""

    scene_name: str = ""
    topics: tuple[SceneContextTopic, ...] = ()


# ---- L4 -----------------------------------------------------------------------------------


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ArchiveSlot(Result):
    """One L4 record of a turn, addressed by (``topic_id``, ``seq``)."""

    _OMITEMPTY = frozenset({"event_type", "node_seq"})

    id: str
    kind: ArchiveKind | int = ArchiveKind.UTTERANCE
    seq: int = 0
    content_type: ContentType | int = ContentType.TEXT
    role: ArchiveRole | int = ArchiveRole.USER
    topic_id: str = ""
    event_type: str = ""
    node_seq: int = 0
    created_at: int = 0
    content: str = ""


# ---- L5 -----------------------------------------------------------------------------------


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PlanNodeView(Result):
    """One plan step and its sub-steps (seq order); ``finished_at`` 0 while in progress."""

    seq: int
    parent_seq: int = 0
    title: str = ""
    status: PlanStatus = PlanStatus.IN_PROGRESS
    summary: str = ""
    created_at: int = 0
    finished_at: int = 0
    updated_at: int = 0
    children: tuple[PlanNodeView, ...] = ()


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PlanTree(Result):
    """The open turn's plan forest; the counts cover every step of every tree."""

    roots: tuple[PlanNodeView, ...] = ()
    done_count: int = 0
    total_count: int = 0


# ---- recall -------------------------------------------------------------------------------


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class RecallHit(Result):
    """One answer of ``Session.recall`` (memhop's own): a surface row or an event, ranked.

    ``text`` is what a host can put in a prompt: a turn row's stored lines, a
    Dream row's summary followed by up to three of its folded turns' lines that
    share a query word, or an event's content (then ``event_type`` is set).
    ``origin`` / ``derived_from`` / ``grounding`` are the row's provenance, as on
    ``SceneContextTopic``. ``score`` is BM25: comparable within one answer only.
    """

    scene_id: str
    topic_id: str
    score: float
    created_at: int = 0
    keywords: tuple[str, ...] = ()
    text: str = ""
    event_type: str = ""
    origin: str = "turn"
    derived_from: tuple[str, ...] = ()
    grounding: float | None = None
