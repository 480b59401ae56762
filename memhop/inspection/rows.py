"""Records as notebook rows: hex ids, enum names, UTC datetimes, and a scene id where one applies.

Provenance follows the rule in docs/internals/dream.md, derived from what is
stored: a topic is a ``dream`` row when other topics are parented to it or its
slot 1 holds a dream-role summary, else a ``turn`` row; a dream row's
``grounding`` is the share of its keywords found in its members' keywords.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from enum import IntEnum
from typing import Any

from memhop.ids import format_id
from memhop.records import (
    ArchiveKind,
    ArchiveRole,
    ArchiveSlot,
    HypergraphSlot,
    PlanNode,
    ProfileSlot,
    SceneNode,
    SceneSlot,
    TopicSlot,
)

__all__ = [
    "CONTENT_COLUMNS",
    "PLAN_COLUMNS",
    "TOPIC_COLUMNS",
    "Provenance",
    "content_row",
    "enum_name",
    "graph_row",
    "l1_row",
    "plan_row",
    "profile_row",
    "provenance_of",
    "scene_row",
    "time_of",
    "topic_row",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

TOPIC_COLUMNS = (
    "scene_id",
    "topic_id",
    "depth",
    "parent_id",
    "name",
    "origin",
    "derived_from",
    "grounding",
    "keywords",
    "lines",
    "user_time",
    "agent_time",
)
CONTENT_COLUMNS = (
    "scene_id",
    "topic_id",
    "seq",
    "id",
    "kind",
    "role",
    "content_type",
    "event_type",
    "node_seq",
    "created_at",
    "content",
)
PLAN_COLUMNS = (
    "scene_id",
    "topic_id",
    "seq",
    "parent_seq",
    "status",
    "title",
    "summary",
    "summary_folded",
    "created_at",
    "finished_at",
    "updated_at",
)

Provenance = tuple[str, tuple[str, ...], float | None]
"""(origin, derived_from ids, grounding) of one topic row."""


def time_of(ms: int) -> datetime | None:
    """Milliseconds since the epoch as an aware UTC datetime; None for 0 or out of range."""
    if ms == 0:
        return None
    try:
        return _EPOCH + timedelta(milliseconds=ms)
    except OverflowError:
        return None


def enum_name(value: int) -> str | int:
    """A stored enum by its lower-case name; a number with no name stays a number."""
    return value.name.lower() if isinstance(value, IntEnum) else value


def _hex(value: int) -> str:
    return format_id(value) if value else ""


def provenance_of(
    topics: Sequence[TopicSlot], summaries: Mapping[int, ArchiveSlot]
) -> dict[int, Provenance]:
    """Provenance of every topic of one scene; ``summaries`` maps a topic id to its slot 1.

    Slot 1 (the user's seq) is where Dream puts a fused row's summary.
    """
    children: dict[int, list[TopicSlot]] = {}
    for row in topics:
        if row.parent_id is not None:
            children.setdefault(row.parent_id, []).append(row)
    found: dict[int, Provenance] = {}
    for row in topics:
        kids = sorted(children.get(row.id, ()), key=lambda t: (t.user_timestamp, t.id))
        first = summaries.get(row.id)
        dreamt = (
            first is not None
            and first.role == ArchiveRole.DREAM
            and first.kind == ArchiveKind.UTTERANCE
        )
        if not kids and not dreamt:
            found[row.id] = ("turn", (), None)
            continue
        pool = {k.strip().casefold() for kid in kids for k in kid.fused_keywords}
        track = row.fused_keywords
        share = sum(1 for k in track if k.strip().casefold() in pool) / len(track) if track else 0.0
        found[row.id] = ("dream", tuple(format_id(k.id) for k in kids), share)
    return found


def topic_row(topic: TopicSlot, provenance: Provenance, lines: int) -> dict[str, Any]:
    origin, derived_from, grounding = provenance
    return {
        "scene_id": format_id(topic.scene_id),
        "topic_id": format_id(topic.id),
        "depth": topic.depth,
        "parent_id": None if topic.parent_id is None else format_id(topic.parent_id),
        "name": topic.name,
        "origin": origin,
        "derived_from": derived_from,
        "grounding": grounding,
        "keywords": topic.fused_keywords,
        "lines": lines,
        "user_time": time_of(topic.user_timestamp),
        "agent_time": time_of(topic.agent_timestamp),
    }


def content_row(slot: ArchiveSlot, scene_id: int) -> dict[str, Any]:
    return {
        "scene_id": _hex(scene_id),
        "topic_id": format_id(slot.topic_id),
        "seq": slot.seq,
        "id": format_id(slot.id_hash),
        "kind": enum_name(slot.kind),
        "role": enum_name(slot.role),
        "content_type": enum_name(slot.content_type),
        "event_type": slot.event_type,
        "node_seq": slot.node_seq,
        "created_at": time_of(slot.created_at),
        "content": slot.content,
    }


def plan_row(node: PlanNode, scene_id: int) -> dict[str, Any]:
    return {
        "scene_id": _hex(scene_id),
        "topic_id": format_id(node.topic_id),
        "seq": node.seq,
        "parent_seq": node.parent_seq,
        "status": enum_name(node.status),
        "title": node.title,
        "summary": node.summary,
        "summary_folded": node.summary_folded,
        "created_at": time_of(node.created_at),
        "finished_at": time_of(node.finished_at),
        "updated_at": time_of(node.updated_at),
    }


def scene_row(scene: SceneSlot, topics: int) -> dict[str, Any]:
    return {
        "scene_id": format_id(scene.scene_id),
        "name": scene.scene_name,
        "turns": scene.turn_seq,
        "topics": topics,
        "last_used_at": time_of(scene.last_used_at),
        "l3_id": _hex(scene.l3_id),
    }


def profile_row(agent_id: int, slot: ProfileSlot) -> dict[str, Any]:
    return {
        "agent": format_id(agent_id),
        "name": slot.name,
        "role": slot.role,
        "personality": slot.personality,
        "agent_type": enum_name(slot.agent_type),
        "mbti": slot.mbti.type,
        "valence": slot.emotion_state.valence,
        "arousal": slot.emotion_state.arousal,
        "dominance": slot.emotion_state.dominance,
        "preferences": dict(slot.preferences),
        "updated_at": time_of(slot.updated_at_ms),
    }


def l1_row(node: SceneNode) -> dict[str, Any]:
    return {
        "scene_id": format_id(node.scene_id),
        "node_id": format_id(node.id_hash),
        "importance": node.importance,
        "valence": node.valence,
        "arousal": node.arousal,
        "emotion_set": node.emotion_set,
        "topic_ids": tuple(format_id(t) for t in node.topic_ids),
        "edge_ids": tuple(format_id(e) for e in node.edge_ids),
        "created_at": time_of(node.created_at),
        "updated_at": time_of(node.updated_at),
    }


def graph_row(graph: HypergraphSlot, nodes: int, edges: int) -> dict[str, Any]:
    return {
        "graph_id": format_id(graph.id_hash),
        "name": graph.name,
        "nodes": nodes,
        "edges": edges,
        "created_at": time_of(graph.created_at),
        "updated_at": time_of(graph.updated_at),
    }
