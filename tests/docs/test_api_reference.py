"""docs/api.md documents every public name, and is what the generator renders today."""

from __future__ import annotations

import os
import re
from types import ModuleType

import pytest

from tests.docs._docs import DOCS, load_generator

API_MD = DOCS / "api.md"


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    return load_generator()


SENTINEL = "sentinel-7f3a"


@pytest.fixture(scope="module")
def rendered(gen: ModuleType) -> str:
    """The page as the generator renders it now, with a sentinel in the environment."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MEMHOP_DOCS_SENTINEL", SENTINEL)
        text: str = gen.render()
    return text


@pytest.fixture(scope="module")
def public(gen: ModuleType) -> set[str]:
    """Qualified public names, read from the code at run time."""
    surface: dict[str, list[str]] = gen.public_names()
    return {f"{module}.{name}" for module, names in surface.items() for name in names}


def test_every_public_name_has_a_section_and_nothing_else_does(
    gen: ModuleType, public: set[str]
) -> None:
    """The set of names docs/api.md documents equals the set of public names."""
    assert {"memhop.open", "memhop.Session", "memhop.tools.dispatch"} <= public
    documented: set[str] = gen.documented_names(API_MD.read_text(encoding="utf-8"))
    missing = sorted(public - documented)
    extra = sorted(documented - public)
    hint = "run python scripts/gen_api_docs.py"
    assert not missing, f"public but not in docs/api.md: {missing}; {hint}"
    assert not extra, f"in docs/api.md but not public: {extra}; {hint}"


def test_a_name_without_a_section_is_noticed(gen: ModuleType, public: set[str]) -> None:
    """The heading parser the check relies on sees a section go missing."""
    text = API_MD.read_text(encoding="utf-8")
    assert "memhop.open" in gen.documented_names(text)
    without = text.replace("#### `memhop.open`\n", "")
    assert "memhop.open" not in gen.documented_names(without)
    assert gen.documented_names(without) != public


def test_the_opt_in_modules_are_the_ones_import_memhop_does_not_load(gen: ModuleType) -> None:
    """memhop.tools is opt-in and documented; the layers that import memhop loads are not."""
    modules: list[str] = gen.public_modules()
    assert modules[0] == "memhop"
    assert "memhop.tools" in modules
    for internal in ("memhop.api", "memhop.root", "memhop.engine", "memhop.llm"):
        assert internal not in modules


def test_api_md_is_current(rendered: str) -> None:
    """Signatures and docstrings on the page are the code's own (regenerate after a change)."""
    assert "#### `memhop.open`" in rendered
    assert API_MD.read_text(encoding="utf-8") == rendered, (
        "docs/api.md is stale: run python scripts/gen_api_docs.py"
    )


def test_a_default_of_os_environ_never_puts_the_environment_on_the_page(
    gen: ModuleType, rendered: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defaults are spelled as source, not as the repr of the live object."""
    monkeypatch.setenv("MEMHOP_DOCS_SENTINEL", SENTINEL)
    assert gen.fmt_default(os.environ) == "os.environ"
    assert SENTINEL in repr(os.environ)  # positive control: a repr would leak it
    assert gen.fmt_default(0) == "0"
    assert SENTINEL not in rendered


def test_every_contents_link_lands_on_a_heading(gen: ModuleType) -> None:
    """Anchors are numbered in heading order, as GitHub numbers a repeated anchor."""
    text = API_MD.read_text(encoding="utf-8")
    headings = re.findall(r"^#### `([\w.]+)`$", text, re.MULTILINE)
    targets = set(gen.anchors(headings).values())
    links = re.findall(r"\]\(#([\w-]+)\)", text)
    assert {"memhopdefaults", "memhopdefaults-1"} <= set(links)  # Defaults and DEFAULTS
    assert len(links) == len(headings)
    assert set(links) == targets
