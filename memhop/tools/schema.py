"""Tool parameters read from the Session signatures, and their strict JSON Schemas.

``params(tool)`` is the one reading of a method's signature: the decoder and
the schema builder both use it. Schemas follow OpenAI's strict function
calling: every object is closed (``additionalProperties: false``) and lists
every property as required; an optional parameter is nullable instead, and
``null`` means "the method's default". Enums are offered by name (``"event"``,
``"user"``); a mapping of strings is a list of ``{key, value}`` pairs, since a
strict object cannot have open keys.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum, IntEnum, StrEnum
from typing import Any

from memhop.api import ProfileInput, Session
from memhop.api._args import enum_words
from memhop.api.types import Shape
from memhop.tools.table import HIDDEN, PARAMS, TABLE, Tool

__all__ = [
    "Param",
    "choices",
    "describe_tool",
    "described_keys",
    "is_mapping",
    "is_sequence",
    "is_union",
    "parameters",
    "params",
    "passed_whole",
    "precise_options",
    "shape_params",
]


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter a model fills: its name, type hint, and whether it has no default."""

    name: str
    hint: Any
    required: bool


@functools.cache  # signatures and hints are fixed once imported; reading them is slow
def _signature_params(target: Any, skip: frozenset[str]) -> tuple[Param, ...]:
    hints = typing.get_type_hints(target)
    out = []
    for name, param in inspect.signature(target).parameters.items():
        if name == "self" or name in skip:
            continue
        out.append(Param(name, hints.get(name, Any), param.default is inspect.Parameter.empty))
    return tuple(out)


def passed_whole(tool: Tool) -> type | None:
    """The input class a method takes whole (``update_l0``'s profile), else None."""
    method = getattr(Session, tool.method)
    own = _signature_params(method, frozenset())
    if len(own) == 1 and own[0].hint is ProfileInput:
        return ProfileInput
    return None


def params(tool: Tool) -> tuple[Param, ...]:
    """The parameters a model fills, in signature order (host-filled ones left out)."""
    whole = passed_whole(tool)
    target = whole if whole is not None else getattr(Session, tool.method)
    return _signature_params(target, HIDDEN.get(tool.name, frozenset()))


def choices(enum: type[IntEnum] | type[StrEnum]) -> list[str]:
    """The words a model may send for ``enum``: IntEnum names as the Session takes them
    (``_args.enum_words``), StrEnum values."""
    if issubclass(enum, StrEnum):
        return [m.value for m in enum]
    return enum_words(enum)


def describe_tool(tool: Tool) -> str:
    """The row's ``when``, then the method contract's first paragraph."""
    doc = inspect.getdoc(getattr(Session, tool.method)) or ""
    first = " ".join(doc.split("\n\n", 1)[0].split()).replace("``", "`")
    return f"{tool.when} {first}".strip()


class _Describer:
    """Looks descriptions up in PARAMS, most specific key first, and notes what it used."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def __call__(self, *keys: str) -> str:
        for key in keys:
            if key in PARAMS:
                self.used.add(key)
                return PARAMS[key]
        msg = f"the tool table has no description for {keys[0]!r}"
        raise LookupError(msg)


def shape_params(shape: type) -> tuple[Param, ...]:
    """The constructor parameters of an input passed whole (a Shape or ProfileInput)."""
    return _signature_params(shape, frozenset())


def is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def precise_options(hint: Any) -> list[Any]:
    """The non-None members of a union, the precise ones (enums, shapes) preferred."""
    options = [a for a in typing.get_args(hint) if a is not type(None)]
    precise = [a for a in options if isinstance(a, type) and issubclass(a, Enum | Shape)]
    return precise or options


def is_sequence(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    return isinstance(origin, type) and issubclass(origin, Sequence) and origin is not str


def is_mapping(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    return isinstance(origin, type) and issubclass(origin, Mapping)


def _type_schema(hint: Any, owner: str, describe: _Describer) -> dict[str, Any]:
    """The schema of one type; ``owner`` names the field for nested descriptions."""
    if is_union(hint):
        options = precise_options(hint)
        if len(options) == 1:
            return _type_schema(options[0], owner, describe)
        return {"anyOf": [_type_schema(a, owner, describe) for a in options]}
    if is_sequence(hint):
        (item,) = typing.get_args(hint) or (Any,)
        return {"type": "array", "items": _type_schema(item, owner, describe)}
    if is_mapping(hint):
        pair = {
            name: {"type": "string", "description": describe(f"{owner}.{name}")}
            for name in ("key", "value")
        }
        return {"type": "array", "items": _closed(pair, list(pair))}
    if isinstance(hint, type):
        if issubclass(hint, IntEnum | StrEnum):
            return {"type": "string", "enum": choices(hint)}
        if issubclass(hint, bool):
            return {"type": "boolean"}
        if issubclass(hint, int):
            return {"type": "integer"}
        if issubclass(hint, str):
            return {"type": "string"}
        if issubclass(hint, Shape) or hint is ProfileInput:
            fields = shape_params(hint)
            props = {
                p.name: _property(p, describe(f"{hint.__name__}.{p.name}"), hint, describe)
                for p in fields
            }
            return _closed(props, list(props))
    msg = f"no JSON Schema for the parameter type {hint!r}"
    raise TypeError(msg)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also takes null (OpenAI strict mode's spelling of "optional")."""
    kind = schema.get("type")
    if isinstance(kind, str) and kind != "object":
        out = {**schema, "type": [kind, "null"]}
        if "enum" in schema:
            out["enum"] = [*schema["enum"], None]
        return out
    return {"anyOf": [schema, {"type": "null"}]}


def _property(param: Param, description: str, owner: type, describe: _Describer) -> Any:
    schema = _type_schema(param.hint, f"{owner.__name__}.{param.name}", describe)
    if not param.required:
        schema = _nullable(schema)
    return {**schema, "description": description}


def _closed(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def parameters(tool: Tool, describe: _Describer | None = None) -> dict[str, Any]:
    """The strict JSON Schema object of ``tool``'s arguments."""
    describe = describe or _Describer()
    whole = passed_whole(tool)
    owner = whole if whole is not None else Session
    props = {}
    for p in params(tool):
        keys = [f"{tool.name}.{p.name}"]
        if whole is not None:
            keys.append(f"{whole.__name__}.{p.name}")
        props[p.name] = _property(p, describe(*keys, p.name), owner, describe)
    return _closed(props, list(props))


def described_keys() -> set[str]:
    """Every PARAMS key the table's schemas use (a test holds PARAMS to exactly these)."""
    describe = _Describer()
    for tool in TABLE:
        parameters(tool, describe)
    return describe.used
