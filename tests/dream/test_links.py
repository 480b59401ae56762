"""A node whose edge list only grew is stored when it has grown enough, or at a flush.

A new scene links to many old ones; writing each old node whole for one more edge id
costs its whole list, so ``L1Cache.link`` keeps short growth in memory. The edges are
stored at once, so a cache loaded from the file (after a process ended without a flush)
finds every link again from them.
"""

from __future__ import annotations

from memhop.dream import hyperedges, l1domain, structure
from memhop.dream.l1cache import LINK_SLACK
from memhop.ids import scene_node_id
from memhop.layers import scene
from tests.dream.conftest import NOW, Domain

HUB = 100


def _pass(dom: Domain, now: int = NOW) -> None:
    with dom.hold() as held:
        structure.rebuild_index(held)
        touched = structure.sync_nodes(held, now)
        hyperedges.build_edges(held, touched, now)


def _stored_edges(dom: Domain) -> tuple[int, ...]:
    node = scene.scene_node_of(dom.engine, 0, HUB)
    assert node is not None
    return node.edge_ids


def _edges_naming_the_hub(dom: Domain) -> set[int]:
    hub = scene_node_id(HUB)
    return {e.id_hash for e in scene.list_scene_edges(dom.engine, 0) if hub in e.node_ids}


def _grow(dom: Domain, count: int, first: int = 0) -> None:
    """``count`` new scenes that share the hub's words, one pass each."""
    for i in range(first, first + count):
        dom.turn(1_000 + i, ("harbour", "boats"), scene=HUB + 1 + i)
        _pass(dom)


def test_short_growth_waits_in_memory_and_a_flush_stores_it(dom: Domain) -> None:
    dom.turn(1, ("harbour", "boats"), scene=HUB)
    _grow(dom, LINK_SLACK - 1)
    naming = _edges_naming_the_hub(dom)
    assert len(naming) == LINK_SLACK - 1  # every edge is stored at once
    assert _stored_edges(dom) == ()  # the hub's list waits in memory
    with dom.hold() as held:
        cache = l1domain.of(held)
        held_list = cache.nodes[scene_node_id(HUB)].edge_ids
        assert set(held_list) == naming
        cache.flush()
    assert _stored_edges(dom) == held_list  # stored as held, in the order the edges came


def test_growth_by_the_slack_is_stored_without_a_flush(dom: Domain) -> None:
    dom.turn(1, ("harbour", "boats"), scene=HUB)
    _grow(dom, LINK_SLACK)
    naming = _edges_naming_the_hub(dom)
    assert len(naming) == LINK_SLACK
    assert set(_stored_edges(dom)) == naming
    _grow(dom, 1, first=LINK_SLACK)  # one more waits again
    assert len(_edges_naming_the_hub(dom)) == LINK_SLACK + 1
    assert set(_stored_edges(dom)) == naming


def test_a_cache_loaded_from_the_file_finds_the_links_that_were_not_stored(dom: Domain) -> None:
    dom.turn(1, ("harbour", "boats"), scene=HUB)
    _grow(dom, 4)
    naming = _edges_naming_the_hub(dom)
    assert len(_stored_edges(dom)) < len(naming)  # the process "ends" here, no flush
    with dom.hold() as held:
        l1domain.drop(held)  # as an open: the next cache loads from the file
        cache = l1domain.of(held)
        assert set(cache.nodes[scene_node_id(HUB)].edge_ids) == naming
        cache.flush()
    assert set(_stored_edges(dom)) == naming
