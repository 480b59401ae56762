"""The l1_hyperedges stage (dream.md §4.7): pairwise edges between scene nodes whose
keyword sets overlap (Jaccard >= 0.15).

A warm cache weighs only the pairs with an end whose keywords changed (and the
pairs whose edge went). A cold one (the first pass after an open) weighs every
pair, as upstream does on every pass: ``weigh_cold`` does that without the
domain lock, from the keyword sets as a hold saw them, and leaves out the
pairs ``build_edges`` passes over (an edge stands, no end touched). Under the
lock, ``build_edges`` takes each pair whose two sets are still the very
objects weighed, if no stage began since (only stages write edges), and
weighs again every pair with an end that changed. Pairs go in (lower id,
higher id) order either way, so the edges written are the same.
"""

from __future__ import annotations

import dataclasses
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Set
from dataclasses import dataclass
from itertools import chain

from memhop.dream import decay, l1domain
from memhop.dream.env import DreamEnv, Held
from memhop.dream.l1cache import L1Cache
from memhop.dream.node_words import keyword_set
from memhop.dream.structure import MIN_EDGE_NODES
from memhop.ids import l1_edge_id
from memhop.layers import scene
from memhop.records import SceneEdge, SceneNode

__all__ = [
    "EDGE_PAIRS",
    "EDGE_READS",
    "L1_EDGE_MIN_SIMILARITY",
    "EdgeStage",
    "Weighing",
    "build_edges",
    "weigh_cold",
]

L1_EDGE_MIN_SIMILARITY = decay.L1_EDGE_MIN_SIMILARITY
REWORD_NODES = 64
"""Nodes whose words a cold weighing makes again (or takes out, faded) in one hold of the
domain lock: about 10 ms at 10^5 turns (a cold cache has every one of its 8,845 nodes
changed, 94 ms of CPU in one hold before)."""

REWORD_EDGES = 4_096
"""Edges whose nodes a cold weighing rewords in one hold, about (each is judged again):
64 nodes of a graph where 800 scenes share words held 52 ms."""

EDGE_PAIRS = 2_048
"""Pairs a warm cache's edges stage weighs in one hold of the domain lock, about (as its
focus nodes' words' holders count them): at 10^5 turns a pass weighed up to 12,352 pairs
in one hold, and such holds took 23-35 ms of CPU; with 4,096 a hold, one hold's writes
(the edges those pairs made, the reads, the nodes' grown lists) still took 18-22 ms."""

WEIGH_RUN = 64
"""Pairs the edges stage weighs between two looks at the hold's time (``Held.over``)."""

EDGE_READS = 512
"""Standing edges the edges stage reads in one hold, about, to compare a touched pair's
similarity with the edge's weight now (a read decodes the record): at 10^5 turns a
hold's writes, these reads among them, took 18-22 ms of CPU. The pairs past it are
weighed again and written at the next hold."""

Pair = tuple[int, int, float, int]
"""(lower node id, higher node id, similarity, edge id)."""

Shared = dict[tuple[int, int], int]
"""(lower node id, higher node id) -> the words the two nodes' sets share (0: not counted)."""


@dataclass(frozen=True, slots=True)
class Weighing:
    """The pairs of a cold cache's nodes at or above the floor, weighed without the lock,
    but those whose edge stood then with neither end touched."""

    sets: Mapping[int, frozenset[str]]  # node id -> the keyword set weighed
    pairs: array[int]  # low, high, edge id of each pair, flat
    similarities: array[float]
    begun: int  # ``l1domain.stages_begun`` when the edges were looked at

    def __iter__(self) -> Iterator[Pair]:
        pairs = self.pairs
        for i, similarity in enumerate(self.similarities):
            yield pairs[3 * i], pairs[3 * i + 1], similarity, pairs[3 * i + 2]


def _reword(held: Held, cache: L1Cache, now: int, limit: int | None = None) -> list[int]:
    """Recompute the keyword sets of the nodes whose topics changed (at most ``limit`` of
    them, and about ``REWORD_EDGES`` of their edges, and of the nodes faded since, fewer
    once the hold's time is spent (``Held.over``: one at least); None: all, the rest left
    for the next call); return their ids.

    A node faded below 0.15 by ``now`` keeps no set (it takes no edge): its words are
    not read, which on a cold cache (every node changed) is most of the domain's."""
    nodes, meta, words = cache.nodes, held.mirrors.topics, cache.words
    words.fade_by(now, nodes, limit)
    dirty = cache.dirty_words
    dirty.difference_update([n for n in dirty if n not in nodes])  # the dirty, not the nodes
    reworded: list[int] = []
    edges = 0
    for node_id in l1domain.batch(dirty, limit):
        if limit is not None and (edges >= REWORD_EDGES or (reworded and held.over())):
            break  # a dense graph's nodes hold hundreds of edges each: the rest next hold
        reworded.append(node_id)
        if not words.faded(node_id):
            words.put(node_id, keyword_set(meta, nodes[node_id]))
        edge_ids = nodes.edge_ids_of(node_id)
        edges += len(edge_ids)
        for edge_id in filter(cache.edges.__contains__, edge_ids):
            cache.edges.put(edge_id, 0)  # a faint edge kept for its words is judged again
    dirty.difference_update(reworded)
    return reworded


def _pairs(cache: L1Cache, focus: Iterable[int], now: int, *, orphans: bool = True) -> Shared:
    """Node pairs sharing a keyword with an endpoint in ``focus``, each with the count of
    words its two sets share, plus (``orphans``) the pairs whose edge went still standing,
    counted 0 (not counted); a node faded below 0.15 by ``now`` is in none."""
    nodes = cache.nodes
    words = cache.words
    words.fade_by(now, nodes)
    pairs: Shared = {}
    if orphans:
        pairs = dict.fromkeys(((a, b) for a, b in cache.orphans if a in nodes and b in nodes), 0)
    holders = words.holders
    for node_id in focus:
        if words.faded(node_id):
            continue
        # Each holder counted once a word of the node's: the words every pair shares at
        # once, in C, so that weighing a pair found here intersects no sets.
        shared = Counter(chain.from_iterable(holders[w] for w in words.get(node_id)))
        del shared[node_id]
        for other, count in shared.items():
            pairs[(node_id, other) if node_id < other else (other, node_id)] = count
    return pairs


def _weigh(
    cache: L1Cache, pairs: Iterable[tuple[int, int]], shared: Shared | None = None
) -> list[Pair]:
    """``pairs`` at or above the floor, weighed on the cache's keyword sets, in pair order:
    from the count ``shared`` holds for a pair (``_pairs``'s, made in this same hold), else
    by intersecting its two sets (the same similarity, bit for bit)."""
    words = cache.words
    sets = words.sets
    counts = shared or {}
    weighed: list[Pair] = []
    for pair in sorted(pairs):
        low, high = pair
        common = counts.get(pair)
        if common:
            similarity = common / (len(sets[low]) + len(sets[high]) - common)
        else:
            similarity = decay.jaccard(words.get(low), words.get(high))
        if similarity >= L1_EDGE_MIN_SIMILARITY:
            weighed.append((low, high, similarity, l1_edge_id(low, high)))
    return weighed


def _weigh_in_time(
    cache: L1Cache, pairs: Iterable[tuple[int, int]], held: Held, shared: Shared | None = None
) -> tuple[list[Pair], list[tuple[int, int]]]:
    """``_weigh`` until the hold has run its time (``WEIGH_RUN`` pairs at least): the pairs
    weighed, and those left, in pair order, for the next hold."""
    ordered = sorted(pairs)
    weighed: list[Pair] = []
    for at in range(0, len(ordered), WEIGH_RUN):
        if at and held.over():
            return weighed, ordered[at:]
        weighed += _weigh(cache, ordered[at : at + WEIGH_RUN], shared)
    return weighed, []


def _every_pair(sets: Mapping[int, frozenset[str]]) -> Iterator[Pair]:
    """Every pair at or above the floor, in pair order, with its edge id."""
    for low, high, similarity in decay.similar_pairs(sets, L1_EDGE_MIN_SIMILARITY):
        yield low, high, similarity, l1_edge_id(low, high)


def weigh_cold(env: DreamEnv, touched: Set[int]) -> Weighing | None:
    """For a cache that must weigh every pair: the pairs at or above the floor that
    ``build_edges`` would not pass over, weighed now without the domain lock (O(nodes^2));
    None for a warm cache. ``touched`` is the node sync's, as for ``build_edges``."""
    while True:  # the words a bounded number of nodes a hold (a cold cache: all of them)
        with env.hold() as held, l1domain.checked(held) as cache:
            if not cache.all_pairs or len(cache.nodes) < MIN_EDGE_NODES:
                return None
            now = env.clock()
            _reword(held, cache, now, REWORD_NODES)
            if cache.dirty_words or cache.words.fading(now):
                continue
            sets = cache.words.bright(now, cache.nodes)
            # Counted under the lock: a stage that begins once it is released counts after.
            begun = l1domain.stages_begun(held)
            break
    # Read without the lock: a stage that changes it meanwhile changes the count too.
    standing = cache.edges
    pairs, similarities = array("Q"), array("d")
    for low, high, similarity, edge_id in _every_pair(sets):
        if edge_id not in standing or low in touched or high in touched:
            pairs.extend((low, high, edge_id))
            similarities.append(similarity)
    return Weighing(sets, pairs, similarities, begun)


def _weighed(
    cache: L1Cache, focus: Set[int], weighing: Weighing | None, begun: int, now: int
) -> Iterable[Pair]:
    """The pairs to weigh at or above the floor, in pair order: every pair on a cold cache
    (``weighing``'s where neither set changed since, if it stands), else those ``_pairs``
    finds. ``begun``: the stages begun before this one."""
    if not cache.all_pairs:  # a warm cache: the pairs with a changed end, nothing else
        found = _pairs(cache, focus & cache.nodes.keys(), now)
        return _weigh(cache, found, found)
    sets = cache.words.bright(now, cache.nodes)
    if weighing is None or weighing.begun != begun:
        return _every_pair(sets)
    then = weighing.sets
    changed = {n for n, words in sets.items() if then.get(n) is not words}
    kept = (p for p in weighing if p[0] in sets and p[1] in sets)
    if not changed:
        return kept
    found = _pairs(cache, changed, now)
    fresh = [p for p in found if p[0] in changed or p[1] in changed]
    unchanged = (p for p in kept if p[0] not in changed and p[1] not in changed)
    return sorted([*unchanged, *_weigh(cache, fresh, found)])


def build_edges(held: Held, touched: Set[int], now: int, weighing: Weighing | None = None) -> int:
    """Pairwise edges between nodes whose keyword sets overlap (Jaccard >= 0.15), in one
    hold: ``EdgeStage`` with no bound. Returns edges written.

    A missing edge is created at the similarity. An existing one is raised only
    when the new similarity is higher than its weight decayed to now and an
    endpoint was touched by this pass's node sync (unchanged evidence never
    undoes decay); it is stored at the similarity with its clock at now (beyond
    upstream, which decays a raised weight again for the time since the previous
    pass). Only pairs with an endpoint whose topics changed, or whose edge went,
    are weighed, or every pair on a cold cache (``weighing``, from ``weigh_cold``,
    answers for those that did not change since). A pair with an end whose
    importance decayed below 0.15 is passed over: this pass's decay would take
    that end out of every edge again (upstream writes the edge and deletes it,
    every pass).
    """
    stage = EdgeStage(touched, weighing, pairs=None)
    while stage.step(held, now):
        pass
    return stage.written


class EdgeStage:
    """The l1_hyperedges stage (see ``build_edges``), one ``step`` per hold of the domain
    lock, so that no hold grows with the domain.

    A cold cache weighs every pair in its first step (from ``weigh_cold``'s weighing). A
    warm one takes its focus nodes (touched by the node sync, or whose words changed) a
    few a step, about ``pairs`` pairs of theirs (None: all in one step); a node whose
    words change between two steps joins the focus. A pair with both ends in the focus
    may be weighed at each end's step: the second finds the edge the first wrote, and
    writes nothing. A step reads about ``EDGE_READS`` standing edges of touched pairs; the
    rest are weighed again at the next step (a stage cut short leaves them standing, not
    raised). A step weighs its pairs until the hold has run its time (``Held.over``) and
    leaves the rest to the next step as well. A stage cancelled between two holds hands
    what it had left (its focus nodes not taken yet, the ends of its pairs not weighed)
    to the cache's unweighed nodes, which the next pass's stage takes (``leave``).
    """

    def __init__(
        self, touched: Set[int], weighing: Weighing | None = None, *, pairs: int | None = EDGE_PAIRS
    ) -> None:
        self.touched = touched
        self.weighing = weighing
        self.pairs = pairs
        self.written = 0
        self._left = set(touched)  # focus nodes whose pairs are not weighed yet
        self._unread: list[tuple[int, int]] = []  # pairs whose standing edge waits a read
        self._dirty: set[int] | None = None  # nodes whose words had changed at the first step

    def step(self, held: Held, now: int) -> bool:
        """Weigh and write one hold's pairs; answer whether pairs are left for another."""
        begun = l1domain.stages_begun(held)
        with l1domain.checked(held) as cache:
            if len(cache.nodes) < MIN_EDGE_NODES:
                return False
            dirty = self._dirty
            first = dirty is None
            if cache.all_pairs:
                # A cold cache weighs every pair at once; one gone cold since the first
                # step (dropped after a failed stage) is the next pass's.
                if first:
                    focus = self._left | set(_reword(held, cache, now))
                    self._write(held, cache, _weighed(cache, focus, self.weighing, begun, now), now)
                    cache.all_pairs = False
                    cache.orphans.clear()
                    cache.unweighed.clear()
                self._dirty = set()
                return bool(self._unread)  # the standing edges past the reads: warm steps
            if dirty is None:
                dirty = self._dirty = set(cache.dirty_words)
            bound = None if self.pairs is None else REWORD_NODES
            cache.unweighed.update(_reword(held, cache, now, bound))
            shared: Shared | None = None
            if self._unread:  # weighed again: their words may have changed since
                nodes, unread = cache.nodes, self._unread
                chunk = unread[: self.pairs or len(unread)]
                del unread[: len(chunk)]
                pairs: Iterable[tuple[int, int]] = {
                    (a, b) for a, b in chunk if a in nodes and b in nodes
                }
            else:
                pairs = shared = _pairs(cache, self._batch(cache), now, orphans=first)
                if first:
                    cache.orphans.clear()
            weighed, left = _weigh_in_time(cache, pairs, held, shared)
            self._write(held, cache, weighed, now)
            self._unread += left  # weighed again at the next hold, as those not read
            # Nodes changed by turns meanwhile are the next pass's, unless reworded here.
            dirty.intersection_update(cache.dirty_words)
            return bool(self._unread or self._left or cache.unweighed or dirty)

    def leave(self, held: Held) -> None:
        """A stage cut short between two holds: what it had left to weigh goes to the
        cache's unweighed nodes (a cold cache, or none, weighs every pair anyway)."""
        cache = l1domain.warm(held)
        if cache is None or cache.all_pairs:
            return
        nodes, unweighed = cache.nodes, cache.unweighed
        unweighed.update(n for n in self._left if n in nodes)
        unweighed.update(n for pair in self._unread for n in pair if n in nodes)

    def _batch(self, cache: L1Cache) -> list[int]:
        """The focus nodes this step weighs (the touched and ``cache.unweighed``, those still
        nodes): the smallest ids, until their pairs (as their words' holders count them)
        reach ``pairs``; at least one."""
        nodes, unweighed = cache.nodes, cache.unweighed
        # Passes over the focus, not over every node.
        left = {n for n in self._left if n in nodes}
        pending = {n for n in unweighed if n in nodes}
        if self.pairs is None:
            batch = sorted(left | pending)
        else:
            words, batch, room = cache.words, [], self.pairs
            for node_id in sorted(left | pending):
                if batch and room <= 0:
                    break
                batch.append(node_id)
                room -= sum(len(words.holders[w]) for w in words.get(node_id))
        self._left = left.difference(batch)
        unweighed.clear()  # those not weighed here stay there, should the stage stop
        unweighed.update(pending.difference(batch))
        return batch

    def _write(self, held: Held, cache: L1Cache, weighed: Iterable[Pair], now: int) -> None:
        nodes, touched = cache.nodes, self.touched
        edges: list[SceneEdge] = []
        linked: dict[int, list[int]] = {}
        reads, most = 0, None if self.pairs is None else max(EDGE_READS, 1)  # one a step at least
        # Every pair weighed has both ends bright at ``now``: a faded node keeps no words.
        for low, high, similarity, edge_id in weighed:
            edge = None
            if edge_id in cache.edges:
                if low not in touched and high not in touched:
                    continue
                if most is not None and (reads >= most or (reads and held.over())):
                    self._unread.append((low, high))
                    continue
                reads += 1
                edge = scene.get_scene_edge_optional(held.engine, held.agent_id, edge_id)
            if edge is None:
                edge = SceneEdge(
                    id_hash=edge_id, node_ids=(low, high), weight=similarity, created_at=now
                )
            elif similarity <= decay.edge_weight_at(edge, now):
                # The edge stands as stored; an end that does not list it takes it by the
                # rule a load of the file follows (``decay.relinks``).
                clock = decay.edge_clock(edge)
                for end in (low, high):
                    node = nodes[end]
                    if edge_id not in node.edge_ids and decay.relinks(node, clock):
                        linked.setdefault(end, []).append(edge_id)
                continue
            else:
                edge = dataclasses.replace(edge, weight=similarity, last_decay_at=now)
            edges.append(edge)
            linked.setdefault(low, []).append(edge_id)
            linked.setdefault(high, []).append(edge_id)
        cache.put_edges([(e, decay.edge_due(e)) for e in edges])
        grown: list[SceneNode] = []
        for node_id, edge_ids in sorted(linked.items()):
            node = nodes[node_id]
            held_ids = set(node.edge_ids)
            extra = [e for e in dict.fromkeys(edge_ids) if e not in held_ids]
            if extra:
                grown.append(dataclasses.replace(node, edge_ids=(*node.edge_ids, *extra)))
        cache.link(grown)
        self.written += len(edges)
