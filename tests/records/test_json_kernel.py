"""The compiled payload writers (``memhop/records/_json.c``) against the Python ones: a
content line's bytes, or None, as ``ArchiveSlot._plain_json``'s; a topic row's and a
scene's as their field writer's whenever the compiled one answers.

``test_plain_json.py`` checks ``to_json`` (which takes the compiled writers where they
were built) against the field writer; this file compares each compiled writer with the
Python writer it stands in for, on every kind of text (lone surrogates and each
character Go escapes included) and every kind of value at the edges of the Go ranges.

Skipped where the install had no C compiler, unless ``MEMHOP_REQUIRE_KERNEL=1`` (CI sets
it), which makes the writer's absence a failure.
"""

from __future__ import annotations

import dataclasses
import enum
import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhop.records import (
    ArchiveKind,
    ArchiveRole,
    ArchiveSlot,
    ContentType,
    SceneSlot,
    TopicSlot,
    compiled,
)
from tests.records.test_plain_json import _numbers, _outcome, hot_records

if compiled.archive is None and os.environ.get("MEMHOP_REQUIRE_KERNEL") != "1":
    pytest.skip("the compiled payload writer was not built here", allow_module_level=True)

from memhop.records import _json  # after the skip: absent without a compiler

ENUMS = (ArchiveKind, ContentType, ArchiveRole)
ESCAPED = '"\\<>&\b\f\n\r\t\x00\x1f\x7f\u2028\u2029\ud800\udfffé€😀a'
# Any character at all: lone surrogates, controls, the HTML trio, the JS separators.
ANY_TEXT = st.one_of(
    st.text(st.characters(blacklist_categories=()), max_size=40),
    st.text(st.sampled_from(ESCAPED), max_size=20),
    st.sampled_from([None, b"bytes", 7]),
)


def _fields(record: Any) -> list[Any]:
    """A record's values in its fields' order, which is each writer's order of arguments."""
    return [getattr(record, field.name) for field in dataclasses.fields(record)]


def _compiled(slot: ArchiveSlot) -> bytes | None:
    return _json.archive(*_fields(slot), ENUMS)


def _topic(row: TopicSlot) -> bytes | None:
    return _json.topic(*_fields(row))


def _scene(scene: SceneSlot) -> bytes | None:
    return _json.scene(*_fields(scene))


_STAMPS = st.one_of(_numbers, st.integers(-(2**63), 2**63 - 1))
_HOT = hot_records(ANY_TEXT, _STAMPS)


@settings(max_examples=500)
@given(slot=_HOT["content line"])
def test_the_compiled_writer_answers_as_the_python_one_does(slot: ArchiveSlot) -> None:
    assert _compiled(slot) == slot._plain_json()


def test_every_character_is_escaped_as_go_escapes_it() -> None:
    """Each code point of the first 0x3000 and a sample above, alone and in text: the same
    bytes as the Python writer; those bytes decode back to the text (a positive control:
    the comparison is of real payloads, not of two Nones)."""
    points = [*range(0x3000), 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xFFFD, 0xFFFF, 0x1F600, 0x10FFFF]
    for point in points:
        text = chr(point)
        for content in (text, f"a{text}b", text * 3):
            slot = ArchiveSlot(id_hash=1, seq=3, topic_id=2, created_at=5, content=content)
            plain = slot._plain_json()
            assert plain is not None
            assert _compiled(slot) == plain, hex(point)


class _Other(enum.IntEnum):
    ONE = 1


def test_values_the_writer_must_take_are_left_to_it() -> None:
    """A bool, a member of an enum not the field's, a value past its range, a str subclass:
    None, so the field writer converts or refuses them; the same line with plain values
    gives bytes (the positive control)."""
    base: dict[str, Any] = {"id_hash": 1, "seq": 3, "topic_id": 2, "created_at": 5}
    assert _compiled(ArchiveSlot(**base, content="x")) is not None
    assert _compiled(ArchiveSlot(**base, kind=ArchiveKind.EVENT, content="x")) is not None

    class Text(str):
        pass

    for field, value in (
        ("kind", True),
        ("kind", _Other.ONE),
        ("kind", 256),
        ("role", -1),
        ("node_seq", 2**32),
        ("seq", 2**64),
        ("created_at", 2**63),
        ("content", Text("x")),
    ):
        assert _compiled(ArchiveSlot(**{**base, "content": "x", field: value})) is None, field


def test_numbers_at_every_digit_boundary_are_written_as_python_writes_them() -> None:
    """Ints are read from their 30-bit digits (``_kernel.h``): each value one digit, two
    and three long, at both edges of the u64 and i64 ranges, and one past them. A value
    in range gives the Python writer's bytes (not None: the writer answered); one past
    it is left to the field writer."""
    edges = [0, 1, 2**30 - 1, 2**30, 2**60 - 1, 2**60, 2**63 - 1, 2**63, 2**64 - 1]
    for value in edges:
        slot = ArchiveSlot(id_hash=value, seq=3, topic_id=value, created_at=5, content="x")
        assert _compiled(slot) == slot._plain_json() is not None, value
    assert _compiled(ArchiveSlot(id_hash=2**64, seq=3, topic_id=2, content="x")) is None
    for stamp in (-(2**63), -(2**60), -(2**30), -1, 2**30, 2**63 - 1):
        slot = ArchiveSlot(id_hash=1, seq=3, topic_id=2, created_at=stamp, content="x")
        assert _compiled(slot) == slot._plain_json() is not None, stamp
    for stamp in (-(2**63) - 1, 2**63, -(2**64)):
        slot = ArchiveSlot(id_hash=1, seq=3, topic_id=2, created_at=stamp, content="x")
        assert _compiled(slot) is None, stamp


def test_a_call_it_cannot_read_is_refused() -> None:
    """Refused with the reason named; the same call made whole is written (the control)."""
    assert _json.archive(1, 0, 3, 0, 0, 2, "", 0, 5, "x", ENUMS) is not None
    with pytest.raises(TypeError, match="11 arguments"):
        _json.archive(1, 2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="byte_types must be a tuple"):
        _json.archive(1, 0, 3, 0, 0, 2, "", 0, 5, "x", list(ENUMS))  # type: ignore[arg-type]


@settings(max_examples=400)
@given(row=_HOT["topic row"], scene=_HOT["scene"])
def test_a_topic_row_and_a_scene_are_written_as_the_field_writer_writes_them(
    row: TopicSlot, scene: SceneSlot
) -> None:
    """Whenever the compiled writer answers, its bytes are the field writer's (escaped
    text included, which the Python one-piece writer leaves to it)."""
    for record, written in ((row, _topic(row)), (scene, _scene(scene))):
        if written is not None:
            assert _outcome(record._written_json) == ("bytes", written)
        assert _outcome(record.to_json) == _outcome(record._written_json)


def test_plain_topic_rows_and_scenes_take_the_compiled_writer() -> None:
    """Usual values, texts with escapes among them, give bytes (not None); a keyword list
    that is not a tuple, a str subclass and a bool are left to the field writer."""
    row = TopicSlot(id=1, scene_id=2, depth=1, fused_keywords=("a", 'b"<'), user_timestamp=3)
    scene = SceneSlot(scene_id=5, scene_name="café\n", turn_seq=7, last_used_at=-9)
    assert _topic(row) == row._written_json()
    assert _scene(scene) == scene._written_json()
    assert (
        _topic(TopicSlot(id=1, parent_id=4, name="n"))
        == TopicSlot(id=1, parent_id=4, name="n")._written_json()
    )

    class Text(str):
        pass

    assert _topic(TopicSlot(id=1, fused_keywords=["a"])) is None  # type: ignore[arg-type]
    assert _topic(TopicSlot(id=1, fused_keywords=(Text("a"),))) is None
    assert _topic(TopicSlot(id=1, depth=True)) is None
    assert _scene(SceneSlot(scene_id=1, scene_name=Text("s"))) is None
    assert _scene(SceneSlot(scene_id=1, turn_seq=2**64)) is None


def test_a_payload_at_its_longest_fits_the_writer_s_bound() -> None:
    """Every character at its longest escape (six bytes), the widest numbers and many
    keywords: the compiled bytes are the Python writer's, however long (the writer sizes
    its buffer from the text's length before writing)."""
    worst = "<\x00\u2028\ud800" * 2_000
    top = 2**64 - 1
    slot = ArchiveSlot(
        id_hash=top,
        kind=ArchiveKind.EVENT,
        seq=top,
        topic_id=top,
        event_type=worst,
        node_seq=2**32 - 1,
        created_at=-(2**63),
        content=worst,
    )
    assert slot._plain_json() is not None
    assert _compiled(slot) == slot._plain_json()
    assert len(_compiled(slot) or b"") > 6 * 2 * len(worst) - 100  # the escapes were written
    row = TopicSlot(
        id=top,
        scene_id=top,
        parent_id=top,
        depth=255,
        name=worst,
        fused_keywords=tuple([worst[:8]] * 500 + ["", "&"]),
        user_timestamp=-(2**63),
        agent_timestamp=2**63 - 1,
    )
    scene = SceneSlot(
        scene_id=top, scene_name=worst, turn_seq=top, last_used_at=-(2**63), l3_id=top
    )
    assert _topic(row) == row._written_json()
    assert _scene(scene) == scene._written_json()
