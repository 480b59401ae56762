"""``memhop mcp PATH [--agent NAME]``: a stdio MCP server on the official ``mcp`` SDK.

Needs the optional extra ``memhop[mcp]``; the core never imports this package.
The server exposes the tool table (``memhop.tools``: the same descriptions and
strict schemas, the host's clock for ``created_at``) as MCP tools, and two
read-only resources: ``memhop://scene/current`` (the current scene) and
``memhop://profile``. A missing file is created with a primary profile named
"assistant"; ``--agent NAME`` serves the sub-agent NAME (created on first use).

The model comes from ``LLM_URL``, ``LLM_KEY`` and ``LLM_MODEL`` (all three),
else the offline ``LocalModel``. The key is never logged or echoed.
"""

from memhop.mcp.command import main, model_from_env
from memhop.mcp.server import PROFILE_URI, SCENE_URI, build_server, serve

__all__ = ["PROFILE_URI", "SCENE_URI", "build_server", "main", "model_from_env", "serve"]
