"""L2 topics (type 0x04): turn topics, fused parents, sinking, rename, closure, delete.

Every function takes the engine and a domain (agent id) first; no lock, no
LLM, no cache. The composition root mirrors what these return into
``memhop.index.l2meta``.

Contract:
- A turn-topic rewrite (a replayed ``Update``) refreshes keywords and bounds
  but keeps the stored depth, parent and name, so a folded turn stays folded
  and a host name survives (api.md §5.3).
- A sink reads every member before writing anything; a member that will not
  read, or names another record type, refuses the whole sink as StorageIOError
  (dream.md §4.5 step 7). Absent members are skipped.
- ``closure`` is pure and ``delete_topics`` only tombstones: callers enumerate
  strictly (``all_topics_strict``) before the first tombstone.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Iterator, Sequence

from memhop.engine import Engine
from memhop.errors import InvalidQueryError, MemHopError, NotFoundError, StorageIOError
from memhop.layers import codec
from memhop.records import RecordType, TopicSlot

__all__ = [
    "MAX_DEPTH",
    "all_topics",
    "all_topics_strict",
    "closure",
    "delete_topics",
    "get_topic_optional",
    "iter_topics_strict",
    "read_topic_lenient",
    "read_topics_strict",
    "rename_topic",
    "restore_sunk",
    "retarget_topics",
    "sink_members",
    "turn_topic",
    "write_fused_parent",
]

log = logging.getLogger("memhop.layers")

MAX_DEPTH = 4
"""A sink that would bring a topic to this depth deletes it instead (upstream ``MaxDepth``)."""


def get_topic_optional(engine: Engine, agent_id: int, topic_id: int) -> TopicSlot | None:
    """Return the topic, or None when the id is absent or holds another type; unreadable raises."""
    return codec.read_optional(engine, agent_id, topic_id, TopicSlot)


def read_topic_lenient(engine: Engine, agent_id: int, topic_id: int) -> TopicSlot | None:
    """Return the topic; None when the id holds another record type (storage.md §3.3).

    An absent id is NotFoundError and an unreadable one keeps its own error:
    unlike ``codec.read``, "another type" is told apart from "absent", which
    is what a collision guard needs.
    """
    frame = engine.read(agent_id, topic_id)
    if frame.rec_type != RecordType.TOPIC:
        return None
    return TopicSlot.from_json(frame.payload)


def turn_topic(
    engine: Engine,
    agent_id: int,
    scene_id: int,
    topic_id: int,
    keywords: Sequence[str],
    user_ts: int,
    agent_ts: int,
) -> TopicSlot:
    """The turn topic a (re)distilled turn stores at ``topic_id``; nothing is written.

    New: depth 1, no parent, no name. Replay: keywords, bounds and scene are
    fresh; depth, parent and name come from the stored record. A stored
    record that will not read refuses with its own code (no blind overwrite).
    """
    stored = codec.read_optional(engine, agent_id, topic_id, TopicSlot)
    return TopicSlot(
        id=topic_id,
        scene_id=scene_id,
        parent_id=None if stored is None else stored.parent_id,
        depth=1 if stored is None else stored.depth,
        name="" if stored is None else stored.name,
        fused_keywords=tuple(keywords),
        user_timestamp=user_ts,
        agent_timestamp=agent_ts,
    )


def write_fused_parent(
    engine: Engine,
    agent_id: int,
    scene_id: int,
    parent_id: int,
    keywords: Sequence[str],
    user_ts: int,
    agent_ts: int,
) -> TopicSlot:
    """Write a consolidation parent at the surface and return it (dream.md §4.5 step 6).

    The caller derives ``parent_id`` (``ids.fused_topic_id``) and has already
    guarded the slot; the track is the summary's keywords only.
    """
    parent = TopicSlot(
        id=parent_id,
        scene_id=scene_id,
        depth=1,
        fused_keywords=tuple(keywords),
        user_timestamp=user_ts,
        agent_timestamp=agent_ts,
    )
    codec.write(engine, agent_id, parent_id, parent)
    return parent


def _read_member(engine: Engine, agent_id: int, member_id: int) -> TopicSlot | None:
    """Return a sink member, None when absent; anything else unusable is StorageIOError."""
    try:
        topic = read_topic_lenient(engine, agent_id, member_id)
    except NotFoundError:
        return None
    except MemHopError as exc:
        msg = f"sink member {member_id:016x} will not read: {exc}"
        raise StorageIOError(msg) from exc
    if topic is None:
        msg = f"sink member {member_id:016x} names a record that is not a topic"
        raise StorageIOError(msg)
    return topic


def _unique(ids: Iterable[int]) -> list[int]:
    # A group may echo one id twice; it is still one topic to move once.
    return list(dict.fromkeys(ids))


def sink_members(
    engine: Engine, agent_id: int, parent_id: int, member_ids: Iterable[int]
) -> list[TopicSlot]:
    """Move members one level down under ``parent_id``; return them in their new state.

    Each returned slot has depth + 1 and ``parent_id`` set. One whose new
    depth is ``MAX_DEPTH`` or more was deleted instead of written: callers
    tell the two apart by that depth. Every member is read before the one
    batch write and the one batch delete; absent members are skipped.
    """
    moved: list[TopicSlot] = []
    for member_id in _unique(member_ids):
        topic = _read_member(engine, agent_id, member_id)
        if topic is not None:
            moved.append(dataclasses.replace(topic, depth=topic.depth + 1, parent_id=parent_id))
    kept = [(t.id, t) for t in moved if t.depth < MAX_DEPTH]
    doomed = [t.id for t in moved if t.depth >= MAX_DEPTH]
    codec.write_many(engine, agent_id, kept)
    if doomed:
        engine.delete_batch(agent_id, doomed)
    return moved


def restore_sunk(
    engine: Engine, agent_id: int, parent_id: int, member_ids: Iterable[int]
) -> list[TopicSlot]:
    """Undo a failed sink: members parented to ``parent_id`` rise one level, parentless.

    Depth never goes below 1. This runs during a rollback, so a member that
    will not read is logged and left alone rather than aborting the rest.
    Returns the restored slots as written.
    """
    restored: list[TopicSlot] = []
    for member_id in _unique(member_ids):
        try:
            topic = codec.read_optional(engine, agent_id, member_id, TopicSlot)
        except MemHopError as exc:
            log.warning("rollback leaves topic %016x alone: %s", member_id, exc)
            continue
        if topic is None or topic.parent_id != parent_id:
            continue  # never sunk by this parent, or gone
        restored.append(dataclasses.replace(topic, depth=max(topic.depth - 1, 1), parent_id=None))
    codec.write_many(engine, agent_id, [(t.id, t) for t in restored])
    return restored


def rename_topic(engine: Engine, agent_id: int, topic_id: int, name: str) -> tuple[TopicSlot, bool]:
    """Set a topic's name; return (stored topic, whether anything was written).

    Only the name changes. The same name writes nothing; an absent topic (or
    another domain's) is NotFoundError and nothing is created.
    """
    if not name:
        msg = "topic name is required"
        raise InvalidQueryError(msg)
    topic = codec.read(engine, agent_id, topic_id, TopicSlot)
    if topic.name == name:
        return topic, False
    renamed = dataclasses.replace(topic, name=name)
    codec.write(engine, agent_id, topic_id, renamed)
    return renamed, True


def retarget_topics(
    engine: Engine, agent_id: int, topics: Iterable[TopicSlot], new_scene_id: int
) -> list[TopicSlot]:
    """Move topics to ``new_scene_id`` in one batch write; return them as written.

    Ids, keywords, bounds, depth, parent and name are unchanged (a merge).
    """
    moved = [dataclasses.replace(t, scene_id=new_scene_id) for t in topics]
    codec.write_many(engine, agent_id, [(t.id, t) for t in moved])
    return moved


def all_topics(engine: Engine, agent_id: int) -> list[TopicSlot]:
    """Return every readable topic of the domain, ascending by id (damage skipped and counted)."""
    return [topic for _, topic in codec.collect(engine, agent_id, TopicSlot)]


def read_topics_strict(engine: Engine, agent_id: int, ids: Iterable[int]) -> list[TopicSlot]:
    """Return the topics among ``ids`` that exist, in their order; a record that will not read
    aborts."""
    return [topic for _, topic in codec.read_many_strict(engine, agent_id, ids, TopicSlot)]


def all_topics_strict(engine: Engine, agent_id: int) -> list[TopicSlot]:
    """Return every topic of the domain, ascending by id; a record that will not read aborts."""
    return list(iter_topics_strict(engine, agent_id))


def iter_topics_strict(engine: Engine, agent_id: int) -> Iterator[TopicSlot]:
    """``all_topics_strict`` one topic at a time, none kept: a list of a domain's topics
    lives long enough to reach the collector's oldest generation, where every full
    collection meanwhile walks it (10^5 records: 200,000 objects, 80 ms a collection)."""
    ids = engine.ids_of_type(agent_id, TopicSlot.RECORD_TYPE)
    return (t for _, t in codec.iter_strict(engine, agent_id, ids, TopicSlot))


def closure(topics: Iterable[TopicSlot], root_id: int) -> set[int]:
    """Return ``root_id`` and the ids of every topic whose parent chain leads to it.

    Pure. Walks parent -> children breadth first with a visited set, so a
    parent cycle in a damaged file ends the walk instead of looping.
    """
    children: dict[int, list[int]] = {}
    for topic in topics:
        if topic.parent_id is not None:
            children.setdefault(topic.parent_id, []).append(topic.id)
    found = {root_id}
    frontier = [root_id]
    while frontier:
        nxt: list[int] = []
        for parent in frontier:
            for child in children.get(parent, ()):
                if child not in found:
                    found.add(child)
                    nxt.append(child)
        frontier = nxt
    return found


def delete_topics(engine: Engine, agent_id: int, ids: Iterable[int]) -> int:
    """Tombstone the live topics among ``ids`` in one batch; return how many.

    Ids holding another record type are left alone: one id, one record type.
    """
    return codec.delete_many(engine, agent_id, ids, TopicSlot)
