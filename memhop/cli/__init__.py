"""The ``memhop`` command line (console script ``memhop`` and ``python -m memhop``).

Responsibility: look into a ``.meh`` file from a shell (``info``, ``agents``,
``scenes``, ``topics``, ``stats``, ``show``, ``grep``, ``frames``, ``verify``,
``export``), make a compacted copy (``compact``), and start the MCP server
(``mcp``, from the ``memhop[mcp]`` extra).

Contract:
- Every read goes through the read-only ``memhop.inspection``: it never writes,
  locks or repairs the file, and works while an agent holds it. ``compact``
  opens the source as a writer and so needs it free.
- Text output fits the terminal; ``--json`` gives machine output. Progress of
  long work goes to stderr, and only when stderr is a terminal.
- Exit codes (docs/inspect.md): 0 ok; 1 damage found, or not a ``.meh``
  file; 2 usage error (a bad argument, a malformed id); 3 the file cannot be
  opened, read or written (missing, held, a destination that exists); 4 not
  found; 5 an optional extra is missing. An error is one line on stderr,
  never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import TextIO, cast

from memhop.cli.commands import COMMANDS
from memhop.cli.exits import (
    EXIT_DAMAGE,
    EXIT_IO,
    EXIT_MISSING_EXTRA,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_USAGE,
)
from memhop.errors import (
    ConfigError,
    CorruptionError,
    CRCMismatchError,
    InvalidMagicError,
    InvalidQueryError,
    MemHopError,
    NotFoundError,
)

__all__ = ["main"]


def _row_limit(text: str) -> int:
    """``--limit``'s value: a whole number of rows, 0 or more (argparse names the flag)."""
    try:
        value = int(text)
    except ValueError:
        msg = f"invalid int value: {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if value < 0:
        msg = f"must be 0 or more, got {value}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memhop",
        description="Look into a memhop .meh file (read-only), or compact a copy of it.",
        epilog="Exit codes: 0 ok, 1 damage found, 2 usage, 3 cannot open/read/write, "
        "4 not found, 5 optional extra missing.",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: a --json given before the subcommand is not reset by the subparser.
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable output"
    )
    common.add_argument(
        "--limit", type=_row_limit, default=None, help="show at most this many rows (0 or more)"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=text, description=text, parents=[common])
        if name != "compact":
            p.add_argument("file", help="the .meh file")
        return p

    command("info", "size, header, snapshot state, record and agent counts")
    command("agents", "the primary and every sub-agent")
    command("scenes", "an agent's scenes").add_argument("--agent", help="16-hex id or name")
    topics = command("topics", "an agent's topics with provenance")
    topics.add_argument("--agent", help="16-hex id or sub-agent name (default: the primary)")
    topics.add_argument("--scene", help="16-hex scene id or scene name")
    command("stats", "live and dead records and bytes per record type")
    command("show", "every live record with this id").add_argument("id", help="16-hex id")
    grep = command("grep", "live records whose text holds TEXT (case-insensitive)")
    grep.add_argument("text")
    grep.add_argument("--agent", help="only this agent's records")
    command("frames", "every frame, snapshot blob and damaged stretch, in file order")
    command("verify", "check every header, frame, blob, payload and index entry")
    export = command("export", "every live record as JSON Lines")
    export.add_argument("-o", "--output", help="write to this new file instead of stdout")
    compact = command("compact", "copy SRC's live records into the new file DST")
    compact.add_argument("src")
    compact.add_argument("dst")
    sub.add_parser("mcp", help="run the MCP server (needs memhop[mcp]); arguments pass through")
    return parser


def _run_mcp(argv: list[str], err: TextIO) -> int:
    """Hand over to ``memhop.mcp.main``, imported only now (it is an optional extra)."""
    try:
        server = importlib.import_module("memhop.mcp")
    except ImportError as exc:
        err.write(
            f"memhop: the MCP server is not installed ({exc}); install its package "
            "(the memhop[mcp] extra) with: pip install 'mcp>=2.0'\n"
        )
        return EXIT_MISSING_EXTRA
    run = cast(Callable[[list[str]], int], server.main)
    return run(argv)


def _exit_code(exc: MemHopError) -> int:
    if isinstance(exc, CorruptionError | CRCMismatchError | InvalidMagicError):
        return EXIT_DAMAGE
    if isinstance(exc, InvalidQueryError):
        return EXIT_USAGE
    if isinstance(exc, NotFoundError):
        return EXIT_NOT_FOUND
    if isinstance(exc, ConfigError):
        return EXIT_MISSING_EXTRA
    return EXIT_IO


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code (see the module docstring)."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    out, err = sys.stdout, sys.stderr
    # The scan's warnings about damage are reported by verify itself; keep stderr clean.
    memhop_log = logging.getLogger("memhop")
    if not memhop_log.handlers:
        memhop_log.addHandler(logging.NullHandler())
    if args_in[:1] == ["mcp"]:
        return _run_mcp(args_in[1:], err)
    try:
        args = _parser().parse_args(args_in)
    except SystemExit as exc:  # argparse has printed usage or help
        return EXIT_OK if exc.code == 0 else EXIT_USAGE
    try:
        return COMMANDS[args.command](args, out)
    except MemHopError as exc:
        err.write(f"memhop {args.command}: {exc}\n")
        return _exit_code(exc)
    except FileExistsError as exc:
        err.write(f"memhop {args.command}: {exc.filename} already exists\n")
        return EXIT_IO
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):  # the reader (head, less) went away
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return EXIT_OK
        err.write(f"memhop {args.command}: {exc}\n")
        return EXIT_IO
    except KeyboardInterrupt:
        err.write("memhop: interrupted\n")
        return 130
