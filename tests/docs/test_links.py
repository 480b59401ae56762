"""Every relative link in docs/ and README.md points at a file that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs._docs import REPO, pages

LINK = re.compile(r"\]\(([^)\s]+)\)")


def relative_links(text: str) -> list[str]:
    """Link targets that are paths in the repository (no scheme, no pure #anchor)."""
    targets = (m.group(1).split("#")[0] for m in LINK.finditer(text))
    return [t for t in targets if t and not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def test_the_link_reader_keeps_paths_only() -> None:
    text = "[a](format.md) [b](https://x.org/y) [c](#top) [d](internals/engine.md#open)"
    assert relative_links(text) == ["format.md", "internals/engine.md"]


@pytest.mark.parametrize(
    "page", [p for p in pages() if p.exists()], ids=lambda p: str(p.relative_to(REPO))
)
def test_relative_links_resolve(page: Path) -> None:
    broken = [
        target
        for target in relative_links(page.read_text(encoding="utf-8"))
        if not (page.parent / target).exists()
    ]
    assert not broken, f"{page.relative_to(REPO)} links to missing files: {broken}"
