"""The association layer: node sync, Jaccard edges, rebuild, decay math and composition."""

from __future__ import annotations

import dataclasses
import math

import pytest

from memhop.dream import decay, hyperedges, l1domain, structure
from memhop.engine import create_engine
from memhop.ids import l1_edge_id, scene_node_id
from memhop.layers import scene, topic
from tests.dream.conftest import NOW, Domain

HOUR = 3_600_000


def _nodes(dom: Domain) -> dict[int, object]:
    return {n.scene_id: n for n in scene.list_scene_nodes(dom.engine, 0)}


def _sync_and_link(dom: Domain, now: int = NOW) -> tuple[set[int], int]:
    with dom.hold() as held:
        touched = structure.sync_nodes(held, now)
        return touched, hyperedges.build_edges(held, touched, now)


def test_emotional_slowdown_measures_distance_from_neutral() -> None:
    base = decay.LAMBDA_NODE
    assert decay.node_lambda(0.5, 1.0) == base
    assert decay.node_lambda(0.0, 0.0) == base
    low, high = decay.node_lambda(0.0, 1.0), decay.node_lambda(1.0, 1.0)
    assert low == high == pytest.approx(0.1 * base)
    for valence, arousal in ((-3.0, 5.0), (9.0, -2.0), (0.2, 0.7)):
        assert 0 < decay.node_lambda(valence, arousal) <= base


def test_jaccard_floor_decides_the_edge(dom: Domain) -> None:
    dom.turn(1, ("a", "b"), scene=100)
    dom.turn(2, ("B", "c"), scene=200)  # {a,b} vs {b,c}: 1/3, case-insensitive
    dom.turn(3, ("a", "x1", "x2", "x3", "x4", "x5", "x6"), scene=300)  # vs 100: 1/8 < 0.15
    touched, written = _sync_and_link(dom)
    assert len(touched) == 3
    assert written == 1
    n100, n200 = scene_node_id(100), scene_node_id(200)
    edge = scene.get_scene_edge_optional(dom.engine, 0, l1_edge_id(n100, n200))
    assert edge is not None
    assert edge.weight == pytest.approx(1 / 3)
    assert edge.node_ids == (min(n100, n200), max(n100, n200))
    assert (
        scene.get_scene_edge_optional(dom.engine, 0, l1_edge_id(n100, scene_node_id(300))) is None
    )
    assert decay.jaccard({"a"}, {"a"} | {f"x{i}" for i in range(6)}) < 0.15
    # Idempotent: nothing changed, nothing written.
    assert _sync_and_link(dom) == (set(), 0)


def test_an_edge_is_raised_only_when_an_endpoint_moved(dom: Domain) -> None:
    dom.turn(1, ("a", "b"), scene=100)
    dom.turn(2, ("b", "c"), scene=200)
    _sync_and_link(dom)
    dom.turn(3, ("a", "c"), scene=200)  # scene 200 now {a,b,c}: 2/3
    touched, written = _sync_and_link(dom)
    assert touched == {scene_node_id(200)}
    assert written == 1
    edge = scene.get_scene_edge_optional(
        dom.engine, 0, l1_edge_id(scene_node_id(100), scene_node_id(200))
    )
    assert edge is not None
    assert edge.weight == pytest.approx(2 / 3)


def test_new_nodes_start_at_one_and_an_unchanged_set_is_left_alone(dom: Domain) -> None:
    dom.turn(1, scene=100)
    with dom.hold() as held:
        assert structure.sync_nodes(held, NOW) == {scene_node_id(100)}
        assert structure.sync_nodes(held, NOW + HOUR) == set()
    node = scene.scene_node_of(dom.engine, 0, 100)
    assert node is not None
    assert node.importance == 1.0
    assert node.updated_at == NOW
    assert node.topic_ids == (1,)


def test_decay_composes_across_passes(dom: Domain, engine: object) -> None:
    """Passes between change nothing stored, and the value they decide on is the same
    however many ran: a node detached after 200 hours in four passes stores e^-2, as one
    pass would."""
    dom.turn(1, ("a",), scene=100)
    dom.turn(2, ("a",), scene=200)
    _sync_and_link(dom)
    end = dom.engine.stats()[0]
    with dom.hold() as held:
        for hours in (1, 2, 50, 100, 140):
            assert structure.decay_network(held, NOW + hours * HOUR) == (0, 0)
    assert dom.engine.stats()[0] == end  # nothing crossed a threshold: nothing written
    once = scene.scene_node_of(dom.engine, 0, 100)
    assert once is not None
    assert (once.importance, once.updated_at) == (1.0, NOW)
    assert decay.node_importance_at(once, NOW + 2 * HOUR) == pytest.approx(
        math.exp(-0.02), abs=1e-12
    )
    with dom.hold() as held:  # 200 h at 0.01/h: e^-2 = 0.135 < 0.15, it leaves its edge
        assert structure.decay_network(held, NOW + 200 * HOUR) == (0, 1)
    detached = scene.scene_node_of(dom.engine, 0, 100)
    assert detached is not None
    assert detached.importance == pytest.approx(math.exp(-2), abs=1e-12)
    assert (detached.updated_at, detached.edge_ids) == (NOW + 200 * HOUR, ())


def test_decay_detaches_and_a_faded_node_is_kept(dom: Domain) -> None:
    dom.turn(1, ("a",), scene=100)
    dom.turn(2, ("a",), scene=200)
    _sync_and_link(dom)
    # 200 h at 0.01/h: e^-2 = 0.135 < 0.15 -> both nodes leave their edge, which goes.
    with dom.hold() as held:
        nodes_gone, edges_gone = structure.decay_network(held, NOW + 200 * HOUR)
    assert (nodes_gone, edges_gone) == (0, 1)
    assert scene.list_scene_edges(dom.engine, 0) == []
    assert all(n.edge_ids == () for n in scene.list_scene_nodes(dom.engine, 0))
    # Another 100 h: e^-3 = 0.0498 < 0.05. Upstream deletes the node and its next pass
    # makes it again at 1.0 (the scene still lists its topic); memhop keeps it as it is.
    end = dom.engine.stats()[0]
    with dom.hold() as held:
        assert structure.decay_network(held, NOW + 300 * HOUR) == (0, 0)
    assert dom.engine.stats()[0] == end
    faded = scene.scene_node_of(dom.engine, 0, 100)
    assert faded is not None
    assert decay.node_importance_at(faded, NOW + 300 * HOUR) < decay.NODE_REMOVE_THRESHOLD


def test_a_node_stored_faint_with_its_clock_ahead_leaves_its_edges_now(dom: Domain) -> None:
    """A node stored below 0.15 with ``updated_at`` after the pass's clock (a clock set
    back) is faint now: decay takes it out of its edges at the next pass, not when its
    clock comes round, and the edge pass makes it none."""
    dom.turn(1, ("a",), scene=100)
    dom.turn(2, ("a",), scene=200)
    dom.turn(3, ("a",), scene=300)
    _sync_and_link(dom)
    n100, n200, n300 = (scene_node_id(s) for s in (100, 200, 300))
    with dom.hold() as held:  # control: an hour on, every node is bright and keeps its edges
        assert structure.decay_network(held, NOW + HOUR) == (0, 0)
    assert len(scene.list_scene_edges(dom.engine, 0)) == 3
    node = scene.get_scene_node_optional(dom.engine, 0, n100)
    assert node is not None
    ahead = dataclasses.replace(node, importance=0.1, updated_at=NOW + 1000 * HOUR)
    scene.put_scene_nodes(dom.engine, 0, [ahead])
    with dom.hold() as held:
        assert structure.decay_network(held, NOW + 2 * HOUR) == (0, 2)
    assert [e.id_hash for e in scene.list_scene_edges(dom.engine, 0)] == [l1_edge_id(n200, n300)]
    dom.turn(4, ("a",), scene=100)  # its scene changes: the edge pass weighs its node again
    _sync_and_link(dom, NOW + 3 * HOUR)
    kept = {e.id_hash for e in scene.list_scene_edges(dom.engine, 0)}
    assert l1_edge_id(n200, n300) in kept
    assert l1_edge_id(n100, n200) not in kept
    assert l1_edge_id(n100, n300) not in kept
    still = scene.get_scene_node_optional(dom.engine, 0, n100)
    assert still is not None
    assert still.importance < decay.NODE_PRUNE_EDGES_THRESHOLD
    assert still.edge_ids == ()


def test_edges_decay_at_their_own_rate(dom: Domain) -> None:
    """An edge's weight decays at 0.02/h from its clock and is stored as created. Below
    0.05 (1.0 -> 0.05 takes ln 20 / 0.02 = 149.8 hours) it is kept while its nodes still
    weigh 0.15 on their words (upstream would make it again at once), and goes once
    they do not."""
    dom.turn(1, ("a",), scene=100)
    dom.turn(2, ("a",), scene=200)
    _sync_and_link(dom)
    with dom.hold() as held:
        structure.decay_network(held, NOW + 40 * HOUR)
    (edge,) = scene.list_scene_edges(dom.engine, 0)
    assert (edge.weight, edge.last_decay_at) == (1.0, 0)  # as created
    assert decay.edge_weight_at(edge, NOW + 40 * HOUR) == pytest.approx(math.exp(-0.8))
    assert decay.edge_due(edge) == NOW + math.floor(math.log(20) / 0.02 * HOUR)
    with dom.hold() as held:
        assert structure.decay_network(held, NOW + 150 * HOUR) == (0, 0)
    assert len(scene.list_scene_edges(dom.engine, 0)) == 1  # below 0.05, still {a} and {a}
    dom.turn(3, tuple(f"w{i}" for i in range(9)), scene=200)  # 200 now weighs 1/10 with 100
    with dom.hold() as held:
        structure.rebuild_index(held)
        hyperedges.build_edges(held, structure.sync_nodes(held, NOW + 151 * HOUR), NOW + 151 * HOUR)
        assert structure.decay_network(held, NOW + 151 * HOUR) == (0, 1)
    assert scene.list_scene_edges(dom.engine, 0) == []
    assert all(n.edge_ids == () for n in scene.list_scene_nodes(dom.engine, 0))


def test_rebuild_takes_a_stale_node_and_its_edge(dom: Domain) -> None:
    dom.turn(1, ("a",), scene=100)
    dom.turn(2, ("a",), scene=200)
    _sync_and_link(dom)
    topic.delete_topics(dom.engine, 0, [1])
    with dom.hold() as held:
        structure.rebuild_index(held)
        assert structure.rebuild_from_l2(held) == (1, 1)
    (survivor,) = scene.list_scene_nodes(dom.engine, 0)
    assert survivor.scene_id == 200
    assert survivor.edge_ids == ()
    assert scene.list_scene_edges(dom.engine, 0) == []


def test_a_spent_hold_judges_one_node_whether_or_not_it_is_stale(dom: Domain) -> None:
    """A cold cache has every node to judge: once the hold's time is spent, the check stops
    after the node at hand, stale or not (a run of live nodes held the lock 14 ms at
    60,000 turns), and the next holds find the stale one the one hold found."""
    for n in range(6):
        dom.turn(n + 1, (f"w{n}",), scene=100 + n)
    _sync_and_link(dom)
    topic.delete_topics(dom.engine, 0, [4])  # scene 103's only topic: its node is stale
    with dom.hold() as held:
        structure.rebuild_index(held)
        due = len(l1domain.of(held).restale)
    assert due == 6  # a rebuilt cache judges every node
    removed, holds = [], 0
    while True:
        with dom.spent_hold() as held:
            removed.append(structure.rebuild_from_l2(held))
            holds += 1
            if not l1domain.stale_pending(held):
                break
    assert holds == due  # one node a hold, though five of them are not stale
    assert sum(r[0] for r in removed) == 1
    assert {n.scene_id for n in scene.list_scene_nodes(dom.engine, 0)} == {100, 101, 102, 104, 105}


def test_a_node_faded_below_0_15_is_weighed_against_no_new_scene(dom: Domain) -> None:
    """Its words leave the cache's keyword index, so a new scene sharing them is not even
    weighed against it (it could take no edge): a domain's pairs are its recent scenes'."""
    dom.turn(1, ("harbour", "boats"), scene=100)
    _sync_and_link(dom)
    old = scene_node_id(100)
    later = NOW + 200 * HOUR  # e^-2 = 0.135: faded
    dom.turn(2, ("harbour", "boats"), scene=200)
    dom.turn(3, ("harbour", "boats"), scene=300)
    with dom.hold() as held:
        structure.rebuild_index(held)
        assert hyperedges.build_edges(held, structure.sync_nodes(held, later), later) == 1
        cache = l1domain.of(held)
        assert old not in cache.words.holders.get("harbour", {})
        assert {scene_node_id(200), scene_node_id(300)} <= cache.words.holders["harbour"].keys()
    (edge,) = scene.list_scene_edges(dom.engine, 0)
    assert old not in edge.node_ids


def test_the_node_stage_in_bounded_holds_writes_what_one_hold_writes(dom: Domain) -> None:
    """A cold cache finds every scene changed; syncing them a few at a time (holds of at
    most ``limit`` scenes, turns free between) writes the nodes one sync of all writes."""
    for n in range(11):
        dom.turn(n + 1, (f"w{n}", "shared"), scene=100 + n)
    batches: list[set[int]] = []
    with dom.hold() as held:
        batches.append(structure.sync_nodes(held, NOW, 4))
        assert l1domain.pending_scenes(held)  # 7 of the 11 scenes still to sync
    while True:
        with dom.hold() as held:
            batches.append(structure.sync_nodes(held, NOW, 4))
            if not l1domain.pending_scenes(held):
                break
    assert [len(b) for b in batches] == [4, 4, 3]
    assert set().union(*batches) == {scene_node_id(100 + n) for n in range(11)}
    nodes = _nodes(dom)
    assert sorted(nodes) == [100 + n for n in range(11)]  # control: one node a scene
    with dom.hold() as held:
        assert structure.sync_nodes(held, NOW + HOUR) == set()  # nothing left to sync
        assert not l1domain.pending_scenes(held)


def _dense(dom: Domain, scenes: int) -> None:
    for n in range(scenes):
        dom.turn(n + 1, ("shared", f"w{n}"), scene=100 + n)
    _sync_and_link(dom)


def _graph(dom: Domain, now: int) -> tuple[list[object], list[object]]:
    """Nodes as they stand at ``now`` (a node stored earlier decays by its clock to the
    same importance as one stored now), and the edges."""
    nodes = [
        (n.scene_id, n.topic_ids, n.edge_ids, round(decay.node_importance_at(n, now), 9))
        for n in scene.list_scene_nodes(dom.engine, 0)
    ]
    return nodes, list(scene.list_scene_edges(dom.engine, 0))


def test_decay_of_a_dense_graph_in_bounded_holds_writes_what_one_hold_writes(
    dom: Domain, tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every node fades at once and leaves its edges (each shares a word with every other:
    66 edges for 12 scenes); holds of about ``DECAY_EDGES`` edge visits end where one
    unbounded decay ends (a node a later hold finds without edges is not stored again:
    it decays to the same importance by its own clock), each hold near its budget."""
    whole = Domain(create_engine(str(tmp_path) + "/whole.meh"))  # type: ignore[operator]
    try:
        for d in (dom, whole):
            _dense(d, 12)
        assert len(scene.list_scene_edges(dom.engine, 0)) == 66  # control: a dense graph
        later = NOW + 200 * HOUR
        with whole.hold() as held:
            assert structure.decay_network(held, later) == (0, 66)
        monkeypatch.setattr(structure, "DECAY_EDGES", 8)
        removed, holds = 0, 0
        while True:
            with dom.hold() as held:
                removed += structure.decay_network(held, later, structure.DECAY_NODES)[1]
                holds += 1
                # a node's 11 edges at most past the budget: one node, then the hold ends
                assert removed <= holds * (8 + 11)
                if not l1domain.decay_pending(held, later):
                    break
        assert removed == 66
        assert holds > 3
        assert _graph(dom, later) == _graph(whole, later)
    finally:
        whole.engine.close()


def test_decay_in_holds_whose_time_is_spent_does_a_node_a_hold(
    dom: Domain, tmp_path: object
) -> None:
    """A hold whose time is spent does its first node and leaves the rest due: twelve
    fading nodes take a hold each (the last ones find their edges gone), and the holds
    end where one hold without a time limit ends."""
    whole = Domain(create_engine(str(tmp_path) + "/whole.meh"))  # type: ignore[operator]
    try:
        for d in (dom, whole):
            _dense(d, 12)
        later = NOW + 200 * HOUR
        with whole.hold() as held:
            assert structure.decay_network(held, later, structure.DECAY_NODES) == (0, 66)
            assert not l1domain.decay_pending(held, later)  # control: one hold did it all
        removed, holds = [], 0
        while True:
            with dom.spent_hold() as held:
                removed.append(structure.decay_network(held, later, structure.DECAY_NODES)[1])
                holds += 1
                if not l1domain.decay_pending(held, later):
                    break
        assert removed[0] == 11  # the first node's edges, all of them, and then the hold ends
        assert sum(removed) == 66
        assert 11 <= holds <= 13  # a node a hold (the rest kept due), not an edge a hold
        assert _graph(dom, later) == _graph(whole, later)
    finally:
        whole.engine.close()


def test_the_node_stage_in_holds_whose_time_is_spent_syncs_a_scene_a_hold(dom: Domain) -> None:
    """Eleven changed scenes: a spent hold syncs one and leaves the rest pending."""
    for n in range(11):
        dom.turn(n + 1, (f"w{n}", "shared"), scene=100 + n)
    batches: list[set[int]] = []
    while True:
        with dom.spent_hold() as held:
            batches.append(structure.sync_nodes(held, NOW, structure.SYNC_SCENES))
            if not l1domain.pending_scenes(held):
                break
    assert [len(b) for b in batches] == [1] * 11
    assert sorted(_nodes(dom)) == [100 + n for n in range(11)]


def _edge_ids(dom: Domain) -> set[int]:
    return {e.id_hash for e in scene.list_scene_edges(dom.engine, 0)}


def test_an_edge_stage_cut_short_leaves_its_pairs_to_the_next_pass(
    dom: Domain, tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """New scenes join a warm layer; the edge stage weighs one pair a hold (its time spent
    at once) and is cancelled after its first hold. What it had left goes to the cache's
    unweighed nodes, so the next pass (nothing touched) makes the edges an uncut stage
    makes; without that hand-over the next pass makes fewer."""
    monkeypatch.setattr(hyperedges, "WEIGH_RUN", 1)
    whole = Domain(create_engine(str(tmp_path) + "/whole.meh"))  # type: ignore[operator]
    lost = Domain(create_engine(str(tmp_path) + "/lost.meh"))  # type: ignore[operator]
    try:
        for d in (dom, whole, lost):
            _dense(d, 4)  # a warm layer
            for n in range(4, 8):
                d.turn(n + 1, ("shared", f"w{n}"), scene=100 + n)
        with whole.hold() as held:
            hyperedges.build_edges(held, structure.sync_nodes(held, NOW + HOUR), NOW + HOUR)
        for d, hand_over in ((dom, True), (lost, False)):
            with d.hold() as held:
                stage = hyperedges.EdgeStage(structure.sync_nodes(held, NOW + HOUR))
            with d.spent_hold() as held:
                assert stage.step(held, NOW + HOUR)  # pairs left when the cancel comes
                if hand_over:
                    stage.leave(held)
            with d.hold() as held:  # the next pass: its node sync touched nothing
                hyperedges.build_edges(held, set(), NOW + 2 * HOUR)
        assert len(_edge_ids(whole)) == 28  # control: every pair of 8 scenes shares a word
        assert _edge_ids(dom) == _edge_ids(whole)
        assert _edge_ids(lost) < _edge_ids(whole)  # the hand-over is what makes them
    finally:
        whole.engine.close()
        lost.engine.close()


def test_rewording_in_holds_whose_time_is_spent_does_a_node_a_hold(dom: Domain) -> None:
    """A cold cache has every node's words to read again (the edge stage's first steps
    after an open); a hold whose time is spent rewords one node and leaves the rest for
    the next, and the holds end with the sets one hold without a time limit makes."""
    _dense(dom, 12)
    taken: dict[bool, list[int]] = {}
    sets: dict[bool, dict[int, object]] = {}
    for spent in (False, True):
        dom.mirrors = dom.load()  # mirrors read anew: a cold cache
        taken[spent] = []
        while True:
            with (
                dom.spent_hold() if spent else dom.hold() as held,
                l1domain.checked(held) as cache,
            ):
                reworded = hyperedges._reword(held, cache, NOW, hyperedges.REWORD_NODES)
                taken[spent].append(len(reworded))
                if not cache.dirty_words:
                    sets[spent] = {n: cache.words.get(n) for n in cache.nodes}
                    break
    assert taken[False] == [12]  # control: the node bound (64) takes every node in a hold
    assert taken[True] == [1] * 12
    assert sets[True] == sets[False]
    assert all(sets[False].values())  # control: every node has words to compare


def test_rewording_a_few_changed_nodes_reads_them_not_every_node(
    dom: Domain, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With every node's words current, a changed node's rewording looks at the changed
    node alone: the node table is not walked (a set meeting a mapping that is not a dict
    reads all of it: at 10^5 turns most of the edge stage's time, every hold)."""
    _dense(dom, 12)
    with dom.hold() as held, l1domain.checked(held) as cache:
        hyperedges._reword(held, cache, NOW)  # every node's words read once
        assert not cache.dirty_words
        table = type(cache.nodes)
        walked: list[int] = []
        real_iter = table.__iter__

        def counted(self: object) -> object:
            walked.append(1)
            return real_iter(self)  # type: ignore[arg-type]

        monkeypatch.setattr(table, "__iter__", counted)
        changed = next(real_iter(cache.nodes))
        cache.dirty_words.add(changed)
        assert hyperedges._reword(held, cache, NOW) == [changed]  # the changed node, reworded
        assert walked == []
