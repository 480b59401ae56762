"""B: the turn loop, search -> append_archive -> update (api.md §5, §9; tests.md B)."""

from __future__ import annotations

import pytest

import memhop

from .conftest import (
    TS,
    FakeModel,
    Mem,
    assert_grows,
    assert_id,
    assert_scoped,
    footprint,
    open_new,
    refused,
    turn,
)

EVENT = memhop.ArchiveKind.EVENT
UTTERANCE = memhop.ArchiveKind.UTTERANCE


def keyword_calls(mem: Mem) -> int:
    assert isinstance(mem.model, FakeModel)
    return mem.model.calls["keywords"]


# ---- B01 / B03 / B10 / B13 ---------------------------------------------------------------------


def test_b01_search_update_lists_the_turn_and_stores_its_lines(fake_mem: Mem) -> None:
    me = fake_mem.primary()
    scene = me.search(new_scene=True).scene.scene_id
    listed = me.search(scene_id=scene)
    assert listed.topics == ()
    assert keyword_calls(fake_mem) == 0, "reads never distill"
    opened = me.search(scene_id=scene)
    closed = me.update(input="用户要求重构代码", output="好的,我来重构这段代码", created_at=TS)
    assert closed.id == opened.new_topic_id
    assert keyword_calls(fake_mem) == 1
    # a refused append (no content) costs nothing and stores nothing
    with refused(fake_mem.db, memhop.InvalidQueryError, 1003, "content is required"):
        me.append_archive(content="", created_at=1)
    assert keyword_calls(fake_mem) == 1

    db = fake_mem.settle()
    me = db.primary()
    again = me.search(scene_id=scene)
    assert [t.id for t in again.topics] == [closed.id]
    assert again.topics[0].fused_keywords == ("重构", "代码", "测试")
    rows = me.search_l4(topic_id=closed.id)
    assert [(r.seq, r.role, r.content) for r in rows] == [
        (1, memhop.ArchiveRole.USER, "用户要求重构代码"),
        (2, memhop.ArchiveRole.AGENT, "好的,我来重构这段代码"),
    ]
    assert me.list_scenes()
    assert me.search_l4(keyword="重构")
    assert len(me.search_l4(ids=[rows[0].id])) == 1


def test_b03_one_distillation_per_turn(fake_mem: Mem) -> None:
    me = fake_mem.primary()
    ids = [turn(me, i)[1].id for i in range(5)]
    assert keyword_calls(fake_mem) == 5
    assert fake_mem.db.stats().model_usage[me.agent_id].calls == 5
    db = fake_mem.settle()
    assert [r.topic_id for r in db.primary().scene_context().topics] == ids
    assert [t.id for t in db.primary().search().topics] == ids


def test_b10_new_topic_ids_are_sixteen_hex_and_never_zero(mem: Mem) -> None:
    me = mem.primary()
    minted = {me.search().new_topic_id for _ in range(3)}
    assert len(minted) == 3
    for topic_id in minted:
        assert_id(topic_id)
    db = mem.settle()
    after = db.primary().search().new_topic_id
    assert_id(after)
    assert after not in minted, "a turn id was reissued"
    assert db.primary().agent_id == "0" * 16


def test_b13_round_flow_read_side(mem: Mem) -> None:
    me = mem.primary()
    opened = me.search(new_scene=True)
    assert "name: test-primary" in opened.profile_brief
    assert opened.new_topic_id
    assert opened.scene.scene_id
    closed = me.update(input="hello", output="hi there", outcome="done", created_at=TS)
    assert closed.id == opened.new_topic_id
    assert closed.fused_keywords
    second = me.search()
    assert second.scene.scene_id == opened.scene.scene_id
    db = mem.settle()
    rows = db.primary().scene_context().topics
    assert [r.topic_id for r in rows] == [closed.id], "an open turn owns no topic row"
    assert second.new_topic_id not in [r.topic_id for r in rows]


# ---- B02 / B06 / B07: refusals that store nothing ------------------------------------------------


def test_b02_writes_refuse_when_no_turn_is_open(fake_mem: Mem) -> None:
    db = fake_mem.db
    me = db.primary()
    with refused(db, memhop.InvalidQueryError, 1003, "no turn is open"):
        me.update(input="x", output="y", created_at=TS)
    with refused(db, memhop.InvalidQueryError, 1003, "no turn is open"):
        me.append_archive(content="c", created_at=TS, kind=EVENT, event_type="tool_call")
    with refused(db, memhop.InvalidQueryError, 1003, "no turn is open"):
        me.append_archive(content="c", created_at=TS)
    assert keyword_calls(fake_mem) == 0
    # control: once a turn is open the close succeeds
    opened = me.search(new_scene=True)
    closed = assert_grows(db, lambda: me.update(input="x", output="y", created_at=TS))
    assert closed.id == opened.new_topic_id
    assert keyword_calls(fake_mem) == 1


def test_b15_a_restart_forgets_the_open_turn_but_not_the_settled_ones(meh_path: str) -> None:
    db = open_new(meh_path)
    me = db.primary()
    ids = [turn(me, i)[1].id for i in range(2)]
    me.search()  # an open turn that the restart forgets
    me.append_archive(content="x", created_at=TS)  # control: it is open before the restart
    db.close()
    db = memhop.open(meh_path, memhop.LocalModel())
    me = db.primary()
    with refused(db, memhop.InvalidQueryError, 1003, "no turn is open"):
        me.update(input="x", created_at=TS)
    with refused(db, memhop.InvalidQueryError, 1003, "no turn is open"):
        me.append_archive(content="x", created_at=TS)
    assert [r.topic_id for r in me.scene_context().topics] == ids
    db.close()


def test_b06_update_needs_at_least_one_side_of_the_dialogue(fake_mem: Mem) -> None:
    db = fake_mem.db
    me = db.primary()
    opened = me.search()
    fragment = "a turn closes with an input, an output or an outcome"
    with refused(db, memhop.InvalidQueryError, 1003, fragment):
        me.update(created_at=TS)
    assert keyword_calls(fake_mem) == 0, "refused before the model was asked"
    closed = me.update(input="in", output="out", created_at=TS)  # the turn stayed open
    assert closed.id == opened.new_topic_id
    assert keyword_calls(fake_mem) == 1

    out_only = me.search()
    me.update(output="only the answer", created_at=TS + 1)
    in_only = me.search()
    me.update(input="only the question", created_at=TS + 2)
    # each one-sided turn re-closes with only an outcome
    me.update(outcome="suspended", created_at=TS + 3)
    me.search(scene_id=opened.scene.scene_id)
    db = fake_mem.settle()
    me = db.primary()
    assert [(r.seq, r.role, r.content) for r in me.search_l4(topic_id=out_only.new_topic_id)] == [
        (2, memhop.ArchiveRole.AGENT, "only the answer")
    ]
    rows = me.search_l4(topic_id=in_only.new_topic_id, kind=UTTERANCE)
    assert [(r.seq, r.role, r.content) for r in rows] == [
        (1, memhop.ArchiveRole.USER, "only the question")
    ]
    events = me.search_l4(topic_id=in_only.new_topic_id, kind=EVENT)
    assert [(e.event_type, e.content) for e in events] == [("turn_outcome", "suspended")]


def test_b07_empty_writes_refuse_and_store_nothing(mem: Mem) -> None:
    db = mem.db
    me = db.primary()
    first = me.search()
    with refused(db, memhop.InvalidQueryError, 1003) as caught:
        me.update(created_at=TS)
    assert "input" in str(caught[0])
    assert "outcome" in str(caught[0])
    assert me.scene_context().topics == ()
    with refused(db, memhop.InvalidQueryError, 1003, "content"):
        me.append_archive(content="", created_at=TS, kind=EVENT, event_type="x", content_type=0)
    me.update(input="问", output="答", outcome="", created_at=TS)
    second = me.search()
    me.update(input="问 2", output="答 2", outcome="已交付", created_at=TS + 1)
    third = me.search()
    me.update(output="答 3", created_at=TS + 2)
    db = mem.settle()
    me = db.primary()
    rows = me.search_l4(topic_id=first.new_topic_id)
    assert [r.kind for r in rows] == [UTTERANCE, UTTERANCE], "a blank outcome records nothing"
    events = me.search_l4(topic_id=second.new_topic_id, kind=EVENT)
    assert [(e.event_type, e.content) for e in events] == [("turn_outcome", "已交付")]
    rows = me.search_l4(topic_id=third.new_topic_id)
    assert [(r.seq, r.role) for r in rows] == [(2, memhop.ArchiveRole.AGENT)]


# ---- B04 / B05 / B09 / B12 / B14: events and slots -------------------------------------------


def test_b04_events_appended_before_the_close_take_slots_three_and_four(mem: Mem) -> None:
    me = mem.primary()
    opened = me.search()
    payload = '{"tool":"read_file","file":"a.go"}'
    assert (
        me.append_archive(content=payload, created_at=TS, kind=EVENT, event_type="tool_call") == 3
    )
    seq = me.append_archive(
        content="file content", created_at=TS + 500, kind=EVENT, event_type="tool_result"
    )
    assert seq == 4
    # readable mid-round, before the close
    assert len(me.search_l4(topic_id=opened.new_topic_id, kind=EVENT)) == 2
    me.update(input="read a.go", output="done reading", created_at=TS + 600)
    db = mem.settle()
    me = db.primary()
    assert opened.new_topic_id in [t.id for t in me.search().topics]
    events = me.search_l4(topic_id=opened.new_topic_id, kind=EVENT)
    assert [(e.seq, e.event_type, e.content, e.created_at) for e in events] == [
        (3, "tool_call", payload, TS),
        (4, "tool_result", "file content", TS + 500),
    ]
    assert all(e.role == memhop.ArchiveRole.USER for e in events)
    assert all(e.content_type == memhop.ContentType.TEXT for e in events)


def test_b05_the_turn_content_shares_one_key_and_events_stay_out_of_messages(
    fake_mem: Mem,
) -> None:
    me = fake_mem.primary()
    opened = me.search()
    me.append_archive(
        content='{"tool":"bash","cmd":"go test"}', created_at=TS, kind=EVENT, event_type="tool_call"
    )
    me.update(input="跑一下测试", output="go test ./... 全绿", created_at=TS + 1)
    assert keyword_calls(fake_mem) == 1
    db = fake_mem.settle()
    me = db.primary()
    ctx = me.scene_context(opened.scene.scene_id)
    assert len(ctx.topics) == 1
    messages = ctx.topics[0].messages
    assert [(m.seq, m.role, m.content) for m in messages] == [
        (1, memhop.ArchiveRole.USER, "跑一下测试"),
        (2, memhop.ArchiveRole.AGENT, "go test ./... 全绿"),
    ]
    events = me.search_l4(topic_id=opened.new_topic_id, kind=EVENT)
    assert [(e.seq, e.event_type) for e in events] == [(3, "tool_call")]
    assert len(me.search_l4(topic_id=opened.new_topic_id, kind=UTTERANCE)) == 2
    assert len(me.search_l4(topic_id=opened.new_topic_id)) == 3


def test_b09_an_append_returns_the_address_a_replay_rewrites(mem: Mem) -> None:
    me = mem.primary()
    opened = me.search()
    first = me.append_archive(content="one", created_at=TS, kind=EVENT, event_type="step")
    second = me.append_archive(content="two", created_at=TS, kind=EVENT, event_type="step")
    assert second == first + 1
    assert (
        me.append_archive(
            content="one, replayed", created_at=TS + 1, kind=EVENT, event_type="step", seq=first
        )
        == first
    )
    me.update(input="q", output="a", created_at=TS + 2)
    db = mem.settle()
    me = db.primary()
    events = me.search_l4(topic_id=opened.new_topic_id, kind=EVENT)
    assert [(e.seq, e.content) for e in events] == [(first, "one, replayed"), (second, "two")]
    by_id = me.search_l4(ids=[events[0].id])
    assert [r.content for r in by_id] == ["one, replayed"]


def test_a_named_seq_overwrites_across_kinds(mem: Mem) -> None:
    me = mem.primary()
    opened = me.search()
    seq = me.append_archive(content="an event", created_at=TS, kind=EVENT, event_type="x")
    me.append_archive(content="now a line", created_at=TS, seq=seq, role=2)
    me.update(input="q", created_at=TS)
    db = mem.settle()
    rows = db.primary().search_l4(topic_id=opened.new_topic_id)
    assert [(r.seq, r.kind, r.content) for r in rows] == [
        (1, UTTERANCE, "q"),
        (seq, UTTERANCE, "now a line"),
    ]


def test_b12_an_append_after_the_close_lands_on_the_same_turn(mem: Mem) -> None:
    me = mem.primary()
    topics = []
    for i in range(4):
        opened = me.search()
        me.update(input=f"in {i}", output=f"out {i}", created_at=TS + i)
        seq = me.append_archive(
            content=f"after close {i}", created_at=TS + i, kind=EVENT, event_type="note"
        )
        assert seq == 3
        topics.append(opened.new_topic_id)
    db = mem.settle()
    me = db.primary()
    assert len(me.search_l4()) >= 8
    for i, topic_id in enumerate(topics):
        events = me.search_l4(topic_id=topic_id, kind=EVENT)
        assert [e.content for e in events] == [f"after close {i}"]


def test_b14_the_outcome_word_becomes_a_turn_outcome_event(mem: Mem) -> None:
    me = mem.primary()
    _, closed = turn(me, 0, input="q", output="a", outcome="succeeded")
    db = mem.settle()
    events = db.primary().search_l4(kind=EVENT)
    assert [(e.event_type, e.content, e.topic_id, e.node_seq) for e in events] == [
        ("turn_outcome", "succeeded", closed.id, 0)
    ]


def test_b16_the_model_sees_every_line_labelled_in_seq_order(fake_mem: Mem) -> None:
    me = fake_mem.primary()
    me.search()
    me.append_archive(content="注入的上下文", created_at=TS, seq=5, role=memhop.ArchiveRole.SYSTEM)
    me.append_archive(content="not spoken", created_at=TS, kind=EVENT, event_type="tool_call")
    me.update(input="问 A", output="答 A", created_at=TS)
    assert isinstance(fake_mem.model, FakeModel)
    assert fake_mem.model.texts == ["User: 问 A\nAssistant: 答 A\nSystem: 注入的上下文"]


def test_a_replayed_close_shows_the_model_its_new_lines_over_the_old(fake_mem: Mem) -> None:
    """A replay's lines replace the first close's in what the model reads (they are written
    after it answers), and a host utterance stays in both readings."""
    me = fake_mem.primary()
    me.search()
    me.append_archive(content="context", created_at=TS, seq=4, role=memhop.ArchiveRole.SYSTEM)
    me.update(input="first q", output="first a", created_at=TS)
    me.update(input="second q", created_at=TS + 1)
    assert isinstance(fake_mem.model, FakeModel)
    assert fake_mem.model.texts == [
        "User: first q\nAssistant: first a\nSystem: context",
        "User: second q\nAssistant: first a\nSystem: context",  # slot 2 kept from the first
    ]
    stored = sorted((s.seq, s.content) for s in me.search_l4(kind="utterance"))
    assert stored == [(1, "second q"), (2, "first a"), (4, "context")]


# ---- B08: a refusing model -------------------------------------------------------------------


@pytest.mark.parametrize("failure", ["raises", "no keywords"])
def test_b08_a_refusing_model_leaves_the_turn_open_for_a_retry(fake_mem: Mem, failure: str) -> None:
    model = fake_mem.model
    assert isinstance(model, FakeModel)
    me = fake_mem.primary()
    opened = me.search()
    if failure == "raises":
        model.refuse.add("keywords")
    else:
        model.empty_keywords = True
    with pytest.raises(memhop.LLMError) as info:
        me.update(input="原话一", output="原话二", created_at=TS)
    assert memhop.code_of(info.value) == 9002
    assert model.calls["keywords"] == 1, "asked, then refused"
    assert fake_mem.db.stats().model_usage[me.agent_id].calls == 1
    # the lines are stored, unchanged; no topic row exists
    rows = me.search_l4(topic_id=opened.new_topic_id)
    assert [r.content for r in rows] == ["原话一", "原话二"]
    assert_scoped(
        [r for r in me.scene_context().topics if r.topic_id == opened.new_topic_id],
        me.search_l4(topic_id=opened.new_topic_id),
        "the unsettled turn in the scene listing",
    )
    model.refuse.clear()
    model.empty_keywords = False
    closed = me.update(input="原话一", output="原话二", created_at=TS)
    assert closed.id == opened.new_topic_id
    assert model.calls["keywords"] == 2
    db = fake_mem.settle()
    me = db.primary()
    assert [r.topic_id for r in me.scene_context().topics] == [opened.new_topic_id]
    assert len(me.search_l4(topic_id=opened.new_topic_id)) == 2


def test_an_outcome_only_turn_has_no_content_to_distill_and_never_asks(fake_mem: Mem) -> None:
    me = fake_mem.primary()
    opened = me.search()
    with pytest.raises(memhop.InvalidQueryError) as info:
        me.update(outcome="gave up", created_at=TS)
    assert memhop.code_of(info.value) == 1003
    assert "this turn holds no content to distill" in str(info.value)
    assert keyword_calls(fake_mem) == 0, "never asked"
    # control: the same turn closes once it holds a line
    closed = me.update(input="try again", outcome="gave up", created_at=TS + 1)
    assert closed.id == opened.new_topic_id
    assert keyword_calls(fake_mem) == 1


# ---- B11: each domain holds its own turn -------------------------------------------------------


def test_b11_each_domain_holds_its_own_turn(mem: Mem, tmp_path: object) -> None:
    import pathlib

    assert isinstance(tmp_path, pathlib.Path)
    other = open_new(str(tmp_path / "b.meh"))
    try:
        domains = {
            "primary": mem.primary(),
            "alpha": mem.sub("alpha"),
            "other": other.primary(),
        }
        opened = {word: s.search() for word, s in domains.items()}
        for word, s in domains.items():
            s.append_archive(content=f"{word} event", created_at=TS, kind=EVENT, event_type="e")
        closed = {
            word: s.update(input=f"{word} in", output=f"{word} out", created_at=TS)
            for word, s in domains.items()
        }
        for word in domains:
            assert closed[word].id == opened[word].new_topic_id
        ids = {word: s.agent_id for word, s in domains.items()}
        db = mem.settle()
        sessions = {
            "primary": db.primary(),
            "alpha": mem.session(ids["alpha"]),
            "other": other.primary(),
        }
        for word, s in sessions.items():
            topic = closed[word].id
            lines = s.search_l4(topic_id=topic, kind=UTTERANCE)
            assert [r.content for r in lines] == [f"{word} in", f"{word} out"]
            events = s.search_l4(topic_id=topic, kind=EVENT)
            assert [e.content for e in events] == [f"{word} event"]
    finally:
        other.close()


# ---- §5.1: scenes on the read path -----------------------------------------------------------


def test_search_continues_its_scene_unless_asked_for_a_new_one(mem: Mem) -> None:
    me = mem.primary()
    first, _ = turn(me, 0)
    assert me.search().scene.scene_id == first.scene.scene_id
    fresh = me.search(new_scene=True)
    assert fresh.scene.scene_id != first.scene.scene_id
    assert fresh.scene.scene_name == f"session:{fresh.scene.scene_id}"
    assert fresh.topics == ()
    me.update(input="in the second scene", created_at=TS + 5)
    db = mem.settle()
    me = db.primary()
    # the domain resumes the scene used last, across a reopen too
    assert me.scene_context().scene_name == f"session:{fresh.scene.scene_id}"
    assert me.search().scene.scene_id == fresh.scene.scene_id
    # naming a scene makes it current
    named = me.search(scene_id=first.scene.scene_id)
    assert named.scene.scene_id == first.scene.scene_id
    assert me.search().scene.scene_id == first.scene.scene_id
    assert [s.scene_id for s in me.list_scenes()] == sorted(
        [first.scene.scene_id, fresh.scene.scene_id]
    )


def test_one_search_is_one_turn_and_a_skipped_turn_is_never_reissued(mem: Mem) -> None:
    me = mem.primary()
    skipped = me.search()
    taken = me.search()
    assert taken.new_topic_id != skipped.new_topic_id
    closed = me.update(input="q", output="a", created_at=TS)
    assert closed.id == taken.new_topic_id, "the second search took over the turn"
    db = mem.settle()
    me = db.primary()
    assert [r.topic_id for r in me.scene_context().topics] == [taken.new_topic_id]
    later = {me.search().new_topic_id for _ in range(3)}
    assert not later & {skipped.new_topic_id, taken.new_topic_id}


def test_search_topics_agree_with_the_scene_contexts_depth_one_rows(mem: Mem) -> None:
    me = mem.primary()
    for i in range(4):
        turn(me, 3 - i)  # closed out of time order: listing order is by user_timestamp
    db = mem.settle()
    me = db.primary()
    ctx = me.scene_context()
    surface = [r for r in ctx.topics if r.depth == 1]
    listed = me.search().topics
    assert len(listed) == 4
    assert [(t.id, t.fused_keywords, t.user_timestamp, t.agent_timestamp) for t in listed] == [
        (r.topic_id, r.keywords, r.user_timestamp, r.agent_timestamp) for r in surface
    ]
    assert [t.user_timestamp for t in listed] == sorted(t.user_timestamp for t in listed)


def test_the_turn_bounds_ignore_mid_round_events(mem: Mem) -> None:
    me = mem.primary()
    me.search()
    me.append_archive(content="early", created_at=TS - 50_000, kind=EVENT, event_type="e")
    me.append_archive(content="late", created_at=TS + 50_000, kind=EVENT, event_type="e")
    me.append_archive(content="system line", created_at=TS + 10, role=2)
    closed = me.update(input="q", output="a", created_at=TS)
    assert (closed.user_timestamp, closed.agent_timestamp) == (TS, TS + 10)
    db = mem.settle()
    row = db.primary().scene_context().topics[0]
    assert (row.user_timestamp, row.agent_timestamp) == (TS, TS + 10)


def test_two_closes_of_one_turn_keep_both_endings_and_the_last_dialogue(mem: Mem) -> None:
    me = mem.primary()
    opened = me.search()
    first = me.update(input="q1", output="a1", outcome="first ending", created_at=TS)
    second = me.update(input="q2", output="a2", outcome="second ending", created_at=TS + 1)
    assert first.id == second.id == opened.new_topic_id
    db = mem.settle()
    me = db.primary()
    rows = me.search_l4(topic_id=opened.new_topic_id)
    assert [(r.seq, r.content) for r in rows if r.kind == UTTERANCE] == [(1, "q2"), (2, "a2")]
    assert [r.content for r in rows if r.kind == EVENT] == ["first ending", "second ending"]
    assert [r.topic_id for r in me.scene_context().topics] == [opened.new_topic_id]


def test_an_abandoned_turn_keeps_its_records_but_is_never_listed(mem: Mem) -> None:
    me = mem.primary()
    abandoned = me.search()
    me.append_archive(content="said before abandoning", created_at=TS)
    _, closed = turn(me, 1)
    db = mem.settle()
    me = db.primary()
    kept = me.search_l4(topic_id=abandoned.new_topic_id)
    assert [r.content for r in kept] == ["said before abandoning"]
    assert_scoped(
        [r for r in me.scene_context().topics if r.topic_id == abandoned.new_topic_id],
        [r for r in me.scene_context().topics if r.topic_id == closed.id],
        "an abandoned turn in the listing",
    )


def test_refused_appends_consume_no_slot(mem: Mem) -> None:
    db = mem.db
    me = db.primary()
    opened = me.search()
    first = me.append_archive(content="a", created_at=TS, kind=EVENT, event_type="e")
    with refused(db, memhop.InvalidQueryError, 1003):
        me.append_archive(content="", created_at=TS, kind=EVENT, event_type="e")
    with refused(db, memhop.InvalidQueryError, 1003):
        me.append_archive(content="b", created_at=0, kind=EVENT, event_type="e")
    second = me.append_archive(content="b", created_at=TS, kind=EVENT, event_type="e")
    assert second == first + 1
    me.update(input="q", created_at=TS)
    db = mem.settle()
    events = db.primary().search_l4(topic_id=opened.new_topic_id, kind=EVENT)
    assert [(e.seq, e.content) for e in events] == [(first, "a"), (second, "b")]


# ---- §5.1 refusals on the read path ------------------------------------------------------------


def test_search_refuses_unknown_scenes_and_anchors_and_writes_nothing(mem: Mem) -> None:
    db = mem.db
    me = db.primary()
    first, _ = turn(me, 0)
    other = mem.sub("other")
    foreign = other.search().scene.scene_id  # a real scene id, of another domain
    with refused(db, memhop.NotFoundError, 3001):
        me.search(scene_id=foreign)
    with refused(db, memhop.NotFoundError, 3001):
        me.search(scene_id="aaaaaaaaaaaaaaaa")
    with refused(db, memhop.NotFoundError, 3001):
        me.search(new_scene=True, l3_id="bbbbbbbbbbbbbbbb")
    with refused(db, memhop.InvalidQueryError, 1003):
        me.search(l3_id="bbbbbbbbbbbbbbbb")  # an anchor on a continue
    with refused(db, memhop.InvalidQueryError, 1003) as caught:
        me.search(scene_id=first.scene.scene_id, l3_id="bbbbbbbbbbbbbbbb")
    assert first.scene.scene_id in str(caught[0])
    with refused(db, memhop.InvalidQueryError, 1003):
        me.search(scene_id="not-an-id")
    # control: the same domain's scene continues, and the other domain reads its own
    assert me.search(scene_id=first.scene.scene_id).scene.scene_id == first.scene.scene_id
    assert other.search(scene_id=foreign).scene.scene_id == foreign
    assert len(me.list_scenes()) == 1


def test_c07_contradictory_scene_flags_are_refused(mem: Mem) -> None:
    db = mem.db
    me = db.primary()
    first = me.search(new_scene=True).scene.scene_id
    with refused(db, memhop.InvalidQueryError, 1003):
        me.search(scene_id=first, new_scene=True)
    db = mem.settle()
    me = db.primary()
    assert me.search(scene_id=first).scene.scene_id == first
    assert me.search(new_scene=True).scene.scene_id != first


def test_search_ids_are_parsed_case_insensitively(mem: Mem) -> None:
    me = mem.primary()
    first, closed = turn(me, 0)
    db = mem.settle()
    me = db.primary()
    assert me.search(scene_id=first.scene.scene_id.upper()).scene.scene_id == first.scene.scene_id
    assert [r.id for r in me.search_l4(topic_id=closed.id.upper())] == [
        r.id for r in me.search_l4(topic_id=closed.id)
    ]


# ---- §9: the pure reads -----------------------------------------------------------------------


def test_scene_context_is_a_pure_read(mem: Mem) -> None:
    db = mem.db
    me = db.primary()
    assert me.scene_context() == memhop.SceneContext(scene_name="", topics=())
    assert me.scene_context().to_dict() == {"scene_name": "", "topics": []}
    assert me.list_scenes() == [], "the empty read created no scene"
    first, _ = turn(me, 0)
    db = mem.settle()
    me = db.primary()
    before = footprint(db)
    for _ in range(3):
        assert len(me.scene_context().topics) == 1
        assert len(me.scene_context(first.scene.scene_id).topics) == 1
        me.list_scenes()
        me.get_l0()
        me.search_l4()
    assert footprint(db) == before, "a read wrote"
    # control: search does write (it rewrites the scene's turn counter)
    me.search()
    assert footprint(db)[0] > before[0]


def test_scene_context_refuses_a_scene_this_domain_does_not_hold(mem: Mem) -> None:
    db = mem.db
    me = db.primary()
    first, _ = turn(me, 0)
    foreign = mem.sub("other").search().scene.scene_id
    db = mem.settle()
    me = db.primary()
    for missing in (foreign, "cccccccccccccccc", first.new_topic_id):
        with refused(db, memhop.NotFoundError, 3001):
            me.scene_context(missing)
    with refused(db, memhop.InvalidQueryError, 1003):
        me.scene_context("zz")
    assert len(me.scene_context(first.scene.scene_id).topics) == 1  # control


def test_scene_context_names_the_zero_id_as_missing(mem: Mem) -> None:
    """api.md §9.2: a named id that is not a scene of the domain, zero included, is NotFound."""
    db = mem.db
    me = db.primary()
    first, _ = turn(me, 0)
    db = mem.settle()
    me = db.primary()
    with refused(db, memhop.NotFoundError, 3001):
        me.scene_context("0" * 16)
    assert len(me.scene_context(first.scene.scene_id).topics) == 1  # control


def test_list_scenes_is_in_id_order_and_filters_by_anchor(mem: Mem) -> None:
    me = mem.primary()
    scenes = [me.search(new_scene=True).scene for _ in range(4)]
    db = mem.settle()
    me = db.primary()
    listed = me.list_scenes()
    assert [s.scene_id for s in listed] == sorted(s.scene_id for s in scenes)
    assert all(s.l3_id == "" for s in listed)
    assert all(s.scene_name == f"session:{s.scene_id}" for s in listed)
    assert me.list_scenes() == listed
    assert_scoped(me.list_scenes("dddddddddddddddd"), listed, "scenes anchored to no such graph")
    with refused(db, memhop.InvalidQueryError, 1003):
        me.list_scenes("zz")
