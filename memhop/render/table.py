"""Table: the inspector's listings, a read-only sequence of row dicts that renders itself.

Rows hold notebook-ready values: ids as 16 hex digits, enum members by lower
case name, times as timezone-aware UTC ``datetime`` (None where the file
stores 0), provenance as words. ``to_pandas()`` imports pandas only when
called (the ``memhop[notebook]`` extra); the core never does.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

from memhop.errors import ConfigError
from memhop.render.html import html_table, text_table

__all__ = ["Table"]

Row = dict[str, Any]


class Table(Sequence[Mapping[str, Any]]):
    """An immutable listing: ``len``, indexing, iteration, ``columns``, and three renderings."""

    __slots__ = ("_columns", "_rows", "footer", "title")

    def __init__(
        self,
        columns: Sequence[str],
        rows: Iterable[Row],
        *,
        title: str = "",
        footer: str = "",
    ) -> None:
        self._columns = tuple(columns)
        self._rows = tuple(rows)
        self.title = title
        self.footer = footer

    @property
    def columns(self) -> tuple[str, ...]:
        return self._columns

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> Mapping[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> Table: ...
    def __getitem__(self, index: int | slice) -> Mapping[str, Any] | Table:
        if isinstance(index, slice):
            return Table(self._columns, self._rows[index], title=self.title)
        return dict(self._rows[index])  # a copy: the table stays as it was read

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        return (dict(row) for row in self._rows)

    def to_dicts(self) -> list[dict[str, Any]]:
        """Every row as a fresh dict, keys in column order."""
        return [{c: row.get(c) for c in self._columns} for row in self._rows]

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` of the rows (needs pandas: the ``memhop[notebook]`` extra).

        Times become ``datetime64[ns, UTC]`` columns; enum names stay strings.
        """
        try:
            pandas = importlib.import_module("pandas")
        except ImportError as exc:
            msg = "to_pandas needs pandas (the memhop[notebook] extra): pip install 'pandas>=2.0'"
            raise ConfigError(msg) from exc
        return pandas.DataFrame.from_records(self.to_dicts(), columns=list(self._columns))

    def to_text(self, width: int = 100, limit: int | None = None) -> str:
        """The rows as a plain-text table ``width`` characters wide (the command line's form)."""
        body = text_table(self._columns, self._rows, width=width, limit=limit)
        return "\n".join(part for part in (self.title, body, self.footer) if part)

    def _repr_html_(self) -> str:
        return html_table(self._columns, self._rows, title=self.title, footer=self.footer)

    def __repr__(self) -> str:
        name = f" {self.title!r}" if self.title else ""
        rows = f"{len(self._rows)} row" + ("" if len(self._rows) == 1 else "s")
        return f"<memhop.Table{name} {rows} x {len(self._columns)} columns>"

    def __str__(self) -> str:
        return self.to_text(limit=20)
