"""NodeTable: a domain's scene nodes by id, each held as one tuple of its fields.

Responsibility: hold Dream's copies of the nodes so that the interpreter's
collector does not walk them, and hand each back as the ``SceneNode`` it was.

Why: a ``SceneNode`` is an object the collector tracks, with a dozen values of
its own (ints and floats past the small ones are objects) that every full
collection visits; at 10^5 turns the domain's 8,845 nodes added 7 ms to each.
An exact tuple of those values leaves the collector's view at the first
collection it survives (the tuples of ids inside it first), so the table
costs a full collection nothing but its dict.

Contract: a ``MutableMapping[int, SceneNode]``; a read builds the record anew
(equal to the one put, about a microsecond); ``scene_of``, ``edge_ids_of`` and
``digest_of`` read fields without building it. Not thread-safe (as its owner).
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Iterator, KeysView, MutableMapping
from typing import TypeAlias, cast

from memhop.records import SceneNode

__all__ = ["NodeTable"]

# A node's row: the record's fields in the record's order (taken from the record class,
# so a field added there is held here too).
_FIELDS = tuple(f.name for f in dataclasses.fields(SceneNode))
_Row: TypeAlias = tuple[object, ...]
_row: Callable[[SceneNode], _Row] = operator.attrgetter(*_FIELDS)
_ID, _SCENE, _TOPICS, _IMPORTANCE, _EDGES = map(
    _FIELDS.index, ("id_hash", "scene_id", "topic_ids", "importance", "edge_ids")
)

_new = object.__new__
_set = object.__setattr__


def _node(row: _Row) -> SceneNode:
    # Field by field past the frozen dataclass's __init__ (which checks nothing more).
    node = _new(SceneNode)
    for name, value in zip(_FIELDS, row, strict=True):
        _set(node, name, value)
    return node


class NodeTable(MutableMapping[int, SceneNode]):
    """Scene nodes by id, held as tuples the collector leaves alone."""

    __slots__ = ("_rows",)

    def __init__(self) -> None:
        self._rows: dict[int, _Row] = {}

    def __getitem__(self, node_id: int) -> SceneNode:
        return _node(self._rows[node_id])

    def __setitem__(self, node_id: int, node: SceneNode) -> None:
        self._rows[node_id] = _row(node)

    def __delitem__(self, node_id: int) -> None:
        del self._rows[node_id]

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._rows

    def __iter__(self) -> Iterator[int]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def keys(self) -> KeysView[int]:
        return self._rows.keys()

    def scene_of(self, node_id: int) -> int:
        """The node's scene id (KeyError: no such node), no record built."""
        return cast(int, self._rows[node_id][_SCENE])

    def digest_of(self, node_id: int) -> tuple[int, float, tuple[int, ...]]:
        """The node's (id, importance, topic ids) (KeyError: no such node), no record built."""
        row = self._rows[node_id]
        return cast(tuple[int, float, tuple[int, ...]], (row[_ID], row[_IMPORTANCE], row[_TOPICS]))

    def edge_ids_of(self, node_id: int) -> tuple[int, ...]:
        """The node's edge ids (KeyError: no such node), no record built."""
        return cast(tuple[int, ...], self._rows[node_id][_EDGES])
