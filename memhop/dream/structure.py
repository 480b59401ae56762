"""The association layer (dream.md §4.7): index rebuild, L1 nodes, rebuild, decay (the
edges between nodes are ``hyperedges``).

None of these stages asks a model, so each runs under holds of the domain lock
(released between them), a bounded number of units a hold, fewer once the hold
has run ``HOLD_S`` (``Held.over``); only a cold cache's reads, which grow with
the domain, are made before (``preload_cold``) and checked under one. Every enumeration is
ascending by id and every pair is visited as (lower id, higher id), so two
runs over copies of one file write the same nodes and edges in the same order.

Each stage costs what changed since the last pass (beyond upstream, which
reads the whole domain every pass): the stages work on ``l1cache``, the
domain's topics, nodes and edges as last checked, and write through it.

Decay is looked at when due (beyond upstream, which rewrites every node and
edge on every pass): a value decays continuously from its clock (a node's
``updated_at``, an edge's ``last_decay_at`` or else ``created_at``), so a
pass computes it exactly whenever it runs, and what decay decides (a node
leaves its edges below 0.15, an edge goes below 0.05 unless its members still
weigh 0.15 on their words) happens when a value crosses a threshold. Each
node and edge is scheduled for that moment (``decay.node_due``,
``decay.edge_due``), so a pass visits those due and those this pass changed; a
value is stored back only with such a decision or another change of its
record, never for the decay alone. What a pass decides is what decaying every
node and edge on every pass decides; a stored importance or weight is the one
of its last write, and decays from its clock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from memhop.dream import decay, l1domain
from memhop.dream.env import DreamEnv, Held
from memhop.dream.graph_edit import MIN_EDGE_NODES, GraphEdit
from memhop.dream.l1cache import L1Cache
from memhop.ids import scene_node_id
from memhop.index.l2meta import L2Meta
from memhop.records import SceneEdge, SceneNode

__all__ = [
    "MIN_EDGE_NODES",
    "NEW_NODE_IMPORTANCE",
    "decay_network",
    "preload_cold",
    "rebuild_from_l2",
    "rebuild_index",
    "sync_nodes",
]

NEW_NODE_IMPORTANCE = 1.0
SYNC_SCENES = 128
"""Scenes the node stage syncs in one hold of the domain lock: each may write its node (512
a hold held the lock 80 ms at 10^5 turns when most of them did)."""
STALE_NODES = 2_048
"""Nodes the stale check judges in one hold of the domain lock (a cold cache has every
node to judge: 8,845 at 10^5 turns took 27 ms of CPU in one hold)."""
DECAY_NODES = 128
"""Due nodes the decay stage looks at in one hold of the domain lock (a cold cache has
every node due: 8,845 at 10^5 turns took 91 ms of CPU in one hold; 256 a hold, 24-27
ms at most, reading each node's edges; 128, about half that)."""
DECAY_EDGES = 512
"""Edges the decay stage visits in one hold, about (those it detaches from faded nodes
and those due): a node of a dense graph leaves hundreds of edges at once, and a cold
cache has every edge due (6.3 s in one hold for 800 scenes that all share words)."""
DECAY_WORDS = 128
"""Nodes whose keyword sets the decay stage looks at in one hold, about, to judge faint
edges (a faded node's set is made anew from its topics: decay holds took up to 36 ms of
CPU at 10^5 turns, most of it there); a due faint edge past it waits for the next hold."""
_LISTED_DEPTH = 2


def _is_deep(meta: L2Meta, node: SceneNode) -> bool:
    """A node whose first topic sank below the listing: decay leaves it alone, as upstream."""
    first = meta.placement(node.topic_ids[0]) if node.topic_ids else None
    return first is not None and first[0] > _LISTED_DEPTH


# ---- index_rebuild, l1_nodes ----------------------------------------------------------


def preload_cold(env: DreamEnv) -> L1Cache | None:
    """For a domain whose cache is cold, its reads made now without the domain lock (for
    ``rebuild_index``); None for a warm cache. Turns go on meanwhile: a cold load of a
    large domain reads every topic, node and edge (seconds at 10^4 scenes)."""
    with env.hold() as held:
        begun, engine, meta = l1domain.ticket(held), held.engine, held.mirrors.topics
    return None if begun is None else L1Cache.preloaded(engine, env.agent_id, begun, meta)


def rebuild_index(held: Held, preload: L1Cache | None = None) -> L2Meta:
    """Check the topic mirror against the topic records; rebuild and install it if they differ.

    Every topic's frame offset is compared, and only topics at a new offset
    are decoded (see ``l1cache``); a mirror that agrees is kept, so its
    journals go on (beyond upstream, which installs a new mirror every pass).
    A cold cache takes ``preload`` (``preload_cold``) if it still stands.
    """
    with l1domain.checked(held, check_topics=True, preload=preload):
        return held.mirrors.topics


def sync_nodes(held: Held, now: int, limit: int | None = None) -> set[int]:
    """One node per scene over its depth <= 2 topics; return the node ids written.

    Only scenes whose topics changed since the last sync are looked at, at most
    ``limit`` of them (None: all), fewer once the hold has run its time
    (``Held.over``; ``l1domain.pending_scenes`` says whether any remain: the
    first pass after an open finds every scene changed).

    A node whose sorted topic list is unchanged is left alone. A new node
    starts at importance 1.0; an existing one keeps emotion, and its
    importance decayed to now (beyond upstream, which restarts the clock on
    the importance of the previous pass and forgives the decay in between).
    """
    with l1domain.checked(held) as cache:
        meta = held.mirrors.topics
        written: list[SceneNode] = []
        dirty = cache.dirty_scenes
        synced: list[int] = []
        for scene_id in l1domain.batch(dirty, limit):
            if synced and held.over():
                break  # the rest stay dirty: the next hold's
            synced.append(scene_id)
            wanted = tuple(sorted(row.topic.id for row in meta.listing(scene_id)))
            if not wanted:
                continue
            node_id = scene_node_id(scene_id)
            node = cache.nodes.get(node_id)
            if node is not None and tuple(sorted(node.topic_ids)) == wanted:
                continue
            if node is None:
                node = SceneNode(id_hash=node_id, importance=NEW_NODE_IMPORTANCE, created_at=now)
            elif not _is_deep(meta, node):
                node = dataclasses.replace(node, importance=decay.node_importance_at(node, now))
            written.append(
                dataclasses.replace(node, scene_id=scene_id, topic_ids=wanted, updated_at=now)
            )
        cache.put_nodes(written)
        dirty.difference_update(synced)
        return {n.id_hash for n in written}


# ---- l1_rebuild ------------------------------------------------------------------------


def _is_stale(meta: L2Meta, node: SceneNode) -> bool:
    if not node.topic_ids or node.topic_ids[0] == 0:
        return True
    cached = meta.placement(node.topic_ids[0])
    if cached is None:
        return True  # the mirror was just checked against the records: the topic is gone
    depth, parent_id = cached
    if depth <= _LISTED_DEPTH:
        return False
    if depth == _LISTED_DEPTH + 1 and parent_id is not None:
        parent = meta.placement(parent_id)
        return parent is None or parent[0] > _LISTED_DEPTH
    return True


def rebuild_from_l2(held: Held, limit: int | None = None) -> tuple[int, int]:
    """Delete nodes whose topics are gone or sunk too deep; return (nodes, edges) removed.

    Only nodes whose topics (or their scene's) changed since the last rebuild are
    judged (``L1Cache.restale``; at most ``limit`` of them, None: all, fewer once the
    hold has run its time; the rest left for the next call:
    ``l1domain.stale_pending``); nothing is written before ``commit``, so a read
    failure changes nothing.
    """
    with l1domain.checked(held) as cache:
        meta = held.mirrors.topics
        due, nodes = cache.restale, cache.nodes
        # What the set holds, not every node: a set meets a dict's keys by reading them all.
        due.difference_update([n for n in due if n not in nodes])
        graph = GraphEdit(held, cache)
        stale = edges_removed = 0
        for judged, node_id in enumerate(l1domain.batch(due, limit)):
            if judged and held.over():
                break  # the rest stay due: the next hold's
            due.discard(node_id)
            node = nodes[node_id]
            if _is_stale(meta, node):
                edges_removed += graph.detach(node_id, node.edge_ids)
                graph.delete_node(node_id)
                stale += 1
        if stale:
            graph.commit()
        return stale, edges_removed


# ---- l1_decay ------------------------------------------------------------------------------


def _still_similar(sets_of: Callable[[int], frozenset[str]], members: tuple[int, ...]) -> bool:
    """Whether every pair of ``members`` still weighs at least 0.15 on their keyword sets:
    an edge upstream deletes below 0.05 and makes again at its next pass."""
    sets = [sets_of(m) for m in members]
    return all(
        decay.jaccard(a, b) >= decay.L1_EDGE_MIN_SIMILARITY
        for i, a in enumerate(sets)
        for b in sets[i + 1 :]
    )


def decay_network(held: Held, now: int, limit: int | None = None) -> tuple[int, int]:
    """Decay the nodes due by ``now`` (at most ``limit`` of them; None: all; fewer once
    the hold has run its time: the rest stay due, ``l1domain.decay_pending``), the edges
    due (the same) and those this call changed; return (nodes, edges) removed. The first
    pass after an open finds every node due.

    Node: importance x e^(-lambda*dt), lambda from ``node_lambda``; below 0.15 it
    leaves all its edges (and is stored with its clock at now). Edge: weight x
    e^(-0.02*dt) since its clock; members gone are dropped; under 2 members the
    edge goes, and below 0.05 it goes unless its members still weigh 0.15 on
    their words. One that lost a member is stored (clock at now). Nothing else
    is written (see the module).

    Beyond upstream: upstream deletes a node below 0.05 and an edge below 0.05,
    and its next pass makes both again (the scene still lists topics, the pair
    still weighs 0.15), a node at importance 1.0: a saw-tooth that rewrites every
    idle scene every 12.5 days and lifts a long-idle scene back to full weight.
    Here such a node or edge is kept as it is: a faded node stays listed, without
    edges, its importance decaying on; the edge stays until its members' words
    change or one of them leaves it.
    """
    with l1domain.checked(held) as cache:
        meta = held.mirrors.topics
        graph = GraphEdit(held, cache)
        edges_removed = 0
        room = None if limit is None else DECAY_EDGES  # edges this hold may visit
        worked = False  # a hold does one unit at least, whatever its time
        for node_id in sorted(cache.node_due.pop_due(now, limit)):
            if (room is not None and room <= 0) or (worked and held.over()):
                cache.node_due.put(node_id, now)  # the next hold's
                continue
            node = graph.node(node_id)
            if node is None:
                continue
            worked = True
            if _is_deep(meta, node):  # looked at again when its topics change
                cache.node_due.drop(node_id)
                continue
            importance = decay.node_importance_at(node, now)
            # As the hold found them: a partner detached just before leaves this node
            # its edges to judge (``detach`` passes over those already gone).
            edge_ids = node.edge_ids
            if importance < decay.NODE_PRUNE_EDGES_THRESHOLD and edge_ids:
                if room is not None:
                    room -= len(edge_ids)
                graph.set_node(
                    dataclasses.replace(node, importance=importance, updated_at=now, edge_ids=())
                )
                # Here, not after the loop: the hold's time then counts the edges' reads.
                edges_removed += graph.detach(node_id, edge_ids)
            else:  # looked at a little early (due times are floored), or without edges
                due = decay.node_due(node)
                if due is None:
                    cache.node_due.drop(node_id)
                else:
                    cache.node_due.put(node_id, max(due, now + 1))
        changed = set(graph.edges)  # decayed and written in this hold, whatever its time
        visit = cache.edges.pop_due(now, None if room is None else max(room, 0)) | changed
        kept: list[SceneEdge] = []
        parked: list[int] = []
        sets: dict[int, frozenset[str]] = {}  # node -> its keyword set, made once a hold

        def sets_of(node_id: int) -> frozenset[str]:
            found = sets.get(node_id)
            if found is None:
                found = sets[node_id] = cache.words_now(node_id, meta)
            return found

        for edge_id in sorted(visit):
            if edge_id not in changed and worked and held.over():
                cache.edges.put(edge_id, now)  # still due: the next hold's
                continue
            current = graph.edge(edge_id)
            if current is None:
                continue
            worked = True
            weight = decay.edge_weight_at(current, now)
            members = tuple(m for m in current.node_ids if graph.node(m) is not None)
            faint = weight < decay.EDGE_REMOVE_THRESHOLD
            if (
                faint
                and limit is not None
                and len(sets) >= DECAY_WORDS
                and members == current.node_ids
                and edge_id not in graph.written_edges
            ):
                cache.edges.put(edge_id, now)  # unchanged here: judged at the next hold
                continue
            if len(members) < MIN_EDGE_NODES or (faint and not _still_similar(sets_of, members)):
                graph.delete_edge(edge_id, members)
                edges_removed += 1
            elif members != current.node_ids or edge_id in graph.written_edges:
                graph.put_edge(
                    dataclasses.replace(current, node_ids=members, weight=weight, last_decay_at=now)
                )
            elif faint:
                parked.append(edge_id)
            else:
                kept.append(current)
        graph.commit()
        for edge in kept:
            cache.edges.put(edge.id_hash, max(decay.edge_due(edge), now + 1))
        for edge_id in parked:
            cache.edges.park(edge_id)
        return 0, edges_removed
