"""A model's tool arguments, read into the values the Session methods take.

Guided by the same signature reading as the schemas (``schema.params``): JSON
text is parsed, ``null`` means the default, ``{key, value}`` pairs become a
mapping. Anything else passes through unchanged for the method to judge (an
enum word included: the Session takes the names), so a wrong type or word is
refused by the method's own check, naming the argument. Every refusal here is an
InvalidQueryError naming the tool and the argument at fault.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Mapping
from typing import Any

from memhop.api import ProfileInput
from memhop.api.types import Shape
from memhop.errors import InvalidQueryError
from memhop.tools import schema
from memhop.tools.table import HIDDEN, Tool

__all__ = ["arguments", "decode"]


def arguments(tool: Tool, raw: object) -> dict[str, Any]:
    """The call's arguments as a dict: JSON object text, a mapping, or nothing."""
    if raw is None or raw == "":
        return {}
    decoded: object = raw
    if isinstance(raw, str):
        try:
            decoded = json.loads(raw)
        except RecursionError:
            msg = f"{tool.name}: the arguments nest too deeply to read"
            raise InvalidQueryError(msg) from None
        except ValueError as exc:
            msg = f"{tool.name}: the arguments are not JSON ({exc})"
            raise InvalidQueryError(msg) from None
    if not isinstance(decoded, Mapping):
        msg = f"{tool.name}: the arguments must be a JSON object, not {type(decoded).__name__}"
        raise InvalidQueryError(msg)
    for key in decoded:
        if not isinstance(key, str):
            msg = f"{tool.name}: argument names must be strings, not {type(key).__name__}"
            raise InvalidQueryError(msg)
    return dict(decoded)


def decode(tool: Tool, raw: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments for ``tool``'s method; nulls dropped, words read."""
    wanted = {p.name: p for p in schema.params(tool)}
    hidden = HIDDEN.get(tool.name, frozenset())
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key in hidden:
            msg = f"{tool.name}: {key} is filled by the host, not the model"
            raise InvalidQueryError(msg)
        param = wanted.get(key)
        if param is None:
            takes = ", ".join(wanted) or "no arguments"
            msg = f"{tool.name}: unknown argument {key!r} (it takes {takes})"
            raise InvalidQueryError(msg)
        if value is None and not param.required:
            continue
        out[key] = _value(value, param.hint, key)
    missing = [name for name, p in wanted.items() if p.required and name not in raw]
    if missing:
        msg = f"{tool.name}: missing argument {', '.join(missing)}"
        raise InvalidQueryError(msg)
    return out


def _value(value: Any, hint: Any, what: str) -> Any:
    """``value`` read as ``hint`` where it has the expected shape; else unchanged."""
    if typing.get_origin(hint) is not None and typing.get_args(hint):
        if schema.is_union(hint):
            options = schema.precise_options(hint)
            return _value(value, options[0], what) if len(options) == 1 else value
        if schema.is_sequence(hint) and isinstance(value, list | tuple):
            (item,) = typing.get_args(hint)
            return [_value(v, item, f"{what} entry") for v in value]
        if schema.is_mapping(hint) and isinstance(value, list | tuple):
            return _pairs(value, what)
        return value
    whole = isinstance(hint, type) and (issubclass(hint, Shape) or hint is ProfileInput)
    if whole and isinstance(value, Mapping):
        fields = {p.name: p.hint for p in schema.shape_params(hint)}
        return {
            k: _value(v, fields[k], k) if k in fields else v
            for k, v in value.items()
            if v is not None
        }
    return value


def _pairs(value: list[Any] | tuple[Any, ...], what: str) -> dict[Any, Any]:
    """``[{key, value}, ...]`` as a mapping; a key given twice is refused."""
    out: dict[Any, Any] = {}
    for pair in value:
        if not isinstance(pair, Mapping) or set(pair) != {"key", "value"}:
            msg = f"{what} must be a list of {{key, value}} objects"
            raise InvalidQueryError(msg)
        key = pair["key"]
        if not isinstance(key, str):
            msg = f"{what} keys must be strings, not {type(key).__name__}"
            raise InvalidQueryError(msg)
        if key in out:
            msg = f"{what} lists the key {key!r} twice"
            raise InvalidQueryError(msg)
        out[key] = pair["value"]
    return out
