"""``quick_init`` and ``quick_tuple``: a record built at the cost of a plain tuple.

Calling a frozen dataclass costs ``type.__call__``'s argument tuple and keyword dict,
the dict unpacked again for ``__init__``'s frame, and a call of
``object.__setattr__`` for each field: a ten-field record about 950 ns, and a turn
builds a couple of dozen records, results and named tuples. ``quick_init`` makes a
call of such a class build the instance in C instead (``memhop._slots.install``:
arguments matched to fields, defaults filled, slots filled; 134 ns); ``quick_tuple``
does the same for a named tuple. A call the build does not take as given (an
argument too many, unknown, repeated or missing) or a class whose ``__init__``
(``__new__``) was replaced since goes the usual way, to that ``__init__``
(``__new__``), so refusals are the class's own; a subclass builds the usual way. The
class is otherwise what ``dataclass`` (``namedtuple``) made it: its ``__init__``,
signature, equality, hash, repr, pickling and frozenness. Where ``_slots.c`` was not
built (no C compiler) the class is left as it is. A class that needs what only its
``__init__`` does (a default factory, ``__post_init__``, a field left out of
``__init__``, an ``InitVar``) or makes its instances with its own ``__new__`` is
refused (TypeError, at import, with or without the compiled part): the decorator is
then a mistake, not a no-op to leave in place.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import TypeVar

__all__ = ["COMPILED", "quick_init", "quick_tuple"]

T = TypeVar("T")

try:
    from memhop._slots import REQUIRED, install
except ImportError:  # built without a C compiler (hatch_build.py says why)
    COMPILED = False
else:
    COMPILED = True


def quick_init(cls: type[T]) -> type[T]:
    """Make calls of the slotted dataclass ``cls`` (frozen, as every record is, or not)
    build the instance in C (see the module); return ``cls``. TypeError for a class that
    needs its own ``__init__`` to run."""
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
    if COMPILED:
        positional = sum(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
        defaults = tuple(REQUIRED if p.default is p.empty else p.default for p in params)
        install(cls, names, positional, defaults, vars(cls)["__init__"])
    return cls


def quick_tuple(cls: type[T]) -> type[T]:
    """Make calls of the named tuple class ``cls`` build the tuple in C (see the module);
    return ``cls``."""
    fields: tuple[str, ...] = cls._fields  # type: ignore[attr-defined]
    defaults: dict[str, object] = cls._field_defaults  # type: ignore[attr-defined]
    if COMPILED:
        held = tuple(defaults.get(name, REQUIRED) for name in fields)
        install(cls, fields, len(fields), held, vars(cls)["__new__"])
    return cls
