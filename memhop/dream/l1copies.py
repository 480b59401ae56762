"""The structure stages' copies of a domain's scene nodes, and what is kept by them.

Responsibility: beside each node as stored, keep what the stages look up by
it (the nodes listing a topic, when decay must next look at it, its keyword
set, its distillation rank), and note what changed for the stages. No engine:
``l1cache`` reads and writes the records and hands each node in here.

Contract:
- ``_take_node`` takes a node as stored at a frame offset (or with an edge
  list grown in memory only: ``unsaved``), ``_forget_node`` lets one go; each
  keeps every index here in step. A node new or with another topic list
  marks its words, its scene and its staleness to be judged again
  (``dirty_words``, ``dirty_scenes``, ``restale``); a forgotten node marks
  its scene, and its edges due at the next decay.
- ``ranked`` and ``words_now`` answer from the copies alone.

Traps: as ``l1cache``: only under the domain lock; not thread-safe.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Iterator, Mapping

from memhop.dream import decay
from memhop.dream.node_table import NodeTable
from memhop.dream.node_words import NodeWords, keyword_set
from memhop.dream.schedule import Schedule
from memhop.index.l2meta import L2Meta
from memhop.llm import NodeDigest
from memhop.records import SceneNode

__all__ = ["NodeCopies"]


class NodeCopies:
    """One domain's scene nodes as stored, their topic listing, schedules, keywords and rank."""

    def __init__(self) -> None:
        # topic id -> the nodes whose list holds it: the node's id alone when one does (the
        # usual case; a tuple a topic of the domain costs 6 MB at 10^5 turns), else a tuple
        self.listed_in: dict[int, int | tuple[int, ...]] = {}
        self.nodes = NodeTable()  # as stored, in tuples the collector leaves alone
        self.node_at: dict[int, int] = {}
        self.edges = Schedule()  # when the next decay must look at each edge
        self.node_due = Schedule()  # when the next decay must look at each node
        self.words = NodeWords()  # each node's lowered keywords, indexed, faded ones out
        self.dirty_scenes: set[int] = set()
        self.dirty_words: set[int] = set()
        # Node -> what distillation last showed of it (``distill``), its words as its topics
        # were when taken: dropped with every change that makes the node's words dirty.
        self.samples: dict[int, NodeDigest] = {}
        # Nodes whose words were made again and whose pairs l1_hyperedges has not weighed
        # yet: a stage cut short between its holds leaves them for the next one.
        self.unweighed: set[int] = set()
        self.restale: set[int] = set()  # nodes l1_rebuild must judge again
        # Nodes whose edge list grew in memory since they were stored -> its stored length
        # (``link``): written when it has grown enough, at ``flush``, or with any other change.
        self.unsaved: dict[int, int] = {}
        # A node forgotten (its record gone) -> the edges its copy listed: made again while
        # one of them stands, it takes those a load of the file would list on it.
        self.gone: dict[int, tuple[int, ...]] = {}
        # Nodes by distillation rank, best first: (-key, id), the key ``sample_rank_key``.
        self._ranked: list[tuple[float, int]] = []
        self._rank_of: dict[int, float] = {}

    def _relinked(self, stored: SceneNode) -> SceneNode:
        """A node read from the file, with the edges its unsaved list held that still stand."""
        old = self.nodes.get(stored.id_hash)
        if old is None or stored.id_hash not in self.unsaved:
            return stored
        listed = set(stored.edge_ids)
        extra = [e for e in old.edge_ids if e not in listed and e in self.edges]
        if not extra:
            del self.unsaved[stored.id_hash]
            return stored
        self.unsaved[stored.id_hash] = len(stored.edge_ids)
        return dataclasses.replace(stored, edge_ids=(*stored.edge_ids, *extra))

    def _take_node(self, node: SceneNode, at: int) -> None:
        old = self.nodes.get(node.id_hash)
        if old is None or old.topic_ids != node.topic_ids:
            self.dirty_words.add(node.id_hash)
            self.samples.pop(node.id_hash, None)
            self.dirty_scenes.add(node.scene_id)
            self.restale.add(node.id_hash)
            if old is not None:
                self._unlist(old)
            for topic_id in node.topic_ids:
                self.listed_in[topic_id] = (
                    (*self._listing(topic_id), node.id_hash)
                    if topic_id in self.listed_in
                    else node.id_hash
                )
        self.nodes[node.id_hash] = node
        self.node_at[node.id_hash] = at
        due = decay.node_due(node)
        if due is None:
            self.node_due.drop(node.id_hash)
        else:
            self.node_due.put(node.id_hash, due)
        self.words.scheduled(node)
        self._rank(node.id_hash, -decay.sample_rank_key(node))

    def _listing(self, topic_id: int) -> tuple[int, ...]:
        """The nodes whose list holds ``topic_id``."""
        listed = self.listed_in.get(topic_id, ())
        return (listed,) if isinstance(listed, int) else listed

    def _unlist(self, node: SceneNode) -> None:
        for topic_id in node.topic_ids:
            kept = tuple(n for n in self._listing(topic_id) if n != node.id_hash)
            if len(kept) > 1:
                self.listed_in[topic_id] = kept
            elif kept:
                self.listed_in[topic_id] = kept[0]
            else:
                self.listed_in.pop(topic_id, None)

    def _forget_node(self, node_id: int) -> None:
        old = self.nodes.pop(node_id, None)
        if old is not None:
            self._unlist(old)
            # l1_nodes makes the node again while its scene lists topics.
            self.dirty_scenes.add(old.scene_id)
            for edge_id in old.edge_ids:  # the next decay drops the member
                if edge_id in self.edges:
                    self.edges.put(edge_id, 0)
            if old.edge_ids:
                self.gone[node_id] = old.edge_ids
        self.node_at.pop(node_id, None)
        self.unsaved.pop(node_id, None)
        self.node_due.drop(node_id)
        self._rank(node_id, None)
        self.words.forget(node_id)

    def _edges_gone(self, edges: Mapping[int, tuple[int, ...]]) -> None:
        """Edges deleted (id -> its members): a forgotten member made again cannot take them
        (``gone`` keeps only edges that may still stand, so it does not grow with the file)."""
        for edge_id, members in edges.items():
            for member in members:
                held = self.gone.get(member)
                if held is not None and edge_id in held:
                    kept = tuple(e for e in held if e != edge_id)
                    if kept:
                        self.gone[member] = kept
                    else:
                        del self.gone[member]

    def _rank(self, node_id: int, negated_key: float | None) -> None:
        """Place ``node_id`` in the rank order (None: take it out)."""
        old = self._rank_of.pop(node_id, None)
        if old is not None:
            at = bisect.bisect_left(self._ranked, (old, node_id))
            del self._ranked[at]
        if negated_key is not None:
            self._rank_of[node_id] = negated_key
            bisect.insort(self._ranked, (negated_key, node_id))

    def ranked(self, limit: int) -> Iterator[tuple[int, float, tuple[int, ...]]]:
        """The ``limit`` best nodes by distillation rank (``sample_rank_key``), ties by id,
        as what distillation shows of each: (id, importance, topic ids), no record built,
        one at a time (a pass asks under the domain lock)."""
        return (self.nodes.digest_of(node_id) for _, node_id in self._ranked[:limit])

    def words_now(self, node_id: int, meta: L2Meta) -> frozenset[str]:
        """The node's keyword set as its topics are now (its own copy may wait for
        ``l1_hyperedges`` to be recomputed, or be gone with its fading; this leaves the
        copy as it is)."""
        held = self.words.sets.get(node_id)
        if (held is None or node_id in self.dirty_words) and node_id in self.nodes:
            return keyword_set(meta, self.nodes[node_id])
        return held or frozenset()
