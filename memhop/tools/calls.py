"""Running one model tool call: decode, fill the host's clock, call, render.

A memhop refusal becomes ``{"error": {"code", "message"}}`` for the model to
read; nothing else is caught (a non-memhop exception is a memhop bug).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from memhop.api import MemHopError, Session
from memhop.errors import InvalidQueryError
from memhop.tools import decode, schema
from memhop.tools.render import render
from memhop.tools.table import HIDDEN, TABLE, Tool

__all__ = ["HOST_CLOCK", "dispatch"]

HOST_CLOCK = "created_at"
"""The parameter the host stamps with its clock whenever a method takes it."""

_BY_NAME: dict[str, Tool] = {tool.name: tool for tool in TABLE}


def _tool(name: object) -> Tool:
    if not isinstance(name, str):
        msg = f"a tool name must be a string, not {type(name).__name__}"
        raise InvalidQueryError(msg)
    tool = _BY_NAME.get(name)
    if tool is None:
        msg = f"unknown tool {name[:80]!r}"
        raise InvalidQueryError(msg)
    return tool


def _clock(now_ms: object) -> int:
    if now_ms is None:
        return time.time_ns() // 1_000_000
    if isinstance(now_ms, bool) or not isinstance(now_ms, int):
        msg = f"now_ms must be an integer (milliseconds), not {type(now_ms).__name__}"
        raise InvalidQueryError(msg)
    return now_ms


def _call(session: object, name: object, raw: object, now_ms: object) -> Any:
    if not isinstance(session, Session):
        msg = f"dispatch needs a memhop.Session, not {type(session).__name__}"
        raise InvalidQueryError(msg)
    tool = _tool(name)
    kwargs = decode.decode(tool, decode.arguments(tool, raw))
    if HOST_CLOCK in HIDDEN.get(tool.name, frozenset()):
        kwargs[HOST_CLOCK] = _clock(now_ms)
    method = getattr(session, tool.method)
    whole = schema.passed_whole(tool)
    if whole is not None:
        return method(whole(**kwargs))
    return method(**kwargs)


def dispatch(
    session: Session,
    name: str,
    arguments: str | Mapping[str, Any] | None,
    *,
    now_ms: int | None = None,
) -> dict[str, Any]:
    """Run one model tool call and return its JSON-ready result.

    ``arguments`` is the model's JSON object text (or a mapping, or None).
    ``now_ms`` stamps ``created_at`` where a tool writes one (default: the
    clock, in milliseconds). A refusal comes back as ``{"error": {"code",
    "message"}}`` naming the argument at fault; the call wrote nothing then.
    """
    try:
        return render(_call(session, name, arguments, now_ms))
    except MemHopError as exc:
        return {"error": {"code": int(exc.code), "message": exc.message}}
