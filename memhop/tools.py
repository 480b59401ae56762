"""The task face as model tools: OpenAI tool definitions and a dispatcher.

``schemas()`` returns one OpenAI tool definition per task-face method (the 18
bindings of upstream's guide, same tool names), with JSON Schema parameters
derived from the method signatures. ``dispatch(session, name, arguments)``
decodes a model's call (a dict or a JSON string) into the method call and
returns a JSON-ready dict. The eight admin methods are never tools: a model
that can destroy records needs the host's approval path, not a schema.

Results come back as ``to_dict()`` for one result, ``{"items": [...]}`` for a
list, ``{"seq": n}`` for a slot or step number and ``{"ok": true}`` for a
call that returns nothing; a refusal is ``{"error": {"code", "message"}}``.
Hosts still stamp ``created_at`` (milliseconds) and leave ``seq`` at 0.
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from enum import Enum, IntEnum, StrEnum
from typing import Any

from memhop.api import MemHopError, ProfileInput, Session
from memhop.api.types import Shape
from memhop.errors import InvalidQueryError

__all__ = ["TOOLS", "dispatch", "schemas"]

TOOLS: Mapping[str, str] = {
    "memory_search": "search",
    "memory_record": "append_archive",
    "memory_close_turn": "update",
    "memory_dream": "dream",
    "memory_profile_get": "get_l0",
    "memory_profile_update": "update_l0",
    "memory_associations": "list_l1",
    "memory_scenes": "list_scenes",
    "memory_scene_read": "scene_context",
    "memory_graph_get": "get_l3",
    "memory_graph_list": "list_l3",
    "memory_graph_import": "import_l3",
    "memory_nodes_query": "query_l3_nodes",
    "memory_subgraph": "query_l3_subgraph",
    "memory_archive_search": "search_l4",
    "plan_add_step": "plan_node_add",
    "plan_update_step": "plan_node_update",
    "plan_state": "plan_state",
}
"""Tool name -> Session method, as upstream's guide binds them."""

_HIDDEN = frozenset({"cancel"})  # host-side controls a model never fills


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().splitlines()[0] if doc else ""


def _schema_of(hint: Any) -> dict[str, Any]:
    """A JSON Schema for one annotated parameter type."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        # ``PlanStatus | str`` or ``L3ImportItem | Mapping``: the precise shape is
        # the one to show a model; the loose one is there for Python callers.
        precise = [a for a in options if isinstance(a, type) and issubclass(a, (Enum, Shape))]
        options = precise or options
        if len(options) == 1:
            return _schema_of(options[0])
        return {"anyOf": [_schema_of(a) for a in options]}
    if origin is not None and issubclass(origin, Sequence) and origin is not str:
        (item,) = typing.get_args(hint) or (Any,)
        return {"type": "array", "items": _schema_of(item)}
    if origin is not None and issubclass(origin, Mapping):
        return {"type": "object", "additionalProperties": {"type": "string"}}
    if isinstance(hint, type):
        if issubclass(hint, StrEnum):
            return {"type": "string", "enum": [m.value for m in hint]}
        if issubclass(hint, IntEnum):
            return {"type": "integer", "enum": [int(m) for m in hint]}
        if issubclass(hint, bool):
            return {"type": "boolean"}
        if issubclass(hint, int):
            return {"type": "integer"}
        if issubclass(hint, str):
            return {"type": "string"}
        if issubclass(hint, Shape) or hint is ProfileInput:
            return _object_schema(hint)
    return {}


def _object_schema(cls: type) -> dict[str, Any]:
    """The constructor parameters of an input dataclass, as a JSON Schema object."""
    return _params_schema(inspect.signature(cls).parameters, typing.get_type_hints(cls))


def _params_schema(
    params: Mapping[str, inspect.Parameter], hints: Mapping[str, Any]
) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, param in params.items():
        if name == "self" or name in _HIDDEN:
            continue
        properties[name] = _schema_of(hints.get(name, Any))
        if param.default is inspect.Parameter.empty:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _method_params(method: Callable[..., Any]) -> dict[str, Any]:
    params = dict(inspect.signature(method).parameters)
    hints = typing.get_type_hints(method)
    if list(params) == ["self", "profile"]:  # update_l0 takes the profile's own keys
        return _object_schema(ProfileInput)
    return _params_schema(params, hints)


def schemas() -> list[dict[str, Any]]:
    """One OpenAI tool definition per task-face method, in the guide's order."""
    tools = []
    for tool, method_name in TOOLS.items():
        method = getattr(Session, method_name)
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": tool,
                    "description": _first_line(method.__doc__),
                    "parameters": _method_params(method),
                },
            }
        )
    return tools


def _arguments(arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, str):
        try:
            decoded = json.loads(arguments)
        except ValueError as exc:
            msg = f"tool arguments are not JSON: {exc}"
            raise InvalidQueryError(msg) from exc
    else:
        decoded = arguments
    if not isinstance(decoded, Mapping):
        msg = "tool arguments must be a JSON object"
        raise InvalidQueryError(msg)
    return dict(decoded)


def _call(session: Session, name: str, arguments: dict[str, Any]) -> Any:
    method_name = TOOLS.get(name)
    if method_name is None:
        msg = f"unknown tool {name!r}"
        raise InvalidQueryError(msg)
    method = getattr(session, method_name)
    target = ProfileInput if method_name == "update_l0" else method
    signature = inspect.signature(target)
    hidden = sorted(set(arguments) & _HIDDEN)
    if hidden:
        msg = f"{name}: {', '.join(hidden)} is not for the model"
        raise InvalidQueryError(msg)
    try:
        signature.bind(**arguments)
    except TypeError as exc:
        msg = f"{name}: {exc}"
        raise InvalidQueryError(msg) from exc
    if method_name == "update_l0":
        return method(ProfileInput(**arguments))
    return method(**arguments)


def _jsonable(result: Any) -> dict[str, Any]:
    if isinstance(result, Shape):
        return result.to_dict()
    if isinstance(result, list):
        return {"items": [r.to_dict() if isinstance(r, Shape) else r for r in result]}
    if isinstance(result, int) and not isinstance(result, bool):
        return {"seq": result}
    return {"ok": True}


def dispatch(
    session: Session, name: str, arguments: str | Mapping[str, Any] | None
) -> dict[str, Any]:
    """Run one model tool call; a memhop refusal comes back as ``{"error": ...}``."""
    try:
        return _jsonable(_call(session, name, _arguments(arguments)))
    except MemHopError as exc:
        return {"error": {"code": exc.code, "message": exc.message}}
