"""l2_compress: consolidation of each scene's surface, with no model call under the lock.

Per scene (at most ``COMPRESS_FANOUT`` scenes at once, each on its own worker):

1. under the lock, snapshot the depth-1 listing (``L2Meta.surface``) of each
   scene due a look (``scene_looks``: changed since the last look, or asked or
   held back then); a scene below the floor, or whose listing equals the one a
   model last declined, or whose consolidation last failed (``Failed``: while
   its listing is the same, and until a back-off doubling from 5 minutes to 6
   hours has passed), is skipped without a call;
2. unlocked, ask the model for groups; an empty answer is remembered as a
   decline for that listing, a failed call (not a cancelled one) as a failure;
3. per group, in the order proposed: the pure checks of ``validate``; under
   the lock, the members must still equal their snapshot (unparented depth-1
   rows of the scene) and the parent id must be free; unlocked, extract the
   summary's keywords; under the lock again, re-check and write: the summary
   (L4 seq 1, role dream, stamped now), the fused parent, the sunk members.

A group that fails a check, or whose model call fails, is *unusable* and the
next group proceeds. An engine refusal aborts its scene and is returned. A
failure after the first write of a group rolls the group back (restore sunk
members, delete the parent and every record the L4 mirror credits to it).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from memhop.dream.env import DreamEnv, Held
from memhop.dream.state import state_of
from memhop.dream.validate import digests, fingerprint, group_problem, positions
from memhop.errors import LLMError, MemHopError, NotFoundError, StorageIOError
from memhop.ids import content_id, fused_topic_id
from memhop.layers import archive, topic
from memhop.records import ArchiveKind, ArchiveRole, ArchiveSlot, ContentType, TopicSlot
from memhop.records.archive import SEQ_USER

__all__ = [
    "BACKOFF_BASE_MS",
    "BACKOFF_MAX_MS",
    "COMPRESS_FANOUT",
    "Failed",
    "SceneOutcome",
    "apply_group",
    "compress_scenes",
    "consolidate_scene",
]

log = logging.getLogger("memhop.dream")

COMPRESS_FANOUT = 4
"""At most this many scenes consolidate at once (upstream ``compressFanout``)."""
BACKOFF_BASE_MS = 5 * 60_000
BACKOFF_MAX_MS = 6 * 3_600_000
"""A failed scene waits 5 minutes, then 10, 20, ... up to 6 hours before it is asked again."""
LIST_SCENES = 128
"""Scenes whose surfaces are looked at in one hold of the domain lock (the first look
after an open takes every scene: 1,024 of LoCoMo's took 22-44 ms in one hold at 10^5
turns; 800 scenes of 25 rows each, 69 ms)."""


@dataclass(frozen=True, slots=True)
class Failed:
    """A scene whose consolidation failed ``failures`` times in a row, on ``listing``."""

    listing: object
    failures: int
    retry_at: int

    def holds_back(self, listing: object, now: int) -> bool:
        """True while the scene must not be asked: same listing, or before ``retry_at``."""
        return listing == self.listing or now < self.retry_at


@dataclass(slots=True)
class SceneOutcome:
    """What one scene's consolidation did."""

    scene_id: int
    asked: bool = False
    groups: int = 0
    sunk: int = 0
    unusable: int = 0
    failure: MemHopError | None = None


def _listings(
    env: DreamEnv, scenes: Sequence[int], *, whole: bool
) -> list[tuple[int, list[TopicSlot]]]:
    """The surfaces worth a model call among the scenes due a look (``scene_looks``),
    ``LIST_SCENES`` scenes a hold of the lock (each listing is whole as of its hold; a
    fold checks its members again). ``whole``: ``scenes`` are every scene of the domain."""
    with env.hold() as held:
        looks = state_of(held).looks
        due = looks.to_look_at(held.mirrors.topics.scene_journal, scenes, env.floor, whole=whole)
    work: list[tuple[int, list[TopicSlot]]] = []
    for at in range(0, len(due), LIST_SCENES):
        with env.hold() as held:
            work += _worth_asking(env, held, due[at : at + LIST_SCENES])
    return work


def _worth_asking(
    env: DreamEnv, held: Held, scenes: Sequence[int]
) -> list[tuple[int, list[TopicSlot]]]:
    work = []
    topics, looks = held.mirrors.topics, state_of(held).looks
    looks.looked(scenes, env.floor)
    for scene_id in scenes:
        count = topics.surface_count(scene_id)  # no row of a packed scene built
        if not count or count < env.floor:
            continue
        listing = topics.surface(scene_id)
        mark, seen = held.declined.get(scene_id), fingerprint(env.floor, listing)
        if mark == seen:
            continue  # the model declined this very listing: do not ask again
        looks.again(scene_id)  # asked now, or held back: looked at again next time
        if isinstance(mark, Failed) and mark.holds_back(seen, env.clock()):
            continue  # it failed lately: back off
        work.append((scene_id, listing))
    return work


def _remember_failure(env: DreamEnv, scene_id: int, listing: list[TopicSlot]) -> None:
    """Record a failed consolidation of ``listing`` (not after a cancellation)."""
    if env.cancel.is_set():
        return
    with env.hold() as held:
        mark = held.declined.get(scene_id)
        failures = mark.failures + 1 if isinstance(mark, Failed) else 1
        wait = min(BACKOFF_BASE_MS << min(failures - 1, 16), BACKOFF_MAX_MS)
        held.declined[scene_id] = Failed(
            fingerprint(env.floor, listing), failures, env.clock() + wait
        )


def compress_scenes(
    env: DreamEnv, scenes: Sequence[int], *, whole: bool = False
) -> list[SceneOutcome]:
    """Consolidate ``scenes`` (``whole``: every scene of the domain) as far as they are due a
    look; outcomes in ascending scene order (skipped scenes absent)."""
    work = _listings(env, scenes, whole=whole)
    if len(work) <= 1:
        return [consolidate_scene(env, s, listing) for s, listing in work]
    prefix = f"memhop-dream-{env.agent_id:016x}-compress"
    with ThreadPoolExecutor(min(COMPRESS_FANOUT, len(work)), thread_name_prefix=prefix) as pool:
        futures = [pool.submit(consolidate_scene, env, s, listing) for s, listing in work]
        return [f.result() for f in futures]


def consolidate_scene(env: DreamEnv, scene_id: int, listing: list[TopicSlot]) -> SceneOutcome:
    """Ask once for the scene's groups and apply them in order (see the module)."""
    out = SceneOutcome(scene_id)
    if env.cancel.is_set():
        out.unusable = 1
        return out
    out.asked = True
    try:
        groups = env.model.consolidate(digests(listing), env.floor, cancel=env.cancel)
    except MemHopError as exc:
        log.warning("dream: scene %016x: consolidation refused: %s", scene_id, exc)
        out.unusable = 1
        _remember_failure(env, scene_id, listing)
        return out
    if not groups:
        with env.hold() as held:
            held.declined[scene_id] = fingerprint(env.floor, listing)
        return out
    by_id = {t.id: t for t in listing}
    order = positions(listing)
    claimed: set[int] = set()
    for group in groups:
        problem = "the pass was cancelled" if env.cancel.is_set() else None
        problem = problem or group_problem(group, order, claimed)
        if problem is None:
            try:
                members = [by_id[m] for m in group.member_ids]
                out.sunk += apply_group(env, scene_id, members, group.summary)
            except MemHopError as exc:
                if isinstance(exc, LLMError) or env.cancel.is_set():
                    problem = str(exc)
                else:
                    out.failure = exc
                    break
        if problem is not None:
            out.unusable += 1
            log.warning("dream: scene %016x: unusable group: %s", scene_id, problem)
            continue
        out.groups += 1
        claimed.update(group.member_ids)
    if out.groups:
        with env.hold() as held:
            held.declined.pop(scene_id, None)
    return out


def apply_group(env: DreamEnv, scene_id: int, members: Sequence[TopicSlot], summary: str) -> int:
    """Fold ``members`` under a new parent; return how many members sank.

    LLMError: the group is unusable and nothing stays written. Any other error
    is an engine refusal (the group is rolled back; the caller aborts the scene).
    """
    if not summary.strip():
        msg = "consolidation summary is empty"
        raise LLMError(msg)
    low = min(m.user_timestamp for m in members)
    high = max(m.agent_timestamp for m in members)
    parent = fused_topic_id(scene_id, low, high, [m.id for m in members])
    with env.hold() as held:
        _still_valid(held, members, parent)
    keywords = env.model.extract_keywords(summary, cancel=env.cancel)
    if not keywords:
        msg = "the consolidation summary produced no keywords"
        raise LLMError(msg)
    with env.hold() as held:
        _still_valid(held, members, parent)
        return _write_group(held, scene_id, members, parent, summary, keywords, env.clock())


def _still_valid(held: Held, members: Sequence[TopicSlot], parent: int) -> None:
    """Members unchanged since the listing and the parent id free, else LLMError (unusable)."""
    for member in members:
        if not held.mirrors.topics.holds(member):
            msg = f"topic {member.id:016x} changed since the listing was taken"
            raise LLMError(msg)
    try:
        found = topic.read_topic_lenient(held.engine, held.agent_id, parent)
    except NotFoundError:
        return
    except MemHopError as exc:
        msg = f"fused parent slot {parent:016x} will not read: {exc}"
        raise StorageIOError(msg) from exc
    if found is None:
        msg = f"fused parent slot {parent:016x} holds a record that is not a topic"
        raise StorageIOError(msg)
    msg = f"fused parent {parent:016x} already exists (a replayed member set)"
    raise LLMError(msg)


def _write_group(
    held: Held,
    scene_id: int,
    members: Sequence[TopicSlot],
    parent: int,
    summary: str,
    keywords: Sequence[str],
    now: int,
) -> int:
    engine, agent = held.engine, held.agent_id
    slot = ArchiveSlot(
        id_hash=content_id(parent, SEQ_USER),
        kind=ArchiveKind.UTTERANCE,
        seq=SEQ_USER,
        content_type=ContentType.TEXT,
        role=ArchiveRole.DREAM,
        topic_id=parent,
        created_at=now,
        content=summary,
    )
    held.mirrors.contents.put(archive.write_content(engine, agent, slot))
    low = min(m.user_timestamp for m in members)
    high = max(m.agent_timestamp for m in members)
    try:
        row = topic.write_fused_parent(engine, agent, scene_id, parent, keywords, low, high)
    except MemHopError:
        _discard(held, parent)
        raise
    try:
        moved = topic.sink_members(engine, agent, parent, [m.id for m in members])
    except MemHopError as exc:
        _restore(held, parent, [m.id for m in members])
        _discard(held, parent)
        if isinstance(exc, StorageIOError):
            raise
        msg = f"sinking the members under {parent:016x} failed: {exc}"
        raise StorageIOError(msg) from exc
    held.mirrors.topics.put(row)
    for member in moved:
        if member.depth >= topic.MAX_DEPTH:
            held.mirrors.topics.remove([member.id])
        else:
            held.mirrors.topics.put(member)
    return len(moved)


def _restore(held: Held, parent: int, member_ids: Sequence[int]) -> None:
    try:
        for row in topic.restore_sunk(held.engine, held.agent_id, parent, member_ids):
            held.mirrors.topics.put(row)
    except MemHopError as exc:
        log.warning("dream: rollback could not restore members of %016x: %s", parent, exc)


def _discard(held: Held, parent: int) -> None:
    """Delete a fused parent and every record the L4 mirror credits to it (warn on failure)."""
    try:
        topic.delete_topics(held.engine, held.agent_id, [parent])
        held.mirrors.topics.remove([parent])
        doomed = [r.id_hash for r in held.mirrors.contents.slots_of(parent)]
        if doomed:
            archive.delete_contents(held.engine, held.agent_id, doomed)
            held.mirrors.contents.remove_many(doomed)
    except MemHopError as exc:
        log.warning("dream: rollback could not discard %016x: %s", parent, exc)
