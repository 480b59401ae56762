"""L2 scenes with their turn counter, and the L1 scene nodes and edges over them.

A scene's record id is its random ``scene_id``; a scene node's is
``ids.scene_node_id(scene_id)`` and an edge's ``ids.l1_edge_id(a, b)``, both
kept in the payload's ``id_hash``. Turn opening and current-scene choice are
pure functions here; the caller holds the domain lock and writes the result.
Deletes touch only ids that hold a record of the layer's own type, so a stray
id can never tombstone another layer's record.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Sequence

from memhop.engine import Engine
from memhop.errors import InvalidQueryError, NotFoundError
from memhop.ids import format_id, scene_node_id
from memhop.layers import codec
from memhop.records import SceneEdge, SceneNode, SceneSlot

__all__ = [
    "SCENE_NAME_PREFIX",
    "current_scene",
    "default_scene_name",
    "delete_scene_edges",
    "delete_scene_nodes",
    "delete_scenes",
    "fresh_scene_id",
    "get_scene",
    "get_scene_edge_optional",
    "get_scene_node_optional",
    "get_scene_optional",
    "list_scene_edges",
    "list_scene_nodes",
    "list_scene_nodes_lenient",
    "list_scenes",
    "new_scene",
    "open_turn",
    "put_scene",
    "put_scene_edges",
    "put_scene_nodes",
    "recency_key",
    "scene_node_of",
]

SCENE_NAME_PREFIX = "session:"


def _random_u64() -> int:
    return int.from_bytes(secrets.token_bytes(8), "little")


# ---- L2 scenes ---------------------------------------------------------------------------


def default_scene_name(scene_id: int) -> str:
    """Return a new scene's name: "session:" + 16 hex digits of its id."""
    return SCENE_NAME_PREFIX + format_id(scene_id)


def get_scene(engine: Engine, agent_id: int, scene_id: int) -> SceneSlot:
    """Return the scene; NotFoundError when absent (or another record type holds the id)."""
    try:
        return codec.read(engine, agent_id, scene_id, SceneSlot)
    except NotFoundError as exc:
        msg = f"scene {format_id(scene_id)} not found"
        raise NotFoundError(msg) from exc


def get_scene_optional(engine: Engine, agent_id: int, scene_id: int) -> SceneSlot | None:
    """Return the scene, None when absent; an unreadable one raises with its code."""
    return codec.read_optional(engine, agent_id, scene_id, SceneSlot)


def put_scene(engine: Engine, agent_id: int, scene: SceneSlot) -> int:
    """Write the scene at its ``scene_id`` durably and return its frame offset; id 0 is
    reserved (InvalidQueryError)."""
    if scene.scene_id == 0:
        msg = "scene id 0000000000000000 is reserved"
        raise InvalidQueryError(msg)
    return codec.write(engine, agent_id, scene.scene_id, scene)


def scene_ids(engine: Engine, agent_id: int) -> list[int]:
    """Return the ids of the domain's scenes, ascending, without reading a record (a
    damaged one is listed too: a reader of its record meets the damage). Asked by every
    whole Dream pass: the engine keeps the answer current (``recurring``)."""
    return engine.ids_of_type(agent_id, SceneSlot.RECORD_TYPE, recurring=True)


def list_scenes(engine: Engine, agent_id: int, l3_id: int | None = None) -> list[SceneSlot]:
    """Return the domain's readable scenes ascending by id (damage skipped and counted).

    ``l3_id`` None lists all; otherwise only scenes whose anchor equals it.
    """
    scenes = [s for _, s in codec.collect(engine, agent_id, SceneSlot)]
    if l3_id is None:
        return scenes
    return [s for s in scenes if s.l3_id == l3_id]


def fresh_scene_id(engine: Engine, agent_id: int, rand: Callable[[], int] = _random_u64) -> int:
    """Return a random non-zero id that holds no record of any type in the domain.

    ``rand`` answers a uniform u64 (default: 8 CSPRNG bytes, little-endian).
    """
    while True:
        candidate = rand()
        if candidate != 0 and not engine.contains(agent_id, candidate):
            return candidate


def new_scene(scene_id: int, l3_id: int, stamp: int) -> SceneSlot:
    """Return a new scene record: default name, anchor ``l3_id``, last used at ``stamp``."""
    return SceneSlot(
        scene_id=scene_id,
        scene_name=default_scene_name(scene_id),
        last_used_at=stamp,
        l3_id=l3_id,
    )


def open_turn(scene: SceneSlot, stamp: int) -> SceneSlot:
    """Return ``scene`` with one more turn opened at ``stamp``; name and anchor kept."""
    # Built field by field: ``dataclasses.replace`` costs several times that, every turn.
    return SceneSlot(
        scene_id=scene.scene_id,
        scene_name=scene.scene_name,
        turn_seq=scene.turn_seq + 1,
        last_used_at=stamp,
        l3_id=scene.l3_id,
    )


def recency_key(scene: SceneSlot) -> tuple[int, int, int]:
    """A scene's rank for ``current_scene``: the smallest key is the scene last in use."""
    return (-scene.last_used_at, -scene.turn_seq, scene.scene_id)


def current_scene(scenes: Iterable[SceneSlot]) -> SceneSlot | None:
    """Return the scene last in use, None for none (api.md §5.1).

    Greatest ``last_used_at``; ties (and all-zero legacy records) by greatest
    ``turn_seq``, then smallest scene id.
    """
    return min(scenes, key=recency_key, default=None)


def delete_scenes(engine: Engine, agent_id: int, scene_ids: Iterable[int]) -> int:
    """Tombstone the scene records among ``scene_ids`` in one batch; return how many."""
    return codec.delete_many(engine, agent_id, scene_ids, SceneSlot)


# ---- L1 scene nodes ----------------------------------------------------------------------


def get_scene_node_optional(engine: Engine, agent_id: int, node_id: int) -> SceneNode | None:
    """Return the node at ``node_id``, None when absent; an unreadable one raises."""
    return codec.read_optional(engine, agent_id, node_id, SceneNode)


def scene_node_of(engine: Engine, agent_id: int, scene_id: int) -> SceneNode | None:
    """Return the L1 node of a scene (id ``ids.scene_node_id``), None when absent."""
    return get_scene_node_optional(engine, agent_id, scene_node_id(scene_id))


def put_scene_nodes(engine: Engine, agent_id: int, nodes: Sequence[SceneNode]) -> None:
    """Write nodes, each at its ``id_hash``, with one fsync."""
    codec.write_many(engine, agent_id, [(n.id_hash, n) for n in nodes])


def list_scene_nodes(engine: Engine, agent_id: int) -> list[SceneNode]:
    """Return every scene node ascending by id, strictly (an unreadable one raises)."""
    return [n for _, n in codec.collect_strict(engine, agent_id, SceneNode)]


def list_scene_nodes_lenient(engine: Engine, agent_id: int) -> list[SceneNode]:
    """Return every readable scene node ascending by id; unreadable ones are logged and skipped.

    For sampling only (profile distillation); never decide a delete on it.
    """
    return [n for _, n in codec.iter_lenient(engine, agent_id, SceneNode)]


def delete_scene_nodes(engine: Engine, agent_id: int, node_ids: Iterable[int]) -> int:
    """Tombstone the scene nodes among ``node_ids`` in one batch; return how many."""
    return codec.delete_many(engine, agent_id, node_ids, SceneNode)


# ---- L1 scene edges ----------------------------------------------------------------------


def get_scene_edge_optional(engine: Engine, agent_id: int, edge_id: int) -> SceneEdge | None:
    """Return the edge at ``edge_id``, None when absent; an unreadable one raises."""
    return codec.read_optional(engine, agent_id, edge_id, SceneEdge)


def put_scene_edges(engine: Engine, agent_id: int, edges: Sequence[SceneEdge]) -> None:
    """Write edges, each at its ``id_hash``, with one fsync."""
    codec.write_many(engine, agent_id, [(e.id_hash, e) for e in edges])


def list_scene_edges(engine: Engine, agent_id: int) -> list[SceneEdge]:
    """Return every scene edge ascending by id, strictly (an unreadable one raises)."""
    return [e for _, e in codec.collect_strict(engine, agent_id, SceneEdge)]


def delete_scene_edges(engine: Engine, agent_id: int, edge_ids: Iterable[int]) -> int:
    """Tombstone the scene edges among ``edge_ids`` in one batch; return how many."""
    return codec.delete_many(engine, agent_id, edge_ids, SceneEdge)
