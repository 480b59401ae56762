"""Retention windows, and profile distillation: samples, write-back, write-once emotion."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop.dream import distill, hyperedges, l1domain, prune, structure
from memhop.engine import create_engine
from memhop.errors import MemHopError
from memhop.ids import scene_node_id
from memhop.layers import archive, plan, profile, scene
from memhop.llm import NodeMood
from memhop.records import ArchiveSlot, PlanNode, PlanStatusCode, ProfileSlot, RecordType, SceneNode
from tests.dream.conftest import NOW, Domain

HOUR = 3_600_000


def _content(dom: Domain, topic_id: int, seq: int, created_at: int) -> None:
    slot = archive.write_content(
        dom.engine, 0, ArchiveSlot(id_hash=0, topic_id=topic_id, seq=seq, created_at=created_at)
    )
    dom.mirrors.contents.put(slot)


def test_the_window_defaults_to_seven_days() -> None:
    assert prune.cutoff(NOW, 0) == NOW - 7 * 24 * HOUR
    assert prune.cutoff(NOW, 1000) == NOW - 1000


def test_content_sweep_is_strict_at_the_cutoff(dom: Domain) -> None:
    line = prune.cutoff(NOW, 1000)
    _content(dom, 5, 1, line - 1)
    _content(dom, 5, 2, line)
    dom.turn(5)
    with dom.hold() as held:
        assert prune.prune_contents(held, line, sweep_unfolded=True).pruned == 1
        assert prune.prune_contents(held, line, sweep_unfolded=True).pruned == 0
    assert [r.seq for r in dom.mirrors.contents.slots_of(5)] == [2]
    assert dom.row(5) is not None  # the topic row and its track are never swept


def _fold(dom: Domain, parent_id: int, members: list[int]) -> None:
    """Sink ``members`` under a depth-1 parent row, as a consolidation does."""
    parent = dom.turn(parent_id)
    for member in members:
        row = dataclasses.replace(dom.row(member), parent_id=parent.id, depth=2)  # type: ignore[arg-type]
        dom.mirrors.topics.put(row)


def test_content_sweep_takes_only_lines_a_dream_row_carries(dom: Domain) -> None:
    line = prune.cutoff(NOW, 1000)
    for topic_id in (5, 6, 7):
        dom.turn(topic_id)
        _content(dom, topic_id, 1, line - 1)
    _content(dom, 8, 1, line - 1)  # a turn never closed: no row carries it
    _fold(dom, 50, [5, 6])
    with dom.hold() as held:
        swept = prune.prune_contents(held, line)
    assert swept == prune.ContentSweep(pruned=2, kept_unfolded=2)
    assert dom.mirrors.contents.slots_of(5) == dom.mirrors.contents.slots_of(6) == []
    assert [r.seq for r in dom.mirrors.contents.slots_of(7)] == [1]  # on the surface alone
    assert [r.seq for r in dom.mirrors.contents.slots_of(8)] == [1]


def test_a_fold_whose_dream_row_is_gone_carries_nothing(dom: Domain) -> None:
    line = prune.cutoff(NOW, 1000)
    dom.turn(5)
    _content(dom, 5, 1, line - 1)
    _fold(dom, 50, [5])
    dom.mirrors.topics.remove([50])
    with dom.hold() as held:
        assert prune.prune_contents(held, line) == prune.ContentSweep(0, 1)
        assert prune.prune_contents(held, line, sweep_unfolded=True).pruned == 1  # control


def _step(dom: Domain, topic_id: int, seq: int, status: int, updated_at: int) -> PlanNode:
    node = PlanNode(id_hash=0, topic_id=topic_id, seq=seq, status=status, updated_at=updated_at)
    stored = plan.write_plan_node(dom.engine, 0, node)
    dom.mirrors.plans.put(stored)
    return stored


def test_plan_sweep_needs_both_conditions_to_spare_a_tree(dom: Domain) -> None:
    line = prune.cutoff(NOW, 1000)
    _step(dom, 1, 1, PlanStatusCode.IN_PROGRESS, NOW)  # live and recent: kept
    _step(dom, 2, 1, PlanStatusCode.IN_PROGRESS, NOW - 60_000)  # live but silent: swept
    _step(dom, 3, 1, PlanStatusCode.DONE, NOW - 60_000)  # finished: stale step swept
    _step(dom, 3, 2, PlanStatusCode.DONE, NOW)
    with dom.hold() as held:
        assert prune.prune_plans(held, line, plan.plan_node_ids(dom.engine, 0)) == 2
    left = {
        (n.topic_id, n.seq)
        for n in plan.read_plan_nodes_strict(dom.engine, 0, plan.plan_node_ids(dom.engine, 0))
    }
    assert left == {(1, 1), (3, 2)}
    assert dom.mirrors.plans.total_count(2) == 0


def test_plan_sweep_deletes_nothing_when_a_step_will_not_read(dom: Domain) -> None:
    stale = _step(dom, 9, 1, PlanStatusCode.DONE, NOW - 30 * 24 * HOUR)
    broken = _step(dom, 9, 2, PlanStatusCode.IN_PROGRESS, NOW)
    dom.engine.write(0, RecordType.PLAN_NODE, broken.id_hash, b"{broken")
    with dom.hold() as held, pytest.raises(MemHopError):
        prune.prune_plans(held, prune.cutoff(NOW, 1000), plan.plan_node_ids(dom.engine, 0))
    assert plan.get_plan_node_optional(dom.engine, 0, stale.topic_id, stale.seq) is not None


def _node(
    scene_id: int, topic_ids: tuple[int, ...], importance: float, updated_at: int
) -> SceneNode:
    return SceneNode(
        id_hash=scene_id * 10,
        scene_id=scene_id,
        topic_ids=topic_ids,
        importance=importance,
        updated_at=updated_at,
    )


def test_samples_rank_before_capping_and_bound_each_row(dom: Domain) -> None:
    dom.turn(1, tuple(f"k{i}" for i in range(30)), scene=1)
    nodes = [_node(s, (1,), 0.5, NOW) for s in range(1, 201)]
    nodes.append(_node(500, (1,), 1.0, NOW - 365 * 24 * HOUR))  # year-old, high importance
    nodes.append(_node(501, (), 0.9, NOW))  # ranks in, has no keywords: dropped after the cap
    scene.put_scene_nodes(dom.engine, 0, nodes)
    with dom.hold() as held:
        samples = distill.collect_samples(held, NOW, l1domain.warm(held))
    assert len(samples) == 199  # upstream caps at 200 first, then drops empty rows
    assert 5010 not in {s.id for s in samples}
    assert 5000 not in {s.id for s in samples}
    assert all(len(s.keywords) == 20 for s in samples)
    assert [s.id for s in samples] == sorted(s.id for s in samples)  # equal rank: by id


def test_write_back_touches_only_emotion_mbti_and_personality(dom: Domain) -> None:
    host = ProfileSlot(name="host", role="ops", personality="careful", preferences={"lang": "zh"})
    profile.put_profile(dom.engine, 0, host)
    scene.put_scene_nodes(dom.engine, 0, [_node(1, (1,), 1.0, NOW)])
    result = dataclasses.replace(
        dom.model.distillation, personality="", per_node=(NodeMood(10, 0.9, 0.8),)
    )
    with dom.hold() as held:
        distill.write_back(held, result, {10}, NOW + 5, l1domain.warm(held))
    stored = profile.get_profile(dom.engine, 0)
    assert stored is not None
    assert (stored.name, stored.role, stored.personality) == ("host", "ops", "careful")
    assert dict(stored.preferences) == {"lang": "zh"}
    assert stored.mbti.type == "ESTP"
    assert (stored.emotion_state.valence, stored.emotion_state.dominance) == (0.8, 0.5)
    node = scene.get_scene_node_optional(dom.engine, 0, 10)
    assert node is not None
    assert node.emotion_set
    assert (node.valence, node.arousal) == (0.9, 0.8)
    # Emotion is write-once: a second reading leaves the node alone.
    again = dataclasses.replace(result, per_node=(NodeMood(10, 0.1, 0.1),), personality="calm")
    with dom.hold() as held:
        distill.write_back(held, again, {10}, NOW + 10, l1domain.warm(held))
    node = scene.get_scene_node_optional(dom.engine, 0, 10)
    assert node is not None
    assert (node.valence, node.arousal) == (0.9, 0.8)
    assert profile.get_profile(dom.engine, 0).personality == "calm"  # type: ignore[union-attr]


def test_distillation_asks_with_the_lock_released(dom: Domain) -> None:
    dom.turn(1, ("a",), scene=1)
    scene.put_scene_nodes(dom.engine, 0, [_node(1, (1,), 1.0, NOW)])
    assert distill.run_distill(dom.env()) == "ok"
    assert dom.model.locked_during_call == [False]
    stored = profile.get_profile(dom.engine, 0)
    assert stored is not None
    assert stored.name == "Agent"


def test_samples_from_a_warm_cache_are_the_samples_a_scan_reads(dom: Domain) -> None:
    """After the structure stages (a warm cache) and a node changed behind the cache, the
    samples equal those of a scan of the file; a cold cache is not loaded for them."""
    for scene_id in (1, 2, 3):
        dom.turn(scene_id, (f"w{scene_id}", "shared"), scene=scene_id)
    with dom.hold() as held:
        touched = structure.sync_nodes(held, NOW)
        hyperedges.build_edges(held, touched, NOW)
        node = scene.scene_node_of(dom.engine, 0, 2)
        assert node is not None
        # Written behind the cache's back, as a host's scene merge or Dream's stamp does.
        scene.put_scene_nodes(dom.engine, 0, [dataclasses.replace(node, importance=0.01)])
        scene.delete_scene_nodes(dom.engine, 0, [scene_node_id(3)])
        with mock.patch.object(scene, "list_scene_nodes_lenient") as scan:
            from_cache = distill.collect_samples(held, NOW, l1domain.warm(held))
        assert scan.call_count == 0  # the warm cache answered
        l1domain.drop(held)
        assert (
            distill.collect_samples(held, NOW, l1domain.warm(held)) == from_cache
        )  # the scan's, to the node
        assert {s.id for s in from_cache} == {scene_node_id(1), scene_node_id(2)}


def test_a_warm_cache_takes_a_nodes_words_once_until_its_topics_change(dom: Domain) -> None:
    """A second sampling with nothing changed takes no node's words and gives the same
    samples; rewriting a topic's keywords makes its node's words be taken again, and the
    samples show the new words (the reuse is not a copy that never changes)."""
    for scene_id in (1, 2):
        dom.turn(scene_id, (f"w{scene_id}", "shared"), scene=scene_id)
    with dom.hold() as held:
        structure.sync_nodes(held, NOW)
        first = distill.collect_samples(held, NOW, l1domain.warm(held))
        with mock.patch.object(distill, "_words_of", wraps=distill._words_of) as taken:
            again = distill.collect_samples(held, NOW, l1domain.warm(held))
            assert (taken.call_count, again) == (0, first)
    dom.turn(2, ("fresh", "words"), scene=2)
    with dom.hold() as held:
        with mock.patch.object(distill, "_words_of", wraps=distill._words_of) as taken:
            changed = distill.collect_samples(held, NOW, l1domain.warm(held))
        assert taken.call_count == 1  # the changed node's words alone
    words = {s.id: s.keywords for s in changed}
    assert words[scene_node_id(2)] == ("fresh", "words")
    assert words[scene_node_id(1)] == ("w1", "shared")


def test_a_second_sampling_hands_back_the_same_digests_until_a_node_moves(dom: Domain) -> None:
    """With nothing changed the samples are the very digests of the last sampling (a pass
    under the domain lock makes no object a node); a node whose importance moved gets a
    new digest showing the words it was shown, and the other keeps its own."""
    for scene_id in (1, 2):
        dom.turn(scene_id, (f"w{scene_id}", "shared"), scene=scene_id)
    with dom.hold() as held:
        structure.sync_nodes(held, NOW)
        first = {s.id: s for s in distill.collect_samples(held, NOW, l1domain.warm(held))}
        again = distill.collect_samples(held, NOW, l1domain.warm(held))
        assert [first[s.id] is s for s in again] == [True, True]
        node = scene.scene_node_of(dom.engine, 0, 2)
        assert node is not None
        moved_to = node.importance / 2
        scene.put_scene_nodes(dom.engine, 0, [dataclasses.replace(node, importance=moved_to)])
        moved = {s.id: s for s in distill.collect_samples(held, NOW, l1domain.warm(held))}
    two, one = scene_node_id(2), scene_node_id(1)
    assert moved[two] is not first[two]
    assert (moved[two].importance, moved[two].keywords) == (moved_to, first[two].keywords)
    assert moved[one] is first[one]  # the node that did not move: the same digest


@given(
    st.lists(
        st.tuples(st.sampled_from((1.0, 0.7, 0.3, 0.05, 0.0)), st.integers(0, 400)),
        min_size=1,
        max_size=12,
    ),
    st.integers(0, 20),
    st.integers(400, 2_000),
)
def test_the_cache_keeps_nodes_in_the_rank_a_sort_at_any_time_gives(
    drawn: list[tuple[float, int]], limit: int, hours_on: int
) -> None:
    """``L1Cache.ranked`` (kept as nodes are written) is the sort by rank at a later time."""
    nodes = [
        SceneNode(
            id_hash=100 + i,
            scene_id=i + 1,
            topic_ids=(i + 1,),
            importance=importance,
            updated_at=NOW + age * HOUR,
        )
        for i, (importance, age) in enumerate(drawn)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        dom = Domain(create_engine(str(Path(tmp) / "r.meh")))
        try:
            scene.put_scene_nodes(dom.engine, 0, nodes)
            with dom.hold() as held:
                ranked = list(l1domain.of(held).ranked(limit))
        finally:
            dom.engine.close()
    later = NOW + hours_on * HOUR
    wanted = sorted(nodes, key=lambda n: (-distill.rank(n, later), n.id_hash))[:limit]
    assert ranked == [(n.id_hash, n.importance, n.topic_ids) for n in wanted]
