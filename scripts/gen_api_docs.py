"""Render docs/api.md: every public name of memhop with its signature and docstring contract.

The public surface is read at run time, never listed here:

- ``memhop.__all__`` (the facade's names and ``__version__``);
- the opt-in modules beside the facade: a top-level module of the package, not
  underscored, that ``import memhop`` does not load (``memhop.tools`` and its
  kind), each documented through its ``__all__``.

Usage: ``python scripts/gen_api_docs.py`` rewrites docs/api.md;
``python scripts/gen_api_docs.py --check`` exits 1 when the file is stale.
tests/docs/test_api_reference.py runs the check, so a public name added (or a
docstring changed) without regenerating fails the suite.
"""

from __future__ import annotations

import argparse
import builtins
import dataclasses
import enum
import functools
import importlib
import inspect
import os
import pkgutil
import pprint
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OUTPUT = REPO / "docs" / "api.md"
WIDTH = 96  # longer signatures put one parameter per line
HEADING = re.compile(r"^#### `([\w.]+)`$", re.MULTILINE)
# Words a public constructor's annotations may use besides builtins and public names.
TYPING_WORDS = frozenset(
    {"Any", "Callable", "Iterable", "Iterator", "Mapping", "Sequence", "None", "os", "PathLike"}
    | {"threading", "Event", "Path", "pathlib"}
)
GROUPS = (
    ("functions", "Functions"),
    ("classes", "Classes"),
    ("data", "Data classes: configuration, inputs and results"),
    ("enums", "Enumerations"),
    ("errors", "Errors"),
    ("constants", "Constants"),
)

PREAMBLE = """\
# API reference

Generated from the docstrings by `scripts/gen_api_docs.py`; do not edit by
hand. After changing a public name or a docstring, run
`python scripts/gen_api_docs.py` (`--check` tells whether this page is stale;
the test suite runs it). Start with [index.md](index.md) for what memhop is and
[integration.md](integration.md) for the turn loop; this page is the contract
of each name.

Every public name lives in `memhop` (`import memhop`), except the names of the
opt-in modules listed at the end, which `import memhop` does not load.
Signature blocks are marked `python no-run`: they are declarations, not
examples.
"""


@functools.cache
def loaded_by_import() -> frozenset[str]:
    """The modules a fresh ``import memhop`` loads (a fresh interpreter, so nothing else is)."""
    code = "import sys, memhop; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    return frozenset(out.split())


def public_modules() -> list[str]:
    """``memhop`` first, then the opt-in modules beside it, by name."""
    import memhop

    loaded = loaded_by_import()
    opt_in = sorted(
        f"memhop.{info.name}"
        for info in pkgutil.iter_modules(memhop.__path__)
        if not info.name.startswith("_") and f"memhop.{info.name}" not in loaded
    )
    return ["memhop", *opt_in]


def public_names() -> dict[str, list[str]]:
    """Module name -> its public names (``__all__``), for every public module."""
    out: dict[str, list[str]] = {}
    for name in public_modules():
        try:
            module = importlib.import_module(name)
        except ImportError as exc:  # an opt-in module whose extra is not installed
            msg = f"cannot import {name} ({exc}); install the extras: pip install -e '.[test]'"
            raise SystemExit(msg) from exc
        names = getattr(module, "__all__", None)
        if names is None:
            msg = f"{name} is a public module (import memhop does not load it) but has no __all__"
            raise SystemExit(msg)
        out[name] = list(names)
    return out


def documented_names(text: str) -> set[str]:
    """The qualified names a rendered page documents (its ``#### `name` `` headings)."""
    return set(HEADING.findall(text))


# ---- classification and signatures ------------------------------------------------------


def group_of(obj: object) -> str:
    if isinstance(obj, type):
        if issubclass(obj, BaseException):
            return "errors"
        if issubclass(obj, enum.Enum):
            return "enums"
        if dataclasses.is_dataclass(obj):
            return "data"
        return "classes"
    if callable(obj):
        return "functions"
    return "constants"


LITERALS = (type(None), bool, int, float, str, bytes)


def fmt_default(value: object) -> str:
    """A default as source would spell it; never the repr of a live object.

    ``os.environ`` as a default must read ``os.environ``, not the environment of
    whoever ran the generator (which would put its variables into the page).
    """
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if value is os.environ:
        return "os.environ"
    if isinstance(value, LITERALS):
        return repr(value)
    if isinstance(value, tuple | frozenset | list | dict) and not value:
        return repr(value)
    if isinstance(value, tuple) and all(isinstance(v, LITERALS) for v in value):
        return repr(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        try:
            if value == type(value)():
                return f"{type(value).__name__}()"
        except TypeError:  # a record with required fields: not a plain default
            pass
    qualname = getattr(value, "__qualname__", None)
    if isinstance(qualname, str):
        return f"{getattr(value, '__module__', '')}.{qualname}".lstrip(".")
    return "..."


def fmt_signature(func: Callable[..., Any], *, drop_self: bool = False) -> str:
    """``(a: T, *, b: U = 0) -> R`` from the function's own (string) annotations."""
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    if drop_self and params and params[0].name in ("self", "cls"):
        params = params[1:]
    parts: list[str] = []
    star_done = False
    for p in params:
        if p.kind is p.KEYWORD_ONLY and not star_done:
            parts.append("*")
            star_done = True
        if p.kind is p.VAR_POSITIONAL:
            star_done = True
            text = f"*{p.name}"
        elif p.kind is p.VAR_KEYWORD:
            text = f"**{p.name}"
        else:
            text = p.name
        if p.annotation is not p.empty:
            text += f": {annotation_text(p.annotation)}"
        if p.default is not p.empty:
            spaced = p.annotation is not p.empty  # PEP 8: "x: int = 0" but "x=0"
            text += f" = {fmt_default(p.default)}" if spaced else f"={fmt_default(p.default)}"
        parts.append(text)
        if p.kind is p.POSITIONAL_ONLY and (
            p is params[-1] or params[params.index(p) + 1].kind is not p.POSITIONAL_ONLY
        ):
            parts.append("/")
    returns = ""
    if sig.return_annotation is not sig.empty:
        returns = f" -> {annotation_text(sig.return_annotation)}"
    flat = f"({', '.join(parts)}){returns}"
    if len(flat) <= WIDTH - 20:
        return flat
    return "(\n" + "".join(f"    {part},\n" for part in parts) + f"){returns}"


def annotation_text(annotation: object) -> str:
    if isinstance(annotation, str):
        return annotation
    if isinstance(annotation, type):
        return annotation.__name__
    return repr(annotation).replace("typing.", "")


def doc_of(obj: object) -> str:
    """The docstring, dedented, with reST literals turned into Markdown ones."""
    text = inspect.getdoc(obj) or ""
    return text.replace("``", "`").strip()


def own_doc(obj: type) -> str:
    """A class's own docstring (not one inherited from a base class)."""
    return doc_of(obj) if obj.__dict__.get("__doc__") else ""


def is_public_constructor(cls: type, names: set[str]) -> bool:
    """True when every word of ``__init__``'s annotations is a builtin or a public name.

    A constructor that takes an internal object (``DB(root)``) is not the user's to call.
    """
    init = cls.__dict__.get("__init__")
    if init is None or not getattr(init, "__module__", "").startswith("memhop"):
        return False
    words: set[str] = set()
    for p in list(inspect.signature(init).parameters.values())[1:]:
        if p.annotation is not p.empty:
            words |= set(re.findall(r"[A-Za-z_]\w*", annotation_text(p.annotation)))
    return all(w in names or hasattr(builtins, w) or w in TYPING_WORDS for w in words)


def members(cls: type) -> Iterator[tuple[str, object, type]]:
    """Public methods and properties with their defining class: own first, then memhop bases."""
    seen: set[str] = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("memhop"):
            continue
        for name, value in klass.__dict__.items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            if isinstance(value, property | staticmethod | classmethod) or inspect.isfunction(
                value
            ):
                yield name, value, klass


# ---- rendering --------------------------------------------------------------------------


def code(lines: list[str]) -> list[str]:
    return ["```python no-run", *lines, "```", ""]


def paragraph(text: str) -> list[str]:
    return [text, ""] if text else []


def member_signature(value: object) -> str:
    func = value.__func__ if isinstance(value, staticmethod | classmethod) else value
    if isinstance(func, property) or not callable(func):
        return ""
    return fmt_signature(func, drop_self=not isinstance(value, staticmethod))


def first_line(value: object) -> str:
    func = value.fget if isinstance(value, property) else value
    return doc_of(func).split("\n\n")[0].replace("\n", " ")


def render_member(owner: str, name: str, value: object) -> list[str]:
    if isinstance(value, property):
        assert value.fget is not None
        sig = inspect.signature(value.fget)
        kind = annotation_text(sig.return_annotation) if sig.return_annotation else "object"
        head = [f"##### `{owner}.{name}` (property)", ""]
        return head + code([f"{name}: {kind}"]) + paragraph(doc_of(value.fget))
    func = value.__func__ if isinstance(value, staticmethod | classmethod) else value
    assert callable(func)
    drop = not isinstance(value, staticmethod)
    head = [f"##### `{owner}.{name}`", ""]
    return head + code([f"{name}{fmt_signature(func, drop_self=drop)}"]) + paragraph(doc_of(func))


def class_header(cls: type, names: set[str]) -> str:
    """``class Name(Bases):`` naming only public or standard-library bases."""
    bases = [
        b.__name__
        for b in cls.__bases__
        if b is not object and (b.__name__ in names or not b.__module__.startswith("memhop"))
    ]
    return f"class {cls.__name__}({', '.join(bases)}):" if bases else f"class {cls.__name__}:"


def render_class(qual: str, cls: type, names: set[str]) -> list[str]:
    out = [f"#### `{qual}`", ""]
    decl = [class_header(cls, names)]
    if dataclasses.is_dataclass(cls):
        params = cls.__dataclass_params__  # type: ignore[attr-defined]
        flags = ["frozen=True"] if params.frozen else []
        decl.insert(0, f"@dataclass({', '.join(flags)})")
        for f in dataclasses.fields(cls):
            text = f"    {f.name}: {annotation_text(f.type)}"
            if f.default is not dataclasses.MISSING:
                text += f" = {fmt_default(f.default)}"
            elif f.default_factory is not dataclasses.MISSING:
                text += f" = {fmt_default(f.default_factory())}"
            decl.append(text)
    elif issubclass(cls, enum.Enum):
        decl += [f"    {m.name} = {m.value!r}" for m in cls]
    elif issubclass(cls, BaseException):
        code_value = getattr(cls, "default_code", 0)
        if code_value:
            decl.append(
                f"    code = {int(code_value)}  # upstream's number, also memhop.code_of(exc)"
            )
    elif is_public_constructor(cls, names):
        init = cls.__dict__["__init__"]
        decl.append(f"    def __init__{fmt_signature(init)}: ...")
    if len(decl) == 1 or (len(decl) == 2 and decl[0].startswith("@")):
        decl.append("    ...")
    out += code(decl) + paragraph(own_doc(cls))
    if not issubclass(cls, enum.Enum | BaseException):
        shared: list[str] = []
        for name, value, klass in members(cls):
            if klass is not cls and klass.__name__ not in names and len(klass.__subclasses__()) > 1:
                shared.append(f"- `{name}{member_signature(value)}`: {first_line(value)}")
            else:
                out += render_member(cls.__name__, name, value)
        if shared:  # a base many public classes share: one line here, not a section per class
            out += ["Shared with its sibling classes:", "", *shared, ""]
    return out


def render_name(module: str, name: str, obj: object, names: set[str]) -> list[str]:
    qual = f"{module}.{name}"
    if isinstance(obj, type):
        return render_class(qual, obj, names)
    if callable(obj):
        head = [f"#### `{qual}`", ""]
        return head + code([f"def {name}{fmt_signature(obj)}: ..."]) + paragraph(doc_of(obj))
    kind = type(obj).__name__
    value = pprint.pformat(obj, width=WIDTH - len(name) - len(kind) - 6, sort_dicts=False)
    value = value.replace("\n", "\n" + " " * (len(name) + len(kind) + 5))
    return [f"#### `{qual}`", "", *code([f"{name}: {kind} = {value}"])]


def anchors(qualified: list[str]) -> dict[str, str]:
    """GitHub's anchors for the headings ``#### `name` ``, in page order.

    Lower case, punctuation dropped; a repeat gets "-1", "-2" as GitHub numbers
    it (``memhop.Defaults`` and ``memhop.DEFAULTS`` share a base).
    """
    seen: dict[str, int] = {}
    out = {}
    for name in qualified:
        base = re.sub(r"[^\w-]", "", name.lower())
        count = seen.get(base, 0)
        seen[base] = count + 1
        out[name] = f"{base}-{count}" if count else base
    return out


def grouped(module: object, names: list[str], group: str) -> list[str]:
    """The names of ``group`` in ``module``, sorted case-insensitively."""
    chosen = (n for n in names if group_of(getattr(module, n)) == group)
    return sorted(chosen, key=str.casefold)


def render() -> str:
    surface = public_names()
    every = {name for names in surface.values() for name in names}
    lines = [*PREAMBLE.splitlines(), ""]
    lines += ["## Contents", ""]
    order = [
        f"{module}.{n}"
        for module, names in surface.items()
        for group, _ in GROUPS
        for n in grouped(importlib.import_module(module), names, group)
    ]
    anchor = anchors(order)
    for module, names in surface.items():
        mod = importlib.import_module(module)
        lines.append(f"- `{module}`")
        for group, title in GROUPS:
            chosen = grouped(mod, names, group)
            if chosen:
                links = ", ".join(f"[`{n}`](#{anchor[f'{module}.{n}']})" for n in chosen)
                lines.append(f"  - {title}: {links}")
    lines.append("")
    for module, names in surface.items():
        mod = importlib.import_module(module)
        lines += [f"## `{module}`", ""]
        if module != "memhop":
            lines += paragraph(doc_of(mod))
        for group, title in GROUPS:
            chosen = grouped(mod, names, group)
            if not chosen:
                continue
            lines += [f"### {title}", ""]
            for name in chosen:
                lines += render_name(module, name, getattr(mod, name), every)
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Render docs/api.md from memhop's docstrings.")
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/api.md is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT.relative_to(REPO)} is stale: run python scripts/gen_api_docs.py")
            return 1
        print(f"{OUTPUT.relative_to(REPO)} is up to date")
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(REPO)} ({len(documented_names(text))} names)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
