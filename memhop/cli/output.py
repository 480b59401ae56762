"""What the command line prints: terminal tables, JSON, and progress on a terminal's stderr."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Mapping
from datetime import datetime
from typing import Any, TextIO

from memhop.inspection.walk import Progress
from memhop.render import Table

__all__ = ["json_text", "print_json", "print_table", "progress_for"]


def _plain(value: object) -> Any:
    """``value`` as JSON can carry it: datetimes in ISO form, tuples as lists."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def json_text(value: object, *, indent: int | None = None) -> str:
    """One JSON document (UTF-8 text kept as is) for ``value``."""
    return json.dumps(_plain(value), ensure_ascii=False, indent=indent)


def print_json(value: object, out: TextIO) -> None:
    if isinstance(value, Table):
        value = value.to_dicts()
    out.write(json_text(value, indent=2) + "\n")


def print_table(table: Table, out: TextIO, limit: int | None) -> None:
    """The table as text as wide as the terminal (100 columns when not a terminal)."""
    width = shutil.get_terminal_size((100, 24)).columns if out.isatty() else 100
    out.write(table.to_text(width=max(width, 40), limit=limit) + "\n")


def progress_for(label: str, err: TextIO = sys.stderr) -> Progress | None:
    """A progress reporter writing to ``err`` when it is a terminal; None otherwise."""
    if not err.isatty():
        return None

    def report(done: int, total: int) -> None:
        share = 100 * done // total if total else 100
        err.write(f"\r{label}: {share:3d}% of {total:,} bytes")
        if done >= total:
            err.write("\n")
        err.flush()

    return report
