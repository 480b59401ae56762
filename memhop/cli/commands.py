"""The subcommands: each reads through the read-only Inspector (``compact`` through the engine).

Each takes the parsed arguments and the output stream and returns an exit
code; a memhop error propagates to ``main``, which words it and picks the code.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
from collections.abc import Iterator
from typing import TextIO

from memhop.cli.exits import EXIT_DAMAGE, EXIT_OK
from memhop.cli.output import json_text, print_json, print_table, progress_for
from memhop.engine import compact_to, open_engine
from memhop.errors import NotFoundError, StorageIOError
from memhop.inspection import Inspector, inspect
from memhop.render import Table

__all__ = ["COMMANDS"]


def _capped(table: Table, limit: int | None) -> Table:
    """The first ``limit`` rows (all with None): ``--limit`` caps JSON as it caps text."""
    return table if limit is None else table[:limit]


def _show(args: argparse.Namespace, table: Table, out: TextIO) -> int:
    if args.json:
        print_json(_capped(table, args.limit), out)
    else:
        print_table(table, out, args.limit)
    return EXIT_OK


def cmd_info(args: argparse.Namespace, out: TextIO) -> int:
    info = inspect(args.file).info()
    if args.json:
        print_json(info, out)
    else:
        width = max(len(k) for k in info)
        out.writelines(f"{k.ljust(width)}  {'' if v is None else v}\n" for k, v in info.items())
    return EXIT_OK


def cmd_agents(args: argparse.Namespace, out: TextIO) -> int:
    return _show(args, inspect(args.file).agents(), out)


def cmd_scenes(args: argparse.Namespace, out: TextIO) -> int:
    return _show(args, inspect(args.file).scenes(args.agent), out)


def cmd_topics(args: argparse.Namespace, out: TextIO) -> int:
    return _show(args, inspect(args.file).topics(args.agent, args.scene), out)


def cmd_stats(args: argparse.Namespace, out: TextIO) -> int:
    return _show(args, inspect(args.file).stats(progress_for("stats")), out)


def cmd_show(args: argparse.Namespace, out: TextIO) -> int:
    found = inspect(args.file).lookup(args.id)
    if not found:
        msg = f"no live record with id {args.id} in {args.file}"
        raise NotFoundError(msg)
    if args.json:
        print_json(found, out)
        return EXIT_OK
    for row in found:
        out.write(f"{row['type']} {row['id']} in agent {row['agent']} at offset {row['offset']}\n")
        out.write(json_text(row["record"], indent=2) + "\n")
    return EXIT_OK


def cmd_grep(args: argparse.Namespace, out: TextIO) -> int:
    return _show(args, inspect(args.file).grep(args.text, args.agent), out)


def cmd_frames(args: argparse.Namespace, out: TextIO) -> int:
    view = inspect(args.file)
    return _show(args, view.frames(args.limit, progress_for("frames")), out)


def cmd_verify(args: argparse.Namespace, out: TextIO) -> int:
    report = inspect(args.file).verify(progress_for("verify"))
    if args.json:
        problems = _capped(report.problems, args.limit).to_dicts()
        print_json({"ok": report.ok, "problems": problems}, out)
    else:
        if not report.ok:
            print_table(report.problems, out, args.limit)
        out.write(report.summary() + "\n")
    if not report.ok:
        sys.stderr.write(f"memhop: damage found in {args.file} (exit {EXIT_DAMAGE})\n")
        return EXIT_DAMAGE
    return EXIT_OK


@contextlib.contextmanager
def _export_target(path: str | None, out: TextIO) -> Iterator[TextIO]:
    if path is None:
        yield out
        return
    with open(path, "x", encoding="utf-8") as handle:  # never overwrite an existing file
        yield handle


def cmd_export(args: argparse.Namespace, out: TextIO) -> int:
    view: Inspector = inspect(args.file)
    with _export_target(args.output, out) as target:
        for record in view.records(progress_for("export")):
            target.write(json_text(record) + "\n")
    return EXIT_OK


def cmd_compact(args: argparse.Namespace, out: TextIO) -> int:
    """Write a copy of SRC holding only live records to DST (SRC must not be open elsewhere)."""
    if not os.path.exists(args.src):
        msg = f"no database at {args.src}"
        raise StorageIOError(msg)
    if os.path.lexists(args.dst):  # refused before the source is opened as a writer
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), args.dst)
    engine = open_engine(args.src)
    try:
        compact_to(engine, args.dst)
    finally:
        engine.close()
    before, after = os.path.getsize(args.src), os.path.getsize(args.dst)
    if args.json:
        print_json({"src": args.src, "dst": args.dst, "src_bytes": before, "dst_bytes": after}, out)
    else:
        out.write(f"compacted {args.src} ({before:,} bytes) into {args.dst} ({after:,} bytes)\n")
    return EXIT_OK


COMMANDS = {
    "info": cmd_info,
    "agents": cmd_agents,
    "scenes": cmd_scenes,
    "topics": cmd_topics,
    "stats": cmd_stats,
    "show": cmd_show,
    "grep": cmd_grep,
    "frames": cmd_frames,
    "verify": cmd_verify,
    "export": cmd_export,
    "compact": cmd_compact,
}
