"""l0_distill (dream.md §4.8): profile distillation from the top scene nodes.

Samples are taken under the lock, the model is asked with the lock released,
and the write-back re-reads what it changes under the lock again: the profile
(only emotion, MBTI axes and a non-empty personality are Dream's) and each
sampled node still present and never stamped (emotion is write-once).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable

from memhop.dream import decay, l1domain
from memhop.dream.env import DreamEnv, Held
from memhop.dream.l1cache import L1Cache
from memhop.dream.report import OK, SKIPPED
from memhop.errors import OperationCancelledError
from memhop.index.l2meta import L2Meta
from memhop.layers import profile, scene
from memhop.llm import Distillation, NodeDigest
from memhop.records import EmotionScore, MBTIScore, SceneNode

__all__ = [
    "MAX_DISTILL_KEYWORDS_PER_SAMPLE",
    "MAX_DISTILL_SAMPLES",
    "collect_samples",
    "rank",
    "run_distill",
    "write_back",
]

MAX_DISTILL_SAMPLES = 200
MAX_DISTILL_KEYWORDS_PER_SAMPLE = 20
_MS_PER_HOUR = 3_600_000


def rank(node: SceneNode, now: int) -> float:
    """Importance discounted by the time since the node last changed."""
    hours = max(now - node.updated_at, 0) / _MS_PER_HOUR
    return node.importance * math.exp(-decay.DISTILL_SAMPLE_LAMBDA * hours)


def collect_samples(held: Held, now: int, cache: L1Cache | None) -> list[NodeDigest]:
    """The top 200 nodes by rank (ties by id), each with up to 20 raw keywords.

    A tolerant read: unreadable nodes are skipped (nothing is decided from this
    scan but what to show the model). Nodes with no keyword are dropped. The
    nodes come from ``cache`` (the structure stages' cache, ``l1domain.warm``; None:
    a scan) in rank order (``L1Cache.ranked``), so the samples cost 200 nodes and
    not the domain; the keywords from the topic mirror, which equals the records,
    each node's taken once until its topics change (``L1Cache.samples``).
    """
    top: Iterable[tuple[int, float, tuple[int, ...]]]
    if cache is not None:
        top = cache.ranked(MAX_DISTILL_SAMPLES)  # no record built
    else:
        nodes = scene.list_scene_nodes_lenient(held.engine, held.agent_id)
        nodes.sort(key=lambda n: (-rank(n, now), n.id_hash))
        top = [(n.id_hash, n.importance, n.topic_ids) for n in nodes[:MAX_DISTILL_SAMPLES]]
    meta = held.mirrors.topics
    taken = {} if cache is None else cache.samples
    kept: dict[int, NodeDigest] = {}
    samples = []
    for node_id, importance, topic_ids in top:
        # The last pass's digest again while nothing it shows moved: a pass makes no
        # object a node (it runs under the domain lock, where the collector's pauses
        # start from bursts of new objects).
        digest = taken.get(node_id)
        if digest is None:
            digest = NodeDigest(node_id, importance, _words_of(meta, topic_ids))
        elif digest.importance != importance:
            digest = NodeDigest(node_id, importance, digest.keywords)
        kept[node_id] = digest
        if digest.keywords:
            samples.append(digest)
    if cache is not None:
        cache.samples = kept  # the nodes sampled now: what a node out of the top leaves
    return samples


def _words_of(meta: L2Meta, topic_ids: tuple[int, ...]) -> tuple[str, ...]:
    """Up to 20 of a node's raw keywords, its topics' in order."""
    words: list[str] = []
    for topic_id in topic_ids:
        if len(words) >= MAX_DISTILL_KEYWORDS_PER_SAMPLE:
            break
        held_words = meta.keywords(topic_id)
        if held_words is not None:
            room = MAX_DISTILL_KEYWORDS_PER_SAMPLE - len(words)
            words.extend(held_words[:room])
    return tuple(words)


def write_back(
    held: Held, result: Distillation, sampled: set[int], now: int, cache: L1Cache | None
) -> None:
    """Merge the distillation into the profile and stamp never-stamped sampled nodes
    (through ``cache``, ``l1domain.warm``'s, if there is one)."""
    stored = profile.get_profile(held.engine, held.agent_id)
    merged = profile.with_distilled(
        stored,
        emotion=EmotionScore(
            valence=result.valence, arousal=result.arousal, dominance=result.dominance
        ),
        mbti=MBTIScore(i_e=result.i_e, n_s=result.n_s, t_f=result.t_f, j_p=result.j_p),
        personality=result.personality,
        updated_at_ms=now,
    )
    profile.put_profile(held.engine, held.agent_id, merged)
    moods = {m.id: m for m in result.per_node if m.id in sampled}  # a later row wins
    stamped = []
    for node_id in sorted(moods):
        node = scene.get_scene_node_optional(held.engine, held.agent_id, node_id)
        if node is None or node.emotion_set:
            continue  # gone while the model thought, or already stamped (write-once)
        mood = moods[node_id]
        moved = (node.valence, node.arousal) != (mood.valence, mood.arousal)
        stamped.append(
            dataclasses.replace(
                node,
                valence=mood.valence,
                arousal=mood.arousal,
                emotion_set=True,
                updated_at=now if moved else node.updated_at,
            )
        )
    if stamped:
        if cache is not None:  # written through it: it needs no check of the nodes after
            cache.put_nodes(stamped)
        else:
            scene.put_scene_nodes(held.engine, held.agent_id, stamped)


def run_distill(env: DreamEnv) -> str:
    """Sample, ask (unlocked), write back; return the stage status.

    ``skipped`` with no samples, or with the very samples the last distillation of
    this domain was given (beyond upstream, which asks again every pass): nothing
    the model is shown changed, so neither would its answer, and an idle domain
    costs no model call.
    """
    with env.hold() as held:
        cache = l1domain.warm(held)
        samples = collect_samples(held, env.clock(), cache)
        if not samples or (cache is not None and cache.distilled == samples):
            return SKIPPED
    result = env.model.distill(samples, cancel=env.cancel)
    if env.cancel.is_set():
        msg = "dream: cancelled during l0_distill stage"
        raise OperationCancelledError(msg)
    with env.hold() as held:
        cache = l1domain.warm(held)
        write_back(held, result, {s.id for s in samples}, env.clock(), cache)
        if cache is not None:
            cache.distilled = samples
    return OK
