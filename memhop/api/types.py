"""Public enums, the two inputs passed whole, and the ``to_dict`` machinery of every shape.

Contract:
- ``ArchiveKind``, ``ArchiveRole``, ``ContentType`` and ``GraphEdgeKind`` are
  ``IntEnum``s with upstream's numbers (the very classes the records decode
  into, so a stored value is already a public member); ``PlanStatus`` and
  ``L3ImportMode`` are ``StrEnum``s with upstream's words (api.md §14).
- Every public shape derives from ``Shape``: ``to_dict()`` gives upstream's
  JSON object: keys in Go field order, ``omitempty`` keys (the class's
  ``_OMITEMPTY``) absent while empty, collections ``[]``/``{}`` and never
  ``None``, IntEnums as numbers, StrEnums as words, nested shapes as dicts.
  Fields named in ``_OFF_WIRE`` are Python-side only and never written.
- ``L3Relation`` and ``L3ImportItem`` hold their sequences as tuples; a bare
  string where a list of strings belongs is refused (InvalidQueryError).

If you change this: tests/api/test_shapes.py pins every key of every shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from enum import IntEnum, StrEnum
from typing import Any, ClassVar

from memhop.config import MAX_TITLE_BYTES, valid_text
from memhop.errors import InvalidQueryError
from memhop.records.codes import ArchiveKind, ArchiveRole, ContentType, GraphEdgeKind

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


# ---- the to_dict machinery ------------------------------------------------------------

_WIRE_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _wire(value: object) -> Any:
    """Return ``value`` as upstream's JSON would carry it (before encoding)."""
    if isinstance(value, Shape):
        return value.to_dict()
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, IntEnum):
        return int(value)
    if isinstance(value, tuple | list):
        return [_wire(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _wire(item) for key, item in value.items()}
    return value


def _is_empty(value: object) -> bool:
    """Go's ``omitempty`` test: nil, false, 0, "" and empty collections."""
    if value is None or value is False:
        return True
    if isinstance(value, int | float):
        return value == 0
    if isinstance(value, str | list | dict):
        return len(value) == 0
    return False


class Shape:
    """Base of every public shape: ``to_dict()`` gives upstream's JSON object.

    Subclasses are dataclasses; ``_OMITEMPTY`` names their ``omitempty`` keys
    and ``_OFF_WIRE`` the fields upstream's JSON does not carry.
    """

    __slots__ = ()

    _OMITEMPTY: ClassVar[frozenset[str]] = frozenset()
    _OFF_WIRE: ClassVar[frozenset[str]] = frozenset()

    def to_dict(self) -> dict[str, Any]:
        """Return upstream's JSON object for this value, as fresh Python containers."""
        cls = type(self)
        keys = _WIRE_FIELDS.get(cls)
        if keys is None:
            keys = tuple(
                (f.name, f.name in cls._OMITEMPTY)
                for f in fields(self)  # type: ignore[arg-type]
                if f.name not in cls._OFF_WIRE
            )
            _WIRE_FIELDS[cls] = keys
        out: dict[str, Any] = {}
        for name, omitempty in keys:
            value = _wire(getattr(self, name))
            if not (omitempty and _is_empty(value)):
                out[name] = value
        return out


class Result(Shape):
    """Base of every result: a frozen, slotted, keyword-only dataclass."""

    __slots__ = ()


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
