"""Session methods: the shared L3 knowledge graph and the L1 read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memhop.api import _args, _mapping_graph
from memhop.api.results_graph import (
    HypergraphNode,
    HypergraphSlot,
    L3Graph,
    L3ImportResult,
    L3Subgraph,
    SceneNodeView,
)
from memhop.api.types import GraphEdgeKind, L3ImportItem, L3ImportMode
from memhop.config import MAX_SHORT_TEXT_BYTES, MAX_TITLE_BYTES
from memhop.errors import InvalidQueryError
from memhop.root import graphs
from memhop.root.graphs import GraphView
from memhop.root.ops import AgentOps


def _layer_items(items: object) -> list[graphs.ImportItem]:
    """The batch as the planner's items; a value of the wrong shape is InvalidQueryError."""
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Sequence):
        msg = f"items must be a list of import items, got {type(items).__name__}"
        raise InvalidQueryError(msg)
    out = []
    for value in items:
        item = _args.import_item(value)
        related = tuple(
            graphs.Relation(tuple(r.titles), _args.enum_code(r.kind, GraphEdgeKind, "related kind"))
            for r in item.related
        )
        keywords = tuple(item.keywords)
        out.append(
            graphs.ImportItem(
                title=_args.text(item.title, "title", MAX_TITLE_BYTES),
                domain=_args.text(item.domain, "domain", MAX_TITLE_BYTES),
                node_type=_args.text(item.node_type, "node_type", MAX_TITLE_BYTES),
                content=_args.text(item.content, "content"),
                keywords=keywords,
                source_ref=_args.text(item.source_ref, "source_ref", MAX_SHORT_TEXT_BYTES),
                related=related,
            )
        )
    return out


def _graph(view: GraphView) -> L3Graph:
    return _mapping_graph.l3_graph(view.slot, view.nodes, view.edges)


class GraphFace:
    """Mixed into ``Session``; every method maps arguments in and results out.

    L3 is one pool for every domain of the file (a second file has its own):
    any domain reads and writes every graph. Malformed ids are InvalidQueryError.
    """

    _ops: AgentOps

    def list_l1(self) -> list[SceneNodeView]:
        """The domain's L1 scene nodes by id; Dream writes them, so [] before any Dream."""
        return [_mapping_graph.scene_node_view(n) for n in self._ops.run(graphs.list_l1)]

    def get_l3(self, id: str) -> L3Graph:
        """A graph with its nodes and edges; NotFoundError for an unknown id or a node's id."""
        return _graph(graphs.get_l3(self._ops, _args.an_id(id, "graph id")))

    def list_l3(self) -> list[HypergraphSlot]:
        """Every graph of the file, by id."""
        return [_mapping_graph.hypergraph_slot(s) for s in graphs.list_l3(self._ops)]

    def import_l3(
        self, items: Sequence[L3ImportItem | Mapping[str, Any]], mode: L3ImportMode | str
    ) -> L3ImportResult:
        """Import nodes into the graphs their ``domain`` labels route to (created on first use).

        ``mode`` decides an existing title: skip, merge or overwrite. A bad mode
        or any item without title or domain refuses the whole batch; after
        that, an item or relation that cannot be placed is one line in ``errors``.
        """
        checked = _args.import_mode(mode)
        plan = graphs.import_l3(self._ops, _layer_items(items), str(checked))
        return _mapping_graph.l3_import_result(
            graph_ids=plan.graph_ids,
            created_ids=plan.created_ids,
            updated_ids=plan.updated_ids,
            skipped_count=plan.skipped_count,
            edges_created=plan.edges_created,
            errors=plan.errors,
        )

    def query_l3_nodes(
        self,
        graph_id: str,
        *,
        ids: Sequence[str] = (),
        keyword: str = "",
        node_type: str = "",
        limit: int = 0,
    ) -> list[HypergraphNode]:
        """A graph's nodes meeting every given condition, by id; ``limit`` > 0 keeps the first.

        ``keyword`` matches title, content or a keyword, case-insensitively.
        An unknown graph answers [].
        """
        gid = _args.an_id(graph_id, "graph_id")
        wanted = _args.node_id_list(ids, "ids")
        keyword, node_type = _args.text(keyword, "keyword"), _args.text(node_type, "node_type")
        found = graphs.query_l3_nodes(
            self._ops, gid, wanted, keyword, node_type, _args.integer(limit, "limit")
        )
        return [_mapping_graph.hypergraph_node(n) for n in found]

    def query_l3_subgraph(
        self,
        graph_id: str,
        start_node_id: str,
        max_depth: int = 0,
        edge_kinds: Sequence[GraphEdgeKind | int | str] = (),
    ) -> L3Subgraph:
        """The nodes within ``max_depth`` hops of a start node (<= 0: no bound) and their edges.

        ``edge_kinds`` (empty = all; members, numbers or names such as "causal")
        decides which hops exist; an edge with a member left out is left out
        whole. InvalidQueryError for an undefined kind or a start node of
        another graph; NotFoundError for a missing start.
        """
        gid = _args.an_id(graph_id, "graph_id")
        start = _args.an_id(start_node_id, "start_node_id")
        kinds = _args.enum_code_list(edge_kinds, GraphEdgeKind, "edge_kinds")
        depth = _args.integer(max_depth, "max_depth")
        found = graphs.query_l3_subgraph(self._ops, gid, start, depth, kinds)
        return _mapping_graph.l3_subgraph(found.nodes, found.edges)

    def update_l3(self, id: str, name: str) -> L3Graph:
        """Rename a graph (admin); its id stays and both labels keep routing imports.

        InvalidQueryError for a blank name or one another graph carries;
        NotFoundError for an unknown id. The same name writes nothing.
        """
        gid = _args.an_id(id, "graph id")
        return _graph(graphs.update_l3(self._ops, gid, _args.text(name, "name", MAX_TITLE_BYTES)))

    def delete_l3(self, id: str) -> None:
        """Delete a graph with its nodes and edges (admin), then unanchor it in every domain.

        Scenes survive without the anchor. NotFoundError for an unknown id
        (deleting twice included).
        """
        graphs.delete_l3(self._ops, _args.an_id(id, "graph id"))
