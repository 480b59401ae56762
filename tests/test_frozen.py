"""``memhop.frozen``: the same classes as ``dataclass`` and ``namedtuple`` make, built in C."""

from __future__ import annotations

import dataclasses
import gc
import inspect
import pickle
import weakref
from dataclasses import FrozenInstanceError, InitVar, dataclass, field
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop import records
from memhop.api import results, results_graph, results_upkeep
from memhop.engine.writes import RecordEntry
from memhop.frozen import COMPILED, quick_init, quick_tuple
from memhop.records import ArchiveSlot, SceneSlot, SlotHeader, TopicSlot
from memhop.root import content

compiled = pytest.mark.skipif(not COMPILED, reason="memhop/_slots.c was not built")


def _dataclasses(*modules: ModuleType) -> list[type]:
    found = {
        value
        for module in modules
        for value in vars(module).values()
        if isinstance(value, type) and dataclasses.is_dataclass(value)
    }
    return sorted(found, key=lambda c: f"{c.__module__}.{c.__qualname__}")


def _built(cls: type) -> bool:
    """Whether calls of ``cls`` build in C (``_slots.install`` left its build there)."""
    return "__memhop_build__" in vars(cls)


# Every record and result class quick_init took.
QUICK = [
    c for c in _dataclasses(records, results, results_graph, results_upkeep, content) if _built(c)
]
ANY = st.one_of(st.none(), st.integers(), st.text(max_size=8), st.tuples(st.integers()))


def _plain(cls: type, values: dict[str, Any]) -> Any:
    """What ``dataclass``'s own ``__init__`` does: each field through ``object.__setattr__``."""
    obj = object.__new__(cls)
    for name, value in values.items():
        object.__setattr__(obj, name, value)
    return obj


@compiled
def test_the_turn_s_records_and_results_are_quick() -> None:
    """The classes a turn builds are among those tested below (a list that came out empty
    would test nothing)."""
    hot = {ArchiveSlot, TopicSlot, SceneSlot, results.TopicSlot, results.SceneSlot}
    hot |= {content.ContentInput}
    assert hot <= set(QUICK)
    assert results.SearchResult in QUICK


@compiled
@pytest.mark.parametrize("cls", QUICK, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
@given(data=st.data())
def test_a_quick_record_holds_what_it_was_given_and_stays_frozen(cls: type, data: Any) -> None:
    names = [f.name for f in dataclasses.fields(cls)]
    values = {name: data.draw(ANY, label=name) for name in names}
    built = cls(**values)
    assert _built(cls)
    assert built == _plain(cls, values)
    assert [getattr(built, name) for name in names] == list(values.values())
    with pytest.raises(FrozenInstanceError):
        built.__setattr__(names[0], 1)  # the dataclass's refusal is still the class's


def _mixed() -> type:
    """A fresh class each call: positional, defaulted and keyword-only fields."""

    @dataclass(frozen=True, slots=True)
    class Mixed:
        a: int
        b: str = "b"
        c: tuple[int, ...] = ()
        _: dataclasses.KW_ONLY
        d: int
        e: float = 0.5

    return Mixed


def test_a_quick_class_keeps_the_signature_defaults_and_refusals() -> None:
    quick, reference = quick_init(_mixed()), _mixed()
    assert _built(quick) is COMPILED
    assert str(inspect.signature(quick)) == str(inspect.signature(reference))
    assert quick.__init__.__qualname__ == reference.__init__.__qualname__
    made = quick(1, d=4)
    assert (made.a, made.b, made.c, made.d, made.e) == (1, "b", (), 4, 0.5)
    assert quick(1, "x", (2,), d=4, e=1.0).c == (2,)
    for args, kwargs in (
        ((), {"d": 1}),
        ((1,), {}),
        ((1, "x", (), 4), {}),
        ((1,), {"d": 1, "f": 0}),
    ):
        with pytest.raises(TypeError) as ours:
            quick(*args, **kwargs)
        with pytest.raises(TypeError) as theirs:
            reference(*args, **kwargs)
        assert str(ours.value) == str(theirs.value)


def test_a_class_that_needs_the_dataclass_init_is_refused() -> None:
    @dataclass(frozen=True, slots=True)
    class Factory:
        a: list[int] = field(default_factory=list)

    @dataclass(frozen=True, slots=True)
    class Posted:
        a: int = 0

        def __post_init__(self) -> None:
            object.__setattr__(self, "a", self.a + 1)

    @dataclass(frozen=True, slots=True)
    class Hidden:
        a: int = 0
        b: int = field(default=2, init=False)

    @dataclass(frozen=True, slots=True)
    class Passed:
        a: int = 0
        extra: InitVar[int] = 0

    @dataclass(frozen=True, slots=True)
    class Plain:
        a: int = 0

    for cls in (Factory, Posted, Hidden, Passed):
        with pytest.raises(TypeError, match="needs the dataclass's own __init__"):
            quick_init(cls)
        assert not _built(cls)  # refused: left as the dataclass made it
    assert Factory().a == []
    assert Posted().a == 1
    assert Hidden().b == 2
    assert Passed(1, 2).a == 1
    # The control: a class with none of those is taken (where _slots.c was built).
    assert _built(quick_init(Plain)) is COMPILED
    assert Plain(3).a == 3


@compiled
def test_a_built_record_holds_its_values_and_lets_go_with_it() -> None:
    quick = quick_init(_mixed())

    class Token:
        pass

    token = Token()
    gone = weakref.ref(token)
    made = quick(token, d=1)
    del token
    gc.collect()
    assert gone() is made.a  # the slot holds it
    del made
    gc.collect()
    assert gone() is None  # and lets go with the record
    # A class and its build are collected together (each holds the other).
    cls_ref = weakref.ref(quick)
    del quick
    gc.collect()
    assert cls_ref() is None


def _field_values(obj: Any) -> list[Any]:
    return [getattr(obj, f.name) for f in dataclasses.fields(obj)]


@compiled
@given(
    a=ANY,
    b=st.none() | ANY,
    c=st.none() | ANY,
    d=ANY,
    e=st.none() | ANY,
    by_place=st.integers(0, 3),
)
def test_a_class_call_builds_what_its_init_builds(
    a: Any, b: Any, c: Any, d: Any, e: Any, by_place: int
) -> None:
    """The class call (built in C) against the dataclass's own: each of the fields that may
    go by place given by place or by name, each default given or left out."""
    quick, reference = quick_init(_mixed()), _mixed()
    # None leaves a defaulted field out; "a" and "d" are required.
    given_values = zip("abcde", (a, b, c, d, e), strict=True)
    kept = {k: v for k, v in given_values if v is not None or k in "ad"}
    place = 0  # how many of the leading a, b, c go by place: a run of given ones
    while place < by_place and "abc"[place] in kept:
        place += 1
    args = [kept[name] for name in "abc"[:place]]
    kwargs = {k: v for k, v in kept.items() if k not in "abc"[:place]}
    made = quick(*args, **kwargs)
    assert _field_values(made) == _field_values(reference(*args, **kwargs))
    assert type(made) is quick
    with pytest.raises(FrozenInstanceError):
        made.__setattr__("a", 1)


def _python_calls(call: Any) -> list[str]:
    """The Python functions ``call()`` runs, by name (``sys.setprofile``)."""
    import sys

    seen: list[str] = []

    def watch(frame: Any, event: str, _arg: object) -> None:
        if event == "call":
            seen.append(frame.f_code.co_name)

    sys.setprofile(watch)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen[1:]  # the first is ``call`` itself


@compiled
def test_a_class_call_runs_no_init_until_the_init_is_replaced() -> None:
    quick = quick_init(_mixed())
    assert _python_calls(lambda: quick(1, d=2)) == []  # built in C: no __init__ frame

    def refused() -> None:
        with pytest.raises(TypeError, match="missing 1 required positional argument: 'a'"):
            quick(d=2)

    assert "__init__" in _python_calls(refused)  # refused by the __init__ itself
    original = quick.__init__  # a lookup in the class: it now has a version tag
    for _ in range(2):  # the second call finds the build in CPython's cache for that tag
        assert _python_calls(lambda: quick(1, d=2)) == []

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        object.__setattr__(self, "e", 9.0)

    quick.__init__ = counted  # the class's tag changes: the cached lookups are not used
    made = quick(1, d=2)
    assert made.e == 9.0  # the replacement ran, so the C build stood aside
    quick.__init__ = original
    assert quick(1, d=2).e == 0.5  # and takes over again with the installed one


@compiled
def test_a_subclass_builds_the_usual_way_with_its_own_fields() -> None:
    base = quick_init(_mixed())

    @dataclass(frozen=True, slots=True)
    class Child(base):  # type: ignore[valid-type, misc]
        f: int = 7

    made = Child(1, d=2, f=3)
    assert (made.a, made.d, made.f) == (1, 2, 3)
    assert "__init__" in _python_calls(lambda: Child(1, d=2))  # not the parent's C build
    assert _python_calls(lambda: base(1, d=2)) == []  # control: the parent's own call is


def test_a_class_with_its_own_new_is_refused() -> None:
    @dataclass(frozen=True, slots=True)
    class Made:
        a: int = 0

        def __new__(cls, *args: Any, **kwargs: Any) -> Any:
            return object.__new__(cls)

    with pytest.raises(TypeError, match="needs the dataclass's own __init__"):
        quick_init(Made)
    assert Made(a=3).a == 3


@compiled
def test_install_refuses_what_it_cannot_build() -> None:
    from memhop._slots import REQUIRED, install

    @dataclass(frozen=True, slots=True)
    class Two:
        a: object = None
        b: object = None

    init = vars(Two)["__init__"]
    for args in (
        (Two, ("a", "b"), 3, (None, None), init),  # more by place than fields
        (Two, ("a", "b"), 0, (None,), init),  # a default short
        (Two, ("a", "missing"), 0, (None, None), init),  # a name that is no slot
        (Two, ("a", 1), 0, (None, None), init),  # a name that is no str
        (Two, ("a", "__class__"), 0, (None, None), init),  # a slot it may not write
        (Two, ("a", "b"), 0, (None, None), lambda: None),  # not the class's __init__
        (int, (), 0, (), init),  # a class that makes its instances its own way
    ):
        with pytest.raises((TypeError, AttributeError)):
            install(*args)
    assert not _built(Two)
    install(Two, ("a", "b"), 2, (REQUIRED, None), init)  # the control: taken
    assert (Two(1).a, Two(1).b, Two(1, 2).b) == (1, None, 2)
    with pytest.raises(TypeError):
        install(Two, ("a", "b"), 2, (REQUIRED, None), init)  # installed already
    assert Two().a is None  # what the build cannot fill goes the usual way, to __init__


def _pair() -> type:
    """A fresh named tuple class each call: a required field and a defaulted one."""
    from typing import NamedTuple

    class Pair(NamedTuple):
        left: object
        right: object = "r"

    return Pair


QUICK_TUPLES = [RecordEntry, SlotHeader]


@compiled
@pytest.mark.parametrize("cls", QUICK_TUPLES, ids=lambda c: c.__qualname__)
@given(data=st.data())
def test_a_quick_tuple_call_builds_what_its_new_builds(cls: Any, data: Any) -> None:
    """Each field by place or by name, each default given or left out, against the
    ``__new__`` ``namedtuple`` wrote (called directly, so not the C build)."""
    names = cls._fields
    values = {
        name: data.draw(ANY, label=name)
        for name in names
        if name not in cls._field_defaults or data.draw(st.booleans(), label=f"give {name}")
    }
    place = data.draw(st.integers(0, len(names)), label="by place")
    # By place only a run of given fields from the first: cut it at the first left out.
    place = next((i for i, n in enumerate(names[:place]) if n not in values), place)
    args = [values[n] for n in names[:place]]
    kwargs = {n: v for n, v in values.items() if n not in names[:place]}
    made = cls(*args, **kwargs)
    assert made == cls.__new__(cls, *args, **kwargs)
    assert type(made) is cls
    assert _python_calls(lambda: cls(*args, **kwargs)) == []  # built in C: no __new__ frame


@compiled
def test_a_quick_tuple_refuses_as_its_new_and_honours_a_new_one() -> None:
    quick, reference = quick_tuple(_pair()), _pair()
    assert quick(1) == (1, "r")
    assert quick(right=2, left=1) == (1, 2)
    for args, kwargs in (((), {}), ((1, 2, 3), {}), ((1,), {"left": 1}), ((1,), {"x": 0})):
        with pytest.raises(TypeError) as ours:
            quick(*args, **kwargs)
        with pytest.raises(TypeError) as theirs:
            reference(*args, **kwargs)
        assert str(ours.value).split("__new__")[1] == str(theirs.value).split("__new__")[1]
    # What a named tuple's own methods make is the same class's, as before.
    made = quick(1, 2)
    assert made._replace(right=3) == (1, 3)
    assert quick._make([4, 5]) == (4, 5)
    entry = RecordEntry(1, 2, 3, b"payload")
    assert pickle.loads(pickle.dumps(entry)) == entry
    original = vars(quick)["__new__"]

    def doubled(cls: Any, left: object, right: object = "r") -> Any:
        return tuple.__new__(cls, (left, left))

    quick.__new__ = staticmethod(doubled)
    assert quick(1) == (1, 1)  # the replacement ran: the C build stood aside
    quick.__new__ = original
    assert quick(1) == (1, "r")  # and takes over again with the installed one
    with pytest.raises(TypeError):
        quick_tuple(quick)  # installed already


def test_quick_tuple_leaves_the_class_as_namedtuple_made_it_without_the_compiler() -> None:
    quick = quick_tuple(_pair())
    assert quick(1) == (1, "r")
    assert ("__memhop_build__" in vars(quick)) is COMPILED
