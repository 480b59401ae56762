"""Decode a model's JSON reply the way Go's ``encoding/json`` fills a struct.

The replies are parsed strictly, with Go's leniencies and strictnesses kept:
object keys match field names case-insensitively (the last matching key wins),
unknown keys are ignored, ``null`` is the zero value, trailing data is an error,
and a value of the wrong JSON type is an error. Numbers keep their source text
(``GoNumber``) so an id field can be read the way Go reads a raw message, and
non-finite floats (which Go cannot decode) are refused.
"""

from __future__ import annotations

import json
import math

from memhop.errors import LLMError

__all__ = ["GoNumber", "as_float", "as_list", "as_object", "as_str", "field", "loads"]


class GoNumber(str):
    """A JSON number kept as its source text."""

    __slots__ = ()


def _object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    # Field names here are all lower case, so folding the keys and letting the
    # last pair win is Go's case-insensitive match with its last-write-wins rule.
    return {key.lower(): value for key, value in pairs}


def _no_constant(name: str) -> object:
    msg = f"invalid JSON literal {name}"
    raise ValueError(msg)


def loads(text: str, what: str) -> object:
    """Decode ``text`` or raise ``LLMError`` naming ``what`` (the reply being read)."""
    try:
        return json.loads(
            text,
            object_pairs_hook=_object,
            parse_int=GoNumber,
            parse_float=GoNumber,
            parse_constant=_no_constant,
        )
    except (ValueError, RecursionError) as exc:
        msg = f"{what}: reply is not valid JSON: {exc}"
        raise LLMError(msg) from exc


def _mismatch(what: str, expected: str, value: object) -> LLMError:
    kind = "number" if isinstance(value, GoNumber) else type(value).__name__
    return LLMError(f"{what}: expected {expected}, got {kind}")


def as_object(value: object, what: str) -> dict[str, object] | None:
    """An object, or ``None`` for JSON ``null``."""
    if value is None or isinstance(value, dict):
        return value
    raise _mismatch(what, "an object", value)


def field(obj: dict[str, object] | None, name: str) -> object:
    """The value of ``name`` in ``obj`` (``None`` when absent, like Go's zero value)."""
    return None if obj is None else obj.get(name)


def as_list(value: object, what: str) -> list[object]:
    if value is None:
        return []
    if isinstance(value, list):
        return value
    raise _mismatch(what, "an array", value)


def as_str(value: object, what: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str) and not isinstance(value, GoNumber):
        return value
    raise _mismatch(what, "a string", value)


def as_float(value: object, what: str) -> float:
    if value is None:
        return 0.0
    if isinstance(value, GoNumber):
        number = float(value)
        if math.isfinite(number):
            return number
        msg = f"{what}: number {value} is out of range"
        raise LLMError(msg)
    raise _mismatch(what, "a number", value)
