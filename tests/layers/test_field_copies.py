"""The hot paths that copy a record field by field (``dataclasses.replace`` costs several
times that, every turn) keep every field: a record with each field set away from its
default comes back equal to what ``replace`` gives. A field added to the record class and
not to the copy fails here, as its value differs from the default the copy would give it."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from memhop.index.l2meta import L2Meta
from memhop.layers import scene
from memhop.records import SceneSlot, TopicSlot


def _filled(cls: type, n: int) -> object:
    """An instance of ``cls`` with every field off its default (fresh objects, not pooled)."""
    values: dict[str, object] = {}
    hints = typing.get_type_hints(cls)
    for at, field in enumerate(dataclasses.fields(cls), start=n):
        kind = hints[field.name]
        if kind is int or kind == int | None:
            values[field.name] = 10**12 + at  # past the small ints Python shares
        elif kind is str:
            values[field.name] = "".join(["f", str(at)])
        elif kind == tuple[str, ...]:
            values[field.name] = tuple("".join(["k", str(at), c]) for c in "ab")
        else:  # a field of a type this builder does not know: teach it, and check the copy
            pytest.fail(f"{cls.__name__}.{field.name}: {kind} has no test value here")
    return cls(**values)


def test_a_scenes_opened_turn_keeps_every_other_field() -> None:
    held = _filled(SceneSlot, 1)
    assert isinstance(held, SceneSlot)
    opened = scene.open_turn(held, 1_700_000_000_123)
    assert opened == dataclasses.replace(
        held, turn_seq=held.turn_seq + 1, last_used_at=1_700_000_000_123
    )
    assert opened != held  # a control: the turn did move


def test_a_pooled_topic_row_keeps_every_field() -> None:
    meta = L2Meta()
    first = _filled(TopicSlot, 1)
    assert isinstance(first, TopicSlot)
    meta.put(first)  # pools its keywords and scene id
    again = _filled(TopicSlot, 1)  # equal values, other objects: the copy path runs
    assert isinstance(again, TopicSlot)
    held = meta.put(again)
    assert held == again
    assert held is not again  # a control: it was copied, with the pooled objects
    assert held.fused_keywords[0] is first.fused_keywords[0]
