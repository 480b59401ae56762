"""Whether a side file's section still speaks for the ``.meh``, and what the log gained
since it was written (the scene map's and the recall file's trust).

A section is trusted while the file still ends in the index snapshot it ended
in when the section was written (the snapshot's CRC is its seal), or else
gives the section's digest up to its ``covered_end`` with a log that walks
frame by frame from there to the record end; what the log gained since is the
``Tail``. A compacted, replaced or damaged file is not trusted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Protocol

from memhop.engine import Engine
from memhop.errors import CorruptionError, InvalidQueryError, MemHopError
from memhop.index.scene_map import DomainMap
from memhop.layers import codec, content_fields, plan, scene, topic_rows
from memhop.records import RecordType, SceneSlot

__all__ = ["Covered", "Tail", "current_since", "trusted_tail"]

log = logging.getLogger("memhop")


@dataclass(frozen=True, slots=True)
class Tail:
    """What the log gained since a map was written, as a view needs it."""

    topics: dict[int, list[int]] = field(default_factory=dict)  # scene -> topic ids
    members: dict[int, list[int]] = field(default_factory=dict)  # topic -> content/plan ids
    scenes: frozenset[int] = frozenset()  # scene records written since

    def topic_scenes(self) -> dict[int, int | None]:
        """Every topic written since (a row, or a member's topic), with its row's scene
        when the row was written since too."""
        found: dict[int, int | None] = dict.fromkeys(self.members)
        for scene_id, topics in self.topics.items():
            found.update(dict.fromkeys(topics, scene_id))
        return found


class Covered(Protocol):
    """What a side file's section says of the ``.meh`` it was written beside."""

    @property
    def covered_end(self) -> int: ...  # the record end then
    @property
    def seal(self) -> int: ...  # CRC32 of the index snapshot the file ended in then; 0 for none
    @property
    def digest(self) -> bytes: ...  # the file's prefix digest up to covered_end


def trusted_tail(
    engine: Engine, agent_id: int, section: Covered, digest: bytes | None = None
) -> Tail | None:
    """What the log gained since ``section`` was written, if the file still vouches for it.

    None when it does not: a compacted, replaced or damaged file, or a log
    that breaks the map's rules since. ``digest``: the file's prefix digest
    up to the section's end, when the caller has it already.
    """
    end, seal = section.covered_end, section.seal
    try:
        if seal and engine.record_end == end and engine.snapshot_seal() == seal:
            # The file still ends in the snapshot it ended in when the map was
            # written: the same records at the same offsets, nothing since. So its
            # digest there is the map's: a later check against it needs no hash.
            engine.vouch_digest(end, section.digest)
            return Tail()
        if (digest or engine.prefix_digest(end)) == section.digest:
            return _read_tail(engine, agent_id, end)
    except (InvalidQueryError, CorruptionError) as exc:
        log.info("scene map of agent %016x not used: %s", agent_id, exc)
    return None


def current_since(
    engine: Engine, agent_id: int, section: DomainMap, tail: Tail
) -> tuple[bool, SceneSlot | None]:
    """(known, the scene last in use) from a map's current scene and its ``tail``.

    Every scene not written since ranks at most as the map's current scene
    did (its rank is in the map). So the best of the scenes written since and
    that one is the answer when it ranks at least as high as that rank; else
    (the current scene went, or lost rank) a scene the map does not rank may
    be ahead, and the answer is unknown.
    """
    hint = section.current_scene
    wanted = sorted(tail.scenes | ({hint} if hint else set()))
    try:
        found = [s for _, s in codec.read_many_strict(engine, agent_id, wanted, SceneSlot)]
    except MemHopError:
        return False, None
    best = scene.current_scene(found)
    if not hint:  # no scene then: every scene there is was written since
        return True, best
    then = (-section.current_used_at, -section.current_turns, hint)
    if best is None or scene.recency_key(best) > then:
        return False, None
    return True, best


def _read_tail(engine: Engine, agent_id: int, since: int) -> Tail | None:
    """The domain's live records written from ``since`` on; None if one breaks the map's rules."""
    by_type: dict[int, list[int]] = {}
    for _, rec_type, id_hash in engine.frames_since(agent_id, since):
        by_type.setdefault(rec_type, []).append(id_hash)
    tail = Tail(scenes=frozenset(by_type.get(RecordType.SCENE, ())))
    misplaced: list[int] = []
    for row in topic_rows.topic_rows_of(
        engine, agent_id, sorted(by_type.get(RecordType.TOPIC, ())), misplaced
    ):
        tail.topics.setdefault(row.scene_id, []).append(row.id)
    if misplaced:
        return None
    ids = sorted(by_type.get(RecordType.ARCHIVE, ()))
    for fields in content_fields.content_fields_of(engine, agent_id, ids):
        tail.members.setdefault(fields.topic_id, []).append(fields.id_hash)
    for node in plan.plan_nodes_of(engine, agent_id, sorted(by_type.get(RecordType.PLAN_NODE, ()))):
        tail.members.setdefault(node.topic_id, []).append(node.id_hash)
    return tail
