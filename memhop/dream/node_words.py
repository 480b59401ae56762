"""Each L1 node's keyword set and the keyword -> nodes index, for weighing pairs.

A node whose importance has fallen below 0.15 takes no edge, so from the moment
it fades (``fade_by``) its words leave the index and its set is dropped: a new
scene is weighed against the recent ones, not against every scene that ever
shared a word with it, and the memory held is the recent scenes'.

Contract: ``sets`` maps a node to its lowered keywords (absent for a faded
node); ``holders`` maps a keyword to the nodes not faded whose set holds it, as
the keys of a dict (values None), in the order they were indexed.
``scheduled`` (re)schedules a node written with new values; ``fade_by(now)``
takes out those faded by then. Used under the domain lock, by ``l1cache``.

Why dicts of ids and not sets: a dict holding only ints (and None) stays out of
the interpreter's collector's view, a set never does; at 30,000 turns the
holders' 2,800 sets and the faded nodes' set were a fifth of what each full
collection walked of the domain's state.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from memhop.dream import decay
from memhop.dream.schedule import Schedule
from memhop.index.l2meta import L2Meta
from memhop.records import SceneNode

__all__ = ["NodeWords", "keyword_set"]

_SHRINK_FROM = 8  # removals from a holder set below which it is not made anew


def keyword_set(meta: L2Meta, node: SceneNode) -> frozenset[str]:
    """The lowered keywords of the topics ``node`` lists, as the mirror holds them."""
    found: set[str] = set()
    for topic_id in node.topic_ids:
        words = meta.keywords(topic_id)
        if words is not None:
            # Interned: the same words recur across a domain's nodes.
            found.update(sys.intern(k.lower()) for k in words)
    return frozenset(found)


class NodeWords:
    """The nodes' keyword sets and their index, faded nodes left out (see the module)."""

    def __init__(self) -> None:
        self.sets: dict[int, frozenset[str]] = {}
        self.holders: dict[str, dict[int, None]] = {}
        self._fade = Schedule()  # node -> when its importance falls below 0.15
        self._faded: dict[int, None] = {}
        self._removed: dict[str, int] = {}  # word -> nodes taken out since its set was made

    def get(self, node_id: int) -> frozenset[str]:
        return self.sets.get(node_id, frozenset())

    def put(self, node_id: int, words: frozenset[str]) -> None:
        """Record a node's keyword set (a faded node keeps none: it takes no edge)."""
        if node_id in self._faded:
            self.sets.pop(node_id, None)
            return
        self._unindex(node_id, self.get(node_id) - words)
        self._index(node_id, words)
        self.sets[node_id] = words

    def scheduled(self, node: SceneNode) -> None:
        """A node written: when it fades is computed again (judged at the next ``fade_by``)."""
        self._fade.put(node.id_hash, decay.faint_at(node))
        if node.id_hash in self._faded:
            del self._faded[node.id_hash]
            self._index(node.id_hash, self.get(node.id_hash))

    def forget(self, node_id: int) -> None:
        """A node gone."""
        self._fade.drop(node_id)
        self._faded.pop(node_id, None)
        self._unindex(node_id, self.sets.pop(node_id, frozenset()))

    def fade_by(self, now: int, nodes: Mapping[int, SceneNode], limit: int | None = None) -> None:
        """Take the nodes faded below 0.15 by ``now`` out of the sets and the index (at most
        about ``limit`` of them; None: all, and ``fading`` says whether more are due)."""
        for node_id in self._fade.pop_due(now, limit):
            node = nodes.get(node_id)
            if node is None:
                self._fade.drop(node_id)
                continue
            fades = decay.faint_at(node)
            if fades > now:  # due times are floored: not yet
                self._fade.put(node_id, fades)
                continue
            self._fade.drop(node_id)
            if node_id not in self._faded:
                self._faded[node_id] = None
                self._unindex(node_id, self.sets.pop(node_id, frozenset()))

    def fading(self, now: int) -> bool:
        """Whether nodes due to fade by ``now`` are left for ``fade_by``."""
        return self._fade.any_due(now)

    def bright(self, now: int, nodes: Mapping[int, SceneNode]) -> dict[int, frozenset[str]]:
        """The keyword sets of the nodes not faded below 0.15 by ``now``."""
        self.fade_by(now, nodes)
        faded = self._faded
        return {n: self.get(n) for n in nodes if n not in faded}

    def faded(self, node_id: int) -> bool:
        """Whether the node had faded below 0.15 at the last ``fade_by``."""
        return node_id in self._faded

    def _index(self, node_id: int, words: frozenset[str]) -> None:
        for word in words:
            self.holders.setdefault(word, {})[node_id] = None

    def _unindex(self, node_id: int, words: frozenset[str]) -> None:
        removed = self._removed
        for word in words:
            held = self.holders[word]
            held.pop(node_id, None)
            if not held:
                del self.holders[word]
                removed.pop(word, None)
                continue
            # A dict keeps its room once grown: one that lost as many nodes as it holds is
            # made anew, so the room held stays within twice the nodes, at a cost in
            # proportion to the removals (every set made anew at once, as before, took 68 ms
            # under the profiler at 10^5 turns).
            count = removed.get(word, 0) + 1
            if count >= _SHRINK_FROM and count >= len(held):
                self.holders[word] = dict.fromkeys(held)
                del removed[word]
            else:
                removed[word] = count
