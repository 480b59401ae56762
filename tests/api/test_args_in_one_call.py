"""A call's arguments taken in one call answer as the checks of each, one by one."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop.api import _args
from memhop.api.types import ArchiveKind, ArchiveRole, ContentType
from memhop.config import MAX_NAME_BYTES
from memhop.errors import InvalidQueryError, MemHopError
from memhop.root.content import ContentInput

# Each argument as a host or a model's tool call may give it: the usual kinds and the odd.
_TEXT = st.one_of(
    st.text(max_size=8),
    st.text(alphabet="ab", min_size=MAX_NAME_BYTES - 1, max_size=MAX_NAME_BYTES + 1),
    st.just("caf\u00e9"),
    st.just("\ud800"),  # a lone surrogate: no UTF-8 form
    st.integers(0, 3),
    st.none(),
)
_INT = st.one_of(st.integers(-3, 2**65), st.booleans(), st.floats(0, 3), st.text(max_size=2))


def _enum(members: Any) -> st.SearchStrategy[object]:
    return st.one_of(
        st.sampled_from(list(members)),
        st.integers(-1, 9),
        st.sampled_from(["event", "USER", "nope", ""]),
        st.booleans(),
        st.floats(0, 2),
    )


def _one_by_one(*a: Any) -> ContentInput:
    content, created_at, kind, seq, content_type, role, event_type, node_seq = a
    return ContentInput(
        content=_args.text(content, "content", None),
        created_at=_args.integer(created_at, "created_at"),
        kind=_args.enum_code(kind, ArchiveKind, "kind"),
        seq=_args.integer(seq, "seq"),
        content_type=_args.enum_code(content_type, ContentType, "content_type"),
        role=_args.enum_code(role, ArchiveRole, "role"),
        event_type=_args.text(event_type, "event_type", MAX_NAME_BYTES),
        node_seq=_args.integer(node_seq, "node_seq"),
    )


def _answer(take: Any, a: tuple[object, ...]) -> tuple[str, object]:
    try:
        made = take(*a)
    except InvalidQueryError as exc:
        return "refused", str(exc)
    return "taken", tuple((type(v), v) for v in (getattr(made, f) for f in made.__slots__))


@given(
    st.tuples(
        _TEXT,
        _INT,
        _enum(ArchiveKind),
        _INT,
        _enum(ContentType),
        _enum(ArchiveRole),
        _TEXT,
        _INT,
    )
)
def test_one_call_answers_as_the_checks_one_by_one(a: tuple[object, ...]) -> None:
    assert _answer(_args.archive_input, a) == _answer(_one_by_one, a)


def test_the_usual_call_is_taken_as_given_and_a_bad_one_is_named() -> None:
    usual = ("hello", 1_700_000_000_000, ArchiveKind.EVENT, 0, 0, 0, "tool_call", 0)
    made = _args.archive_input(*usual)
    assert (made.content, made.kind, made.event_type) == ("hello", ArchiveKind.EVENT, "tool_call")
    bad = ("hello", 1.5, ArchiveKind.EVENT, 0, 0, 0, "tool_call", 0)
    with pytest.raises(InvalidQueryError, match="created_at must be an integer"):
        _args.archive_input(*bad)


def _answer_of(take: Any, a: tuple[object, ...]) -> tuple[str, object]:
    try:
        made = take(*a)
    except MemHopError as exc:  # the zero scene id is not found, not invalid
        return type(exc).__name__, str(exc)
    return "taken", tuple((type(v), v) for v in made)


_ID = st.one_of(st.just(""), st.just("0" * 16), st.just("00000000000000ab"), st.just("xyz"), _TEXT)


@given(st.tuples(_ID, _ID, st.one_of(st.booleans(), st.integers(0, 1), st.none(), st.just(""))))
def test_search_args_answer_as_the_checks_one_by_one(a: tuple[object, object, object]) -> None:
    def one_by_one(scene_id: object, l3_id: object, new_scene: object) -> tuple[object, ...]:
        return (
            _args.scene_ref(scene_id),
            _args.id_or_unset(l3_id, "l3_id"),
            _args.flag(new_scene, "new_scene"),
        )

    assert _answer_of(_args.search_args, a) == _answer_of(one_by_one, a)


@given(st.tuples(_TEXT, _TEXT, _TEXT, _INT))
def test_update_args_answer_as_the_checks_one_by_one(a: tuple[object, ...]) -> None:
    def one_by_one(*b: object) -> tuple[object, ...]:
        return (
            _args.text(b[0], "input", None),
            _args.text(b[1], "output", None),
            _args.text(b[2], "outcome", None),
            _args.integer(b[3], "created_at"),
        )

    assert _answer_of(_args.update_args, a) == _answer_of(one_by_one, a)
    usual = _args.update_args("hi", "", "", 1_700_000_000_000)
    assert usual == ("hi", "", "", 1_700_000_000_000)  # the control: the usual call is taken
