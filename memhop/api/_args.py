"""Turning the host's arguments into internal values, refusing what cannot be one.

A model's tool call lands here as JSON: a bare string where a list belongs,
a float where an integer belongs, or ``true`` for a number are refused with
InvalidQueryError naming the argument, never passed on to fail deeper.
"""

from __future__ import annotations

from collections.abc import Sequence

from memhop import ids
from memhop.config import valid_text
from memhop.errors import InvalidQueryError, NotFoundError

_ZERO = "0" * 16


def _refuse(msg: str) -> InvalidQueryError:
    return InvalidQueryError(msg)


def text(value: object, what: str) -> str:
    return valid_text(value, what)


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


def scene_ref(value: object, what: str = "scene_id") -> int:
    """A scene id, or 0 for "" (the current scene).

    The zero id is well formed but never a scene: it is not found, as upstream
    answers, rather than read as "unset".
    """
    raw = text(value, what)
    if raw == _ZERO:
        msg = f"scene {_ZERO} not found"
        raise NotFoundError(msg)
    return id_or_unset(raw, what)


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


def an_id(value: object, what: str) -> int:
    """A required 16-hex id: "" and the reserved zero id are refused."""
    return ids.parse_id(text(value, what), what)


def uint32(value: object, what: str) -> int:
    """An integer in 0..2**32-1 (plan ordinals are uint32)."""
    number = integer(value, what)
    if not 0 <= number < 2**32:
        msg = f"{what} {number} is out of range: want 0..{2**32 - 1}"
        raise _refuse(msg)
    return number


def integer_list(value: object, what: str) -> tuple[int, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        msg = f"{what} must be a list of integers"
        raise _refuse(msg)
    return tuple(integer(v, f"{what} entry") for v in value)


def node_id_list(value: object, what: str) -> tuple[int, ...]:
    """A list of 16-hex ids (the reserved zero id refused)."""
    if isinstance(value, str) or not isinstance(value, Sequence):
        msg = f"{what} must be a list of ids"
        raise _refuse(msg)
    return tuple(an_id(v, f"{what} entry") for v in value)


def scene_id(value: object, what: str = "scene_id") -> int:
    """A named scene id: 16 hex, "" refused (it never means "the current scene" here).

    The zero id is well formed but names no scene: it parses to 0, which the
    root answers NotFoundError after the argument checks, as upstream does.
    """
    raw = text(value, what)
    return 0 if raw == _ZERO else ids.parse_id(raw, what)


def scene_id_list(value: object, what: str) -> tuple[int, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        msg = f"{what} must be a list of ids"
        raise _refuse(msg)
    return tuple(scene_id(v, f"{what} entry") for v in value)


def optional_text(value: object, what: str) -> str | None:
    return None if value is None else text(value, what)


def optional_graph_id(value: object, what: str) -> int | None:
    """A patch's anchor: None keeps, "" is 0 (clear), else a 16-hex graph id.

    The zero id is well formed but names no graph: NotFoundError, as upstream.
    """
    if value is None:
        return None
    if text(value, what) == _ZERO:
        msg = f"graph {_ZERO} not found"
        raise NotFoundError(msg)
    return id_or_unset(value, what)
