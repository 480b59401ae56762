"""The import graph runs one way: facade -> root -> layers -> engine."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "memhop"

# What each part of memhop may import from memhop (itself always allowed).
ALLOWED: dict[str, set[str]] = {
    # The facade re-exports the model seam (Model, LocalModel) as public names.
    "memhop.api": {
        "memhop.root",
        "memhop.records",
        "memhop.errors",
        "memhop.config",
        "memhop.ids",
        "memhop.llm",
        "memhop.render",
        "memhop.frozen",
    },
    # The read-only view: the engine's pure readers and the record decoders only.
    "memhop.inspection": {
        "memhop.engine",
        "memhop.intmap",
        "memhop.records",
        "memhop.ids",
        "memhop.errors",
        "memhop.render",
    },
    # Renderers both faces use: a leaf.
    "memhop.render": {"memhop.errors"},
    # The command line reads through the inspector and compacts through the engine;
    # memhop.mcp is imported (by name) only when its subcommand runs.
    "memhop.cli": {
        "memhop.inspection",
        "memhop.render",
        "memhop.engine",
        "memhop.records",
        "memhop.ids",
        "memhop.errors",
        "memhop.mcp",
    },
    "memhop.tools": {"memhop.api", "memhop.errors"},
    # The asyncio face and the MCP server sit beside the tools, above the facade.
    "memhop.aio": {"memhop.api", "memhop.tools", "memhop.errors"},
    "memhop.mcp": {
        "memhop._version",  # the version the server reports to its host
        "memhop.api",
        "memhop.aio",
        "memhop.tools",
        "memhop.errors",
        "memhop.config",
        "memhop.llm",
    },
    "memhop.root": {
        "memhop.domain",
        "memhop.layers",
        "memhop.index",
        "memhop.dream",
        "memhop.llm",
        "memhop.engine",
        "memhop.records",
        "memhop.ids",
        "memhop.errors",
        "memhop.config",
        "memhop.frozen",
    },
    # One domain in memory and beside the file; the root composes it, never the reverse.
    "memhop.domain": {
        "memhop.index",
        "memhop.layers",
        "memhop.engine",
        "memhop.llm",
        "memhop.records",
        "memhop.ids",
        "memhop.errors",
        "memhop.frozen",
    },
    "memhop.dream": {
        "memhop.engine",  # the Engine type, for annotations only (TYPE_CHECKING)
        "memhop.layers",
        "memhop.index",
        "memhop.llm",
        "memhop.text",
        "memhop.intmap",
        "memhop.records",
        "memhop.ids",
        "memhop.errors",
        "memhop.config",
        "memhop.render",  # the report is the public result itself
    },
    "memhop.layers": {"memhop.engine", "memhop.records", "memhop.ids", "memhop.errors"},
    "memhop.index": {"memhop.records", "memhop.ids", "memhop.text", "memhop.intmap"},
    "memhop.llm": {"memhop.errors", "memhop.config", "memhop.text", "memhop.frozen"},
    "memhop.text": set(),
    "memhop.records": {"memhop.errors", "memhop.render", "memhop.frozen"},  # the shape base
    "memhop.ids": {"memhop.errors", "memhop._ids"},
    "memhop.config": {"memhop.errors"},
    "memhop.engine": {"memhop.errors", "memhop.intmap", "memhop.frozen"},
    "memhop.intmap": set(),
    # Frozen records and named tuples built in C (its compiled part): a leaf any part may use.
    "memhop.frozen": {"memhop._slots"},
    "memhop.errors": set(),
}
LAYER_MODULES = ("archive", "graph", "plan", "profile", "registry", "scene", "topic")


def _part(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return {name for name in found if name.startswith("memhop.")}


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        out.append((".".join(rel.parts), path))
    return out


@pytest.mark.parametrize(("module", "path"), _modules(), ids=lambda v: str(v))
def test_imports_follow_the_allowed_direction(module: str, path: Path) -> None:
    """Every memhop import of a module is in its part's allow table."""
    part = _part(module)
    if part not in ALLOWED:
        return  # the package root and _version re-export, they are not a layer
    for imported in _imports(path):
        target = _part(imported)
        assert target == part or target in ALLOWED[part], f"{module} imports {imported}"


def test_layer_modules_never_import_each_other() -> None:
    """Cross-layer work is composed above the layers, never inside one."""
    checked = 0
    for module, path in _modules():
        if not module.startswith("memhop.layers."):
            continue
        checked += 1
        name = module.rsplit(".", 1)[1]
        for imported in _imports(path):
            other = imported.rsplit(".", 1)[-1]
            if imported.startswith("memhop.layers.") and other in LAYER_MODULES:
                assert other == name, f"{module} imports the layer {imported}"
    assert checked > 0, "no layer module was found, so the rule proved nothing"


def test_engine_knows_no_records() -> None:
    """The engine is bytes in, bytes out (an int map, or a way to build its tuples, is no
    record); errors is the control."""
    engine_imports = set()
    for module, path in _modules():
        if module.startswith("memhop.engine"):
            engine_imports |= {_part(i) for i in _imports(path)}
    assert "memhop.errors" in engine_imports
    assert engine_imports <= {"memhop.engine", "memhop.errors", "memhop.intmap", "memhop.frozen"}


def test_modules_stay_small() -> None:
    """One concept per module: none passes 400 lines."""
    sizes = {module: len(path.read_text().splitlines()) for module, path in _modules()}
    assert sizes, "no modules found"
    too_big = {m: n for m, n in sizes.items() if n > 400}
    assert not too_big, too_big


def _load_time_edges() -> dict[str, set[str]]:
    """Module -> the memhop modules it imports when it loads (module level, outside
    ``if`` blocks such as ``TYPE_CHECKING``); ``from package import module`` names the
    module, ``from module import name`` the module."""
    names = {module.removesuffix(".__init__"): path for module, path in _modules()}
    edges: dict[str, set[str]] = {}
    for module, path in names.items():
        found: set[str] = set()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    found.add(sub if sub in names else node.module)
        edges[module] = {name for name in found if name in names and name != module}
    return edges


def _circles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected groups of more than one module (Tarjan, iteratively)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []
    for start in edges:
        if start in order:
            continue
        work = [(start, iter(sorted(edges[start])))]
        order[start] = low[start] = len(order)
        stack.append(start)
        while work:
            node, rest = work[-1]
            nxt = next(rest, None)
            if nxt is not None:
                if nxt not in order:
                    order[nxt] = low[nxt] = len(order)
                    stack.append(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                elif nxt in stack:
                    low[node] = min(low[node], order[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == order[node]:
                group = set()
                while True:
                    member = stack.pop()
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(group)
    return found


def test_no_import_circles() -> None:
    """No module needs, to load, a module that needs it; the finder finds a made-up one."""
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    edges = _load_time_edges()
    assert edges["memhop.root.root"], "the root imports modules, so the graph is not empty"
    assert _circles(edges) == []


ARCHITECTURE = PACKAGE.parent / "docs" / "internals" / "architecture.md"


def _rooms_on_the_page() -> dict[str, set[str]]:
    """The rooms table of docs/internals/architecture.md: room -> the rooms it may import."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    table = text.split("<!-- rooms: begin -->", 1)[1].split("<!-- rooms: end -->", 1)[0]
    rooms: dict[str, set[str]] = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`memhop."):
            continue
        imports = {c.strip().strip("`") for c in cells[2].split(",") if "memhop." in c}
        rooms[cells[0].strip("`")] = imports
    return rooms


def test_the_architecture_page_states_the_allowed_table() -> None:
    """The page's map of the rooms is this test's table, room for room."""
    rooms = _rooms_on_the_page()
    assert rooms == ALLOWED
    # Every room of the package is on the page (the package root and _version re-export).
    parts = {_part(module) for module, _ in _modules()} - {"memhop.__init__", "memhop._version"}
    parts.discard("memhop.__main__")
    assert parts == set(rooms)
