"""The command: read PATH, ``--agent`` and the model from the environment, then serve."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Mapping

import memhop.aio
from memhop.api import (
    MAX_SUB_AGENT_NAME_BYTES,
    LlmConfig,
    LocalModel,
    MemHopError,
    Model,
    ProfileInput,
)
from memhop.errors import ConfigError
from memhop.mcp.server import serve

__all__ = ["main", "model_from_env"]

_ENV = ("LLM_URL", "LLM_KEY", "LLM_MODEL")
_SEED = ProfileInput(name="assistant", role="an agent's memory, served over MCP")

EXIT_OK = 0
EXIT_FAILED = 1  # the file could not be opened or served (the message says why)
EXIT_USAGE = 2


def model_from_env(env: Mapping[str, str] = os.environ) -> LlmConfig | Model:
    """``LlmConfig`` from LLM_URL/LLM_KEY/LLM_MODEL, or ``LocalModel()`` when none is set.

    ConfigError names the missing variables (never a value) when only some are set.
    """
    values = {name: env.get(name, "").strip() for name in _ENV}
    if not any(values.values()):
        return LocalModel()
    missing = [name for name, value in values.items() if not value]
    if missing:
        msg = f"set all of LLM_URL, LLM_KEY and LLM_MODEL, or none; missing: {', '.join(missing)}"
        raise ConfigError(msg)
    return LlmConfig(
        api_url=values["LLM_URL"], api_key=values["LLM_KEY"], model=values["LLM_MODEL"]
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memhop mcp",
        description="Serve a .meh file's memory to an MCP host over stdio.",
        epilog="The model: LLM_URL, LLM_KEY and LLM_MODEL, else the offline LocalModel.",
    )
    parser.add_argument("path", help="the .meh file (created when missing)")
    parser.add_argument(
        "--agent",
        metavar="NAME",
        type=_agent_name,
        help="serve the sub-agent NAME, not the primary",
    )
    return parser


def _agent_name(text: str) -> str:
    """``--agent``'s value, refused as a usage error before the file is touched.

    The rule is the one ``DB.sub_agent`` applies (trimmed, 1 to
    MAX_SUB_AGENT_NAME_BYTES bytes): a name it would refuse must not first
    create the file.
    """
    try:
        ProfileInput(name=text)  # valid Unicode within the profile's caps
    except MemHopError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None
    name = text.strip()
    if not name:
        msg = "a sub-agent name is required, got a blank one"
        raise argparse.ArgumentTypeError(msg)
    size = len(name.encode("utf-8"))
    if size > MAX_SUB_AGENT_NAME_BYTES:
        msg = f"the name is {size} bytes; the limit is {MAX_SUB_AGENT_NAME_BYTES}"
        raise argparse.ArgumentTypeError(msg)
    return text


async def _run(path: str, agent: str | None, llm: LlmConfig | Model) -> None:
    async with memhop.aio.open(path, llm, profile=_SEED) as db:
        if agent is None:
            session = await db.primary()
        else:
            session = await db.sub_agent(llm, ProfileInput(name=agent))
        # Said once the file is open and the domain reached: a refusal is the only line.
        kind = f"endpoint model {llm.model}" if isinstance(llm, LlmConfig) else "LocalModel"
        who = "the primary" if agent is None else f"sub-agent {agent!r}"
        print(f"memhop mcp: serving {path} as {who} ({kind})", file=sys.stderr)
        await serve(session, name="memhop")


def main(argv: list[str]) -> int:
    """Run the server until its host closes stdin; return the process exit code."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse printed the usage or the help
        return EXIT_OK if exc.code == 0 else EXIT_USAGE
    try:
        asyncio.run(_run(args.path, args.agent, model_from_env()))
    except MemHopError as exc:
        print(f"memhop mcp: {type(exc).__name__} ({exc.code}): {exc.message}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_OK
    return EXIT_OK
