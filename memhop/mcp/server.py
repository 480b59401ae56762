"""The MCP server: memhop's tool table and two read-only resources over stdio.

Built on the official ``mcp`` SDK's low-level server, so the tools carry the
table's own strict schemas and descriptions (``memhop.tools.schemas``). Every
call runs through ``memhop.tools.dispatch`` on the AsyncDB's thread pool,
with the host's clock stamping ``created_at``. A refusal is a tool result
with ``isError`` (the model reads it and can correct itself); an unknown
tool or resource is an MCP error. Neither ends the server.
"""

from __future__ import annotations

from typing import Any

import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from memhop._version import __version__
from memhop.aio import AsyncSession
from memhop.api.types import Shape
from memhop.tools import READ_ONLY, TOOLS, encode, schemas
from memhop.tools.render import render

__all__ = ["PROFILE_URI", "SCENE_URI", "build_server", "serve"]

SCENE_URI = "memhop://scene/current"
PROFILE_URI = "memhop://profile"

_RESOURCES = {
    SCENE_URI: (
        "current-scene",
        "The current scene's turns with their lines (depth <= 2), oldest first; a read"
        " that opens no turn and writes nothing.",
    ),
    PROFILE_URI: (
        "profile",
        "This agent's profile: name, role, personality, preferences and the distilled"
        " emotion and MBTI axes.",
    ),
}


def _tool_list() -> list[types.Tool]:
    return [
        types.Tool(
            name=d["function"]["name"],
            description=d["function"]["description"],
            input_schema=d["function"]["parameters"],
            annotations=types.ToolAnnotations(
                read_only_hint=d["function"]["name"] in READ_ONLY, open_world_hint=False
            ),
        )
        for d in schemas()
    ]


def build_server(session: AsyncSession, name: str = "memhop") -> Server[Any]:
    """An MCP server exposing ``session``'s memory: the tool table and two resources."""
    listed = _tool_list()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in TOOLS:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name[:80]!r}")
        answer = await session.dispatch(params.name, params.arguments or {})
        return types.CallToolResult(
            content=[types.TextContent(text=encode(answer))],
            structured_content=answer,
            is_error="error" in answer,
        )

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=uri, name=title, description=text, mime_type="application/json")
                for uri, (title, text) in _RESOURCES.items()
            ]
        )

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        value: Shape
        if uri == SCENE_URI:
            value = await session.scene_context()
        elif uri == PROFILE_URI:
            value = await session.get_l0()
        else:
            raise MCPError(types.INVALID_PARAMS, f"no resource {uri[:120]!r}")
        text = encode(render(value))
        contents = types.TextResourceContents(uri=uri, mime_type="application/json", text=text)
        return types.ReadResourceResult(contents=[contents])

    return Server(
        name,
        version=__version__,
        instructions="memhop: this agent's memory. Call memory_search at the start of a turn,"
        " memory_record for facts worth keeping, memory_close_turn at its end.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


async def serve(session: AsyncSession, name: str = "memhop") -> None:
    """Serve ``session`` over this process's stdin and stdout until stdin closes.

    A host ends the server by closing its stdin; the caller then closes the
    file. A SIGTERM or SIGKILL ends the process at once: every call already
    answered is durable in the file, as after any crash.
    """
    server = build_server(session, name)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
