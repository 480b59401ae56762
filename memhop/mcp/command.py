"""The command: read PATH, ``--agent`` and the model from the environment, then serve."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Mapping

import memhop.aio
from memhop.api import LlmConfig, LocalModel, MemHopError, Model, ProfileInput
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
    parser.add_argument("--agent", metavar="NAME", help="serve the sub-agent NAME, not the primary")
    return parser


async def _run(path: str, agent: str | None, llm: LlmConfig | Model) -> None:
    async with memhop.aio.open(path, llm, profile=_SEED) as db:
        if agent is None:
            session = await db.primary()
        else:
            session = await db.sub_agent(llm, ProfileInput(name=agent))
        await serve(session, name="memhop")


def main(argv: list[str]) -> int:
    """Run the server until its host closes stdin; return the process exit code."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse printed the usage or the help
        return EXIT_OK if exc.code == 0 else EXIT_USAGE
    try:
        llm = model_from_env()
        kind = f"endpoint model {llm.model}" if isinstance(llm, LlmConfig) else "LocalModel"
        who = f"sub-agent {args.agent!r}" if args.agent else "the primary"
        print(f"memhop mcp: serving {args.path} as {who} ({kind})", file=sys.stderr)
        asyncio.run(_run(args.path, args.agent, llm))
    except MemHopError as exc:
        print(f"memhop mcp: {type(exc).__name__} ({exc.code}): {exc.message}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_OK
    return EXIT_OK
