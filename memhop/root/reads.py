"""Profile and scene reads of one domain (and the profile's host-half write).

``scene_context`` is the pure read: no turn opened, no counter moved, no
scene created. Its cost is the scene's own rows, served from the mirrors.
"""

from __future__ import annotations

from dataclasses import dataclass

from memhop.config import ProfileInput
from memhop.domain.context import DomainContext
from memhop.engine import Engine
from memhop.errors import InvalidQueryError
from memhop.index.l2meta import ListingRow
from memhop.layers import profile, scene
from memhop.records import AgentType, ArchiveSlot, ProfileSlot, SceneSlot
from memhop.root.provenance import TURN, Provenance, of_scene
from memhop.root.turn import current_scene


@dataclass(frozen=True, slots=True)
class SceneRow:
    """One listed topic with its spoken lines (utterances only, seq order)."""

    row: ListingRow
    messages: tuple[ArchiveSlot, ...]
    provenance: Provenance = TURN


@dataclass(frozen=True, slots=True)
class SceneView:
    name: str
    rows: tuple[SceneRow, ...]


def get_l0(engine: Engine, ctx: DomainContext) -> ProfileSlot:
    """The domain's profile; a never-written one is an empty profile, not an error."""
    return profile.get_profile(engine, ctx.agent_id) or ProfileSlot()


def update_l0(
    engine: Engine, ctx: DomainContext, given: ProfileInput, tenant: str | None, now_ms: int
) -> None:
    """Write the host half whole; a sub-agent's name must equal its registered key."""
    if not isinstance(given, ProfileInput):
        msg = f"profile must be a memhop.ProfileInput, not {type(given).__name__}"
        raise InvalidQueryError(msg)
    name = given.require_name()
    if tenant is not None and given.name != tenant:
        msg = f"a sub-agent's name is its handle: it stays {tenant!r}"
        raise InvalidQueryError(msg)
    stored = profile.get_profile(engine, ctx.agent_id)
    kind = AgentType.PRIMARY if tenant is None else AgentType.SUB
    updated = profile.with_host_half(
        stored,
        name=name,
        role=given.role,
        personality=given.personality,
        preferences=dict(given.preferences),
        updated_at_ms=now_ms,
        agent_type=kind,
    )
    profile.put_profile(engine, ctx.agent_id, updated)


def list_scenes(engine: Engine, ctx: DomainContext, l3_id: int | None) -> list[SceneSlot]:
    return scene.list_scenes(engine, ctx.agent_id, l3_id)


def scene_context(engine: Engine, ctx: DomainContext, scene_id: int) -> SceneView:
    """List a scene's rows of depth <= 2 with their spoken lines; "" names the current scene."""
    chosen = scene.get_scene(engine, ctx.agent_id, scene_id) if scene_id else None
    if chosen is None:
        chosen = current_scene(engine, ctx)
    if chosen is None:
        return SceneView("", ())
    mirrors = ctx.scene_mirrors(engine, chosen.scene_id)
    mirror = mirrors.contents
    made_by = of_scene(mirrors.topics, mirror, chosen.scene_id)
    listing = mirrors.topics.listing(chosen.scene_id)
    said = [sorted(r.id_hash for r in mirror.utterances_of(row.topic.id)) for row in listing]
    # One read for every line of the scene, not one per row.
    read = ctx.slots.read(engine, ctx.agent_id, [i for ids in said for i in ids])
    by_id = {s.id_hash: s for s in read}
    rows = []
    for row, ids in zip(listing, said, strict=True):
        lines = sorted((by_id[i] for i in ids if i in by_id), key=lambda s: s.seq)
        rows.append(SceneRow(row, tuple(lines), made_by.get(row.topic.id, TURN)))
    return SceneView(chosen.scene_name, tuple(rows))
