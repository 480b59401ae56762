"""Results as compact JSON a model reads well.

A result shape becomes an object of its non-empty fields (no ``null``, ``""``
or empty collection noise; numbers and booleans are kept, zero included),
with enum numbers as the words the schemas offer (``"role": "user"``, read
from the field's annotation, so a plain stored number is named too) and ids
as the 16-hex strings the library returns. Provenance fields a host's
``to_dict()`` leaves out (``origin``, ``derived_from``, ``grounding``) are
kept: a model must know a Dream summary is not something that was said.
"""

from __future__ import annotations

import functools
import json
import typing
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from enum import IntEnum, StrEnum
from typing import Any

__all__ = ["encode", "render"]


def _empty(value: object) -> bool:
    return value is None or (isinstance(value, str | list | dict) and not value)


@functools.cache
def _enum_fields(cls: type) -> dict[str, type[IntEnum]]:
    """The fields of a result class annotated with an IntEnum (``ArchiveKind | int``)."""
    out = {}
    for name, hint in typing.get_type_hints(cls).items():
        options = typing.get_args(hint) or (hint,)
        enums = [o for o in options if isinstance(o, type) and issubclass(o, IntEnum)]
        if enums:
            out[name] = enums[0]
    return out


def _word(enum: type[IntEnum], value: Any) -> Any:
    """A stored number as its member's word; a number with no member stays a number."""
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return enum(value).name.lower()
        except ValueError:
            return value
    return value


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        enums = _enum_fields(type(value))
        pairs = (
            (f.name, _word(enums[f.name], v) if f.name in enums else _plain(v))
            for f in fields(value)
            for v in (getattr(value, f.name),)
        )
        return {name: item for name, item in pairs if not _empty(item)}
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, IntEnum):
        return value.name.lower()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def render(result: Any) -> dict[str, Any]:
    """A method's return value as the tool result object.

    One result is its object, a list is ``{"items": [...]}``, a slot or step
    number is ``{"seq": n}``, and a call that returns nothing is ``{"ok": true}``.
    """
    if isinstance(result, list | tuple):
        return {"items": [_plain(r) for r in result]}
    if isinstance(result, int) and not isinstance(result, bool):
        return {"seq": result}
    if result is None:
        return {"ok": True}
    plain = _plain(result)
    return plain if isinstance(plain, dict) else {"value": plain}


def encode(result: Mapping[str, Any]) -> str:
    """A tool result as compact JSON text (UTF-8 kept as is)."""
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))
