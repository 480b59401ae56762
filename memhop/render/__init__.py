"""Renderers shared by the live API's results and the inspector: one cell formatter, text
and HTML tables, and ``Table`` (a sequence of row dicts that renders itself).

A leaf: it imports nothing of memhop but its errors, so the faces (``memhop.api``,
``memhop.inspection``, the command line) all render through it without importing each
other.
"""

from memhop.render.table import Table

__all__ = ["Table"]
