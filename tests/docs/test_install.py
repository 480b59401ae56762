"""Every install command memhop shows works on a fresh machine: memhop is on no package index.

The pages (docs/**.md, README.md) and memhop's own messages and docstrings may tell a user to
``pip install`` a clone (``.``, ``".[mcp]"``), a built wheel (``dist/memhop-*.whl``) or a
package from PyPI (``pandas``, ``mcp``, ``ipykernel``), never ``memhop`` by name.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.docs._docs import REPO, pages

# A command runs to the end of its inline code span, its line, or a shell separator.
COMMAND = re.compile(r"pip install((?:\s+[^\s`#;&|)\\]+)+)")


def install_targets(text: str) -> list[str]:
    """What each ``pip install`` in ``text`` installs: its arguments less options and quotes."""
    joined = re.sub(r"\s+", " ", text)  # an inline command may wrap across lines
    found: list[str] = []
    for match in COMMAND.finditer(joined):
        for arg in match.group(1).split():
            bare = arg.strip("'\"")
            if bare and not bare.startswith("-"):
                found.append(bare)
    return found


def installable_without_an_index_entry(target: str) -> bool:
    """A path (a clone, a wheel) or a requirement on a package other than memhop."""
    if target.startswith(".") or "/" in target or ".whl" in target:
        return True
    return re.split(r"[\[<>=!~ ;]", target, maxsplit=1)[0].lower() != "memhop"


def sources() -> dict[str, str]:
    texts = {str(page.relative_to(REPO)): page.read_text(encoding="utf-8") for page in pages()}
    for module in sorted((REPO / "memhop").rglob("*.py")):
        texts[str(module.relative_to(REPO))] = module.read_text(encoding="utf-8")
    return texts


def test_the_parser_reads_commands_as_written() -> None:
    assert install_targets('run `pip install -e ".[test]" && pytest`') == [".[test]"]
    assert install_targets("(`pip install\n  'memhop[notebook]'`)") == ["memhop[notebook]"]
    assert install_targets("pip install 'mcp>=2.0'\\n\"") == ["mcp>=2.0"]
    assert not installable_without_an_index_entry("memhop")
    assert not installable_without_an_index_entry("memhop[mcp]")
    assert not installable_without_an_index_entry("MemHop>=0.1")
    for fine in (".", ".[mcp]", "dist/memhop-*.whl", "dist/memhop-0.1.0-py3-none-any.whl[mcp]"):
        assert installable_without_an_index_entry(fine), fine
    assert installable_without_an_index_entry("pandas")


def test_no_install_command_names_memhop_on_an_index() -> None:
    shown = {name: install_targets(text) for name, text in sources().items()}
    wrong = {
        name: [t for t in targets if not installable_without_an_index_entry(t)]
        for name, targets in shown.items()
    }
    assert {name: bad for name, bad in wrong.items() if bad} == {}
    # Positive control: the scan sees the install commands that are there.
    assert "." in shown["docs/index.md"]
    assert any(t.endswith(".whl") for t in shown["docs/index.md"])
    assert any("[mcp]" in t for t in shown["docs/integration.md"])
    assert any("[notebook]" in t for t in shown["docs/inspect.md"])


def test_a_page_that_installs_the_notebook_extra_names_a_jupyter_kernel() -> None:
    notebook_pages = [
        name
        for name, text in sources().items()
        if name.endswith(".md") and any("[notebook]" in t for t in install_targets(text))
    ]
    assert notebook_pages  # positive control: docs/index.md and docs/inspect.md install it
    for name in notebook_pages:
        assert "ipykernel" in Path(REPO / name).read_text(encoding="utf-8"), name
