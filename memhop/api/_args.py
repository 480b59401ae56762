"""Turning the host's arguments into internal values, refusing what cannot be one.

A model's tool call lands here as JSON: a bare string where a list belongs,
a float where an integer belongs, or ``true`` for a number are refused with
InvalidQueryError naming the argument, never passed on to fail deeper.
"""

from __future__ import annotations

from collections.abc import Sequence

from memhop import ids
from memhop.errors import InvalidQueryError

_ZERO = "0" * 16


def _refuse(msg: str) -> InvalidQueryError:
    return InvalidQueryError(msg)


def text(value: object, what: str) -> str:
    if not isinstance(value, str):
        msg = f"{what} must be a string, not {type(value).__name__}"
        raise _refuse(msg)
    return value


def integer(value: object, what: str) -> int:
    """An int (an IntEnum member is one); bool and float are refused."""
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"{what} must be an integer, not {type(value).__name__}"
        raise _refuse(msg)
    return int(value)


def optional_integer(value: object, what: str) -> int | None:
    return None if value is None else integer(value, what)


def flag(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        msg = f"{what} must be true or false, not {type(value).__name__}"
        raise _refuse(msg)
    return value


def id_or_unset(value: object, what: str) -> int:
    """A 16-hex id, or 0 for "" (unset)."""
    raw = text(value, what)
    return 0 if raw == "" else ids.parse_id(raw, what)


def topic_id(value: object, what: str = "topic id") -> int:
    """A topic id: 16 hex, and never the reserved zero id."""
    raw = text(value, what)
    if raw == _ZERO:
        msg = f"{what} {_ZERO} is reserved"
        raise _refuse(msg)
    return ids.parse_id(raw, what)


def id_list(value: object, what: str) -> tuple[int, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        msg = f"{what} must be a list of ids"
        raise _refuse(msg)
    return tuple(topic_id(v, f"{what} entry") for v in value)
