"""Arbitrary values into every public Session method and DB.sub_agent/agent.

Only ``memhop.MemHopError`` subclasses may escape (a model's tool call lands here as
JSON); afterwards the file still closes, reopens and answers ``scene_context()``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import memhop

from .conftest import open_new

plausible = st.one_of(
    st.integers(min_value=1, max_value=999_999_999),
    st.sampled_from([0, 1, 2, 3, 5, 255, 1_700_000_000_000]),
    st.text(max_size=12),
    st.text(st.characters(exclude_categories=()), max_size=6),  # lone surrogates too
)
scalars = st.one_of(
    plausible,
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, -1, 3, 255, 2**63 - 1, 2**63, 2**64, 1_700_000_000_000, 10**15]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.from_regex(r"[0-9a-fA-F]{16}", fullmatch=True),
    st.sampled_from(["", "0" * 16, "f" * 16, "zz", "  ", "\x00", "\ud800", "1" * 17]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=5), inner, max_size=3),
    ),
    max_leaves=6,
)


class Recipe(dict[str, Any]):
    """ProfileInput arguments, built at call time: a refused profile is that call's refusal."""


profiles = st.builds(
    lambda **kwargs: Recipe(kwargs),
    name=values,
    role=st.one_of(st.just(""), values),
    personality=st.one_of(st.just(""), values),
    preferences=st.dictionaries(st.text(max_size=5), values, max_size=2),
)
models = st.one_of(st.just(memhop.LocalModel()), values, st.builds(memhop.LocalModel))

KEYWORDS: dict[str, tuple[str, ...]] = {
    "search": ("scene_id", "l3_id", "new_scene"),
    "append_archive": (
        "content",
        "created_at",
        "kind",
        "seq",
        "content_type",
        "role",
        "event_type",
        "node_seq",
    ),
    "update": ("created_at", "input", "output", "outcome"),
    "search_l4": (
        "keyword",
        "start",
        "end",
        "ids",
        "topic_id",
        "type",
        "kind",
        "node_seq",
        "limit",
    ),
}
REQUIRED: dict[str, tuple[str, ...]] = {
    "append_archive": ("content", "created_at"),
    "update": ("created_at",),
}
POSITIONAL = ("scene_context", "list_scenes", "update_l0", "get_l0")


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    method = draw(st.sampled_from([*KEYWORDS, *POSITIONAL, "sub_agent", "agent", "agent_id"]))
    if method in KEYWORDS:
        required = REQUIRED.get(method, ())
        names = draw(st.lists(st.sampled_from(KEYWORDS[method]), unique=True, max_size=5))
        names = [*required, *(n for n in names if n not in required)]
        return method, (), {n: draw(st.one_of(plausible, values)) for n in names}
    if method == "update_l0":
        return method, (draw(st.one_of(profiles, values)),), {}
    if method == "get_l0" or method == "agent_id":
        return method, (), {}
    if method == "sub_agent":
        return method, (draw(models), draw(st.one_of(profiles, values))), {}
    if method == "agent":
        return method, (draw(models), draw(values)), {}
    return method, tuple(draw(st.lists(values, max_size=1))), {}


def invoke(db: memhop.DB, session: memhop.Session, call: tuple[Any, ...]) -> None:
    method, raw_args, kwargs = call
    args = tuple(memhop.ProfileInput(**a) if isinstance(a, Recipe) else a for a in raw_args)
    if method == "agent_id":
        assert isinstance(session.agent_id, str)
    elif method in ("sub_agent", "agent"):
        getattr(db, method)(*args, **kwargs)
    else:
        getattr(session, method)(*args, **kwargs)


def test_only_memhop_errors_escape_and_the_file_survives(tmp_path: Path) -> None:
    path = str(tmp_path / "fuzz.meh")
    # No automatic Dream: a background pass would outlive the example.
    db = open_new(path, defaults=memhop.Defaults(scene_dream_topic_threshold=-1))
    primary = db.primary()
    sub = db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="fuzz-sub"))
    accepted: list[str] = []
    codes: list[tuple[int, int]] = []
    escaped: dict[tuple[str, str], str] = {}  # (method, exception type) -> first example

    @settings(max_examples=settings().max_examples, deadline=None)
    @given(
        batch=st.lists(calls(), min_size=1, max_size=6),
        on_sub=st.booleans(),
        open_turn=st.booleans(),
    )
    def run(
        batch: list[tuple[str, tuple[Any, ...], dict[str, Any]]], on_sub: bool, open_turn: bool
    ) -> None:
        session = sub if on_sub else primary
        if open_turn:
            session.search()  # so the turn writes get past "no turn is open" to the values
        for call in batch:
            try:
                invoke(db, session, call)
                accepted.append(call[0])
            except memhop.MemHopError as exc:
                codes.append((memhop.code_of(exc), exc.code))
            except Exception as exc:  # collected, not raised: one report lists every kind
                key = (call[0], type(exc).__name__)
                escaped.setdefault(key, f"{call[0]}{call[1]!r}{call[2]!r} -> {exc!r}")

    try:
        run()
    finally:
        db.close()
    assert not escaped, "non-memhop errors escaped:\n" + "\n".join(escaped.values())
    assert all(of == code != 0 for of, code in codes), "a memhop error without its code"
    assert accepted, "no call was ever accepted: the fuzz never reached the library's logic"
    with memhop.open(path, memhop.LocalModel()) as again:
        again.primary().scene_context()
        again.agent(memhop.LocalModel(), sub.agent_id).scene_context()
        again.agents()
        again.primary().search_l4()


# Values the random walk rarely reaches past the earlier checks, pinned one by one. A wrong
# type must be refused with InvalidQueryError (1003: every argument refusal, api.md §15) and
# write nothing; a lone surrogate (a str Python holds but UTF-8 cannot encode) may be stored
# or refused, but only as a MemHopError. Each has a control: the plain value is accepted.
LONE = "\ud800"
PRIMARY = "test-primary"
P = memhop.ProfileInput

# (what, call, bad value, plain value, strict: must be InvalidQueryError)
AWKWARD: list[tuple[str, Any, Any, Any, bool]] = [
    ("append content", lambda s, v: s.append_archive(content=v, created_at=1), LONE, "c", False),
    (
        "append event_type",
        lambda s, v: s.append_archive(content="c", created_at=1, kind=1, event_type=v),
        LONE,
        "tool_call",
        False,
    ),
    ("update input", lambda s, v: s.update(input=v, created_at=1), LONE, "hello", False),
    ("search_l4 keyword", lambda s, v: s.search_l4(keyword=v), LONE, "plain", False),
    ("update_l0 name surrogate", lambda s, v: s.update_l0(P(name=v)), LONE, PRIMARY, False),
    ("update_l0 name int", lambda s, v: s.update_l0(P(name=v)), 5, PRIMARY, True),
    ("update_l0 name None", lambda s, v: s.update_l0(P(name=v)), None, PRIMARY, True),
    ("update_l0 role int", lambda s, v: s.update_l0(P(name=PRIMARY, role=v)), 5, "r", True),
    (
        "update_l0 preference int",
        lambda s, v: s.update_l0(P(name=PRIMARY, preferences={"k": v})),
        5,
        "v",
        True,
    ),
    (
        "sub_agent name int",
        lambda s, v: s.db.sub_agent(memhop.LocalModel(), P(name=v)),
        5,
        "plain",
        True,
    ),
    (
        "sub_agent name surrogate",
        lambda s, v: s.db.sub_agent(memhop.LocalModel(), P(name=v)),
        LONE,
        "plain",
        False,
    ),
]


class _Target:
    """The primary session, with its DB at hand for the sub_agent rows."""

    def __init__(self, db: memhop.DB) -> None:
        self.db = db
        self.session = db.primary()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)


def test_awkward_values_are_refused_as_memhop_errors(tmp_path: Path) -> None:
    from .conftest import footprint

    path = str(tmp_path / "awkward.meh")
    problems: list[str] = []
    with open_new(path) as db:
        target = _Target(db)
        target.search()
        for what, call, bad, good, strict in AWKWARD:
            before = footprint(db)
            try:
                call(target, bad)
                if strict:
                    problems.append(f"{what}: {bad!r} was accepted")
            except memhop.MemHopError as exc:
                if strict and not isinstance(exc, memhop.InvalidQueryError):
                    problems.append(f"{what}: {bad!r} -> {type(exc).__name__} ({exc.code}): {exc}")
                if footprint(db) != before:
                    problems.append(f"{what}: the refusal of {bad!r} wrote to the file")
            except Exception as exc:
                problems.append(f"{what}: {bad!r} -> {type(exc).__name__}: {exc}")
            call(target, good)  # control: the plain value is accepted
    with memhop.open(path, memhop.LocalModel()) as again:
        again.primary().scene_context()
        again.primary().get_l0()
        again.agents()
    assert not problems, "\n".join(problems)
