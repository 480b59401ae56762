"""Host-only administration of one domain's scenes and topics (api.md §9.3-§9.7).

Responsibility: patch a scene (name, anchor), rename a topic, merge scenes,
and delete a topic or a scene with everything that hangs from it.

Contract:
- Every refusal comes before the first write: arguments, then existence,
  then a strict read of everything the call will change or delete. A record
  that will not read refuses the whole call with its own code.
- A delete tombstones its whole closure in one engine batch, ordered so that
  a crash part-way leaves the root of the closure standing (a retry finds the
  rest): the L1 node, content, plan steps, topics deepest first, the named
  topic or the scene record last. Mirrors change only after the engine did.
- Domain memory follows the records: a deleted or merged-away scene stops
  being current, and a turn open on it is dropped ("no turn is open").

Traps: the open turn has no topic record until ``update`` closes it, so
``delete_topic`` cannot name it before; ``delete_scene`` takes the content
and plan steps of every turn the scene opened, closed or not.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Sequence

from memhop import ids
from memhop.domain.context import DomainContext
from memhop.engine import Engine
from memhop.errors import InvalidQueryError, NotFoundError
from memhop.layers import graph, scene, topic
from memhop.records import RecordType, SceneSlot, TopicSlot

__all__ = ["delete_scene", "delete_topic", "merge_scenes", "rename_topic", "update_scene"]


# ---- scene patch and topic rename ----------------------------------------------------------


def _anchor(stored: SceneSlot, l3_id: int | None, force: bool, engine: Engine) -> int:
    """The anchor a patch leaves: None keeps, 0 clears, else an existing graph."""
    if l3_id is None:
        return stored.l3_id
    if l3_id == 0:
        return 0
    if graph.get_graph_optional(engine, l3_id) is None:
        msg = f"graph {ids.format_id(l3_id)} not found"
        raise NotFoundError(msg)
    if stored.l3_id not in (0, l3_id) and not force:
        msg = (
            f"scene {ids.format_id(stored.scene_id)} is anchored to"
            f" {ids.format_id(stored.l3_id)}; pass Force to re-anchor"
        )
        raise InvalidQueryError(msg)
    return l3_id


def update_scene(
    engine: Engine,
    ctx: DomainContext,
    scene_id: int,
    name: str | None,
    l3_id: int | None,
    force: bool,
) -> SceneSlot:
    """Patch a scene's name and anchor; return it as stored. No change writes nothing."""
    if name == "":
        msg = "scene name is required"
        raise InvalidQueryError(msg)
    stored = scene.get_scene(engine, ctx.agent_id, scene_id)
    patched = dataclasses.replace(
        stored,
        scene_name=stored.scene_name if name is None else name,
        l3_id=_anchor(stored, l3_id, force, engine),
    )
    if patched == stored:
        return stored
    scene.put_scene(engine, ctx.agent_id, patched)
    return patched


def rename_topic(engine: Engine, ctx: DomainContext, topic_id: int, name: str) -> TopicSlot:
    """Set a topic's name only (depth, parent, keywords kept); the same name writes nothing."""
    if name == "":
        msg = "topic name is required"
        raise InvalidQueryError(msg)
    try:
        renamed, written = topic.rename_topic(engine, ctx.agent_id, topic_id, name)
    except NotFoundError as exc:
        msg = f"topic {ids.format_id(topic_id)} not found"
        raise NotFoundError(msg) from exc
    if written:
        ctx.mirrors.topics.put(renamed)
    return renamed


# ---- merge ---------------------------------------------------------------------------------


def _check_merge_ids(primary_id: int, secondary_ids: Sequence[int]) -> None:
    if not secondary_ids:
        msg = "secondary scene ids are required"
        raise InvalidQueryError(msg)
    if primary_id in secondary_ids:
        msg = f"the primary scene {ids.format_id(primary_id)} is listed among the secondaries"
        raise InvalidQueryError(msg)
    seen: set[int] = set()
    for sid in secondary_ids:
        if sid in seen:
            msg = f"secondary scene {ids.format_id(sid)} is listed twice"
            raise InvalidQueryError(msg)
        seen.add(sid)


def _merged_anchor(primary: SceneSlot, secondaries: Sequence[SceneSlot]) -> int:
    """The primary keeps its anchor; an unanchored one takes the secondaries' single anchor."""
    if primary.l3_id:
        return primary.l3_id
    anchors = sorted({s.l3_id for s in secondaries if s.l3_id})
    if len(anchors) > 1:
        named = ", ".join(ids.format_id(a) for a in anchors)
        msg = (
            f"the secondary scenes are anchored to different graphs ({named}) and the primary"
            f" scene {ids.format_id(primary.scene_id)} to none: anchor the primary first"
        )
        raise InvalidQueryError(msg)
    return anchors[0] if anchors else 0


def _held_scene(engine: Engine, ctx: DomainContext) -> int | None:
    """The current scene as ``search`` would pick it, without changing domain memory."""
    if ctx.current_scene is not None:
        return ctx.current_scene
    chosen = scene.current_scene(scene.list_scenes(engine, ctx.agent_id))
    return None if chosen is None else chosen.scene_id


def merge_scenes(
    engine: Engine, ctx: DomainContext, primary_id: int, secondary_ids: Sequence[int]
) -> None:
    """Fold the secondaries' topics into the primary and delete the secondaries.

    Topic ids, keywords, bounds and names are unchanged; the primary's name
    survives. A turn open on a secondary is dropped; if a secondary was the
    current scene, the primary becomes it.
    """
    _check_merge_ids(primary_id, secondary_ids)
    agent = ctx.agent_id
    primary = scene.get_scene(engine, agent, primary_id)
    secondaries = [scene.get_scene(engine, agent, sid) for sid in secondary_ids]
    anchor = _merged_anchor(primary, secondaries)
    swallowed = frozenset(secondary_ids)
    moving = [t for t in topic.iter_topics_strict(engine, agent) if t.scene_id in swallowed]
    nodes = [ids.scene_node_id(s) for s in secondary_ids if scene.scene_node_of(engine, agent, s)]
    held = _held_scene(engine, ctx)
    # Writes: L1 nodes first, then the topics move, then the secondaries go.
    scene.delete_scene_nodes(engine, agent, nodes)
    moved = topic.retarget_topics(engine, agent, moving, primary_id)
    if anchor != primary.l3_id:
        scene.put_scene(engine, agent, dataclasses.replace(primary, l3_id=anchor))
    scene.delete_scenes(engine, agent, secondary_ids)
    for row in moved:
        ctx.mirrors.topics.put(row)
    for sid in secondary_ids:
        ctx.mirrors.topics.retarget(sid, primary_id)
    if held in swallowed:
        ctx.current_scene = primary_id
    if ctx.open_turn is not None and ctx.open_turn.scene_id in swallowed:
        ctx.open_turn = None


# ---- delete cascades -----------------------------------------------------------------------


def _live_of_type(engine: Engine, agent: int, rec_type: int, wanted: Iterable[int]) -> list[int]:
    """The ids among ``wanted`` that hold a live record of ``rec_type``, in the given order."""
    live = set(engine.ids_of_type(agent, rec_type))
    return [i for i in wanted if i in live]


def _deepest_first(topics: Collection[TopicSlot], last: int | None) -> list[int]:
    """Topic ids deepest first (then by id), with ``last`` (the named root) at the end."""
    ordered = sorted(topics, key=lambda t: (-t.depth, t.id))
    return [t.id for t in ordered if t.id != last] + ([] if last is None else [last])


def _cascade(
    engine: Engine,
    ctx: DomainContext,
    topics: Collection[TopicSlot],
    orphan_keys: Iterable[int],
    head: Sequence[int],
    tail: Sequence[int],
    root: int | None,
) -> None:
    """Tombstone the closure of ``topics`` in one batch, then update the mirrors.

    ``orphan_keys`` are turn keys without a topic record whose content and
    plan steps go too; ``head`` ids go first and ``tail`` ids last.
    """
    agent = ctx.agent_id
    mirrors = ctx.mirrors
    keys = [t.id for t in topics] + [*orphan_keys]
    contents = [r.id_hash for k in keys for r in mirrors.contents.slots_of(k)]
    steps = [n.id_hash for k in keys for n in mirrors.plans.nodes_of(k)]
    batch = [
        *head,
        *_live_of_type(engine, agent, RecordType.ARCHIVE, contents),
        *_live_of_type(engine, agent, RecordType.PLAN_NODE, steps),
        *_deepest_first(topics, root),
        *tail,
    ]
    engine.delete_batch(agent, batch)
    mirrors.topics.remove(t.id for t in topics)
    for key in keys:
        mirrors.contents.remove_topic(key)
        mirrors.plans.remove_topic(key)
    if ctx.open_turn is not None and ctx.open_turn.topic_id in keys:
        ctx.open_turn = None


def delete_topic(engine: Engine, ctx: DomainContext, topic_id: int) -> None:
    """Delete a topic, every topic below it, and their content and plan steps.

    Deleting an absent (or already deleted) topic is NotFoundError. The open
    turn is forgotten when it is in the closure.
    """
    everything = topic.all_topics_strict(engine, ctx.agent_id)
    if not any(t.id == topic_id for t in everything):
        msg = f"topic {ids.format_id(topic_id)} not found"
        raise NotFoundError(msg)
    doomed = topic.closure(everything, topic_id)
    _cascade(engine, ctx, [t for t in everything if t.id in doomed], (), (), (), topic_id)


def delete_scene(engine: Engine, ctx: DomainContext, scene_id: int) -> None:
    """Delete a scene, its topics at every depth, their content and plans, and its L1 node.

    The content and plan steps of the scene's turns that never closed go
    too. The scene stops being current; a turn open on it is dropped.
    """
    agent = ctx.agent_id
    stored = scene.get_scene(engine, agent, scene_id)
    everything = topic.all_topics_strict(engine, agent)
    roots = [t.id for t in everything if t.scene_id == scene_id]
    doomed: set[int] = set()
    for root in roots:
        doomed |= topic.closure(everything, root)
    known = {t.id for t in everything}
    turn_keys = (ids.turn_topic_id(scene_id, seq) for seq in range(1, stored.turn_seq + 1))
    orphans = [k for k in turn_keys if k not in known]
    node = scene.scene_node_of(engine, agent, scene_id)
    head = [] if node is None else [ids.scene_node_id(scene_id)]
    tail = _live_of_type(engine, agent, RecordType.SCENE, [scene_id])
    _cascade(engine, ctx, [t for t in everything if t.id in doomed], orphans, head, tail, None)
    if ctx.current_scene == scene_id:
        ctx.current_scene = None
    if ctx.open_turn is not None and ctx.open_turn.scene_id == scene_id:
        ctx.open_turn = None
