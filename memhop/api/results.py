"""Public results: frozen, slotted, keyword-only dataclasses named as upstream's facade types.

Contract:
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
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypeVar

from memhop.api.types import (
    ArchiveKind,
    ArchiveRole,
    ContentType,
    GraphEdgeKind,
    PlanStatus,
    Result,
)
from memhop.records import MBTIScore as _StoredMBTI
from memhop.records import derive_mbti_type
from memhop.render.html import shape_html

__all__ = [
    "AgentInfo",
    "ArchiveSlot",
    "DBStats",
    "DamagedRecord",
    "DreamReport",
    "DreamStage",
    "EmotionScore",
    "HypergraphEdge",
    "HypergraphNode",
    "HypergraphSlot",
    "L3Graph",
    "L3ImportResult",
    "L3Subgraph",
    "MBTIScore",
    "ModelUsage",
    "PlanNodeView",
    "PlanTree",
    "ProfileSlot",
    "RecallHit",
    "SalvageReport",
    "SceneContext",
    "SceneContextTopic",
    "SceneMessage",
    "SceneNodeView",
    "SceneSlot",
    "SearchResult",
    "TopicSlot",
]

_PROVENANCE = frozenset({"origin", "derived_from", "grounding"})


class _Shown(Result):
    """A result that renders itself in a notebook (plain fields as a table, row lists as tables)."""

    __slots__ = ()

    def _repr_html_(self) -> str:
        return shape_html(self)


_V = TypeVar("_V")


def _frozen_map(value: Mapping[str, _V]) -> Mapping[str, _V]:
    """A private read-only copy, so the caller's dict cannot change a frozen result."""
    return MappingProxyType(dict(value))


# ---- L0 ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class EmotionScore(_Shown):
    """Distilled emotional state, each signal in [0, 1]; 0 is an extreme reading."""

    valence: float = 0.0
    arousal: float = 0.0
    dominance: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class MBTIScore(_Shown):
    """Distilled MBTI axes in [-1, 1] (negative leans I, N, T, J)."""

    i_e: float = 0.0
    n_s: float = 0.0
    t_f: float = 0.0
    j_p: float = 0.0

    @property
    def type(self) -> str:
        """The four-letter word of the axes: "" when all are 0, "X" for a 0 axis."""
        return derive_mbti_type(_StoredMBTI(i_e=self.i_e, n_s=self.n_s, t_f=self.t_f, j_p=self.j_p))


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfileSlot(_Shown):
    """A domain's L0 profile: the host's fields, Dream's distillation and the library's stamps."""

    name: str = ""
    role: str = ""
    personality: str = ""
    emotion_state: EmotionScore = EmotionScore()
    mbti: MBTIScore = MBTIScore()
    preferences: Mapping[str, str] = field(default_factory=dict, hash=False)
    agent_type: int = 0
    updated_at_ms: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "preferences", _frozen_map(self.preferences))


# ---- L2 -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SceneSlot(_Shown):
    """A scene (one host session); ``l3_id`` is "" when no graph anchors it."""

    _OMITEMPTY = frozenset({"l3_id"})

    scene_id: str
    scene_name: str = ""
    l3_id: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicSlot(_Shown):
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


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchResult(_Shown):
    """One turn's opening read: profile and its brief, the scene, its surface, the new turn."""

    profile: ProfileSlot = ProfileSlot()
    profile_brief: str = ""
    scene: SceneSlot
    topics: tuple[TopicSlot, ...] = ()
    new_topic_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SceneMessage(_Shown):
    """One utterance of a listed topic, in seq order."""

    role: ArchiveRole | int = ArchiveRole.USER
    type: ContentType | int = ContentType.TEXT
    content: str = ""
    seq: int = 0
    created_at: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class SceneContextTopic(_Shown):
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


@dataclass(frozen=True, slots=True, kw_only=True)
class SceneContext(_Shown):
    """A scene's whole listing; a domain with no scene yet answers ``scene_name`` ""."""

    scene_name: str = ""
    topics: tuple[SceneContextTopic, ...] = ()


# ---- L4 -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchiveSlot(_Shown):
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


# ---- L1 -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SceneNodeView(_Shown):
    """A scene's L1 node as Dream last wrote it; ``emotion_set`` False means never stamped."""

    id: str
    scene_id: str = ""
    topic_ids: tuple[str, ...] = ()
    edge_ids: tuple[str, ...] = ()
    importance: float = 0.0
    valence: float = 0.0
    arousal: float = 0.0
    emotion_set: bool = False
    created_at: int = 0
    updated_at: int = 0


# ---- L3 -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class HypergraphSlot(_Shown):
    """An L3 graph's container; ``updated_at`` is its content-change clock."""

    id: str
    name: str = ""
    created_at: int = 0
    updated_at: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class HypergraphNode(_Shown):
    """An L3 node; ``source_ref`` "" (no reference) is left out of the JSON."""

    _OMITEMPTY = frozenset({"source_ref"})

    id: str
    graph_id: str = ""
    title: str = ""
    node_type: str = ""
    content: str = ""
    keywords: tuple[str, ...] = ()
    source_ref: str = ""
    created_at: int = 0
    updated_at: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class HypergraphEdge(_Shown):
    """An L3 hyperedge over ascending ``node_ids``; no weight."""

    id: str
    graph_id: str = ""
    kind: GraphEdgeKind | int = GraphEdgeKind.RELATED
    node_ids: tuple[str, ...] = ()
    created_at: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class L3Graph(_Shown):
    """One whole graph: its slot, nodes and edges."""

    slot: HypergraphSlot
    nodes: tuple[HypergraphNode, ...] = ()
    edges: tuple[HypergraphEdge, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class L3Subgraph(_Shown):
    """The nodes a walk reached and the edges whose every member it reached."""

    nodes: tuple[HypergraphNode, ...] = ()
    edges: tuple[HypergraphEdge, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class L3ImportResult(_Shown):
    """What one import batch did; ``errors`` lists the per-item failures."""

    _OMITEMPTY = frozenset({"edges_created"})

    graph_ids: tuple[str, ...] = ()
    created_ids: tuple[str, ...] = ()
    updated_ids: tuple[str, ...] = ()
    skipped_count: int = 0
    edges_created: int = 0
    errors: tuple[str, ...] = ()


# ---- L5 -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanNodeView(_Shown):
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


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanTree(_Shown):
    """The open turn's plan forest; the counts cover every step of every tree."""

    roots: tuple[PlanNodeView, ...] = ()
    done_count: int = 0
    total_count: int = 0


# ---- Dream, agents, stats -------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class DreamStage(_Shown):
    """One stage a Dream pass reached; status is ok, skipped, cancelled or error."""

    name: str
    status: str
    duration_ms: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DreamReport(_Shown):
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


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentInfo(_Shown):
    """One domain of the file; the primary's id is ``0000000000000000``."""

    id: str
    name: str = ""
    primary: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelUsage(_Shown):
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
class DBStats(_Shown):
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


@dataclass(frozen=True, slots=True, kw_only=True)
class DamagedRecord(_Shown):
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


@dataclass(frozen=True, slots=True, kw_only=True)
class SalvageReport(_Shown):
    """What ``DB.salvage_to`` did: records copied, and the damaged ones left behind (log order)."""

    records_copied: int = 0
    left_behind: tuple[DamagedRecord, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class RecallHit(_Shown):
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
