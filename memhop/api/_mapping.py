"""Record -> result conversions of what a turn reads, and the profile brief.

The graph layers' conversions are ``_mapping_graph``, the file's bookkeeping
(domains, stats) ``_mapping_upkeep``; this module's contract holds for them.

Contract:
- Pure functions: no I/O, no locks, no state; ids become 16-hex strings here and
  only here (a DB's memo of the rows it mapped lately is ``_surfaces``).
- Order is kept as given: the root decides every listing's order, except the
  plan tree, which this module builds from a turn's flat step list.
- ``profile_brief`` is upstream's digest (api.md §7.3) byte for byte.

Traps:
- ``plan_tree`` recurses once per level; a chain of steps deeper than
  Python's recursion limit (about 1000) would raise RecursionError.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

import memhop.records as rec
from memhop.api.results import (
    ArchiveSlot,
    PlanNodeView,
    PlanTree,
    ProfileSlot,
    RecallHit,
    SceneContext,
    SceneContextTopic,
    SceneMessage,
    SceneSlot,
    TopicSlot,
)
from memhop.api.types import PlanStatus
from memhop.errors import CorruptionError
from memhop.ids import format_id
from memhop.records import ArchiveKind, PlanStatusCode

__all__ = [
    "BRIEF_FIELD_MAX_RUNES",
    "BRIEF_PREFERENCES_SHOWN",
    "BRIEF_VALUE_MAX_RUNES",
    "BRIEF_WORST_CASE_RUNES",
    "ProvenanceLike",
    "SceneRowLike",
    "archive_slot",
    "hexes",
    "plan_tree",
    "profile_brief",
    "scene_context",
    "scene_context_topic",
    "scene_message",
    "scene_slot",
    "topic_slot",
]

BRIEF_FIELD_MAX_RUNES = 160
BRIEF_VALUE_MAX_RUNES = 120
BRIEF_PREFERENCES_SHOWN = 5
BRIEF_WORST_CASE_RUNES = 2100
"""The brief's ceiling: three capped fields, the type, five capped pairs, the emotions."""


def hexes(values: Iterable[int]) -> tuple[str, ...]:
    """Each id as 16 hex digits, in the order given."""
    return tuple(format_id(v) for v in values)


# ---- L0 ---------------------------------------------------------------------------------


def _cap(text: str, runes: int) -> str:
    """``text`` cut to its first ``runes`` code points plus "…" when longer."""
    return text if len(text) <= runes else text[:runes] + "…"


def profile_brief(profile: ProfileSlot) -> str:
    """Upstream's profile digest: up to six capped lines, "" for an empty profile."""
    e = profile.emotion_state
    mbti = profile.mbti.type
    has_emotion = not (e.valence == 0 and e.arousal == 0 and e.dominance == 0)
    lines: list[str] = []
    for label, text in (
        ("name", profile.name),
        ("role", profile.role),
        ("personality", profile.personality),
    ):
        if text:
            lines.append(f"{label}: {_cap(text, BRIEF_FIELD_MAX_RUNES)}\n")
    if mbti:
        lines.append(f"mbti: {mbti}\n")
    if profile.preferences:
        prefs = profile.preferences
        # Go sorts keys by UTF-8 bytes; code-point order is the same order.
        shown = sorted(prefs)[:BRIEF_PREFERENCES_SHOWN]
        pairs = ", ".join(
            f"{_cap(k, BRIEF_FIELD_MAX_RUNES)}={_cap(prefs[k], BRIEF_VALUE_MAX_RUNES)}"
            for k in shown
        )
        lines.append(f"preferences: {pairs}\n")
    if has_emotion:
        lines.append(
            f"emotions: valence={e.valence:.2f} arousal={e.arousal:.2f} "
            f"dominance={e.dominance:.2f}\n"
        )
    return "".join(lines)


# ---- L2 -----------------------------------------------------------------------------------


def scene_slot(scene: rec.SceneSlot) -> SceneSlot:
    """A scene without its counters; an unanchored scene has ``l3_id`` ""."""
    return SceneSlot(
        scene_id=format_id(scene.scene_id),
        scene_name=scene.scene_name,
        l3_id=format_id(scene.l3_id) if scene.l3_id else "",
    )


class ProvenanceLike(Protocol):
    """Where a row came from (``memhop.root.provenance.Provenance``)."""

    @property
    def origin(self) -> str: ...
    @property
    def derived_from(self) -> Sequence[int]: ...
    @property
    def grounding(self) -> float | None: ...


# A row with no provenance given: a turn row, as the result classes default it.
_DEFAULT_ROW = TopicSlot(id="")
_TURN_ROW = (_DEFAULT_ROW.origin, _DEFAULT_ROW.derived_from, _DEFAULT_ROW.grounding)


def _provenance(made_by: ProvenanceLike | None) -> tuple[str, tuple[str, ...], float | None]:
    """(origin, derived_from, grounding) of a row, passed by name: a ``**`` of a dict
    costs a call by dict, and a turn maps a row."""
    if made_by is None:
        return _TURN_ROW
    return made_by.origin, hexes(made_by.derived_from), made_by.grounding


def topic_slot(topic: rec.TopicSlot, made_by: ProvenanceLike | None = None) -> TopicSlot:
    """A topic row; a root keeps ``parent_id`` None; no ``made_by`` reads as a turn row."""
    origin, derived_from, grounding = _provenance(made_by)
    return TopicSlot(
        id=format_id(topic.id),
        scene_id=format_id(topic.scene_id),
        parent_id=None if topic.parent_id is None else format_id(topic.parent_id),
        depth=topic.depth,
        name=topic.name,
        fused_keywords=topic.fused_keywords,
        user_timestamp=topic.user_timestamp,
        agent_timestamp=topic.agent_timestamp,
        origin=origin,
        derived_from=derived_from,
        grounding=grounding,
    )


def scene_message(content: rec.ArchiveSlot) -> SceneMessage:
    """One utterance as a listed message."""
    return SceneMessage(
        role=content.role,
        type=content.content_type,
        content=content.content,
        seq=content.seq,
        created_at=content.created_at,
    )


def scene_context_topic(
    topic: rec.TopicSlot,
    child_count: int,
    contents: Iterable[rec.ArchiveSlot],
    made_by: ProvenanceLike | None = None,
) -> SceneContextTopic:
    """A listing row: the topic's utterances in seq order; its events are never listed."""
    origin, derived_from, grounding = _provenance(made_by)
    utterances = sorted(
        (c for c in contents if c.kind == ArchiveKind.UTTERANCE), key=lambda c: c.seq
    )
    return SceneContextTopic(
        topic_id=format_id(topic.id),
        depth=topic.depth,
        name=topic.name,
        keywords=topic.fused_keywords,
        messages=tuple(scene_message(c) for c in utterances),
        child_count=child_count,
        user_timestamp=topic.user_timestamp,
        agent_timestamp=topic.agent_timestamp,
        origin=origin,
        derived_from=derived_from,
        grounding=grounding,
    )


class _ListedTopic(Protocol):
    @property
    def topic(self) -> rec.TopicSlot: ...
    @property
    def child_count(self) -> int: ...


class SceneRowLike(Protocol):
    """A listed topic (``row.topic``, ``row.child_count``) with its lines (``messages``).

    An optional ``provenance`` attribute (``ProvenanceLike``) marks a dream row.
    """

    @property
    def row(self) -> _ListedTopic: ...
    @property
    def messages(self) -> Sequence[rec.ArchiveSlot]: ...


def scene_context(scene_name: str, rows: Iterable[SceneRowLike]) -> SceneContext:
    """A scene's listing, rows in the order given."""
    return SceneContext(
        scene_name=scene_name,
        topics=tuple(
            scene_context_topic(
                r.row.topic, r.row.child_count, r.messages, getattr(r, "provenance", None)
            )
            for r in rows
        ),
    )


# ---- L4 -------------------------------------------------------------------------------------


def archive_slot(content: rec.ArchiveSlot) -> ArchiveSlot:
    """One L4 record as read back."""
    return ArchiveSlot(
        id=format_id(content.id_hash),
        kind=content.kind,
        seq=content.seq,
        content_type=content.content_type,
        role=content.role,
        topic_id=format_id(content.topic_id),
        event_type=content.event_type,
        node_seq=content.node_seq,
        created_at=content.created_at,
        content=content.content,
    )


# ---- L5 -------------------------------------------------------------------------------------

_STATUS_WORDS: dict[int, PlanStatus] = {
    PlanStatusCode.IN_PROGRESS: PlanStatus.IN_PROGRESS,
    PlanStatusCode.DONE: PlanStatus.DONE,
    PlanStatusCode.FAILED: PlanStatus.FAILED,
}


def plan_tree(nodes: Iterable[rec.PlanNode]) -> PlanTree:
    """A turn's plan forest from its steps (any order; a later duplicate seq wins).

    Roots are the steps whose parent is 0 or not among ``nodes``; children and
    roots go in seq order. Steps caught in a parent loop reach no root and are
    listed as extra roots rather than lost. An empty title shows the ordinal.
    Raises CorruptionError for a stored status with no word.
    """
    by_seq = {n.seq: n for n in nodes}
    ordered = sorted(by_seq.values(), key=lambda n: n.seq)
    children: dict[int, list[rec.PlanNode]] = {}
    roots: list[rec.PlanNode] = []
    for n in ordered:
        if n.parent_seq == 0 or n.parent_seq not in by_seq:
            roots.append(n)
        else:
            children.setdefault(n.parent_seq, []).append(n)
    placed: set[int] = set()
    views = [_plan_view(n, children, placed) for n in roots]
    views += [_plan_view(n, children, placed) for n in ordered if n.seq not in placed]
    done = sum(1 for n in ordered if n.status == PlanStatusCode.DONE)
    return PlanTree(roots=tuple(views), done_count=done, total_count=len(ordered))


def _plan_view(
    node: rec.PlanNode, children: Mapping[int, list[rec.PlanNode]], placed: set[int]
) -> PlanNodeView:
    placed.add(node.seq)
    status = _STATUS_WORDS.get(node.status)
    if status is None:
        msg = f"plan step {node.seq} holds undefined status {node.status}"
        raise CorruptionError(msg)
    below = [c for c in children.get(node.seq, ()) if c.seq not in placed]
    return PlanNodeView(
        seq=node.seq,
        parent_seq=node.parent_seq,
        title=node.title or str(node.seq),
        status=status,
        summary=node.summary,
        created_at=node.created_at,
        finished_at=node.finished_at,
        updated_at=node.updated_at,
        children=tuple(_plan_view(c, children, placed) for c in below),
    )


# ---- recall ---------------------------------------------------------------------------------


class FoundLike(Protocol):
    """One recall answer (``memhop.root.recall.RecallFound``)."""

    @property
    def score(self) -> float: ...
    @property
    def scene_id(self) -> int: ...
    @property
    def topic_id(self) -> int: ...
    @property
    def created_at(self) -> int: ...
    @property
    def keywords(self) -> Sequence[str]: ...
    @property
    def text(self) -> str: ...
    @property
    def provenance(self) -> ProvenanceLike: ...
    @property
    def event(self) -> rec.ArchiveSlot | None: ...


def recall_hit(found: FoundLike) -> RecallHit:
    """A recall answer; the zero scene id (an event of no listed turn) reads as ""."""
    origin, derived_from, grounding = _provenance(found.provenance)
    return RecallHit(
        scene_id=format_id(found.scene_id) if found.scene_id else "",
        topic_id=format_id(found.topic_id),
        score=round(found.score, 6),
        created_at=found.created_at,
        keywords=tuple(found.keywords),
        text=found.text,
        event_type=found.event.event_type if found.event is not None else "",
        origin=origin,
        derived_from=derived_from,
        grounding=grounding,
    )
