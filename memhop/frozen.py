"""``quick_init``: a frozen, slotted dataclass built at the cost of a mutable one.

A frozen dataclass's ``__init__`` stores each field through ``object.__setattr__``,
a call of its own: a ten-field record costs about four times a plain slotted class
to build, and a turn builds a dozen. ``quick_init`` gives such a class an
``__init__`` with the same signature (names, order, defaults, keyword-only marks)
whose body stores every field in one call of the compiled ``_slots.Filler``, and a
call of the class itself builds the instance in C with no ``__init__`` frame at all
(``_slots.install``: 950 -> 134 ns a ten-field ``ArchiveSlot`` by keyword), a call it
does not take as given (a wrong argument, or an ``__init__`` replaced since) going
the usual way to that ``__init__`` and its refusal. The class stays what
``dataclass`` made it: its ``__setattr__`` refuses every change after, its equality,
hash, repr and pickling are untouched; a subclass builds the usual way. Where the
filler was not built (no C compiler) the class keeps the dataclass's ``__init__``. A
class that needs what only that ``__init__`` does (a default factory,
``__post_init__``, a field left out of ``__init__``, an ``InitVar``) or makes its
instances with its own ``__new__`` is refused (TypeError, at import, with or without
the filler): the decorator is then a mistake, not a no-op to leave in place.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, TypeVar

__all__ = ["COMPILED", "quick_init", "quick_tuple"]

T = TypeVar("T")

try:
    from memhop._slots import REQUIRED, Filler, install
except ImportError:  # built without a C compiler (hatch_build.py says why)
    COMPILED = False
else:
    COMPILED = True


def quick_init(cls: type[T]) -> type[T]:
    """Give the slotted dataclass ``cls`` (frozen, as every record is, or not) an
    ``__init__`` that stores its fields in one call, and calls of ``cls`` that build in C
    (see the module); return ``cls``.
    TypeError for a class that needs the dataclass's own ``__init__``."""
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    names = tuple(f.name for f in fields)
    if (
        hasattr(cls, "__post_init__")
        or cls.__new__ is not object.__new__
        or any(f.default_factory is not dataclasses.MISSING for f in fields)
        or tuple(p.name for p in params) != names
    ):
        msg = (
            f"quick_init: {cls.__qualname__} needs the dataclass's own __init__ (a default"
            " factory, __post_init__, a field out of __init__, an InitVar or a __new__)"
        )
        raise TypeError(msg)
    if not COMPILED:
        return cls
    fill = Filler(cls, names)
    scope: dict[str, Any] = {"_fill": fill}
    spelt: list[str] = []
    for param in params:
        if param.kind is param.KEYWORD_ONLY and "*" not in spelt:
            spelt.append("*")
        if param.default is param.empty:
            spelt.append(param.name)
        else:
            scope[f"_default_{param.name}"] = param.default
            spelt.append(f"{param.name}=_default_{param.name}")
    source = f"def __init__(self, {', '.join(spelt)}):\n    _fill(self, {', '.join(names)})\n"
    exec(source, scope)  # the source is made above from the class's own names
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = cls.__init__.__doc__
    init.__annotations__ = dict(cls.__init__.__annotations__)  # what a signature shows
    cls.__init__ = init  # type: ignore[method-assign]
    positional = sum(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
    defaults = tuple(REQUIRED if p.default is p.empty else p.default for p in params)
    install(cls, fill, names, positional, defaults, init)
    return cls


def quick_tuple(cls: type[T]) -> type[T]:
    """Make calls of the named tuple class ``cls`` build the tuple in C, as ``quick_init``
    does a record's (``_slots.install``): its ``__new__`` (a Python function
    ``namedtuple`` writes) runs only for a call the build does not take as given, for
    its refusal. Return ``cls``; unchanged without the compiled part."""
    fields: tuple[str, ...] = cls._fields  # type: ignore[attr-defined]
    defaults: dict[str, object] = cls._field_defaults  # type: ignore[attr-defined]
    if COMPILED:
        held = tuple(defaults.get(name, REQUIRED) for name in fields)
        install(cls, None, fields, len(fields), held, vars(cls)["__new__"])
    return cls
