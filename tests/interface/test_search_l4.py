"""H: L4 archive search, filters that compose (api.md §11; tests.md H)."""

from __future__ import annotations

import memhop

from .conftest import TS, Mem, assert_scoped, refused

EVENT = memhop.ArchiveKind.EVENT
UTTERANCE = memhop.ArchiveKind.UTTERANCE


def test_h01_filters_compose_rather_than_short_circuit(mem: Mem) -> None:
    me = mem.primary()
    opened = me.search()
    me.append_archive(
        content="grep retry_policy config/retry.yaml",
        created_at=TS,
        kind=EVENT,
        event_type="tool_call",
    )
    me.update(input="查重试配置", output="重试三次", outcome="answered", created_at=TS + 1)
    db = mem.settle()
    me = db.primary()
    topic = opened.new_topic_id
    everything = me.search_l4(topic_id=topic)
    assert len(everything) == 4
    lines = me.search_l4(topic_id=topic, kind=UTTERANCE)
    events = me.search_l4(topic_id=topic, kind=EVENT)
    assert (len(lines), len(events)) == (2, 2)
    assert [r.id for r in everything if r.kind == UTTERANCE] == [r.id for r in lines]
    assert [r.id for r in everything if r.kind == EVENT] == [r.id for r in events]
    ev0 = events[0]
    assert ev0.event_type == "tool_call"
    all_ids = [r.id for r in everything]
    assert [r.id for r in me.search_l4(ids=[ev0.id])] == [ev0.id]
    assert {r.id for r in me.search_l4(ids=all_ids, kind=EVENT)} == {e.id for e in events}
    assert [r.id for r in me.search_l4(ids=all_ids, keyword="grep")] == [ev0.id]
    assert [r.id for r in me.search_l4(ids=["7777777777777777", ev0.id])] == [ev0.id]
    with refused(db, memhop.InvalidQueryError, 1003):
        me.search_l4(ids=["0" * 16])
    with refused(db, memhop.InvalidQueryError, 1003, "a step filter needs its turn's topic id"):
        me.search_l4(node_seq=1)


def test_h02_limit_keeps_the_tail_after_the_filters(mem: Mem) -> None:
    me = mem.primary()
    topics = []
    for i in range(2):
        opened = me.search()
        me.append_archive(
            content="重试策略查过了", created_at=TS + i * 1000, kind=EVENT, event_type="e"
        )
        me.update(input=f"问 {i}", output=f"答 {i}", outcome="ok", created_at=TS + i * 1000 + 10)
        topics.append(opened.new_topic_id)
    db = mem.settle()
    me = db.primary()
    t0 = topics[0]
    cases = [
        ({}, 2),
        ({"kind": EVENT}, 2),
        ({"kind": UTTERANCE}, 3),
        ({"keyword": "重试"}, 1),
        ({"topic_id": t0}, 2),
        ({"topic_id": t0, "kind": EVENT}, 1),
    ]
    for query, limit in cases:
        full = me.search_l4(**query)
        assert len(full) > limit, query
        limited = me.search_l4(**query, limit=limit)
        assert [r.id for r in limited] == [r.id for r in full[-limit:]], query


def test_h03_the_window_is_inclusive_on_the_records_own_clock(mem: Mem) -> None:
    me = mem.primary()
    base = TS
    minute = 60_000
    for i in range(4):
        stamp = base + i * minute
        me.search()
        me.update(input=f"round {i}", output=f"reply {i}", created_at=stamp)
        me.append_archive(content=f"event {i}", created_at=stamp, kind=EVENT, event_type="e")
    db = mem.settle()
    me = db.primary()
    rows = me.search_l4()
    assert len(rows) >= 8
    assert_scoped(me.search_l4(end=base - 1), rows, "rows before the first stamp")
    for row in rows:
        assert row.id in [r.id for r in me.search_l4(start=row.created_at, end=row.created_at)]
    lo, cut = base + 90_000, base + 2 * minute
    window = {r.id for r in me.search_l4(start=lo, end=cut)}
    expected = {r.id for r in rows if lo <= r.created_at <= cut}
    assert window == expected
    assert 0 < len(window) < len(rows)
    events = me.search_l4(kind=EVENT, start=base, end=cut)
    assert len(events) >= 2
    assert [r.id for r in me.search_l4(kind=EVENT, start=base, end=cut, limit=2)] == [
        r.id for r in events[-2:]
    ]


def test_domain_wide_reads_are_ordered_by_time_then_id(mem: Mem) -> None:
    me = mem.primary()
    me.search()
    for i, stamp in enumerate((TS + 30, TS + 10, TS + 20, TS + 10)):
        me.append_archive(content=f"e{i}", created_at=stamp, kind=EVENT, event_type="e")
    me.update(input="q", created_at=TS + 5)
    db = mem.settle()
    rows = db.primary().search_l4()
    assert [(r.created_at, r.id) for r in rows] == sorted((r.created_at, r.id) for r in rows)
    by_topic = db.primary().search_l4(topic_id=rows[0].topic_id)
    assert [r.seq for r in by_topic] == sorted(r.seq for r in by_topic)


def test_keyword_matches_content_case_insensitively_and_nothing_else(mem: Mem) -> None:
    me = mem.primary()
    me.search()
    me.append_archive(content="Deploy The Service", created_at=TS, kind=EVENT, event_type="zeta")
    me.update(input="quokka habitat", output="marsupial", created_at=TS)
    db = mem.settle()
    me = db.primary()
    assert [r.content for r in me.search_l4(keyword="deploy the SERVICE")] == ["Deploy The Service"]
    assert_scoped(
        me.search_l4(keyword="zeta"), me.search_l4(keyword="deploy"), "event names by keyword"
    )
    assert_scoped(
        me.search_l4(keyword="no such text anywhere"),
        me.search_l4(keyword="QUOKKA"),
        "a keyword nothing contains",
    )


def test_type_and_kind_filters(mem: Mem) -> None:
    me = mem.primary()
    me.search()
    me.append_archive(content="print(1)", created_at=TS, content_type=memhop.ContentType.CODE)
    me.append_archive(content="an event", created_at=TS, kind=EVENT, event_type="e")
    me.update(input="q", created_at=TS)
    db = mem.settle()
    me = db.primary()
    code = me.search_l4(type=memhop.ContentType.CODE)
    assert [r.content for r in code] == ["print(1)"]
    assert_scoped(me.search_l4(type=memhop.ContentType.AUDIO), code, "rows of a type nobody wrote")
    assert [r.content for r in me.search_l4(kind=EVENT)] == ["an event"]
    assert sorted(r.content for r in me.search_l4(kind=UTTERANCE)) == ["print(1)", "q"]


def test_search_l4_results_are_empty_lists_not_none(mem: Mem) -> None:
    me = mem.primary()
    assert me.search_l4() == []
    assert me.search_l4(topic_id="aaaaaaaaaaaaaaaa") == []
    me.search()
    me.append_archive(content="x", created_at=TS)
    db = mem.settle()
    assert len(db.primary().search_l4()) == 1  # control


def test_stored_numbers_come_back_as_their_enums_fresh_and_reopened(mem: Mem) -> None:
    me = mem.primary()
    me.search()
    me.append_archive(content="a fact", created_at=TS, kind=1, event_type="fact")
    me.append_archive(content="a note", created_at=TS + 1, role=2, content_type=1)
    me.update(input="hello", created_at=TS + 2)
    me = mem.settle().primary()
    rows = {r.content: r for r in me.search_l4()}
    assert rows["a fact"].kind is memhop.ArchiveKind.EVENT
    assert rows["a note"].role is memhop.ArchiveRole.SYSTEM
    assert rows["a note"].content_type is memhop.ContentType(1)
    assert rows["hello"].kind is memhop.ArchiveKind.UTTERANCE  # control: a line the model closed
