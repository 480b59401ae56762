"""TopicSlot.from_plain reads what TopicSlot.from_json reads, or leaves it to it.

Every topic of a domain is read when it loads, so a payload in the shape Go
and memhop write, its strings without escapes, is read by one anchored
pattern and anything else by the Go-rules decoder. The plain path must give
``from_json``'s topic or None (never a topic ``from_json`` would not give,
nor one where it raises), and must be taken for every usual payload without
an escape (else these tests would hold with no path).
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop.errors import DeserializationError
from memhop.records import TopicSlot
from tests.records.near_shape import CODES, NUMBERS, STAMPS, json_strings, objects, outcome

_U64 = st.integers(0, 2**64 - 1) | st.sampled_from([0, 1, 2**63, 2**64 - 1])
_I64 = st.integers(-(2**63), 2**63 - 1) | st.sampled_from([-(2**63), -1, 0, 2**63 - 1])
# Quotes, escapes, what Go escapes (controls, <>&, U+2028) and what Python holds for bad
# UTF-8 (a lone surrogate, written as U+FFFD), among ordinary and non-ASCII text.
_ODD = st.sampled_from(['"', "\\", "\x00", "\x1f", "<&>", "\u2028", "\ud800", '","', "é", "日本"])
_TEXT = st.lists(st.text(max_size=4) | _ODD, max_size=4).map("".join)
_topics = st.builds(
    TopicSlot,
    id=_U64,
    scene_id=_U64,
    parent_id=st.none() | _U64,
    depth=st.integers(0, 255),
    name=_TEXT,
    fused_keywords=st.lists(_TEXT, max_size=5).map(tuple),
    user_timestamp=_I64,
    agent_timestamp=_I64,
)


def _written(topic: TopicSlot, nil: bool) -> bytes:
    """The topic's payload; with ``nil``, no keywords are ``null``, as Go writes a nil slice."""
    data = topic.to_json()
    return data.replace(b'"fused_keywords":[]', b'"fused_keywords":null') if nil else data


def _without_escapes(topic: TopicSlot) -> TopicSlot:
    """The topic with every character its texts would be written escaped left out."""

    def kept(text: str) -> str:
        return "".join(c for c in text if b"\\" not in TopicSlot(id=0, name=c).to_json())

    return dataclasses.replace(
        topic, name=kept(topic.name), fused_keywords=tuple(map(kept, topic.fused_keywords))
    )


@given(_topics, st.booleans())
def test_a_written_topic_reads_as_its_full_decode_or_is_left_to_it(
    topic: TopicSlot, nil: bool
) -> None:
    """Ids up to 2**64-1, stamps at both i64 ends, None parent, empty and nil keywords, any
    text: from_json's topic, or None exactly when a string was written with an escape."""
    data = _written(topic, nil)
    got = TopicSlot.from_plain(topic.id ^ 1, data, {}, {})
    assert got == (None if b"\\" in data else TopicSlot.from_json(data))
    # Control: the same values, their texts without escapes, take the path and read back.
    plain = _without_escapes(topic)
    data = _written(plain, nil)
    assert b"\\" not in data
    assert TopicSlot.from_plain(plain.id, data, {}, {}) == TopicSlot.from_json(data) == plain


@st.composite
def _payloads(draw: st.DrawFn) -> bytes:
    """Topic payloads near and off the usual shape: numbers past their ranges, escapes,
    invalid UTF-8, a ``null`` keyword list, keys reordered, repeated or spaced out."""
    fields = [("id", draw(NUMBERS)), ("scene_id", draw(NUMBERS))]
    if draw(st.booleans()):
        fields.append(("parent_id", draw(NUMBERS)))
    fields.append(("depth", draw(CODES)))
    if draw(st.booleans()):
        fields.append(("name", draw(json_strings())))
    words = draw(st.none() | st.lists(json_strings(), max_size=3))
    fields.append(("fused_keywords", b"null" if words is None else b"[" + b",".join(words) + b"]"))
    fields += [("user_timestamp", draw(STAMPS)), ("agent_timestamp", draw(STAMPS))]
    return draw(objects(fields))


@given(_payloads())
def test_any_payload_reads_as_its_full_decode_or_is_left_to_it(data: bytes) -> None:
    full = outcome(data, TopicSlot.from_json)
    got = TopicSlot.from_plain(0, data, {}, {})
    if got is not None:
        assert ("slot", got) == full  # never a topic from_json would not give, nor raise on
    # Control: a payload as to_json writes it, with no escape, takes the path.
    if full[0] == "slot" and b"\\" not in data:
        topic = full[1]
        assert isinstance(topic, TopicSlot)
        if topic.to_json() == data:
            assert got is not None


_USUAL = (
    '{{"id":{id},"scene_id":{scene_id},"parent_id":{parent_id},"depth":{depth},'
    '"fused_keywords":["a"],"user_timestamp":{user_timestamp},"agent_timestamp":{agent_timestamp}}}'
)
_SMALL = dict(id=1, scene_id=2, parent_id=3, depth=1, user_timestamp=4, agent_timestamp=5)


def _usual(**values: int) -> bytes:
    """A payload in the usual shape, its numbers ``values`` (else small ones)."""
    return _USUAL.format(**(_SMALL | values)).encode()


@pytest.mark.parametrize(
    ("key", "at", "past"),
    [
        ("id", 2**64 - 1, 2**64),
        ("scene_id", 2**64 - 1, 2**64),
        ("parent_id", 2**64 - 1, 2**64),
        ("depth", 255, 256),
        ("user_timestamp", 2**63 - 1, 2**63),
        ("user_timestamp", -(2**63), -(2**63) - 1),
        ("agent_timestamp", 2**63 - 1, 2**63),
        ("agent_timestamp", -(2**63), -(2**63) - 1),
    ],
)
def test_a_number_past_its_range_is_left_to_the_full_decode(key: str, at: int, past: int) -> None:
    """At its bound a number takes the path; one past it, from_json names the error."""
    data = _usual(**{key: at})
    got = TopicSlot.from_plain(0, data, {}, {})
    assert got == TopicSlot.from_json(data)
    assert getattr(got, key) == at
    data = _usual(**{key: past})
    assert TopicSlot.from_plain(0, data, {}, {}) is None
    with pytest.raises(DeserializationError):
        TopicSlot.from_json(data)


def test_keywords_and_ints_are_taken_from_the_pools() -> None:
    """A keyword, a scene id and a stamp shared by two topics are one object each."""
    first = TopicSlot(
        id=2**64 - 1, scene_id=10**12, depth=1, fused_keywords=("tea", "cup"),
        user_timestamp=1_700_000_000_000, agent_timestamp=1_700_000_000_001,
    )  # fmt: skip
    second = dataclasses.replace(first, id=10**13, parent_id=2**64 - 1, fused_keywords=("tea",))
    own_id = int(str(first.id))  # equal to the payload's id, another object
    pool: dict[str, str] = {}
    ints: dict[int, int] = {}
    a = TopicSlot.from_plain(own_id, first.to_json(), pool, ints)
    b = TopicSlot.from_plain(second.id, second.to_json(), pool, ints)
    assert a == first
    assert b == second
    assert b is not None
    assert a is not None
    assert a.id is own_id
    assert b.parent_id is own_id
    assert b.fused_keywords[0] is a.fused_keywords[0] is pool["tea"]
    assert b.scene_id is a.scene_id
    assert b.user_timestamp is a.user_timestamp
    # Control: read apart, the same values are other objects.
    apart = TopicSlot.from_plain(second.id, second.to_json(), {}, {})
    assert apart == b
    assert apart is not None
    assert apart.scene_id is not a.scene_id
    assert apart.fused_keywords[0] is not pool["tea"]
