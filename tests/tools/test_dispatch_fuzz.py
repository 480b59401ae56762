"""Arbitrary JSON text and arbitrary Python values into ``memhop.tools.dispatch``.

Whatever a model (or a confused host) sends, dispatch answers a JSON-ready
dict: a result or ``{"error": {"code", "message"}}``; no exception escapes.
Afterwards the file still closes, reopens and answers ``scene_context()``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import memhop
from memhop import tools
from memhop.tools import schema, table

NAMES = list(tools.TOOLS)
WORDS = ["utterance", "event", "user", "agent", "dream", "text", "other", "causal", "done"]
WORDS += ["skip", "merge", "overwrite", "in_progress", "failed", "EVENT", ""]

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(WORDS),
    st.from_regex(r"[0-9a-f]{16}", fullmatch=True),
    st.sampled_from([0, 1, 3, 255, 1_700_000_000_000, "0" * 16, "\x00", "\ud800"]),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
python_values = st.one_of(
    json_values,
    st.tuples(json_scalars),
    st.binary(max_size=8),
    st.frozensets(st.integers(), max_size=2),
    st.dictionaries(st.integers(), json_scalars, max_size=2),
    st.builds(object),
    st.floats(),
)


def from_schema(node: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values a strict-mode model could send for ``node`` (every key present, nulls allowed)."""
    if "anyOf" in node:
        return st.one_of(*(from_schema(option) for option in node["anyOf"]))
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
    options = []
    for kind in kinds:
        if kind == "string":
            options += [st.text(max_size=10), st.from_regex(r"[0-9a-f]{16}", fullmatch=True)]
        elif kind == "integer":
            options += [st.integers(min_value=-1, max_value=4), st.just(2**64)]
        elif kind == "boolean":
            options.append(st.booleans())
        elif kind == "null":
            options.append(st.none())
        elif kind == "array":
            options.append(st.lists(from_schema(node["items"]), max_size=2))
        elif kind == "object":
            props = {k: from_schema(v) for k, v in node["properties"].items()}
            options.append(st.fixed_dictionaries(props))
    return st.one_of(*options)


SCHEMAS = {d["function"]["name"]: d["function"]["parameters"] for d in tools.schemas()}


@st.composite
def shaped_arguments(draw: st.DrawFn, name: str) -> dict[str, Any]:
    """Arguments that use the tool's own parameter names, with any values."""
    tool = next(t for t in table.TABLE if t.name == name)
    names = [p.name for p in schema.params(tool)] + ["created_at", "seq", "cancel", "x"]
    keys = draw(st.lists(st.sampled_from(names), unique=True, max_size=5))
    items = st.fixed_dictionaries({"title": st.text(max_size=4), "domain": st.just("d")})
    return {k: draw(st.one_of(json_values, items, st.lists(items, max_size=2))) for k in keys}


@st.composite
def calls(draw: st.DrawFn) -> tuple[Any, Any]:
    """Mostly a real tool (one-way branches would drown it: Hypothesis flattens ``one_of``)."""
    known = draw(st.sampled_from(NAMES))
    name = known if draw(st.integers(0, 9)) < 8 else draw(python_values)
    valid = from_schema(SCHEMAS[known])  # what a strict-mode model can send
    shaped = shaped_arguments(known)
    junk = st.one_of(
        json_values.map(json.dumps),
        st.text(max_size=30),
        st.sampled_from(["[" * 5000 + "]" * 5000, '{"a":' * 3000 + "1" + "}" * 3000]),
        python_values,
    )
    pick = draw(st.integers(0, 9))
    if pick < 4:
        return name, draw(valid)
    if pick < 6:
        return name, json.dumps(draw(valid))
    if pick < 8:
        return name, draw(st.one_of(shaped, shaped.map(json.dumps)))
    return name, draw(junk)


def test_dispatch_answers_every_input_with_a_result_or_an_error(tmp_path: Path) -> None:
    path = str(tmp_path / "fuzz.meh")
    defaults = memhop.Defaults(scene_dream_topic_threshold=-1)
    db = memhop.open(path, memhop.LocalModel(), defaults, memhop.ProfileInput(name="fuzz"))
    session = db.primary()
    answered: list[str] = []
    refused: list[int] = []
    escaped: dict[str, str] = {}  # exception type -> first example

    clocks = st.one_of(st.just(1_700_000_000_000), st.none(), python_values)

    @settings(deadline=None)
    @given(
        batch=st.lists(st.tuples(calls(), clocks), min_size=1, max_size=5),
        open_turn=st.booleans(),
    )
    def run(batch: list[tuple[tuple[Any, Any], Any]], open_turn: bool) -> None:
        if open_turn:
            session.search()  # so turn writes get past "no turn is open" to the values
        for (name, arguments), now_ms in batch:
            try:
                answer = tools.dispatch(session, name, arguments, now_ms=now_ms)
                json.dumps(answer)
            except Exception as exc:  # collected: one report lists every kind
                escaped.setdefault(type(exc).__name__, f"{name!r} {arguments!r:.200} -> {exc!r}")
                continue
            if "error" in answer:
                assert set(answer) == {"error"}
                assert isinstance(answer["error"]["message"], str)
                refused.append(answer["error"]["code"])
            else:
                answered.append(str(name))

    try:
        run()
    finally:
        db.close()
    assert not escaped, "non-memhop errors escaped:\n" + "\n".join(escaped.values())
    assert answered, "no call was ever accepted: the fuzz never reached the library"
    assert refused, "no call was ever refused: the fuzz never tried a bad input"
    assert all(code >= 1000 for code in refused)
    with memhop.open(path, memhop.LocalModel()) as again:
        again.primary().scene_context()
        again.primary().search_l4()
