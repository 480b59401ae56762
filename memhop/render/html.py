"""Rendering rows and results as text and HTML: one cell formatter, truncated tables.

Both the inspector's ``Table`` and the live API's results render through
here, so a notebook shows every memhop value the same way: enum members by
name, datetimes in ISO form, long text cut with an ellipsis, and a table of
any length as its head and tail with a count of the rows left out.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields, is_dataclass
from datetime import UTC, datetime
from enum import Enum
from typing import Any

__all__ = ["cell_text", "html_table", "shape_html", "text_table"]

HTML_ROWS = 40
"""Rows a rendered table shows at most: the first 30 and the last 10."""
_HEAD, _TAIL = 30, 10
_CELL_CHARS = 160


def cell_text(value: object, limit: int = _CELL_CHARS) -> str:
    """One cell as one short line: enums by name, datetimes as ISO, sequences joined."""
    if value is None:
        text = ""
    elif isinstance(value, Enum):
        text = value.name.lower()
    elif isinstance(value, datetime):
        text = value.isoformat(sep=" ", timespec="milliseconds")
    elif isinstance(value, float):
        text = f"{value:.4g}"
    elif isinstance(value, Mapping):
        text = ", ".join(f"{k}={cell_text(v, limit)}" for k, v in value.items())
    elif isinstance(value, tuple | list):
        text = ", ".join(cell_text(v, limit) for v in value)
    else:
        text = str(value)
    text = " ".join(text.split())  # one line per cell, whatever the content holds
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shown(total: int) -> tuple[range, range]:
    """The row numbers shown: all of a short table, else its head and its tail."""
    if total <= HTML_ROWS:
        return range(total), range(0)
    return range(_HEAD), range(total - _TAIL, total)


def html_table(
    columns: Sequence[str],
    rows: Sequence[Mapping[str, Any]],
    *,
    title: str = "",
    footer: str = "",
    cell: Callable[[str, Any], str] | None = None,
) -> str:
    """An HTML table of ``rows`` (head and tail when long) with a row count under it.

    ``cell(column, value)`` renders one cell as HTML; by default its escaped ``cell_text``.
    """
    esc = html.escape
    render = cell or (lambda _, value: esc(cell_text(value)))
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)

    def line(row: Mapping[str, Any]) -> str:
        return "<tr>" + "".join(f"<td>{render(c, row.get(c))}</td>" for c in columns) + "</tr>"

    first, last = _shown(len(rows))
    body = [line(rows[i]) for i in first]
    if last:
        gap = len(rows) - len(first) - len(last)
        body.append(f'<tr><td colspan="{max(len(columns), 1)}">… {gap:,} more rows …</td></tr>')
        body.extend(line(rows[i]) for i in last)
    noun = "row" if len(rows) == 1 else "rows"
    notes = [f"{len(rows):,} {noun}"] + ([footer] if footer else [])
    caption = f"<caption>{esc(title)}</caption>" if title else ""
    return (
        f'<div class="memhop-table"><table>{caption}<thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
        f"<p><small>{esc(' · '.join(notes))}</small></p></div>"
    )


# ---- the live API's results (frozen dataclasses) ---------------------------------------------

_TIME_SUFFIXES = ("_at", "_timestamp", "_at_ms")


def _is_records(value: object) -> bool:
    return isinstance(value, tuple) and bool(value) and all(is_dataclass(v) for v in value)


def _field_html(name: str, value: Any) -> str:
    """One field as HTML: nested results as tables, millisecond stamps as UTC times."""
    if is_dataclass(value) and not isinstance(value, type):
        return shape_html(value)
    if _is_records(value):
        return _records_html(name, value)
    if isinstance(value, Mapping) and _is_records(tuple(value.values())):
        columns = ["key", *(f.name for f in fields(next(iter(value.values()))))]
        rows = [{"key": k, **{c: getattr(v, c) for c in columns[1:]}} for k, v in value.items()]
        return html_table(columns, rows, title=name, cell=_field_html)
    if name.endswith(_TIME_SUFFIXES) and type(value) is int and value > 0:
        when = datetime.fromtimestamp(value / 1000, UTC)
        return html.escape(f"{cell_text(when)} ({value})")
    return html.escape(cell_text(value, limit=400))


def _records_html(name: str, items: tuple[Any, ...]) -> str:
    columns = [f.name for f in fields(items[0])]
    rows = [{c: getattr(item, c) for c in columns} for item in items]
    return html_table(columns, rows, title=name, cell=_field_html)


def shape_html(value: Any) -> str:
    """A result as HTML: its plain fields as a two-column table, its row lists as tables."""
    pairs = [(f.name, getattr(value, f.name)) for f in fields(value)]
    simple = [{"field": n, "value": _field_html(n, v)} for n, v in pairs if not _is_records(v)]
    parts = []
    if simple:
        parts.append(
            html_table(
                ("field", "value"),
                simple,
                title=type(value).__name__,
                cell=lambda column, v: html.escape(v) if column == "field" else v,
            )
        )
    parts += [_records_html(n, v) for n, v in pairs if _is_records(v)]
    return "".join(parts)


def text_table(
    columns: Sequence[str],
    rows: Sequence[Mapping[str, Any]],
    *,
    width: int = 100,
    limit: int | None = None,
) -> str:
    """A plain-text table that fits ``width`` columns; ``limit`` caps the rows shown.

    Wide columns are cut to 16 characters first (an id stays whole); if the
    line is still too long, the rightmost columns are left out and named.
    """
    shown = rows if limit is None else rows[:limit]
    cells = [[cell_text(row.get(c), width) for c in columns] for row in shown]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    gaps = 2 * (len(columns) - 1)
    while sum(widths) + gaps > width and max(widths, default=0) > 16:
        widest = widths.index(max(widths))
        widths[widest] -= 1
    kept = len(columns)
    while kept > 1 and sum(widths[:kept]) + 2 * (kept - 1) > width:
        kept -= 1

    def fit(text: str, size: int) -> str:
        return text.ljust(size) if len(text) <= size else text[: size - 1] + "…"

    def line(values: Sequence[str]) -> str:
        return "  ".join(fit(v, w) for v, w in zip(values[:kept], widths, strict=False)).rstrip()

    lines = [line(columns)] + [line(r) for r in cells]
    if len(shown) < len(rows):
        lines.append(f"… {len(rows) - len(shown):,} more rows ({len(rows):,} in all)")
    if kept < len(columns):
        lines.append(f"(columns not shown: {', '.join(columns[kept:])})")
    return "\n".join(lines)
