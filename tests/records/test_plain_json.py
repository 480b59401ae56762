"""The one-piece writers of the turn's hot records equal the field-by-field writer.

ArchiveSlot, TopicSlot and SceneSlot are written on every turn, so their
``to_json`` writes a payload whose values are all plain in one piece and falls
back to ``ObjectWriter`` otherwise. For random values -- ints at and past every
Go range, bools, enum members, None, strings that need escaping or are not
strings at all -- ``to_json`` must give the writer's bytes, or raise the same
SerializationError.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhop.errors import SerializationError
from memhop.records import (
    ArchiveKind,
    ArchiveRole,
    ArchiveSlot,
    ContentType,
    SceneSlot,
    TopicSlot,
    archive,
    scene,
    topic,
)
from memhop.records.gojson import I64_MAX, I64_MIN, U8_MAX, U32_MAX, U64_MAX

_EDGES = [0, 1, U8_MAX, U8_MAX + 1, U32_MAX, U32_MAX + 1, U64_MAX, U64_MAX + 1]
_EDGES += [I64_MAX, I64_MAX + 1, I64_MIN, I64_MIN - 1, -1]


def _mostly(
    usual: st.SearchStrategy[Any], hostile: st.SearchStrategy[Any]
) -> st.SearchStrategy[Any]:
    """Mostly ``usual``, so whole records of usual values come up often.

    (Hypothesis favours the ends of a range, so the hostile pick sits inside it.)
    """
    return st.integers(0, 11).flatmap(lambda k: hostile if k == 5 else usual)


_hostile_numbers = st.one_of(
    st.sampled_from(_EDGES),
    st.integers(-(2**65), 2**65),
    st.booleans(),
    st.sampled_from([None, "3", 2.0, ArchiveKind.EVENT]),
)
_numbers = _mostly(st.integers(0, 2**64 - 1), _hostile_numbers)
_codes = _mostly(
    st.one_of(st.integers(0, 200), st.sampled_from([*ArchiveKind, *ContentType, *ArchiveRole])),
    _hostile_numbers,
)
_texts = _mostly(
    st.text(
        st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters='"\\<>&\u2028\u2029'),
        max_size=12,
    ),
    st.sampled_from(['a "quote"', "<b>&", "tab\there", "\u2028", "\ud800", None, b"bytes"]),
)


def _outcome(write: Callable[[], bytes]) -> tuple[str, Any]:
    try:
        return "bytes", write()
    except SerializationError as exc:
        return "refused", str(exc)
    except (TypeError, ValueError) as exc:  # the writer's own checks
        return "error", type(exc).__name__


def _same(record: Any) -> None:
    plain = record._plain_json()
    written = _outcome(record._written_json)
    assert _outcome(record.to_json) == written
    if plain is not None:  # the one-piece writer answered: it must be the writer's bytes
        assert written == ("bytes", plain)


def hot_records(
    texts: st.SearchStrategy[Any], stamps: st.SearchStrategy[Any] = _numbers
) -> dict[str, st.SearchStrategy[Any]]:
    """The three hot records of random values, their texts from ``texts`` and their signed
    timestamps from ``stamps`` (``test_json_kernel.py`` draws from them too)."""
    return {
        "content line": st.builds(
            ArchiveSlot,
            id_hash=_numbers,
            kind=_codes,
            seq=_numbers,
            content_type=_codes,
            role=_codes,
            topic_id=_numbers,
            event_type=texts,
            node_seq=_numbers,
            created_at=stamps,
            content=texts,
        ),
        "topic row": st.builds(
            TopicSlot,
            id=_numbers,
            scene_id=_numbers,
            parent_id=st.one_of(st.none(), _numbers),
            depth=_codes,
            name=texts,
            fused_keywords=st.one_of(st.lists(texts, max_size=4).map(tuple), st.just(["a", "b"])),
            user_timestamp=stamps,
            agent_timestamp=_numbers,
        ),
        "scene": st.builds(
            SceneSlot,
            scene_id=_numbers,
            scene_name=texts,
            turn_seq=_numbers,
            last_used_at=stamps,
            l3_id=_numbers,
        ),
    }


_RECORDS = hot_records(_texts)


@pytest.mark.parametrize("kind", list(_RECORDS))
@settings(max_examples=300)
@given(data=st.data())
def test_a_hot_record_is_written_as_the_field_writer_writes_it(
    kind: str, data: st.DataObject
) -> None:
    _same(data.draw(_RECORDS[kind]))


def _usual() -> list[Any]:
    """A turn's records with usual values, a line that needs escaping among them."""
    slot = ArchiveSlot(
        id_hash=9,
        kind=ArchiveKind.EVENT,
        seq=3,
        role=ArchiveRole.USER,
        topic_id=4,
        event_type="tool_call",
        created_at=1_700_000_000_000,
        content="a line",
    )
    row = TopicSlot(id=4, scene_id=2, depth=1, fused_keywords=("dog", "walk"), user_timestamp=1)
    scene = SceneSlot(scene_id=2, scene_name="Scene 1", turn_seq=3, last_used_at=5)
    # A tool call's quotes and a multi-line utterance: texts that need escaping stay on the
    # one-piece path, quoted as the writer quotes them.
    quoted = dataclasses.replace(slot, content='recall(query="dog")\nline two <&>')
    return [slot, quoted, row, scene]


def test_plain_records_take_the_one_piece_writer() -> None:
    """Control: the turn's usual values are plain, so the property above compares real bytes."""
    for record in _usual():
        assert record._plain_json() is not None
        assert record.to_json() == record._written_json()


def test_without_the_compiled_writers_the_records_write_the_same_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As on an install without a compiler (``records.compiled``'s writers None, whether or
    not this one built them): each record's ``to_json`` gives the same bytes."""
    records = _usual()
    written = [record.to_json() for record in records]
    for module in (archive, topic, scene):
        monkeypatch.setattr(module, "_compiled_json", None)
    assert [record.to_json() for record in records] == written
