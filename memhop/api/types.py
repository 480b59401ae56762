"""Public enums, the two inputs passed whole, and the base every shape derives from.

Contract:
- ``ArchiveKind``, ``ArchiveRole``, ``ContentType`` and ``GraphEdgeKind`` are
  ``IntEnum``s with upstream's numbers (the very classes the records decode
  into, so a stored value is already a public member); ``PlanStatus`` and
  ``L3ImportMode`` are ``StrEnum``s with upstream's words (api.md §14).
- Every public shape derives from ``Shape`` and every result from ``Result``
  (``memhop.render.shape``, re-exported here): ``to_dict()`` gives upstream's
  JSON object, keys in Go field order, ``omitempty`` keys absent while empty.
- ``L3Relation`` and ``L3ImportItem`` hold their sequences as tuples; a bare
  string where a list of strings belongs is refused (InvalidQueryError).

If you change this: tests/api/test_shapes.py pins every key of every shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from memhop.config import MAX_TITLE_BYTES, valid_text
from memhop.errors import InvalidQueryError
from memhop.records.codes import ArchiveKind, ArchiveRole, ContentType, GraphEdgeKind
from memhop.render.shape import Result, Shape

__all__ = [
    "ArchiveKind",
    "ArchiveRole",
    "ContentType",
    "GraphEdgeKind",
    "L3ImportItem",
    "L3ImportMode",
    "L3Relation",
    "PlanStatus",
    "Result",
    "Shape",
]


class PlanStatus(StrEnum):
    """A plan step's state as the host reads and writes it (stored as 0/1/2)."""

    IN_PROGRESS = "in_progress"
    DONE = "done"
    FAILED = "failed"


class L3ImportMode(StrEnum):
    """What ``import_l3`` does with a node the graph already holds."""

    SKIP = "skip"
    MERGE = "merge"
    OVERWRITE = "overwrite"


# ---- inputs passed whole ------------------------------------------------------------------


def _strings(value: object, what: str) -> tuple[str, ...]:
    """Return ``value`` as a tuple of str, each within MAX_TITLE_BYTES; a bare str is refused."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        msg = f"{what} must be a list of strings, got {type(value).__name__}"
        raise InvalidQueryError(msg)
    items = tuple(value)
    for item in items:
        if not isinstance(item, str):
            msg = f"{what} must be a list of strings, got an item of {type(item).__name__}"
            raise InvalidQueryError(msg)
        valid_text(item, f"an item of {what}", MAX_TITLE_BYTES)
    return items


@dataclass(frozen=True, slots=True)
class L3Relation(Shape):
    """One import-time hyperedge over ``{item.title} ∪ titles``; kind 0 is "related"."""

    _OMITEMPTY = frozenset({"kind"})

    titles: Sequence[str]
    kind: GraphEdgeKind | int | str = GraphEdgeKind.RELATED  # a name is read by the import

    def __post_init__(self) -> None:
        object.__setattr__(self, "titles", _strings(self.titles, "titles"))


@dataclass(frozen=True, slots=True)
class L3ImportItem(Shape):
    """One knowledge node of an ``import_l3`` batch, addressed by (domain, title).

    Blank ``title`` or ``domain`` is refused by the import, not here, so the
    whole batch is judged before anything is written.
    """

    _OMITEMPTY = frozenset({"source_ref", "related"})

    title: str
    domain: str
    node_type: str = ""
    content: str = ""
    keywords: Sequence[str] = ()
    source_ref: str = ""
    related: Sequence[L3Relation] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "keywords", _strings(self.keywords, "keywords"))
        related = self.related
        if not isinstance(related, Sequence) or isinstance(related, str):
            msg = f"related must be a list of relations, got {type(related).__name__}"
            raise InvalidQueryError(msg)
        items = tuple(related)
        for item in items:
            if not isinstance(item, L3Relation):
                msg = f"related must hold L3Relation values, got {type(item).__name__}"
                raise InvalidQueryError(msg)
        object.__setattr__(self, "related", items)
