"""Tool results: enum numbers read as words by the field's annotation, empties left out."""

from __future__ import annotations

import dataclasses

import memhop
from memhop.tools.render import _enum_fields, render


def test_a_stored_number_is_named_by_its_field() -> None:
    """A plain 1 in ``kind`` is "event"; a number with no member stays a number."""
    slot = memhop.ArchiveSlot(id="a" * 16, kind=1, content_type=255, role=7, content="x")
    out = render(slot)
    assert out["kind"] == "event"
    assert out["content_type"] == "other"
    assert out["role"] == 7  # no member: never invented
    assert "event_type" not in out  # empty: left out
    assert out["seq"] == 0  # a zero number is kept (the control for "empty")


def test_every_public_result_class_has_readable_annotations() -> None:
    """render reads each class's hints once; none may fail to resolve."""
    public = [getattr(memhop, name) for name in memhop.__all__]
    # ``is_dataclass`` is also true of an instance (``memhop.DEFAULTS``): only classes here.
    classes = [obj for obj in public if isinstance(obj, type) and dataclasses.is_dataclass(obj)]
    assert len(classes) > 20
    named = {cls.__name__ for cls in classes if _enum_fields(cls)}
    assert {"ArchiveSlot", "SceneMessage", "HypergraphEdge"} <= named
