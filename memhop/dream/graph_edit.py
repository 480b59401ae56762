"""Edge surgery shared by the L1 stages that take nodes out of the layer (``l1_rebuild``,
``l1_decay``): nodes and edges changed in memory, then written back at once (``commit``)."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable

from memhop.dream import decay
from memhop.dream.env import Held
from memhop.dream.l1cache import L1Cache
from memhop.layers import scene
from memhop.records import SceneEdge, SceneNode

__all__ = ["MIN_EDGE_NODES", "GraphEdit"]

MIN_EDGE_NODES = 2
"""An edge with fewer members goes."""


class GraphEdit:
    """Nodes as cached and the edges read, changed in memory, written back by ``commit``.

    Only what a stage changes is held here, over the cache's nodes (a pass costs what
    it touches, not the domain).
    """

    def __init__(self, held: Held, cache: L1Cache) -> None:
        self.held = held
        self.cache = cache
        self.set_nodes: dict[int, SceneNode] = {}  # nodes set anew (``set_node``)
        self.edges: dict[int, SceneEdge | None] = {}
        self.written_edges: set[int] = set()
        self.dead_nodes: set[int] = set()
        self.dead_edges: dict[int, tuple[int, ...]] = {}  # id -> the members it had
        self.unlinked: dict[int, set[int]] = {}  # node id -> edges to take out of its list

    def edge(self, edge_id: int) -> SceneEdge | None:
        if edge_id not in self.edges:
            found = None
            if edge_id in self.cache.edges:
                found = scene.get_scene_edge_optional(self.held.engine, self.held.agent_id, edge_id)
            self.edges[edge_id] = found
        return self.edges[edge_id]

    def node(self, node_id: int) -> SceneNode | None:
        """The node as this stage has it (None: not a node, or deleted here)."""
        if node_id in self.dead_nodes:
            return None
        found = self.set_nodes.get(node_id)
        return self.cache.nodes.get(node_id) if found is None else found

    def edge_ids(self, node: SceneNode) -> tuple[int, ...]:
        """The node's edges as this stage has them (less those unlinked, not yet committed)."""
        gone = self.unlinked.get(node.id_hash)
        if not gone or gone.isdisjoint(node.edge_ids):
            return node.edge_ids
        return tuple(itertools.filterfalse(gone.__contains__, node.edge_ids))

    def set_node(self, node: SceneNode) -> None:
        self.set_nodes[node.id_hash] = node

    def put_edge(self, edge: SceneEdge) -> None:
        self.edges[edge.id_hash] = edge
        self.written_edges.add(edge.id_hash)

    def unlink_edge(self, edge_id: int, members: Iterable[int]) -> None:
        # Taken out of each member's list at ``commit``, once a member: a node leaving
        # its hundreds of edges would otherwise copy each partner's list once an edge.
        for node_id in members:
            self.unlinked.setdefault(node_id, set()).add(edge_id)

    def delete_edge(self, edge_id: int, members: Iterable[int]) -> None:
        """Delete an edge read by ``edge`` (and unlink it from ``members``)."""
        had = self.edges.get(edge_id)
        self.unlink_edge(edge_id, members)
        self.edges[edge_id] = None
        self.written_edges.discard(edge_id)
        self.dead_edges[edge_id] = () if had is None else had.node_ids

    def detach(self, node_id: int, edge_ids: Iterable[int]) -> int:
        """Take ``node_id`` out of its edges; an edge left under 2 members goes (counted)."""
        removed = 0
        for edge_id in edge_ids:
            edge = self.edge(edge_id)
            if edge is None:
                continue
            members = tuple(m for m in edge.node_ids if m != node_id)
            if len(members) < MIN_EDGE_NODES:
                self.delete_edge(edge_id, members)
                removed += 1
            elif members != edge.node_ids:
                self.put_edge(dataclasses.replace(edge, node_ids=members))
        return removed

    def delete_node(self, node_id: int) -> None:
        self.set_nodes.pop(node_id, None)
        self.dead_nodes.add(node_id)

    def commit(self) -> None:
        for node_id in self.unlinked:
            node = self.node(node_id)
            if node is not None and (kept := self.edge_ids(node)) is not node.edge_ids:
                self.set_node(dataclasses.replace(node, edge_ids=kept))
        cache = self.cache
        nodes = [n for i, n in sorted(self.set_nodes.items()) if cache.nodes.get(i) != n]
        edges = [
            (e, decay.edge_due(e))
            for i, e in sorted(self.edges.items())
            if e is not None and i in self.written_edges
        ]
        cache.put_nodes(nodes)
        cache.put_edges(edges)
        cache.delete_edges(self.dead_edges)
        cache.delete_nodes(sorted(self.dead_nodes))
