"""The base of every public shape: ``to_dict()`` as upstream's JSON, and a notebook view.

Contract: a subclass is a dataclass. ``to_dict()`` gives upstream's JSON
object: keys in field order, ``omitempty`` keys (the class's ``_OMITEMPTY``)
absent while empty, collections ``[]``/``{}`` and never ``None``, IntEnums as
numbers, StrEnums as words, nested shapes as dicts. Fields named in
``_OFF_WIRE`` are Python-side only and never written. ``Result`` adds
``_repr_html_``.

A leaf, as the rest of ``memhop.render``: the records and Dream's report derive
from it, so the face hands out the very values they are, with no copy between.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from enum import IntEnum, StrEnum
from typing import Any, ClassVar

from memhop.render.html import shape_html

__all__ = ["Result", "Shape"]

_WIRE_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}
# Filled once per class, at its first to_dict(), from its own immutable field list: a
# table of the classes, not of any DB's data.


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
    """Base of every public shape: ``to_dict()`` gives upstream's JSON object."""

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
    """Base of every result (a frozen, slotted, keyword-only dataclass): it renders itself
    in a notebook, plain fields as a table and row lists as tables."""

    __slots__ = ()

    def _repr_html_(self) -> str:
        return shape_html(self)
