"""Provenance of a listed topic row: said in a turn, or reconstructed by Dream.

Derived from what is stored (files stay format 0x0012), so it survives a
reopen. The rule: a topic is a **dream** row when other topics are parented
to it (only Dream parents topics: it sinks a group's members under the fused
row) or when its own L4 slot 1 holds a role-dream summary (only Dream writes
that role). Everything else is a **turn** row.

For a dream row, ``derived_from`` lists its children (the members it folded,
by user timestamp then id) and ``grounding`` is the share of its own track's
keywords that also appear, case-insensitively, in those members' tracks: 1.0
means every keyword is grounded in what the members recorded; lower values
mark words the model introduced. A fused row whose children were all deleted
and whose summary aged out reads as a turn row (nothing stored says otherwise).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memhop.ids import content_id
from memhop.index.l2meta import L2Meta
from memhop.index.l4 import L4Index
from memhop.records import SEQ_USER, ArchiveKind, ArchiveRole, TopicSlot

__all__ = ["TURN", "Provenance", "grounding", "of_row", "of_scene"]

ORIGIN_TURN = "turn"
ORIGIN_DREAM = "dream"


@dataclass(frozen=True, slots=True)
class Provenance:
    origin: str = ORIGIN_TURN
    derived_from: tuple[int, ...] = ()
    grounding: float | None = None


TURN = Provenance()


def grounding(track: Sequence[str], members: Sequence[TopicSlot]) -> float:
    """Share of ``track`` found (case-insensitively) in the members' tracks; 0.0 for no track."""
    if not track:
        return 0.0
    pool = {k.strip().casefold() for m in members for k in m.fused_keywords}
    return sum(1 for k in track if k.strip().casefold() in pool) / len(track)


def _has_dream_summary(contents: L4Index, topic_id: int) -> bool:
    # One lookup of slot 1 by its address, not a walk of the topic's slots:
    # this runs for every row of every scene read.
    ref = contents.get(content_id(topic_id, SEQ_USER))
    return ref is not None and ref.role == ArchiveRole.DREAM and ref.kind == ArchiveKind.UTTERANCE


def of_row(contents: L4Index, row: TopicSlot, children: Sequence[TopicSlot]) -> Provenance:
    """Provenance of one listed row given its direct children (any order)."""
    kids = sorted(children, key=lambda t: (t.user_timestamp, t.id))
    if not kids and not _has_dream_summary(contents, row.id):
        return TURN
    return Provenance(ORIGIN_DREAM, tuple(k.id for k in kids), grounding(row.fused_keywords, kids))


def of_scene(topics: L2Meta, contents: L4Index, scene_id: int) -> dict[int, Provenance]:
    """Provenance of every dream row of a scene (a topic absent from the answer is a turn row).

    Costs the scene's parents and summarised rows, not all its rows: a turn
    answers a long scene without a lookup per row.
    """
    children = topics.children_in_scene(scene_id)
    summarised = contents.summarised_topics()
    if not children and summarised is not None and not summarised:
        return {}  # no parent in the scene, no summary in the domain: no dream row (the usual)
    if summarised is None:  # a summary at a foreign address: look every row up
        candidates = [t.id for t in topics.topics_of_scene(scene_id)]
    else:
        rows = topics.scene_row_ids(scene_id)
        small, large = (summarised, rows) if len(summarised) <= len(rows) else (rows, summarised)
        candidates = sorted({t for t in small if t in large} | children.keys())
    found = {}
    for topic_id in candidates:
        row = topics.get(topic_id)
        if row is None:
            continue
        made = of_row(contents, row, children.get(topic_id, ()))
        if made is not TURN:
            found[topic_id] = made
    return found
