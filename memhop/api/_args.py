"""Turning the host's arguments into internal values, refusing what cannot be one.

A model's tool call lands here as JSON: a bare string where a list belongs,
a float where an integer belongs, or ``true`` for a number are refused with
InvalidQueryError naming the argument, never passed on to fail deeper.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import IntEnum
from typing import Any

import memhop.records as rec
from memhop import ids
from memhop.api.types import (
    ArchiveKind,
    ArchiveRole,
    ContentType,
    L3ImportItem,
    L3ImportMode,
    L3Relation,
    PlanStatus,
)
from memhop.config import MAX_NAME_BYTES, MAX_TEXT_BYTES, valid_text
from memhop.errors import InvalidQueryError, NotFoundError
from memhop.records import PlanStatusCode
from memhop.root.content import ContentInput

_ZERO = "0" * 16
_STATUS_CODES: dict[str, PlanStatusCode] = {
    s.value: PlanStatusCode(i) for i, s in enumerate(PlanStatus)
}


# A text argument: a str of valid Unicode within its cap (``memhop.config.MAX_*_BYTES``):
# the config's check itself, called once (a wrapper would be a second call a text).
text = valid_text


def integer(value: object, what: str) -> int:
    """An int (an IntEnum member is one); bool and float are refused."""
    if type(value) is int:  # the usual argument: no conversion, no other check
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"{what} must be an integer, not {type(value).__name__}"
        raise InvalidQueryError(msg)
    return int(value)


# The library's own role: every write refuses it, so no refusal offers it. Held as
# (class, name): IntEnum members of different classes compare equal by number.
_NOT_OFFERED = frozenset({(ArchiveRole, "DREAM")})


def enum_words(enum: type[IntEnum]) -> list[str]:
    """The names a caller may give for ``enum``, lower case (refusals and schemas list them)."""
    return [m.name.lower() for m in enum if (enum, m.name) not in _NOT_OFFERED]


def enum_code(value: object, enum: type[IntEnum], what: str) -> int:
    """An IntEnum argument: a member, its number, or its name in any case ("event", "EVENT").

    A name no member has, or a value of another type, is refused listing the
    valid names; a number passes on to the operation's own check (upstream's
    "undefined ..." refusals).
    """
    if type(value) is enum or type(value) is int:  # the usual argument, as it is
        return value
    if isinstance(value, str):
        word = value.strip().lower()
        for member in enum:
            if member.name.lower() == word:
                return member
        msg = f"{what} must be one of {', '.join(enum_words(enum))}, got {value!r}"
        raise InvalidQueryError(msg)
    if isinstance(value, bool) or not isinstance(value, int):
        words = ", ".join(enum_words(enum))
        msg = f"{what} must be one of {words} (or its number), not {type(value).__name__}"
        raise InvalidQueryError(msg)
    return value


def search_args(scene_id: object, l3_id: object, new_scene: object) -> tuple[int, int, bool]:
    """``search``'s arguments, ``scene_ref``, ``id_or_unset`` and ``flag`` of each, in one
    call: the usual call (no scene or anchor named) passes one test."""
    if type(scene_id) is str and type(l3_id) is str and not (scene_id or l3_id):
        return 0, 0, flag(new_scene, "new_scene")
    return scene_ref(scene_id), id_or_unset(l3_id, "l3_id"), flag(new_scene, "new_scene")


def update_args(
    input: object, output: object, outcome: object, created_at: object
) -> tuple[str, str, str, int]:
    """``update``'s arguments, ``text`` (uncapped: the record budget caps the lines) and
    ``integer``, in one call: ASCII strs and an int pass one test."""
    if (
        type(input) is str
        and type(output) is str
        and type(outcome) is str
        and input.isascii()
        and output.isascii()
        and outcome.isascii()
        and type(created_at) is int
    ):
        return input, output, outcome, created_at
    return (
        text(input, "input", None),
        text(output, "output", None),
        text(outcome, "outcome", None),
        integer(created_at, "created_at"),
    )


def archive_input(
    content: object,
    created_at: object,
    kind: object,
    seq: object,
    content_type: object,
    role: object,
    event_type: object,
    node_seq: object,
) -> ContentInput:
    """``append_archive``'s arguments as one input: each taken by ``text``, ``integer`` or
    ``enum_code`` (the content uncapped here: the record budget caps it).

    The usual call (ASCII strs, ints or members) passes one test, in one call, where the
    eight checks were eight calls every event; anything else takes them one by one, in
    order, so a refusal names the first argument that fails, as ever.
    """
    if (
        type(content) is str
        and type(event_type) is str
        and content.isascii()
        and event_type.isascii()
        and len(event_type) <= MAX_NAME_BYTES
        and type(created_at) is int
        and type(seq) is int
        and type(node_seq) is int
        and (type(kind) is int or type(kind) is ArchiveKind)
        and (type(content_type) is int or type(content_type) is ContentType)
        and (type(role) is int or type(role) is ArchiveRole)
    ):
        return ContentInput(
            content, created_at, kind, seq, content_type, role, event_type, node_seq
        )
    return ContentInput(
        content=text(content, "content", None),
        created_at=integer(created_at, "created_at"),
        kind=enum_code(kind, ArchiveKind, "kind"),
        seq=integer(seq, "seq"),
        content_type=enum_code(content_type, ContentType, "content_type"),
        role=enum_code(role, ArchiveRole, "role"),
        event_type=text(event_type, "event_type", MAX_NAME_BYTES),
        node_seq=integer(node_seq, "node_seq"),
    )


def optional_enum_code(value: object, enum: type[IntEnum], what: str) -> int | None:
    return None if value is None else enum_code(value, enum, what)


def enum_code_list(value: object, enum: type[IntEnum], what: str) -> tuple[int, ...]:
    return _list_of(value, what, lambda item, where: enum_code(item, enum, where))


def flag(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        msg = f"{what} must be true or false, not {type(value).__name__}"
        raise InvalidQueryError(msg)
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
        raise InvalidQueryError(msg)
    return ids.parse_id(raw, what)


def _list_of(value: object, what: str, item: Callable[[object, str], int]) -> tuple[int, ...]:
    """A JSON list whose every entry ``item`` accepts (a bare string is not a list)."""
    if isinstance(value, str) or not isinstance(value, Sequence):
        msg = f"{what} must be a list"
        raise InvalidQueryError(msg)
    return tuple(item(v, f"{what} entry") for v in value)


def id_list(value: object, what: str) -> tuple[int, ...]:
    return _list_of(value, what, topic_id)


def an_id(value: object, what: str) -> int:
    """A required 16-hex id: "" and the reserved zero id are refused."""
    return ids.parse_id(text(value, what), what)


def uint32(value: object, what: str) -> int:
    """An integer in 0..2**32-1 (plan ordinals are uint32)."""
    number = integer(value, what)
    if not 0 <= number < 2**32:
        msg = f"{what} {number} is out of range: want 0..{2**32 - 1}"
        raise InvalidQueryError(msg)
    return number


def node_id_list(value: object, what: str) -> tuple[int, ...]:
    """A list of 16-hex ids (the reserved zero id refused)."""
    return _list_of(value, what, an_id)


def scene_id(value: object, what: str = "scene_id") -> int:
    """A named scene id: 16 hex, "" refused (it never means "the current scene" here).

    The zero id is well formed but names no scene: it parses to 0, which the
    root answers NotFoundError after the argument checks, as upstream does.
    """
    raw = text(value, what)
    return 0 if raw == _ZERO else ids.parse_id(raw, what)


def scene_id_list(value: object, what: str) -> tuple[int, ...]:
    return _list_of(value, what, scene_id)


def optional_text(value: object, what: str, max_bytes: int = MAX_TEXT_BYTES) -> str | None:
    return None if value is None else text(value, what, max_bytes)


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


# ---- inputs ---------------------------------------------------------------------------------


def plan_status_code(status: PlanStatus | str) -> PlanStatusCode:
    """The stored code of a status word; anything but the three words is refused."""
    code = _STATUS_CODES.get(status) if isinstance(status, str) else None
    if code is None:
        msg = f"plan status must be in_progress, done or failed, got {status!r}"
        raise InvalidQueryError(msg)
    return code


def import_mode(mode: L3ImportMode | str) -> L3ImportMode:
    """The import mode of ``mode``; the message lists the valid words and the one received."""
    try:
        return L3ImportMode(mode)
    except ValueError:
        msg = f"import mode must be skip, merge or overwrite, got {mode!r}"
        raise InvalidQueryError(msg) from None


_ITEM_STRINGS = ("title", "domain", "node_type", "content", "source_ref")


def _relation(value: L3Relation | Mapping[str, Any], where: str) -> L3Relation:
    if isinstance(value, L3Relation):
        return value
    if not isinstance(value, Mapping):
        msg = f"{where} must be an object, got {type(value).__name__}"
        raise InvalidQueryError(msg)
    for key in value:
        if key not in ("titles", "kind"):
            msg = f"{where} has an unknown key {key!r}"
            raise InvalidQueryError(msg)
    kind = value.get("kind")
    code = 0 if kind is None else enum_code(kind, rec.GraphEdgeKind, f"{where}.kind")
    titles = value.get("titles")
    return L3Relation(
        titles=() if titles is None else titles, kind=rec.known(rec.GraphEdgeKind, code)
    )


def import_item(value: L3ImportItem | Mapping[str, Any]) -> L3ImportItem:
    """An import item, or one read from a dict with its JSON keys.

    A missing or null key takes its zero value, as Go's decoder leaves it (a
    blank title or domain is then refused by the import itself). An unknown
    key or a value of the wrong type raises InvalidQueryError naming it.
    """
    if isinstance(value, L3ImportItem):
        return value
    if not isinstance(value, Mapping):
        msg = f"an import item must be an L3ImportItem or a dict, got {type(value).__name__}"
        raise InvalidQueryError(msg)
    known_keys = (*_ITEM_STRINGS, "keywords", "related")
    for key in value:
        if key not in known_keys:
            msg = f"import item has an unknown key {key!r}"
            raise InvalidQueryError(msg)
    strings: dict[str, str] = {}
    for key in _ITEM_STRINGS:
        text = value.get(key)
        if text is None:
            text = ""
        elif not isinstance(text, str):
            msg = f"import item key {key!r} must be a string, got {type(text).__name__}"
            raise InvalidQueryError(msg)
        strings[key] = text
    related = value.get("related")
    if related is None:
        related = ()
    elif isinstance(related, str) or not isinstance(related, list | tuple):
        msg = f"import item key 'related' must be a list, got {type(related).__name__}"
        raise InvalidQueryError(msg)
    keywords = value.get("keywords")
    return L3ImportItem(
        **strings,
        keywords=() if keywords is None else keywords,
        related=tuple(_relation(r, f"related[{i}]") for i, r in enumerate(related)),
    )


def agent_id(value: object) -> int:
    """Parse an agent id; the zero id names the primary and is allowed here."""
    if not isinstance(value, str):
        msg = f"invalid agent id {value!r}: want exactly 16 hex chars"
        raise InvalidQueryError(msg)
    if value == "0" * 16:
        return ids.PRIMARY_AGENT_ID
    return ids.parse_id(value, "agent id")
