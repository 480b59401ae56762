"""What the structure stages last read or wrote, kept in memory per domain between passes.

Responsibility: let ``index_rebuild``, ``l1_nodes``, ``l1_hyperedges``,
``l1_rebuild`` and ``l1_decay`` cost what changed since the last pass instead
of decoding every topic, node and edge of the domain on every pass.

Contract (``l1domain`` finds a domain's cache and keeps it checked):
- ``refresh`` brings the cache up to date with the file: every copy it holds
  equals the stored record. It reads only what changed: the topics the root
  changed through the topic mirror (its ``l1_journal``), and the nodes once the
  engine's count of scene-node writes (``Engine.writes``) moved since the
  copies last agreed (Dream's distillation and the host's scene deletes and
  merges write nodes); then a node at a new frame offset is decoded (the log
  is append-only, so a rewritten record sits at a new offset). A compaction
  installs a new engine: see ``rebase``. ``check_topics`` (``index_rebuild``)
  also spot-checks a slice of the mirror by offset, round robin (``spot_check``);
  a mirror that disagrees with the records is rebuilt from them and installed,
  as ``index_rebuild`` always did.
- Edges are written only by the structure stages, through ``put_edges`` and
  ``delete_edges``; the cache holds only their ids and when decay must next
  look at each (edges are read when needed). Every write here updates the
  cache after the engine took it. A stage that fails must ``drop`` the cache:
  the next stage starts cold.
- A cold cache (first pass after an open or a failure) reads every topic and
  node once and marks everything changed: every scene dirty, every pair to
  weigh (``all_pairs``). Each edge is scheduled from its stored weight and
  clock (``layers.edge_clocks``, one pass over the edges' payloads), as a warm
  cache would have it; an edge not read that way, or with a member that is
  no longer a node, is due at the next decay. Those reads may be made
  beforehand without the domain lock (``preloaded``); the refresh under the
  lock then reads again only the topics written since (``frames_since``), the
  rows that differed from the mirror, and the nodes if any was written since.
- What changed for the stages: ``dirty_scenes`` (scenes whose topics were
  written or removed since ``l1_nodes`` last ran) and ``dirty_words`` (nodes
  whose keyword set must be recomputed) accumulate until a stage consumes
  them; ``orphans`` are node pairs whose edge went since ``l1_hyperedges``
  last ran (it may grow back).

The copies of the nodes and what is kept by them: ``l1copies``.

Traps: call only under the domain lock (``Held``); not thread-safe (but
``preloaded``, on a cache no other thread has yet).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, compress

from memhop.dream import decay
from memhop.dream.env import Held
from memhop.dream.l1copies import NodeCopies
from memhop.dream.spot_check import SpotCheck
from memhop.engine import Engine
from memhop.errors import MemHopError
from memhop.ids import scene_node_id
from memhop.index.l2meta import L2Meta
from memhop.intmap import IntMap
from memhop.layers import scene, topic
from memhop.layers.edge_clocks import edge_clocks
from memhop.records import RecordType, SceneEdge, SceneNode

__all__ = ["LINK_SLACK", "OFFSETS_AT_ONCE", "L1Cache", "Preload"]

LINK_SLACK = 8
"""A node whose edge list only grew is stored once it has grown by half, or by this many."""

OFFSETS_AT_ONCE = 8192
"""Ids whose frame offsets one hold of the engine's lock takes: a cold load's 10^5 topics in
one hold held it 75-119 ms, and every call's reads of the file waited for it."""


@dataclass(frozen=True, slots=True)
class Preload:
    """Reads of a cold load made without the domain lock (``preloaded``)."""

    begun: int  # the domain's stages begun before it (``l1domain.ticket``)
    meta: L2Meta  # the topic mirror the rows were compared with
    start: int  # the log's record end before the reads: frames from there on came after
    node_writes: int  # ``Engine.writes`` of scene nodes before the nodes were read
    suspect: frozenset[int]  # topics whose row read differs from the mirror's


class L1Cache(NodeCopies):
    """One domain's topic offsets, scene nodes, keyword sets and edge schedule, as stored."""

    def __init__(self, engine: Engine, agent_id: int) -> None:
        super().__init__()
        self.engine = engine
        self.agent_id = agent_id
        self.cold = True
        self.meta: L2Meta | None = None  # the topic mirror whose journal this cache drains
        # Topic id -> its frame offset when last checked; packed, as a dict of every topic
        # of the domain cost 8.5 MB at 10^5 turns.
        self.topic_at = IntMap()
        self._spot = SpotCheck()  # the round of checks of the topic mirror
        self.node_writes = -1  # ``Engine.writes`` of scene nodes when the copies last agreed
        self.orphans: set[tuple[int, int]] = set()
        self.all_pairs = False  # the next l1_hyperedges weighs every pair (a cold load)
        self.preload: Preload | None = None  # reads made without the domain lock (``preloaded``)
        self.distilled: object = None  # what distillation was last given (``distill``)

    @classmethod
    def preloaded(cls, engine: Engine, agent_id: int, begun: int, meta: L2Meta) -> L1Cache | None:
        """A cold cache holding the reads a cold load makes, made now without the domain
        lock (None if one failed: the load under the lock meets the failure again and
        reports it); ``begun``: ``l1domain.ticket``; ``meta``: the domain's topic mirror.

        Each read is whole under the engine's lock; every offset is taken before
        its record is read, so a record written meanwhile shows a new offset. The
        rows read are compared with the mirror here too, without the lock (a
        dict read at a time; a topic changed meanwhile is in the mirror's journal
        and read again under the lock).
        """
        cache = cls(engine, agent_id)
        try:
            start = engine.record_end
            node_writes = engine.writes(agent_id, RecordType.SCENE_NODE)
            topic_at = cache._offsets(RecordType.TOPIC)
            node_at = cache._offsets(RecordType.SCENE_NODE)
            cache._load(node_at, engine.ids_of_type(agent_id, RecordType.SCENE_EDGE))
            rows = topic.iter_topics_strict(engine, agent_id)  # one at a time, none kept
            suspect = frozenset(r.id for r in rows if r.id not in topic_at or not meta.holds(r))
        except MemHopError:
            return None
        cache.topic_at = topic_at
        cache.preload = Preload(begun, meta, start, node_writes, suspect)
        return cache

    # ---- bringing the copies up to date ------------------------------------------------

    def refresh(self, held: Held, *, check_topics: bool = False) -> None:
        """Bring the copies up to date (see the module); ``check_topics`` also spot-checks
        the topic mirror against the records (``spot_check``)."""
        engine, agent = self.engine, self.agent_id
        # The domain lock is held: no other thread writes this domain meanwhile.
        if not self.cold:
            drift = check_topics and self._spot.drifted(held, engine, agent, self.topic_at)
            self._refresh_topics(held, drift)
            if engine.writes(agent, RecordType.SCENE_NODE) != self.node_writes:
                self._refresh_nodes(self._offsets(RecordType.SCENE_NODE))
        elif self.preload is not None and self.preload.meta is held.mirrors.topics:
            self._refresh_preloaded(held, self.preload)
        else:
            self.topic_at = self._offsets(RecordType.TOPIC)
            meta = held.mirrors.topics
            rows = topic.iter_topics_strict(engine, agent)  # one at a time, none kept
            held_now = [meta.holds(r) for r in rows]  # every record read: damage is met
            drift = len(held_now) != len(meta) or not all(held_now)
            self._load(
                self._offsets(RecordType.SCENE_NODE),
                engine.ids_of_type(agent, RecordType.SCENE_EDGE),
            )
            self._refresh_topics(held, drift)
        self.node_writes = engine.writes(agent, RecordType.SCENE_NODE)
        self.cold = False
        self.preload = None

    def _refresh_preloaded(self, held: Held, pre: Preload) -> None:
        """A cold load from a preload: only what changed since it (topics written or deleted
        since, rows that differed, the nodes if any was written) is read under the lock."""
        engine, agent, meta = self.engine, self.agent_id, held.mirrors.topics
        since_start = functools.partial(engine.frames_since, agent, pre.start)
        written = chain(since_start(), since_start(tombstones=True))
        since = {i for _, t, i in written if t == RecordType.TOPIC} | pre.suspect
        now_at = dict(zip(since, engine.offsets_of(agent, since), strict=True))
        # The topics there are now: the preload's offsets, changed by what changed since
        # (listing the domain's topic ids took 8-11 ms under the lock at 10^5 turns).
        drift, count = False, len(self.topic_at)
        for topic_id, at in now_at.items():
            was = topic_id in self.topic_at
            if at is None:
                count -= was
                self.topic_at.discard(topic_id)
                drift = drift or topic_id in meta
            else:
                count += not was
                self.topic_at.put(topic_id, at)
                drift = drift or topic.get_topic_optional(engine, agent, topic_id) != meta.get(
                    topic_id
                )
        drift = drift or count != len(meta)
        if engine.writes(agent, RecordType.SCENE_NODE) != pre.node_writes:
            self._refresh_nodes(self._offsets(RecordType.SCENE_NODE))
        self._refresh_topics(held, drift)

    def _offsets(self, rec_type: RecordType) -> IntMap:
        """Each live record of ``rec_type`` in the domain -> its frame offset."""
        engine, agent = self.engine, self.agent_id
        ids = engine.ids_of_type(agent, rec_type)
        offsets: list[int | None] = []
        for at in range(0, len(ids), OFFSETS_AT_ONCE):
            if at:
                time.sleep(0)  # the engine's lock is free: a call waiting for it takes it
            offsets += engine.offsets_of(agent, ids[at : at + OFFSETS_AT_ONCE])
        found = [at is not None for at in offsets]
        live = array("Q", [at for at in offsets if at is not None])
        return IntMap.from_arrays(array("Q", compress(ids, found)), live)

    def _refresh_topics(self, held: Held, drift: bool) -> None:
        """Take in the topics changed since the last stage (``drift``: the mirror disagrees
        with the records, and is rebuilt from them)."""
        engine, agent = self.engine, self.agent_id
        meta = held.mirrors.topics
        # What the root changed through the mirror since the last stage; a mirror
        # installed whole since then (or a cold cache) may have changed anything.
        changed = set(meta.l1_journal.drain())
        everything = self.cold or meta is not self.meta
        if drift:
            meta = L2Meta.from_topics(topic.iter_topics_strict(engine, agent))  # no list kept
            held.mirrors.topics = meta
            everything = True
        if meta is not self.meta:
            meta.l1_journal.drain()  # a new mirror: note from here on
            self.meta = meta
        if everything:
            self.dirty_scenes.update(meta.scenes())
            self.dirty_scenes.update(map(self.nodes.scene_of, self.nodes))
            self.dirty_words.update(self.nodes)
            self.samples.clear()
            self.restale.update(self.nodes)
            for node_id in self.nodes:
                self.node_due.put(node_id, 0)
            return
        # A changed topic changes the keywords of the nodes listing it (a node's list is
        # a snapshot: it may name a topic since moved to another scene), the listing
        # of those nodes' scenes, and the listing of the scene it is in now, whose node
        # may go stale (a fold moves depths within a scene).
        for topic_id in changed:
            for node_id in self._listing(topic_id):
                self.dirty_words.add(node_id)
                self.samples.pop(node_id, None)
                self.dirty_scenes.add(self.nodes.scene_of(node_id))
                self.restale.add(node_id)
                self.node_due.put(node_id, 0)  # whether decay skips it (a deep node) may change
            scene_id = meta.scene_of(topic_id)
            if scene_id is not None:
                self.dirty_scenes.add(scene_id)
                self.restale.add(scene_node_id(scene_id))

    def rebase(self, engine: Engine, *, at_swap: bool = False) -> None:
        """Follow a compaction: the same records in a new file, at new offsets.

        The copies stand (a compaction copies every record unchanged); the offsets
        are forgotten, so spot checks read their topics again. ``at_swap``: called
        as the copy takes the file's name, while no call of the domain runs, so the
        new engine's count of node writes is the one the copies agree with; later
        (a stage that finds another engine) the count may already hold writes made
        since, and the next refresh reads every node once.
        """
        agreed = at_swap and self.node_writes >= 0
        self.engine = engine
        self.topic_at = IntMap()
        self.node_at = {}
        self.node_writes = engine.writes(self.agent_id, RecordType.SCENE_NODE) if agreed else -1

    def _load(self, live: Mapping[int, int], edge_ids: list[int]) -> None:
        for node in scene.list_scene_nodes(self.engine, self.agent_id):
            at = live.get(node.id_hash)  # None: written after ``live`` (a preload, unlocked)
            if at is not None:
                self._take_node(node, at)
        self.all_pairs = True
        # Each edge is first looked at when its stored weight and clock make it due, as a
        # warm cache would; one with a member gone, or not in the usual shape, at once.
        clocks = edge_clocks(self.engine, self.agent_id)
        unlisted: dict[int, list[int]] = {}
        for edge_id in edge_ids:
            known = clocks.get(edge_id)
            if known is None:
                self.edges.put(edge_id, 0)
                continue
            here = [m for m in known[0] if m in self.nodes]
            whole = len(here) == len(known[0])
            self.edges.put(edge_id, decay.edge_due_at(known[1], known[2]) if whole else 0)
            for member in here:
                if decay.relinks(self.nodes[member], known[2]):
                    unlisted.setdefault(member, []).append(edge_id)
        # An edge its member does not list: that node's longer list was not stored yet
        # (``link``; the process ended first), and it is taken as unsaved, as it was
        # (``decay.relinks``), also when another member of the edge is gone (decay looks at
        # such an edge at once, and takes it out of the lists of the members left if it goes).
        for node_id, linked in unlisted.items():
            node = self.nodes[node_id]
            listed = set(node.edge_ids)
            extra = [e for e in linked if e not in listed]
            if extra:
                self.unsaved[node_id] = len(node.edge_ids)
                grown = dataclasses.replace(node, edge_ids=(*node.edge_ids, *extra))
                self._take_node(grown, self.node_at[node_id])

    def _refresh_nodes(self, live: Mapping[int, int]) -> None:
        engine, agent = self.engine, self.agent_id
        for node_id in [n for n in self.nodes if n not in live]:
            self._forget_node(node_id)
        for node_id, at in live.items():
            if self.node_at.get(node_id) != at:
                node = scene.get_scene_node_optional(engine, agent, node_id)
                if node is not None:
                    self._take_node(self._relinked(node), at)

    # ---- writes through the cache ------------------------------------------------------

    def put_nodes(self, nodes: Sequence[SceneNode]) -> None:
        if not nodes:
            return
        scene.put_scene_nodes(self.engine, self.agent_id, nodes)
        self._wrote_nodes()
        regained: list[SceneNode] = []
        for node in nodes:
            self.unsaved.pop(node.id_hash, None)
            at = self.engine.offset_of(self.agent_id, node.id_hash)
            if at is not None:
                self._take_node(node, at)
                edge_ids = self.gone.pop(node.id_hash, ())
                if edge_ids:
                    regained += self._regained(node, edge_ids)
        self.link(regained)

    def _regained(self, node: SceneNode, edge_ids: tuple[int, ...]) -> list[SceneNode]:
        """A node made again, with the standing edges of the one before it that a load of
        the file would list on it (``decay.relinks``: made in the millisecond of the
        edge's clock, the clock not moved); none when it takes none."""
        listed, extra = set(node.edge_ids), []
        for edge_id in [e for e in edge_ids if e not in listed and e in self.edges]:
            edge = scene.get_scene_edge_optional(self.engine, self.agent_id, edge_id)
            if edge is None or node.id_hash not in edge.node_ids:
                continue
            if decay.relinks(node, decay.edge_clock(edge)):
                extra.append(edge_id)
        return [dataclasses.replace(node, edge_ids=(*node.edge_ids, *extra))] if extra else []

    def _wrote_nodes(self) -> None:
        """After this cache's own node writes (the copies were checked at the stage's start,
        under the lock that keeps every other writer out): the count they agree with."""
        if self.node_writes >= 0:
            self.node_writes = self.engine.writes(self.agent_id, RecordType.SCENE_NODE)

    def link(self, grown: Sequence[SceneNode]) -> None:
        """Take nodes whose edge lists only grew (new edges appended).

        A node is stored once its list has grown by half since it was stored (or
        by ``LINK_SLACK``), else kept in memory until then, until another change
        stores it, or until ``flush``: a new scene links to many old ones, and
        writing each old node whole for one more edge id costs its whole list
        (beyond upstream, which rewrites every end of every edge it writes).
        The edges themselves are stored at once, so a load finds every link
        from them (``_load``).
        """
        due = []
        for node in grown:
            stored = self.unsaved.get(node.id_hash, len(self.nodes.edge_ids_of(node.id_hash)))
            if len(node.edge_ids) >= stored + max(LINK_SLACK, stored // 2):
                due.append(node)
            else:
                self.unsaved[node.id_hash] = stored
                # A compaction's swap forgets the offsets (``rebase``): ask the engine.
                at = self.node_at.get(node.id_hash)
                if at is None:
                    at = self.engine.offset_of(self.agent_id, node.id_hash) or 0
                self._take_node(node, at)
        self.put_nodes(due)

    def flush(self) -> None:
        """Store every node whose edge list grew in memory only (``link``)."""
        self.put_nodes([self.nodes[node_id] for node_id in sorted(self.unsaved)])

    def delete_nodes(self, node_ids: Sequence[int]) -> None:
        if not node_ids:
            return
        scene.delete_scene_nodes(self.engine, self.agent_id, node_ids)
        self._wrote_nodes()
        for node_id in node_ids:
            self._forget_node(node_id)

    def put_edges(self, edges: Sequence[tuple[SceneEdge, int]]) -> None:
        """Write edges, each scheduled for the first decay at or after its due time."""
        if not edges:
            return
        scene.put_scene_edges(self.engine, self.agent_id, [e for e, _ in edges])
        for edge, due_ms in edges:
            self.edges.put(edge.id_hash, due_ms)

    def delete_edges(self, edges: Mapping[int, tuple[int, ...]]) -> None:
        """Tombstone edges (id -> the members it had); each pair it joined becomes an
        orphan (its edge may grow back)."""
        if not edges:
            return
        scene.delete_scene_edges(self.engine, self.agent_id, sorted(edges))
        self._edges_gone(edges)
        for edge_id, members in edges.items():
            self.edges.drop(edge_id)
            ids = sorted(members)
            self.orphans.update((a, b) for i, a in enumerate(ids) for b in ids[i + 1 :])
