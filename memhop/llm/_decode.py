"""Decode a model's JSON reply the way Go's ``encoding/json`` fills a struct.

Finding the reply is tolerant, reading it is strict. ``first_object`` takes the
first JSON object out of the reply: prose or a code fence before it and anything
after it are ignored (a model that wraps or annotates its JSON still answered).
The object itself is read with Go's leniencies and strictnesses: keys match field
names case-insensitively (the last matching key wins), unknown keys are ignored,
``null`` is the zero value, and a value of the wrong JSON type is an error.
Numbers keep their source text (``GoNumber``) so an id field can be read the way
Go reads a raw message, and non-finite floats (which Go cannot decode) are
refused. ``is_placeholder`` names a template's stand-in ("...", "<id>", ""), which
a caller must never store as content.
"""

from __future__ import annotations

import json
import math

from memhop.errors import LLMError

__all__ = [
    "GoNumber",
    "as_float",
    "as_list",
    "as_object",
    "as_str",
    "field",
    "first_object",
    "is_placeholder",
]

_MAX_STARTS = 64
"""How many ``{`` a reply may open before its JSON object (bounds the work on a long reply)."""
_FILLER = "…. \t\n_-*"


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


_DECODER = json.JSONDecoder(
    object_pairs_hook=_object,
    parse_int=GoNumber,
    parse_float=GoNumber,
    parse_constant=_no_constant,
)


def first_object(text: str, what: str) -> dict[str, object]:
    """The first JSON object in ``text``, or ``LLMError`` naming ``what`` (the reply being read).

    Each ``{`` outside a span already tried is tried in turn until one starts a
    complete object; what precedes it and what follows it are ignored. A ``{`` that
    starts no JSON skips its balanced span (``{like this}`` in prose); one that never
    closes ends the search, so an object nested in a broken reply is never taken for
    the answer.
    """
    start = text.find("{")
    error: Exception | None = None
    for _ in range(_MAX_STARTS):
        if start < 0:
            break
        try:
            value, _end = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError) as exc:
            error = error or exc
            end = _span_end(text, start)
            if end is None:
                break
        else:
            if isinstance(value, dict):
                return value
            end = start + 1
        start = text.find("{", end)
    detail = f": {error}" if error is not None else ""
    msg = f"{what}: reply holds no JSON object{detail}"
    raise LLMError(msg)


def _span_end(text: str, start: int) -> int | None:
    """Just past the bracket that balances the one at ``start`` (strings respected), or None."""
    depth, in_string, escaped = 0, False, False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def is_placeholder(text: str) -> bool:
    """True for a template's stand-in: empty, only dots or dashes, or ``<like this>``."""
    stripped = text.strip()
    return not stripped.strip(_FILLER) or (stripped.startswith("<") and stripped.endswith(">"))


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
