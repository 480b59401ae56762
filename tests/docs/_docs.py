"""Helpers shared by the documentation tests: the repository, the pages, the generator."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent.parent
DOCS = REPO / "docs"


def pages() -> list[Path]:
    """Every Markdown page the user reads: docs/**.md and README.md."""
    return [*sorted(DOCS.rglob("*.md")), REPO / "README.md"]


def load_generator() -> ModuleType:
    """scripts/gen_api_docs.py as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("gen_api_docs", REPO / "scripts/gen_api_docs.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
