"""Session.recall: ranked recall over a domain's rows and events (memhop's own).

Public names only and ids the library returned. Every "not found" has a
control that finds the same thing elsewhere. The mirror tests build the
recall mirror first (one recall), then change the memory, so what they check
is the incremental upkeep; each ends by reopening the file, whose mirror is
built from scratch, and comparing the answers.
"""

from __future__ import annotations

import contextlib
import itertools
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memhop
from tests.interface.conftest import TS, Mem, assert_scoped, open_new, refused
from tests.interface.test_dream import SUMMARY, DreamModel, defaults

EVENT = memhop.ArchiveKind.EVENT
MINUTE = 60_000

FERRY = ("When does the ferry to Oslo leave?", "The ferry leaves at noon from pier four")
KITTEN = ("I adopted a kitten named Pixel", "Kittens need their vaccinations soon")
GARDEN = ("The garden tomatoes are ripe", "Pick them in the cool morning")


def say(
    me: memhop.Session,
    lines: tuple[str, str],
    at: int,
    *,
    event: tuple[str, str] | None = None,
    **search: Any,
) -> memhop.TopicSlot:
    """One whole turn with two lines and, optionally, one (event_type, content) event."""
    me.search(**search)
    if event is not None:
        me.append_archive(content=event[1], created_at=at, kind=EVENT, event_type=event[0])
    return me.update(input=lines[0], output=lines[1], created_at=at)


def found(hits: Sequence[memhop.RecallHit]) -> list[tuple[str, str]]:
    """(topic_id, event_type) per hit: which row or event answered, in rank order."""
    return [(h.topic_id, h.event_type) for h in hits]


QUERIES = ("ferry noon", "kitten vaccination", "garden", "storm", "zeppelin hangar", SUMMARY)


def answers(me: memhop.Session, queries: Sequence[str] = QUERIES) -> list[list[memhop.RecallHit]]:
    return [me.recall(q, limit=10) for q in queries]


def assert_same_after_reopen(
    db: memhop.DB, path: str, queries: Sequence[str] = QUERIES, agent_id: str = "0" * 16
) -> None:
    """The incrementally kept mirror answers exactly as one built from scratch on reopen."""
    kept = answers(db.agent(memhop.LocalModel(), agent_id), queries)
    assert any(kept), "control: some query finds something"
    db.close()
    with memhop.open(path, memhop.LocalModel()) as again:
        assert answers(again.agent(memhop.LocalModel(), agent_id), queries) == kept


@pytest.fixture
def opened(meh_path: str) -> Iterator[Callable[..., memhop.DB]]:
    """Open ``meh_path`` (LocalModel unless a model is given); closed after the test."""
    handles: list[memhop.DB] = []

    def make(llm: Any = None, **kwargs: Any) -> memhop.DB:
        handles.append(open_new(meh_path, llm, **kwargs))
        return handles[-1]

    yield make
    for handle in handles:
        if not handle.closed:
            handle.close()


# ---- ranking and what a hit carries ----------------------------------------------------------


def test_the_turn_whose_words_match_ranks_first_and_its_hit_is_readable(mem: Mem) -> None:
    me = mem.primary()
    ferry = say(me, FERRY, TS, new_scene=True)
    kitten = say(me, KITTEN, TS + MINUTE)
    garden = say(me, GARDEN, TS + 2 * MINUTE, new_scene=True)
    me = mem.settle().primary()
    hits = me.recall("when does the ferry leave?")
    assert hits[0].topic_id == ferry.id
    control = me.recall("kitten vaccinations")
    assert control[0].topic_id == kitten.id  # another query, another turn first
    ranked = [h.topic_id for h in control]
    assert garden.id not in ranked  # another scene: it neither says nor borrows "kitten"
    if ferry.id in ranked:  # the ferry turn only borrows its neighbour's lines: it ranks lower
        assert control[ranked.index(ferry.id)].score < control[0].score
    hit = hits[0]
    assert (hit.scene_id, hit.created_at, hit.keywords) == (
        ferry.scene_id,
        TS,
        ferry.fused_keywords,
    )
    assert (hit.origin, hit.derived_from, hit.event_type) == ("turn", (), "")
    assert hit.text == "\n".join(FERRY)  # the turn's lines, in the order they were said
    assert hit.score > 0
    # the ids are ones the rest of the API knows
    rows = me.scene_context(hit.scene_id).topics
    assert hit.topic_id in {r.topic_id for r in rows}
    assert [r.content for r in me.search_l4(topic_id=hit.topic_id)] == list(FERRY)
    assert me.recall("garden tomatoes")[0].scene_id == garden.scene_id != ferry.scene_id
    assert all(a.score >= b.score for a, b in itertools.pairwise(hits))


def test_events_are_found_with_their_type(mem: Mem) -> None:
    me = mem.primary()
    ferry = say(me, FERRY, TS, event=("ferry_delay", "the crossing was delayed by a storm"))
    say(me, KITTEN, TS + MINUTE)
    me = mem.settle().primary()
    (event,) = me.recall("storm")
    assert (event.event_type, event.text) == ("ferry_delay", "the crossing was delayed by a storm")
    assert (event.topic_id, event.scene_id, event.created_at) == (ferry.id, ferry.scene_id, TS)
    assert event.keywords == ()
    # control: the turn's own row answers first for its own words, without an event type
    # (its neighbour, which borrows those lines, may follow)
    assert found(me.recall("pier"))[0] == (ferry.id, "")
    both = found(me.recall("ferry delayed"))
    assert set(both[:2]) == {(ferry.id, ""), (ferry.id, "ferry_delay")}


def test_a_sub_agent_never_recalls_the_primarys_rows(mem: Mem) -> None:
    me = mem.primary()
    ferry = say(me, FERRY, TS, event=("ferry_delay", "a storm delayed the ferry"))
    helper = mem.sub("helper")
    pixel = say(helper, KITTEN, TS + MINUTE)
    helper_id = helper.agent_id
    db = mem.settle()
    me, helper = db.primary(), mem.session(helper_id)
    assert_scoped(helper.recall("ferry storm"), me.recall("ferry storm"), "sub-agent recall")
    assert_scoped(me.recall("kitten Pixel"), helper.recall("kitten Pixel"), "primary recall")
    assert me.recall("ferry")[0].topic_id == ferry.id
    assert helper.recall("kitten")[0].topic_id == pixel.id


# ---- filters and limit -------------------------------------------------------------------------


def test_scene_start_and_end_filters_each_with_a_control(mem: Mem) -> None:
    me = mem.primary()
    early = say(me, FERRY, TS, new_scene=True)
    middle = say(me, ("The ferry back was late", "A ferry strike"), TS + MINUTE, new_scene=True)
    late = say(me, ("Ferry tickets for May", "Buy the ferry tickets"), TS + 2 * MINUTE)
    me = mem.settle().primary()
    every = {h.topic_id for h in me.recall("ferry")}
    assert every == {early.id, middle.id, late.id}  # control for every filter below
    in_second = me.recall("ferry", scene_id=middle.scene_id)
    assert {h.topic_id for h in in_second} == {middle.id, late.id}
    assert {h.topic_id for h in me.recall("ferry", scene_id=early.scene_id)} == {early.id}
    assert me.recall("ferry", scene_id="7777777777777777") == []  # a scene it never had
    assert {h.topic_id for h in me.recall("ferry", start=TS + MINUTE)} == {middle.id, late.id}
    assert {h.topic_id for h in me.recall("ferry", end=TS + MINUTE)} == {early.id, middle.id}
    window = me.recall("ferry", start=TS + MINUTE, end=TS + MINUTE)  # bounds are inclusive
    assert [h.topic_id for h in window] == [middle.id]
    assert me.recall("ferry", start=TS + 3 * MINUTE) == []
    assert me.recall("ferry", scene_id=early.scene_id, start=TS + MINUTE) == []


def test_limit_keeps_the_best_hits(mem: Mem) -> None:
    me = mem.primary()
    made = [say(me, (f"ferry trip {i}", "ferry " * (i + 1)), TS + i) for i in range(7)]
    me = mem.settle().primary()
    assert len(me.recall("ferry")) == 5  # the default
    everything = me.recall("ferry", limit=100)
    assert {h.topic_id for h in everything} == {t.id for t in made}
    assert me.recall("ferry", limit=3) == everything[:3]
    assert me.recall("ferry", limit=1) == everything[:1]


def test_a_query_of_only_stop_words_finds_nothing(db: memhop.DB) -> None:
    me = db.primary()
    say(me, ("What is it that you would have done there?", "It is what it is"), TS)
    ferry = say(me, FERRY, TS + 1)
    assert me.recall("what is it that you would have") == []
    assert me.recall("the and of to") == []
    assert me.recall("the ferry")[0].topic_id == ferry.id  # control


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({"query": 5}, "query"),
        ({"query": "ferry", "limit": 0}, "limit"),
        ({"query": "ferry", "limit": 101}, "limit"),
        ({"query": "ferry", "limit": True}, "limit"),
        ({"query": "ferry", "limit": "5"}, "limit"),
        ({"query": "ferry", "scene_id": "xyz"}, "scene_id"),
        ({"query": "ferry", "scene_id": "12345"}, "scene_id"),
        ({"query": "ferry", "start": 1_700_000_000}, "start"),
        ({"query": "ferry", "end": 1_700_000_000}, "end"),
        ({"query": "ferry", "start": 1.5}, "start"),
    ],
)
def test_bad_input_is_refused(db: memhop.DB, call: dict[str, Any], fragment: str) -> None:
    me = db.primary()
    ferry = say(me, FERRY, TS)
    options = {k: v for k, v in call.items() if k != "query"}
    with refused(db, memhop.InvalidQueryError, 1003, fragment):
        me.recall(call["query"], **options)
    # control: the same call with the bad argument fixed answers
    assert me.recall("ferry", limit=100)[0].topic_id == ferry.id
    assert me.recall("ferry", limit=1, start=TS, end=TS)[0].topic_id == ferry.id


# ---- the mirror stays current ------------------------------------------------------------------


def test_later_turns_and_events_are_found(meh_path: str, opened: Callable[..., memhop.DB]) -> None:
    db = opened()
    me = db.primary()
    say(me, FERRY, TS)
    assert me.recall("zeppelin") == []  # the mirror is built now, before the turn below
    zeppelin = say(me, ("A zeppelin over the bay", "zeppelin tours"), TS + 1)
    assert found(me.recall("zeppelin"))[0] == (zeppelin.id, "")
    turn = me.search()
    me.append_archive(
        content="a storm over the hangar", created_at=TS + 2, kind=EVENT, event_type="seen"
    )
    (event,) = me.recall("hangar")  # found while its turn is still open
    assert (event.topic_id, event.scene_id) == (turn.new_topic_id, zeppelin.scene_id)
    assert (event.event_type, event.text) == ("seen", "a storm over the hangar")
    row = me.update(input="hangar talk", created_at=TS + 2)
    assert set(found(me.recall("hangar"))[:2]) == {(row.id, ""), (row.id, "seen")}
    assert_same_after_reopen(db, meh_path)


def test_an_event_of_a_turn_dropped_unclosed_leaves_its_scene(
    meh_path: str, opened: Callable[..., memhop.DB]
) -> None:
    db = opened()
    me = db.primary()
    first = say(me, FERRY, TS, new_scene=True)
    turn = me.search()
    me.append_archive(content="a storm warning", created_at=TS + 1, kind=EVENT, event_type="e")
    (hit,) = me.recall("storm", scene_id=first.scene_id)  # control: while open, the scene's
    assert (hit.topic_id, hit.scene_id) == (turn.new_topic_id, first.scene_id)
    me.search(new_scene=True)  # the unclosed turn is dropped; its event stays stored
    assert me.recall("storm", scene_id=first.scene_id) == []
    (orphan,) = me.recall("storm")
    assert (orphan.topic_id, orphan.scene_id, orphan.event_type) == (turn.new_topic_id, "", "e")
    assert_same_after_reopen(db, meh_path, ["storm", "ferry"])


def test_a_deleted_topic_is_no_longer_recalled(
    meh_path: str, opened: Callable[..., memhop.DB]
) -> None:
    db = opened()
    me = db.primary()
    ferry = say(me, FERRY, TS, event=("ferry_delay", "a storm delayed the ferry"))
    kitten = say(me, KITTEN, TS + 1)
    assert me.recall("ferry storm")[0].topic_id == ferry.id
    me.delete_topic(ferry.id)
    assert_scoped(me.recall("ferry storm"), me.recall("kitten"), "a deleted topic")
    assert me.recall("kitten")[0].topic_id == kitten.id
    assert_same_after_reopen(db, meh_path)


def test_merged_scenes_answer_under_the_surviving_scene(
    meh_path: str, opened: Callable[..., memhop.DB]
) -> None:
    db = opened()
    me = db.primary()
    ferry = say(me, FERRY, TS, new_scene=True)
    kitten = say(me, KITTEN, TS + 1, new_scene=True, event=("vet", "kitten vet visit booked"))
    assert {h.scene_id for h in me.recall("kitten")} == {kitten.scene_id}
    me.merge_scenes(ferry.scene_id, [kitten.scene_id])
    hits = me.recall("kitten")
    assert set(found(hits)[:2]) == {(kitten.id, ""), (kitten.id, "vet")}
    assert {h.scene_id for h in hits} == {ferry.scene_id}
    assert_scoped(
        me.recall("kitten", scene_id=kitten.scene_id),
        me.recall("kitten", scene_id=ferry.scene_id),
        "the merged-away scene",
    )
    assert_same_after_reopen(db, meh_path)


def test_a_dream_row_answers_for_what_it_folded(
    meh_path: str, opened: Callable[..., memhop.DB]
) -> None:
    db = opened(DreamModel(), defaults=defaults())
    me = db.primary()
    ferry = say(me, FERRY, TS)
    kitten = say(me, KITTEN, TS + 1)
    garden = say(me, GARDEN, TS + 2)
    assert me.recall("kitten")[0].topic_id == kitten.id  # the mirror is built before Dream
    assert me.dream().consolidated_scenes == 1
    (fused,) = (r for r in me.scene_context().topics if r.child_count)
    assert set(fused.derived_from) == {ferry.id, kitten.id}
    (hit,) = me.recall("kitten vaccinations")
    assert hit.topic_id == fused.topic_id  # not the folded turn's own row any more
    assert (hit.origin, set(hit.derived_from)) == ("dream", {ferry.id, kitten.id})
    assert hit.text.split("\n") == [SUMMARY, *KITTEN]  # the summary, then matching lines
    assert me.recall(SUMMARY)[0].topic_id == fused.topic_id  # the neighbour borrowing it follows
    assert [h.topic_id for h in me.recall("ferry pier")][:1] == [fused.topic_id]
    control = me.recall("garden")  # an unfolded turn still answers as itself
    assert [(h.topic_id, h.origin) for h in control][:1] == [(garden.id, "turn")]
    assert_same_after_reopen(db, meh_path)


def test_swept_lines_no_longer_match_and_tracks_still_do(
    meh_path: str, opened: Callable[..., memhop.DB]
) -> None:
    model = DreamModel()
    model.decline = True  # no fold: only the sweep changes the memory
    db = opened(model, defaults=defaults(content_retention_ms=1, sweep_unfolded=True))
    me = db.primary()
    # LocalModel keeps eight words in the track: "zeppelin", the ninth, is only in the lines
    words = "alpha bravo charlie delta echo foxtrot golf hotel"
    old = say(me, (words, "zeppelin"), TS, event=("seen", "a storm came"))
    assert "zeppelin" not in {k.lower() for k in old.fused_keywords}
    assert [h.topic_id for h in me.recall("zeppelin")] == [old.id]  # control: the line matches
    assert me.recall("storm")[0].event_type == "seen"
    report = me.dream()
    assert report.l4_records_pruned == 3
    assert me.recall("zeppelin") == []
    assert me.recall("storm") == []
    (hit,) = me.recall("alpha foxtrot")  # the track is never swept
    assert (hit.topic_id, hit.text) == (old.id, "")
    assert_same_after_reopen(db, meh_path, ["alpha", "zeppelin", "storm"])


def test_a_reopened_file_answers_exactly_as_the_kept_mirror(
    meh_path: str, opened: Callable[..., memhop.DB]
) -> None:
    db = opened(DreamModel(), defaults=defaults())
    me = db.primary()
    assert me.recall("ferry") == []
    say(me, FERRY, TS, new_scene=True, event=("ferry_delay", "a storm delayed the ferry"))
    say(me, KITTEN, TS + 1)
    doomed = say(me, ("zeppelin hangar tour", "zeppelin storm warning"), TS + 2)
    say(me, GARDEN, TS + 3, new_scene=True)
    me.dream()
    me.delete_topic(doomed.id)
    say(me, ("The ferry and the kitten", "garden ferry zeppelin"), TS + 4)
    assert_same_after_reopen(db, meh_path)


# ---- property: any history, the kept mirror equals a rebuilt one ------------------------------

VOCAB = ["ferry", "kitten", "garden", "storm", "zeppelin", "noon"]
STEP = st.one_of(
    st.tuples(
        st.just("turn"),
        st.lists(st.sampled_from(VOCAB), min_size=1, max_size=4),
        st.booleans(),  # new scene
        st.booleans(),  # with an event
    ),
    st.tuples(st.just("delete"), st.integers(0, 20)),
    st.tuples(st.just("drop_scene"), st.integers(0, 20)),
    st.tuples(st.just("merge"), st.integers(0, 20)),
    st.tuples(st.just("dream")),
    st.tuples(st.just("recall"), st.sampled_from(VOCAB)),
    st.tuples(st.just("open"), st.sampled_from(VOCAB)),  # an event; the next turn drops it
)


def apply(me: memhop.Session, steps: list[tuple[Any, ...]]) -> None:
    """Run ``steps`` on ``me``; a step naming something already gone does nothing.

    One more ``update`` ends the history: it closes a turn left open (a reopen forgets
    an open turn) or replays the last closed one, which rewrites that turn's input line.
    """
    made: list[memhop.TopicSlot] = []
    gone = (memhop.NotFoundError, memhop.InvalidQueryError)  # deleted, merged or folded away
    for i, step in enumerate(steps):
        if step[0] == "turn":
            _, words, new_scene, event = step
            text = " ".join(words)
            note = ("note", f"{text} event") if event else None
            made.append(say(me, (text, f"reply {i}"), TS + i, new_scene=new_scene, event=note))
        elif step[0] == "delete" and made:
            with contextlib.suppress(*gone):
                me.delete_topic(made[step[1] % len(made)].id)
        elif step[0] == "drop_scene" and made:
            with contextlib.suppress(*gone):
                me.delete_scene(made[step[1] % len(made)].scene_id)
        elif step[0] == "merge" and made:
            with contextlib.suppress(*gone):
                me.merge_scenes(made[0].scene_id, [made[step[1] % len(made)].scene_id])
        elif step[0] == "dream":
            me.dream()
        elif step[0] == "recall":
            me.recall(step[1])
        elif step[0] == "open":
            me.search()
            me.append_archive(content=step[1], created_at=TS + i, kind=EVENT, event_type="o")
    with contextlib.suppress(memhop.InvalidQueryError):  # "no turn is open": none was closed
        me.update(input="closing words", created_at=TS + len(steps))


@settings(max_examples=30, deadline=None)
@given(steps=st.lists(STEP, min_size=1, max_size=10))
def test_any_history_recalls_as_a_reopened_file(steps: list[tuple[Any, ...]]) -> None:
    queries = [*VOCAB, "ferry kitten storm"]

    def everything(me: memhop.Session) -> list[list[memhop.RecallHit]]:
        """Each query, then all words in each scene (what the scene filter sees)."""
        scenes = [s.scene_id for s in me.list_scenes()]
        every = " ".join(VOCAB)
        return answers(me, queries) + [me.recall(every, limit=10, scene_id=s) for s in scenes]

    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "memory.meh")
        with open_new(path, DreamModel(), defaults=defaults()) as db:
            me = db.primary()
            me.recall("ferry")  # keep the mirror from the start
            apply(me, steps)
            kept = everything(me)
        with memhop.open(path, memhop.LocalModel()) as again:
            assert everything(again.primary()) == kept


def test_a_turn_borrows_its_neighbours_lines_below_its_own(db: memhop.DB) -> None:
    me = db.primary()
    shown = say(me, ("Take a look at this", "Oh wow"), TS, new_scene=True)
    told = say(me, ("Is that your painting?", "Yes, a lake sunrise from last year"), TS + 1)
    other = say(me, ("Unrelated", "Something else"), TS + 2, new_scene=True)
    ranked = [h.topic_id for h in me.recall("lake sunrise painting")]
    assert ranked[:2] == [told.id, shown.id]  # the turn that says it, then its neighbour
    assert other.id not in ranked  # another scene lends nothing
    assert me.recall("unrelated")[0].topic_id == other.id  # control: it is indexed


def test_a_deleted_turn_leaves_its_neighbours_documents(meh_path: str) -> None:
    """The turns beside a deleted one no longer borrow its lines, as a reopened file agrees."""
    with open_new(meh_path, memhop.LocalModel()) as db:
        me = db.primary()
        me.recall("ferry")  # the mirror is kept from here on
        before = say(me, ("garden tomatoes", "reply a"), TS, new_scene=True)
        gone = say(me, ("zeppelin hangar", "reply b"), TS + 1)
        after = say(me, ("kitten vaccination", "reply c"), TS + 2)
        lent = {h.topic_id for h in me.recall("zeppelin", limit=10)}
        assert lent == {before.id, gone.id, after.id}  # control: both neighbours borrow it
        me.delete_topic(gone.id)
        assert me.recall("zeppelin", limit=10) == []
        assert me.recall("kitten")[0].topic_id == after.id  # control: the neighbour is indexed
    with memhop.open(meh_path, memhop.LocalModel()) as again:
        assert again.primary().recall("zeppelin", limit=10) == []
