"""The scene map file beside a ``.meh``: read it at the first call, write it at close.

The map (``memhop.index.scene_map``) lets a domain start warm
(``memhop.domain.warm``). This module owns the file: it is mapped rather than
read, replaced by a temporary sibling renamed over it, never allowed to fail
a close, and deleted by a compaction. At close a domain's map is brought up
to date from the one on disk, scene by scene, when the file still vouches for
that one; else it is made from the domain's mirrors whole.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from memhop.domain.context import DomainContext
from memhop.domain.map_tail import Tail, current_since, trusted_tail
from memhop.domain.mirrors import Mirrors
from memhop.domain.scene_map_codec import decode_maps, encode_maps
from memhop.engine import Engine
from memhop.engine.side_files import (
    SCENE_MAP_SUFFIX,
    mapped_side_file,
    remove_side_file,
    replace_side_file,
)
from memhop.errors import InvalidQueryError, MemHopError
from memhop.index.scene_map import Current, DomainMap
from memhop.layers import scene
from memhop.records import SceneSlot

__all__ = [
    "SUFFIX",
    "Reached",
    "SceneMaps",
    "discard_maps",
    "load_maps",
    "map_of",
    "save_maps",
    "updated",
]

log = logging.getLogger("memhop")

SUFFIX = SCENE_MAP_SUFFIX
"""The scene map of ``x.meh`` is ``x.meh.scenemap``."""


def load_maps(file_path: str) -> Mapping[int, DomainMap]:
    """The scene maps beside ``file_path``; none when there is no file or it will not read."""
    path = file_path + SUFFIX
    try:
        with open(path, "rb") as f:
            data = mapped_side_file(f)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        log.warning("scene map %s not read (each domain is built in full): %s", path, exc)
        return {}
    try:
        return decode_maps(data)
    except ValueError as exc:
        log.warning("scene map %s ignored (each domain is built in full): %s", path, exc)
        return {}


@dataclass(frozen=True, slots=True)
class Reached:
    """A domain this session reached, as its map is written from it at close.

    ``whole`` is its full mirrors once built; ``scene`` gives the mirrors
    that answer a scene (the whole ones, or a warm domain's view, None when
    the domain has neither for it).
    """

    agent_id: int
    whole: Mirrors | None
    scene: Callable[[int], Mirrors | None]


class SceneMaps:
    """An open file's scene maps: read at the first call, each handed to its domain once
    (the root keeps none: ``save`` reads the file again), written at close, deleted by a
    compaction. ``take`` and ``forget`` run under the root's registry lock."""

    def __init__(self, file_path: str) -> None:
        self._path = file_path
        self._maps: dict[int, DomainMap] | None = None  # read on first use
        self._on_disk = False  # whether that read found any

    def take(self, agent_id: int) -> DomainMap | None:
        """The map of a domain not reached yet, or None; the first call reads the file."""
        if self._maps is None:
            self._maps = dict(load_maps(self._path))
            self._on_disk = bool(self._maps)
        return self._maps.pop(agent_id, None)

    def forget(self) -> None:
        """Delete the file: a compaction made every map in it stale."""
        self._maps, self._on_disk = {}, False
        discard_maps(self._path)

    def save(self, engine: Engine, contexts: list[DomainContext], live: set[int]) -> None:
        """Write the maps of the domains this session reached (``contexts``); keep those of
        the other ``live`` domains."""
        if self._maps is None:
            return  # no domain was reached: nothing to add to the file's maps
        # Read again for the domains not reached (only if the open found any: not twice
        # the warning for a map that would not read).
        on_disk = load_maps(self._path) if self._on_disk else {}
        kept = {a: m for a, m in on_disk.items() if a in live}
        reached = [
            Reached(ctx.agent_id, whole, ctx.mirrors_of_scene)
            for ctx in contexts
            if (whole := ctx.settled_mirrors()) is not None or ctx.warm is not None
        ]
        save_maps(engine, self._path, kept, reached)


def save_maps(
    engine: Engine, file_path: str, kept: Mapping[int, DomainMap], reached: Iterable[Reached]
) -> None:
    """Replace the scene map beside ``file_path``: each ``reached`` domain's map as of the
    record end, the ``kept`` map of every other.

    A domain's kept map, while the file still vouches for it, is brought up to
    date scene by scene (from its views alone, if its build has not finished);
    otherwise a built domain's map is made whole, and an unbuilt one keeps its
    map (still exact for the file up to its end). Written to a temporary
    sibling renamed over the old file; not written when nothing changed, or
    when the file holds damage. A failure is logged, not raised: the map only
    saves the next open time.
    """
    path = file_path + SUFFIX
    maps = dict(kept)
    try:
        if engine.damage() != (0, 0):
            return  # a damaged file is read in full until it is salvaged: no map vouches for it
        end, seal = engine.record_end, engine.snapshot_seal()
        for domain in reached:
            old = kept.get(domain.agent_id)
            if domain.whole is not None and not domain.whole.mappable:
                maps.pop(domain.agent_id, None)
            elif old is None or old.covered_end != end:
                made = None if old is None else updated(engine, domain, old, end, seal)
                if made is None and domain.whole is not None:
                    made = map_of(engine, domain.agent_id, domain.whole, end, seal)
                if made is not None:
                    maps[domain.agent_id] = made
        if maps.keys() == kept.keys() and all(maps[a] is kept[a] for a in maps):
            return  # nothing was written since the maps were: a look leaves the file alone
        if not maps:
            discard_maps(file_path)
            return
        data = encode_maps(maps.values())
    except (MemHopError, ValueError) as exc:  # ValueError: a map that would not check
        log.warning("scene map %s not written (the next open builds in full): %s", path, exc)
        return
    try:
        replace_side_file(path, (data,), engine.permission_bits())
    except OSError as exc:
        log.warning("scene map %s not written (the next open builds in full): %s", path, exc)


def discard_maps(file_path: str) -> None:
    """Delete the scene map beside ``file_path``, if there is one (failures are logged)."""
    try:
        remove_side_file(file_path + SUFFIX)
    except OSError as exc:
        log.warning("scene map %s%s not deleted: %s", file_path, SUFFIX, exc)


def map_of(
    engine: Engine, agent_id: int, mirrors: Mirrors, covered_end: int, seal: int
) -> DomainMap:
    """The map of a domain whose ``mirrors`` hold its records up to ``covered_end``.

    ``seal`` is ``Engine.snapshot_seal()`` when the file ends there in a snapshot, else 0.
    """
    grouped = mirrors.contents.ids_by_topic()  # one pass, not a search per topic
    return DomainMap.build(
        agent_id,
        covered_end,
        engine.prefix_digest(covered_end),
        seal,
        _current(_listed_current(engine, agent_id)),
        (
            (scene_id, _rows(mirrors, scene_id, lambda t: grouped.get(t, [])))
            for scene_id in mirrors.topics.scenes()
        ),
    )


def updated(
    engine: Engine, domain: Reached, old: DomainMap, covered_end: int, seal: int
) -> DomainMap | None:
    """``old`` brought up to ``covered_end``: the scenes the log touched since, re-listed.

    A scene is touched when a topic row, or a record of a topic, was written
    since ``old``: the scene the row names now (read from the log) and the
    one ``old`` lists the topic under. A delete writes only a tombstone, so
    what was deleted in an untouched scene stays listed; a read checks every
    listed record against the file, so that costs a lookup, not a wrong
    answer. None when the file no longer vouches for ``old``, a touched scene
    has no mirrors to list it from, or the result would not check.
    """
    try:  # one pass over the file's bytes for both digests
        then, now = engine.prefix_digests([old.covered_end, covered_end])
    except InvalidQueryError:  # the old map ends past this file's records
        return None
    tail = trusted_tail(engine, domain.agent_id, old, then)
    if tail is None:
        return None
    topics = {t for written in tail.topics.values() for t in written} | tail.members.keys()
    listed: dict[int, list[tuple[int, list[int]]]] = {}
    for scene_id in set(tail.topics) | old.scenes_of(topics):
        mirrors = domain.scene(scene_id)
        if mirrors is None:
            return None
        listed[scene_id] = _rows(mirrors, scene_id, mirrors.contents.ids_in)
    try:
        return old.spliced(
            listed,
            covered_end=covered_end,
            digest=now,
            seal=seal,
            current=_current(_current_after(engine, domain.agent_id, old, tail)),
        )
    except (ValueError, OverflowError) as exc:  # a range of the old map falls: made whole
        log.info("scene map of agent %016x made whole: %s", domain.agent_id, exc)
        return None


def _rows(
    mirrors: Mirrors, scene_id: int, contents: Callable[[int], list[int]]
) -> list[tuple[int, list[int]]]:
    """A scene's topics ascending, each with its content and plan record ids."""
    plans = mirrors.plans
    return [
        (topic_id, contents(topic_id) + plans.ids_in(topic_id))
        for topic_id in sorted(mirrors.topics.scene_row_ids(scene_id))
    ]


def _current_after(engine: Engine, agent_id: int, old: DomainMap, tail: Tail) -> SceneSlot | None:
    """The domain's scene last in use: ranked from ``old``'s and the scenes written since
    when that tells, else from every scene of the domain."""
    known, current = current_since(engine, agent_id, old, tail)
    return current if known else _listed_current(engine, agent_id)


def _listed_current(engine: Engine, agent_id: int) -> SceneSlot | None:
    """The domain's scene last in use, ranked from every scene of the domain."""
    return scene.current_scene(scene.list_scenes(engine, agent_id))


def _current(found: SceneSlot | None) -> Current:
    """A map's current scene: (id, last_used_at, turn_seq), zeros for none."""
    if found is None:
        return (0, 0, 0)
    return (found.scene_id, found.last_used_at, found.turn_seq)
