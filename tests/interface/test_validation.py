"""C: validation and bad input, each refusal beside its accepted control (api.md §5.2, §11)."""

from __future__ import annotations

from typing import Any

import pytest

import memhop

from .conftest import TS, FakeModel, Mem, assert_grows, refused

EVENT = memhop.ArchiveKind.EVENT
UTTERANCE = memhop.ArchiveKind.UTTERANCE
HAN_6144 = "字" * 2048  # 6144 UTF-8 bytes: over the event budget, under the utterance one

# (arguments, message fragment) for append_archive; every refusal is InvalidQueryError 1003.
C01_REFUSED: list[tuple[dict[str, Any], str]] = [
    ({"kind": 9, "content": "c", "created_at": 1}, "undefined content kind"),
    ({"kind": EVENT, "event_type": "x", "content": "", "created_at": 1}, "content is required"),
    ({"content": "c", "created_at": 0}, "a positive timestamp is required"),
    ({"content": "c", "created_at": -5}, "a positive timestamp is required"),
    ({"content": "c", "created_at": 1, "content_type": 9}, "undefined content type"),
    ({"kind": EVENT, "event_type": "", "content": "c", "created_at": 1}, "EventType"),
    (
        {"kind": EVENT, "event_type": "x", "content": HAN_6144, "created_at": 1},
        "exceeds the 4096-byte budget",
    ),
    ({"content": "c", "created_at": 1, "event_type": "tool_call"}, ""),
    ({"content": "c", "created_at": 1, "node_seq": 1}, ""),
    ({"content": "c", "created_at": 1, "role": memhop.ArchiveRole.DREAM}, ""),
    ({"content": "c", "created_at": 1, "role": 77}, "undefined content role"),
]
C01_ACCEPTED: list[dict[str, Any]] = [
    {"kind": EVENT, "event_type": "x", "content": "c", "created_at": 1},
    {"content": "c", "created_at": 1, "role": memhop.ArchiveRole.USER},
    {
        "content": "a.png",
        "created_at": 1,
        "role": memhop.ArchiveRole.SYSTEM,
        "content_type": memhop.ContentType.IMAGE,
    },
    {"content": HAN_6144, "created_at": 1},
]


def test_c01_append_refusals_and_their_accepted_controls(mem: Mem) -> None:
    db = mem.db
    me = db.primary()
    opened = me.search()
    for arguments, fragment in C01_REFUSED:
        with refused(db, memhop.InvalidQueryError, 1003, fragment):
            me.append_archive(**arguments)
    seqs = [assert_grows(db, lambda a=a: me.append_archive(**a)) for a in C01_ACCEPTED]
    assert seqs == [3, 4, 5, 6], "refusals consumed no slot"
    db = mem.settle()
    rows = db.primary().search_l4(topic_id=opened.new_topic_id)
    assert [r.content for r in rows] == ["c", "c", "a.png", HAN_6144]
    assert rows[2].content_type == memhop.ContentType.IMAGE
    assert rows[2].role == memhop.ArchiveRole.SYSTEM


@pytest.mark.parametrize(
    "created_at",
    [1_000_000_000, 1_700_000_000, 99_999_999_999, 100_000_000_000_001, 1_700_000_000_000_000],
)
def test_c02_write_timestamps_must_be_milliseconds(fake_mem: Mem, created_at: int) -> None:
    db = fake_mem.db
    me = db.primary()
    opened = me.search()
    fragment = "is not milliseconds since the epoch"
    with refused(db, memhop.InvalidQueryError, 1003, fragment):
        me.append_archive(content="c", created_at=created_at)
    with refused(db, memhop.InvalidQueryError, 1003, fragment):
        me.update(input="q", output="a", created_at=created_at)
    assert isinstance(fake_mem.model, FakeModel)
    assert fake_mem.model.calls["keywords"] == 0, "a refused close asks no model"
    # controls: a relative counter (< 1e9) and the millisecond band's edges are accepted
    for accepted in (1, 999_999_999, 100_000_000_000, 100_000_000_000_000):
        assert_grows(db, lambda t=accepted: me.append_archive(content=f"c{t}", created_at=t))
    closed = me.update(input="q", output="a", created_at=TS)
    assert closed.id == opened.new_topic_id, "the refused close left the turn open"
    db = fake_mem.settle()
    stamps = [r.created_at for r in db.primary().search_l4(topic_id=opened.new_topic_id)]
    assert created_at not in stamps
    assert sorted(stamps) == sorted([TS, TS, 1, 999_999_999, 100_000_000_000, 100_000_000_000_000])


def test_update_refuses_before_writing_or_asking(fake_mem: Mem) -> None:
    db = fake_mem.db
    me = db.primary()
    opened = me.search()
    cases = [
        ({"input": "q", "created_at": 0}, "a positive timestamp is required"),
        ({"output": "长" * (70 * 1024), "created_at": TS}, "exceeds the 65536-byte budget"),
        ({"input": "q", "outcome": "x" * 4097, "created_at": TS}, "exceeds the 4096-byte budget"),
        ({"created_at": TS}, "a turn closes with an input, an output or an outcome"),
    ]
    for arguments, fragment in cases:
        with refused(db, memhop.InvalidQueryError, 1003, fragment):
            me.update(**arguments)
    assert isinstance(fake_mem.model, FakeModel)
    assert fake_mem.model.calls["keywords"] == 0
    # C05 control: the retry with a short output closes the same turn
    closed = assert_grows(db, lambda: me.update(input="q", output="short", created_at=TS))
    assert closed.id == opened.new_topic_id
    assert fake_mem.model.calls["keywords"] == 1
    db = fake_mem.settle()
    assert [r.content for r in db.primary().search_l4(topic_id=closed.id)] == ["q", "short"]


def test_c03_read_bounds_refuse_the_wrong_unit(mem: Mem) -> None:
    db = mem.db
    me = db.primary()
    stamp = TS
    me.search()
    me.append_archive(content="an event", created_at=stamp, kind=EVENT, event_type="e")
    me.update(input="q", output="a", created_at=stamp)
    db = mem.settle()
    me = db.primary()
    assert me.search_l4(start=stamp - 1000, end=stamp + 1000)  # control
    fragment = "not milliseconds"
    for bounds in (
        {"start": stamp // 1000},
        {"end": stamp // 1000},
        {"start": stamp * 1000},
        {"end": stamp * 1000},
        {"start": 1_700_000_000},
    ):
        with refused(db, memhop.InvalidQueryError, 1003, fragment):
            me.search_l4(**bounds)
    assert me.search_l4(end=1000) == []  # a relative counter: accepted, matches nothing
    assert len(me.search_l4(start=0, end=0)) == 3  # unset


def test_c04_an_event_over_the_budget_is_refused_not_truncated(mem: Mem) -> None:
    db = mem.db
    me = db.primary()
    other = me.search()
    me.append_archive(content="other turn", created_at=TS, kind=EVENT, event_type="e")
    me.update(input="q0", created_at=TS)
    opened = me.search()
    me.append_archive(content="one", created_at=TS, kind=EVENT, event_type="e")
    me.append_archive(content="two", created_at=TS, kind=EVENT, event_type="e")
    # name + content is what the budget counts: 1 + 4095 fits, 1 + 4096 does not
    with refused(db, memhop.InvalidQueryError, 1003, "exceeds the 4096-byte budget"):
        me.append_archive(content="x" * 4096, created_at=TS, kind=EVENT, event_type="e")
    assert_grows(
        db, lambda: me.append_archive(content="x" * 4095, created_at=TS, kind=EVENT, event_type="e")
    )
    with refused(db, memhop.InvalidQueryError, 1003, "exceeds the 65536-byte budget"):
        me.append_archive(content="y" * 65537, created_at=TS)
    assert_grows(db, lambda: me.append_archive(content="y" * 65536, created_at=TS))
    db = mem.settle()
    me = db.primary()
    events = me.search_l4(topic_id=opened.new_topic_id, kind=EVENT)
    assert [e.content for e in events] == ["one", "two", "x" * 4095]
    assert [e.content for e in me.search_l4(topic_id=other.new_topic_id, kind=EVENT)] == [
        "other turn"
    ]
    lines = me.search_l4(topic_id=opened.new_topic_id, kind=UTTERANCE)
    assert [len(r.content) for r in lines] == [65536]


def test_c06_a_nameless_event_is_refused_and_the_valid_ones_land_in_order(mem: Mem) -> None:
    db = mem.db
    me = db.primary()
    opened = me.search()
    with refused(db, memhop.InvalidQueryError, 1003):
        me.append_archive(content="no name", created_at=TS, kind=EVENT)
    seqs = [
        me.append_archive(content=f"e{i}", created_at=TS, kind=EVENT, event_type="tool_call")
        for i in range(3)
    ]
    assert seqs == [3, 4, 5]
    db = mem.settle()
    events = db.primary().search_l4(topic_id=opened.new_topic_id, kind=EVENT)
    assert [(e.seq, e.content) for e in events] == [(3, "e0"), (4, "e1"), (5, "e2")]


def test_c08_the_reserved_zero_id_is_refused_where_a_topic_id_is_parsed(mem: Mem) -> None:
    db = mem.db
    me = db.primary()
    opened = me.search()
    for i in range(3):
        me.append_archive(content=f"e{i}", created_at=TS, kind=EVENT, event_type="e")
    me.update(input="q", created_at=TS)
    db = mem.settle()
    me = db.primary()
    real = me.search_l4(topic_id=opened.new_topic_id, kind=EVENT)[0].id
    zero = "0" * 16
    for query in (
        {"ids": [real, zero]},
        {"ids": [zero]},
        {"topic_id": zero, "kind": EVENT},
        {"topic_id": zero, "node_seq": 1},
        {"topic_id": zero},
    ):
        with refused(db, memhop.InvalidQueryError, 1003):
            me.search_l4(**query)
    # control: an unknown but well-formed id is an absence, not an error
    assert [r.id for r in me.search_l4(ids=[real, "aaaaaaaaaaaaaaaa"])] == [real]
    assert len(me.search_l4(topic_id=opened.new_topic_id, kind=EVENT)) == 3


def test_c09_a_scene_id_where_a_turn_id_belongs_is_refused(mem: Mem) -> None:
    db = mem.db
    me = db.primary()
    opened = me.search()
    me.append_archive(content="mid-round", created_at=TS, kind=EVENT, event_type="e")
    # an open turn has content before it has a topic record
    assert len(me.search_l4(topic_id=opened.new_topic_id)) == 1
    with refused(db, memhop.InvalidQueryError, 1003, "new_topic_id"):
        me.search_l4(topic_id=opened.scene.scene_id)
    assert me.search_l4(topic_id="bbbbbbbbbbbbbbbb") == []
    me.update(input="q", output="a", created_at=TS)
    db = mem.settle()
    me = db.primary()
    assert len(me.search_l4(topic_id=opened.new_topic_id)) == 3
    with refused(db, memhop.InvalidQueryError, 1003):
        me.search_l4(topic_id=opened.scene.scene_id)


def test_c11_undefined_enum_numbers_are_refused_and_defined_ones_accepted(mem: Mem) -> None:
    db = mem.db
    me = db.primary()
    opened = me.search()
    with refused(db, memhop.InvalidQueryError, 1003, "undefined content type"):
        me.append_archive(content="c", created_at=1, content_type=6)
    with refused(db, memhop.InvalidQueryError, 1003, "undefined content kind"):
        me.append_archive(content="c", created_at=1, kind=2)
    with refused(db, memhop.InvalidQueryError, 1003):
        me.search_l4(type=6)
    with refused(db, memhop.InvalidQueryError, 1003):
        me.search_l4(kind=2)
    for content_type in memhop.ContentType:
        me.append_archive(content=content_type.name, created_at=1, content_type=content_type)
    for role in (memhop.ArchiveRole.USER, memhop.ArchiveRole.AGENT, memhop.ArchiveRole.SYSTEM):
        me.append_archive(content=role.name, created_at=1, role=int(role))
    me.update(input="q", created_at=TS)
    db = mem.settle()
    me = db.primary()
    for content_type in memhop.ContentType:
        rows = me.search_l4(topic_id=opened.new_topic_id, type=content_type)
        assert content_type.name in [r.content for r in rows]


def test_c17_an_utterance_wearing_event_fields_is_refused(mem: Mem) -> None:
    db = mem.db
    me = db.primary()
    opened = me.search()
    with refused(db, memhop.InvalidQueryError, 1003):
        me.append_archive(
            content="c", created_at=TS, kind=UTTERANCE, role=0, event_type="tool_call"
        )
    with refused(db, memhop.InvalidQueryError, 1003):
        me.append_archive(content="c", created_at=TS, kind=UTTERANCE, node_seq=1)
    with refused(db, memhop.InvalidQueryError, 1003):
        me.append_archive(content="c", created_at=TS, kind=EVENT, event_type="e", node_seq=77)
    me.append_archive(content="plain", created_at=TS, kind=UTTERANCE)  # control
    db = mem.settle()
    rows = db.primary().search_l4(topic_id=opened.new_topic_id)
    assert [r.content for r in rows] == ["plain"]


def test_events_are_stored_as_user_text_whatever_role_and_type_they_name(mem: Mem) -> None:
    me = mem.primary()
    opened = me.search()
    me.append_archive(
        content="e",
        created_at=TS,
        kind=EVENT,
        event_type="x",
        role=memhop.ArchiveRole.SYSTEM,
        content_type=memhop.ContentType.CODE,
    )
    db = mem.settle()
    rows = db.primary().search_l4(topic_id=opened.new_topic_id)
    assert [(r.role, r.content_type) for r in rows] == [
        (memhop.ArchiveRole.USER, memhop.ContentType.TEXT)
    ]


@pytest.mark.parametrize(
    ("arguments", "what"),
    [
        ({"content": 5, "created_at": TS}, "content"),
        ({"content": "c", "created_at": 1.5}, "created_at"),
        ({"content": "c", "created_at": True}, "created_at"),
        ({"content": "c", "created_at": TS, "seq": "3"}, "seq"),
        ({"content": "c", "created_at": TS, "kind": None}, "kind"),
        ({"content": ["c"], "created_at": TS}, "content"),
    ],
)
def test_a_tool_calls_wrong_json_types_are_refused_naming_the_argument(
    mem: Mem, arguments: dict[str, Any], what: str
) -> None:
    db = mem.db
    me = db.primary()
    opened = me.search()
    with refused(db, memhop.InvalidQueryError, 1003, what):
        me.append_archive(**arguments)
    assert_grows(db, lambda: me.append_archive(content="c", created_at=TS))  # control
    db = mem.settle()
    assert len(db.primary().search_l4(topic_id=opened.new_topic_id)) == 1
