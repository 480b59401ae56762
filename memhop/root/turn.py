"""The turn loop's two big methods: ``search`` opens a turn, ``update`` closes it.

``search`` writes one record (the scene's turn counter) and asks no model.
``update`` validates every record it will write before writing any, asks the
model once for the turn's keywords, then writes the lines and the topic row
with one fsync (the lines alone if anything before that fails).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter

from memhop import ids
from memhop.domain.context import DomainContext, OpenTurn
from memhop.domain.mirrors import Mirrors
from memhop.engine import Engine
from memhop.errors import CorruptionError, InvalidQueryError, LLMError, NotFoundError
from memhop.frozen import quick_init
from memhop.layers import graph, profile, scene, topic
from memhop.records import (
    SEQ_AGENT,
    SEQ_USER,
    ArchiveRole,
    ArchiveSlot,
    ProfileSlot,
    SceneSlot,
    TopicSlot,
)
from memhop.records.codes import KIND_EVENT, KIND_UTTERANCE, ROLE_AGENT, ROLE_USER
from memhop.root.content import (
    ContentInput,
    addressed,
    check_created,
    require_turn,
    write_addressed,
)
from memhop.root.provenance import Provenance, of_scene

OUTCOME_EVENT = "turn_outcome"
_SEQ, _CREATED_AT = attrgetter("seq"), attrgetter("created_at")  # no function made a turn
_SPEAKER: dict[int, str] = {
    ArchiveRole.USER: "User",
    ArchiveRole.AGENT: "Assistant",
    ArchiveRole.SYSTEM: "System",
}


@quick_init
@dataclass(frozen=True, slots=True)
class Opened:
    """What ``search`` hands the host: profile, scene, its surface, the new turn's id."""

    profile: ProfileSlot
    scene: SceneSlot
    topics: tuple[TopicSlot, ...]
    new_topic_id: int
    provenance: Mapping[int, Provenance]  # dream rows only


def current_scene(engine: Engine, ctx: DomainContext) -> SceneSlot | None:
    """The domain's current scene: held in memory, else the one used most recently."""
    if ctx.current_scene is not None:
        held = _scene(engine, ctx, ctx.current_scene)
        if held is not None:
            return held
    known, chosen = (
        (False, None) if ctx.warm is None else ctx.warm.current_scene(engine, ctx.agent_id)
    )
    if not known:
        chosen = scene.current_scene(scene.list_scenes(engine, ctx.agent_id))
    ctx.current_scene = None if chosen is None else chosen.scene_id
    return chosen


def _scene(engine: Engine, ctx: DomainContext, scene_id: int) -> SceneSlot | None:
    """The scene, or None; decoded once while its record stays where it is."""
    return ctx.slots.record(engine, ctx.agent_id, scene_id, scene.get_scene_optional)


def _profile(engine: Engine, agent_id: int, _id_hash: int) -> ProfileSlot:
    """The profile, as ``SlotCache.record`` reads a record (its id is the same in every
    domain)."""
    return profile.profile_or_empty(engine, agent_id)


def _require_graph(engine: Engine, l3_id: int) -> None:
    if graph.get_graph_optional(engine, l3_id) is None:
        msg = f"graph {ids.format_id(l3_id)} not found"
        raise NotFoundError(msg)


def _resolve_scene(
    engine: Engine,
    ctx: DomainContext,
    scene_id: int,
    l3_id: int,
    new_scene: bool,
    stamp: int,
    prior: SceneSlot | None,
) -> SceneSlot:
    """The scene this turn opens on; ``prior`` is the current scene when it is known."""
    if scene_id:
        if new_scene:
            msg = (
                "scene_id names a conversation to continue and new_scene asks for a fresh one:"
                " pass one or the other"
            )
            raise InvalidQueryError(msg)
        if l3_id:
            msg = (
                f"scene {ids.format_id(scene_id)} exists: an L3 anchor is set when a scene is"
                " created (use update_scene to re-anchor)"
            )
            raise InvalidQueryError(msg)
        return ctx.slots.record(engine, ctx.agent_id, scene_id, scene.get_scene)
    held = None if new_scene else prior if prior is not None else current_scene(engine, ctx)
    if held is not None:
        if l3_id:
            msg = (
                "an L3 anchor is set when a scene is created: pass new_scene with l3_id, or"
                " use update_scene"
            )
            raise InvalidQueryError(msg)
        return held
    if l3_id:
        _require_graph(engine, l3_id)
    fresh = scene.new_scene(scene.fresh_scene_id(engine, ctx.agent_id), l3_id, stamp)
    return fresh


def search(
    engine: Engine, ctx: DomainContext, now_ms: int, scene_id: int, l3_id: int, new_scene: bool
) -> Opened:
    """Open the next turn of a scene and return the scene's surface (one record written).

    Once the turn is open, ``ctx.on_turn_opened`` hears of the scene that was
    current before it: whether this call left it, and how long it had been idle.
    """
    stamp = ctx.next_stamp(now_ms)
    prior = _prior_scene(engine, ctx)
    chosen = _resolve_scene(engine, ctx, scene_id, l3_id, new_scene, stamp, prior)
    opened = scene.open_turn(chosen, stamp)
    new_topic = ids.turn_topic_id(opened.scene_id, opened.turn_seq)
    if new_topic == 0:
        msg = "the turn key hashes to zero; the turn was not opened"
        raise CorruptionError(msg)
    at = scene.put_scene(engine, ctx.agent_id, opened)
    ctx.slots.keep_at(opened.scene_id, at, opened)  # update reads it back
    stored = ctx.slots.record(engine, ctx.agent_id, ids.profile_id(), _profile)
    ctx.current_scene = opened.scene_id
    ctx.open_turn = OpenTurn(opened.scene_id, opened.turn_seq, new_topic)
    mirrors = ctx.scene_mirrors(engine, opened.scene_id)
    surface = tuple(mirrors.topics.surface(opened.scene_id))
    made_by = of_scene(mirrors.topics, mirrors.contents, opened.scene_id)
    if prior is not None and ctx.on_turn_opened is not None:
        left = prior.scene_id != opened.scene_id
        ctx.on_turn_opened(prior.scene_id, left, now_ms - prior.last_used_at)
    return Opened(stored, opened, surface, new_topic, made_by)


def _prior_scene(engine: Engine, ctx: DomainContext) -> SceneSlot | None:
    """The current scene before this turn, where it is known without listing the scenes."""
    if ctx.current_scene is not None:
        return _scene(engine, ctx, ctx.current_scene)
    if ctx.warm is not None:
        return ctx.warm.current_scene(engine, ctx.agent_id)[1]
    return None


def _closing_records(user: str, agent: str, outcome: str, created_at: int) -> list[ContentInput]:
    items = []
    if user:
        items.append(ContentInput(user, created_at, seq=SEQ_USER, role=ROLE_USER))
    if agent:
        items.append(ContentInput(agent, created_at, seq=SEQ_AGENT, role=ROLE_AGENT))
    if outcome:
        items.append(ContentInput(outcome, created_at, kind=KIND_EVENT, event_type=OUTCOME_EVENT))
    return items


def _transcript(
    engine: Engine, ctx: DomainContext, turn: OpenTurn, fresh: Sequence[ArchiveSlot]
) -> tuple[str, int, int]:
    """Render the turn's utterances in seq order, ``fresh`` (about to be written) over those
    stored at the same slots; return the text and the utterances' time bounds."""
    said = [s for s in fresh if s.kind == KIND_UTTERANCE]
    mirrors = ctx.scene_mirrors(engine, turn.scene_id)
    stored = mirrors.contents.ids_of(turn.topic_id, KIND_UTTERANCE)
    if stored:  # the turn's lines written before (a retry), or the host's own utterances
        written = {s.id_hash for s in fresh}
        taken = {s.seq for s in fresh}
        others = [i for i in stored if i not in written]
        said += [s for s in ctx.slots.read(engine, ctx.agent_id, others) if s.seq not in taken]
    if not said:
        msg = "this turn holds no content to distill"
        raise InvalidQueryError(msg)
    said.sort(key=_SEQ)
    lines = []  # a loop: a comprehension makes a function each call on 3.11
    for s in said:
        lines.append(f"{_SPEAKER.get(s.role, 'System')}: {s.content}")
    stamps = list(map(_CREATED_AT, said))
    return "\n".join(lines), min(stamps), max(stamps)


def _settle(
    engine: Engine, ctx: DomainContext, turn: OpenTurn, fresh: Sequence[ArchiveSlot]
) -> TopicSlot:
    """Distil the open turn's lines (``fresh`` among them) into keywords: its topic row."""
    stored_scene = _scene(engine, ctx, turn.scene_id)
    if stored_scene is None or turn.seq > stored_scene.turn_seq:
        msg = "topic_id is not a turn this scene opened; use the id search returned"
        raise InvalidQueryError(msg)
    text, first, last = _transcript(engine, ctx, turn, fresh)
    try:
        keywords = ctx.model.extract_keywords(text, cancel=ctx.cancel)
    except LLMError as exc:
        msg = f"distill turn: {exc.message}"
        raise LLMError(msg) from exc
    if not keywords:
        msg = "turn distillation produced no keywords"
        raise LLMError(msg)
    return topic.turn_topic(
        engine, ctx.agent_id, turn.scene_id, turn.topic_id, keywords, first, last
    )


def update(
    engine: Engine, ctx: DomainContext, user: str, agent: str, outcome: str, created_at: int
) -> TopicSlot:
    """Close (or replay) the open turn: distil its lines into keywords, write both.

    Every record is validated before any is written or the model is asked.
    The lines and the topic row go in one write with one fsync, after the
    model answers; if anything fails before that (the model, the scene's
    check), the lines alone are written and made durable before the error
    is raised, and the turn stays open for a retry.
    """
    turn = require_turn(ctx)
    items = _closing_records(user, agent, outcome, created_at)
    if not items:
        msg = "a turn closes with an input, an output or an outcome"
        raise InvalidQueryError(msg)
    # The lines are made whole here from what the face checked (a text, a role, a slot):
    # what is left to check is the time, once, and each line's budget.
    check_created(created_at)
    for item in items:
        item.check_budget()
    slots = addressed(engine, ctx, turn, items)
    try:
        row = _settle(engine, ctx, turn, slots)
    except BaseException:
        write_addressed(engine, ctx, turn, slots)  # the lines stay stored whatever failed
        raise
    write_addressed(engine, ctx, turn, slots, row)
    # The held row, not the one written: the next search lists this same object,
    # so a host-side mapping of it is made once, not once here and again there.
    row = ctx.apply(engine, turn.scene_id, functools.partial(_listed, row))
    if ctx.on_turn_settled is not None:  # may schedule a background Dream of this scene
        surface = ctx.scene_mirrors(engine, turn.scene_id).topics.surface_count(turn.scene_id)
        ctx.on_turn_settled(turn.scene_id, surface)
    return row


def _listed(row: TopicSlot, mirrors: Mirrors) -> TopicSlot:
    return mirrors.topics.put(row)
