"""The task face as model tools: strict OpenAI tool definitions and a dispatcher.

``schemas()`` returns one OpenAI function definition per task-face method
(upstream's 18 tool names, and memhop's own ``memory_recall``), each with a
description a model can act on (when to call it, then the method's contract)
and a strict JSON Schema whose every parameter is described; enums are
offered by name. ``dispatch(session, name, arguments, now_ms=None)`` runs a
model's call and returns compact JSON-ready results (``encode`` gives the
text). The host owns the clock: ``created_at``
is never asked of the model. The admin methods are never tools: a model that
can destroy records needs the host's approval path, not a schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memhop.tools.calls import dispatch
from memhop.tools.render import encode
from memhop.tools.schema import describe_tool, parameters
from memhop.tools.table import READ_ONLY, TABLE

__all__ = ["READ_ONLY", "TOOLS", "dispatch", "encode", "schemas"]

TOOLS: Mapping[str, str] = {tool.name: tool.method for tool in TABLE}
"""Tool name -> the Session method it runs."""


def schemas() -> list[dict[str, Any]]:
    """One strict OpenAI tool definition per tool, in the integration guide's order."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": describe_tool(tool),
                "parameters": parameters(tool),
                "strict": True,
            },
        }
        for tool in TABLE
    ]
