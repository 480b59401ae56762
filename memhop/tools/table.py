"""The tool table: one row per tool, and one description per parameter a model fills.

A tool's description is its row's ``when`` (when a model should call it)
followed by the first paragraph of the Session method's docstring, so the
contract a model reads is the method's own. Parameter descriptions live in
``PARAMS``, keyed by parameter name, with ``"tool.param"`` overriding a shared
entry and ``"Shape.field"`` describing the fields of an input passed whole;
the schema builder refuses to emit a parameter without one (and a test holds
every entry to a parameter that exists), so the table cannot drift from the
methods.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HIDDEN", "PARAMS", "READ_ONLY", "TABLE", "Tool"]


@dataclass(frozen=True, slots=True)
class Tool:
    """One model tool: its name, the Session method it runs, and when to call it."""

    name: str
    method: str
    when: str


TABLE: tuple[Tool, ...] = (
    Tool("memory_search", "search", "Call once at the start of every turn, before recording."),
    Tool("memory_record", "append_archive", "Call for each fact of the turn worth keeping."),
    Tool("memory_close_turn", "update", "Call once at the end of every turn."),
    Tool("memory_dream", "dream", "Call rarely, when idle: it consolidates and can be slow."),
    Tool("memory_profile_get", "get_l0", "Call to read who you are and what the user prefers."),
    Tool("memory_profile_update", "update_l0", "Call only when asked to change the profile."),
    Tool("memory_associations", "list_l1", "Call to see the links Dream found between scenes."),
    Tool("memory_scenes", "list_scenes", "Call to list past scenes (conversations, tasks)."),
    Tool("memory_scene_read", "scene_context", "Call to recall a scene without opening a turn."),
    Tool("memory_graph_get", "get_l3", "Call to read one knowledge graph whole."),
    Tool("memory_graph_list", "list_l3", "Call to find a project's graph id by its name."),
    Tool("memory_graph_import", "import_l3", "Call to store durable knowledge as graph nodes."),
    Tool("memory_nodes_query", "query_l3_nodes", "Call to look up knowledge nodes by word."),
    Tool("memory_subgraph", "query_l3_subgraph", "Call to follow a node's links outwards."),
    Tool("memory_archive_search", "search_l4", "Call to find stored lines and events."),
    Tool("memory_recall", "recall", "Call to find earlier turns by words (memhop's own search)."),
    Tool("plan_add_step", "plan_node_add", "Call during a turn to plan a step."),
    Tool("plan_update_step", "plan_node_update", "Call when a planned step progresses or ends."),
    Tool("plan_state", "plan_state", "Call to see the open turn's plan."),
)
"""Every tool: upstream's 18, in the integration guide's order, and memhop's memory_recall."""

READ_ONLY: frozenset[str] = frozenset(
    {
        "memory_profile_get",
        "memory_associations",
        "memory_scenes",
        "memory_scene_read",
        "memory_graph_get",
        "memory_graph_list",
        "memory_nodes_query",
        "memory_subgraph",
        "memory_archive_search",
        "memory_recall",
        "plan_state",
    }
)
"""The tools that only read: they open no turn and write nothing (MCP's readOnlyHint)."""

HIDDEN: dict[str, frozenset[str]] = {
    "memory_record": frozenset({"created_at", "seq"}),
    "memory_close_turn": frozenset({"created_at"}),
    "memory_dream": frozenset({"cancel"}),
}
"""Parameters the host fills or controls; a model never sees nor sends them.

``created_at`` is the host's clock (``dispatch(..., now_ms=)``); ``seq`` stays 0
(the next free slot); ``cancel`` is a host-side ``threading.Event``.
"""

_HEX = "16 hex digits"
_EDGE_KINDS = "related, causal, part_of, sequence, dependency or custom"
_CONTENT_TYPES = "text, image, video, document, audio, code or other"

PARAMS: dict[str, str] = {
    # ---- shared meanings
    "scene_id": f'A scene id ({_HEX}) from an earlier result; "" means the current scene.',
    "graph_id": f"A knowledge-graph id ({_HEX}) from memory_graph_list or memory_graph_import.",
    "node_type": 'A free label for the kind of node (concept, file, person...); "" for any.',
    "title": "A short name for the step.",
    # ---- memory_search
    "memory_search.new_scene": "true starts a fresh scene (a new conversation or task)"
    " instead of continuing the current one.",
    "memory_search.l3_id": f"With new_scene, anchor the new scene to this graph id ({_HEX}).",
    # ---- memory_record
    "memory_record.content": "The text to keep: what was said, or the event's payload."
    " Events up to 4 KiB, utterances up to 64 KiB of UTF-8; longer text is refused, never cut.",
    "kind": "utterance (something said, the default) or event (a tool call, a result...).",
    "content_type": f"What the content is: {_CONTENT_TYPES}; text by default.",
    "role": "Who said an utterance: user (the default), agent or system.",
    "event_type": "For an event, a short label: tool_call, tool_result, plan_step, ask_user,"
    ' user_reply...; "" for an utterance.',
    "node_seq": "The plan step (its ordinal from plan_add_step) this belongs to; 0 for none.",
    # ---- memory_close_turn
    "input": "What the user asked or said this turn.",
    "output": "What you answered this turn.",
    "outcome": "A short status word for the turn (done, failed, asked_user...), kept verbatim.",
    # ---- memory_dream
    "memory_dream.scene_id": f'Consolidate only this scene ({_HEX}); "" means every scene.',
    # ---- memory_profile_update (a ProfileInput)
    "ProfileInput.name": "Your name; a sub-agent's name is its fixed handle and cannot change.",
    "ProfileInput.role": "Your role, in a few words.",
    "ProfileInput.personality": "A short personality description; leaving it out clears the"
    " distilled one.",
    "ProfileInput.preferences": "The user's preferences as {key, value} pairs; they replace"
    " the stored set whole.",
    "ProfileInput.preferences.key": "The preference's name.",
    "ProfileInput.preferences.value": "The preference's value.",
    # ---- memory_scenes
    "memory_scenes.l3_id": f'Only scenes anchored to this graph id ({_HEX}); "" lists all.',
    # ---- memory_graph_get
    "memory_graph_get.id": f"The graph id ({_HEX}) from memory_graph_list.",
    # ---- memory_graph_import (L3ImportItem, L3Relation)
    "items": "The knowledge nodes to store (at least one).",
    "mode": "What to do with a title the graph already holds: skip, merge or overwrite.",
    "L3ImportItem.title": "The node's title; title and domain together name the node.",
    "L3ImportItem.domain": "The project or area label: it picks the graph (created on first use).",
    "L3ImportItem.node_type": 'A free label for the kind of node (concept, file...); "" for none.',
    "L3ImportItem.content": "The node's text.",
    "L3ImportItem.keywords": "Words to find the node by.",
    "L3ImportItem.source_ref": 'Where the knowledge came from (URL, path, citation); "" for none.',
    "L3ImportItem.related": "Links from this node to other nodes of the same import, by title.",
    "L3Relation.titles": "Titles of the other nodes this link joins with this node.",
    "L3Relation.kind": f"The link's kind: {_EDGE_KINDS}; related by default.",
    # ---- memory_nodes_query
    "memory_nodes_query.ids": f"Only nodes with these ids ({_HEX} each); empty means any.",
    "memory_nodes_query.keyword": "Case-insensitive text matched against title, content and"
    ' keywords; "" matches all.',
    "memory_nodes_query.limit": "Keep at most this many nodes (the first by id); 0 means all.",
    # ---- memory_subgraph
    "start_node_id": f"The node ({_HEX}) to walk from; it must be in graph_id.",
    "max_depth": "How many hops to walk from the start node; 0 or less means no bound.",
    "edge_kinds": f"Which link kinds to walk ({_EDGE_KINDS}); empty means all.",
    # ---- memory_archive_search
    "memory_archive_search.keyword": 'Case-insensitive text the content must contain; ""'
    " matches all.",
    "start": "Only records created at or after this time (milliseconds since the epoch);"
    " 0 means no bound.",
    "end": "Only records created at or before this time (milliseconds since the epoch);"
    " 0 means no bound.",
    "memory_archive_search.ids": f"Only the records with these ids ({_HEX} each).",
    "topic_id": f"Only the records of this turn (a topic id, {_HEX}, such as memory_search's"
    " new_topic_id); rows then come in slot order.",
    "type": f"Only records of this content type: {_CONTENT_TYPES}.",
    "memory_archive_search.kind": "Only records of this kind: utterance or event.",
    "memory_archive_search.node_seq": "Only records attached to this plan step; 0 means any.",
    "memory_archive_search.limit": "Keep only the last this-many records; 0 means all.",
    # ---- memory_recall
    "query": "What to look for, in words (a question or keywords); stop words are ignored.",
    "memory_recall.limit": "How many hits to return, best first: 1 to 100 (5 by default).",
    "memory_recall.scene_id": f'Search only this scene ({_HEX}); "" searches every scene.',
    # ---- plans
    "parent_seq": "The parent step's ordinal (from plan_add_step); 0 makes a new root step.",
    "seq": "The step's ordinal, as plan_add_step returned it.",
    "plan_update_step.title": 'A new title for the step; "" keeps the stored one.',
    "status": "The step's state: in_progress, done or failed.",
    "summary": 'What the step produced; "" keeps the stored summary.',
}
"""Parameter descriptions: ``param``, ``tool.param`` (wins) and ``Shape.field``."""
