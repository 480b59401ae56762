"""Dream through the public surface: report, scope, domains, the automatic pass, the lock.

Public ``memhop`` names only and only ids the library returned. ``DreamModel``
answers like upstream's mock: it folds the first two listed rows with a fixed
summary and distils fixed values (the axes derive ESTP). It can be told to
block inside ``consolidate`` until the test opens its gate (or the call is
cancelled), which is how the lock test shows a turn completing while the
Dream's model call is in flight.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import memhop
from tests.interface.conftest import TS, open_new

SUMMARY = "合并摘要保留全部细节"
SUMMARY_KEYWORDS = ("重构", "retries", "新词")
STAGES = [
    "l4_prune",
    "l5_prune",
    "l2_compress",
    "index_rebuild",
    "l1_nodes",
    "l1_hyperedges",
    "l1_rebuild",
    "l1_decay",
    "l0_distill",
]
PROVENANCE = {"origin", "derived_from", "grounding"}


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class DreamModel:
    """A ``memhop.Model``: folds the two oldest rows, distils fixed values, may block."""

    def __init__(self) -> None:
        self._local = memhop.LocalModel()
        self._mu = threading.Lock()
        self.calls: Counter[str] = Counter()
        self.gate: threading.Event | None = None  # set: consolidate waits for it
        self.entered = threading.Event()
        self.off_contract = False
        self.decline = False

    def _count(self, op: str) -> None:
        with self._mu:
            self.calls[op] += 1

    def extract_keywords(self, text: str, *, cancel: threading.Event | None = None) -> Any:
        self._count("keywords")
        if text == SUMMARY:
            return SUMMARY_KEYWORDS
        return self._local.extract_keywords(text)

    def consolidate(
        self, topics: Sequence[Any], floor: int, *, cancel: threading.Event | None = None
    ) -> Any:
        self._count("consolidate")
        self.entered.set()
        gate = self.gate
        while gate is not None and not gate.wait(0.01):
            if cancel is not None and cancel.is_set():
                raise memhop.OperationCancelledError("llm call cancelled")
        if self.off_contract:
            raise memhop.LLMError("the model answered off contract")
        if len(topics) < 2 or self.decline:
            return ()
        return (memhop.llm.Group(member_ids=(topics[0].id, topics[1].id), summary=SUMMARY),)

    def distill(self, samples: Sequence[Any], *, cancel: threading.Event | None = None) -> Any:
        self._count("distill")
        return memhop.llm.Distillation(0.8, 0.6, 0.5, 0.2, 0.3, -0.1, 0.4, "务实直接，先复现再动手")

    def usage(self) -> Any:
        return memhop.llm.Usage()


def defaults(**kw: int) -> memhop.Defaults:
    base = {"scene_dream_topic_threshold": -1, "dream_compress_min_topics": 2}
    base.update(kw)
    return memhop.Defaults(**base)


@pytest.fixture
def model() -> DreamModel:
    return DreamModel()


@pytest.fixture
def dreamdb(meh_path: str, model: DreamModel) -> Iterator[memhop.DB]:
    db = open_new(meh_path, model, defaults=defaults())
    yield db
    if not db.closed:
        db.close()


def close_turn(
    session: memhop.Session, i: int, at: int | None = None, **search: Any
) -> memhop.TopicSlot:
    session.search(**search)
    return session.update(
        input=f"question {i} about retries", output=f"answer {i}", created_at=at or TS + i
    )


def run_in_thread(call: Any) -> tuple[threading.Thread, list[Any]]:
    box: list[Any] = []

    def body() -> None:
        try:
            box.append(call())
        except BaseException as exc:  # handed to the test
            box.append(exc)

    thread = threading.Thread(target=body, name="test-dream-caller")
    thread.start()
    return thread, box


# ---- report, stages, counts ----------------------------------------------------------------


def test_dream_folds_reports_and_marks_the_dream_row(dreamdb: memhop.DB, model: DreamModel) -> None:
    me = dreamdb.primary()
    first = close_turn(me, 1)
    second = close_turn(me, 2)
    report = me.dream()
    assert [s.name for s in report.stages] == STAGES
    assert {s.status for s in report.stages} == {"ok"}
    assert (report.consolidated_scenes, report.l2_topics_compressed) == (1, 2)
    assert report.l1_nodes_added == 1
    assert report.l0_updated
    assert model.calls["consolidate"] == 1
    assert model.calls["distill"] == 1
    rows = me.scene_context().topics
    assert len(rows) == 3
    fused = rows[0]
    assert (fused.depth, fused.child_count, fused.keywords) == (1, 2, SUMMARY_KEYWORDS)
    assert fused.origin == "dream"
    assert set(fused.derived_from) == {first.id, second.id}
    assert fused.grounding == pytest.approx(1 / 3)  # only "retries" was said in a turn
    assert [(r.origin, r.derived_from, r.grounding) for r in rows[1:]] == [("turn", (), None)] * 2
    assert PROVENANCE.isdisjoint(fused.to_dict())  # upstream's JSON shape is kept
    (summary,) = me.search_l4(topic_id=fused.topic_id)
    assert (summary.content, summary.role, summary.seq) == (SUMMARY, 3, 1)
    profile = me.get_l0()
    assert profile.mbti.type == "ESTP"
    assert (profile.emotion_state.valence, profile.mbti.j_p) == (0.8, 0.4)
    opened = me.search()
    assert [t.id for t in opened.topics] == [fused.topic_id]
    assert opened.topics[0].origin == "dream"
    third = me.update(input="question 3 about retries", created_at=TS + 3)
    assert third.id == opened.new_topic_id
    assert (third.depth, third.origin) == (1, "turn")
    assert len(me.scene_context().topics) == 4


def test_a_model_off_contract_writes_no_fold_and_the_pass_goes_on(
    dreamdb: memhop.DB, model: DreamModel, meh_path: str
) -> None:
    me = dreamdb.primary()
    close_turn(me, 1)
    close_turn(me, 2)
    model.off_contract = True
    report = me.dream()
    assert (report.consolidated_scenes, report.l2_topics_compressed) == (0, 0)
    assert [s.name for s in report.stages] == STAGES  # L1 and distillation still ran
    assert report.stages[2].status == "error"
    assert report.l0_updated
    assert [r.depth for r in me.scene_context().topics] == [1, 1]
    model.off_contract = False
    assert me.dream().consolidated_scenes == 0  # the failed surface is not asked again
    assert model.calls["consolidate"] == 1
    dreamdb.close()  # positive control: the same file folds (the failure is not on file)
    with memhop.open(meh_path, model, defaults()) as again:
        assert again.primary().dream().consolidated_scenes == 1


def test_a_declining_model_is_not_asked_again_for_the_same_surface(
    dreamdb: memhop.DB, model: DreamModel
) -> None:
    me = dreamdb.primary()
    close_turn(me, 1)
    me.dream()  # one row only: below the floor, no call
    assert model.calls["consolidate"] == 0
    close_turn(me, 2)
    model.decline = True
    for _ in range(3):
        assert me.dream().consolidated_scenes == 0  # a decline is not an error
    assert model.calls["consolidate"] == 1  # upstream would have asked three times
    model.decline = False
    me.dream()
    assert model.calls["consolidate"] == 1  # same surface, still not asked
    close_turn(me, 3)  # the surface changed: asked again, and now it folds
    assert me.dream().consolidated_scenes == 1
    assert model.calls["consolidate"] == 2


# ---- scope -------------------------------------------------------------------------------


def test_scope_rules(dreamdb: memhop.DB) -> None:
    me = dreamdb.primary()
    mine = close_turn(me, 1)
    other = dreamdb.sub_agent(DreamModel(), memhop.ProfileInput(name="other"))
    theirs = close_turn(other, 1)
    with pytest.raises(memhop.InvalidQueryError):
        me.dream("zz")
    for foreign in (theirs.scene_id, mine.id):  # another domain's scene, a topic id
        with pytest.raises(memhop.NotFoundError) as info:
            me.dream(foreign)
        assert [s.name for s in info.value.report.stages] == ["l4_prune", "l5_prune"]  # type: ignore[attr-defined]
    assert me.dream(mine.scene_id).stages[-1].name == "l0_distill"
    assert me.dream().stages[-1].name == "l0_distill"


def test_scope_limits_consolidation_but_not_retention(meh_path: str) -> None:
    db = open_new(
        meh_path,
        DreamModel(),
        defaults=defaults(content_retention_ms=60_000, sweep_unfolded=True),  # upstream's sweep
    )
    try:
        me = db.primary()
        s_first = close_turn(me, 1, new_scene=True)
        close_turn(me, 2)
        close_turn(me, 3, new_scene=True)
        me.search()
        me.append_archive(
            content="past the window", created_at=now_ms() - 86_400_000, kind=1, event_type="n"
        )
        me.update(input="question 4", created_at=now_ms())
        assert len(me.search_l4(keyword="past the window")) == 1
        report = me.dream(s_first.scene_id)
        assert (report.consolidated_scenes, report.l2_topics_compressed) == (1, 2)
        assert me.search_l4(keyword="past the window") == []
        assert report.stages[0].name == "l4_prune"
        assert report.stages[0].status == "ok"
        assert [r.depth for r in me.scene_context().topics] == [1, 1]
        assert next(r.child_count for r in me.scene_context(s_first.scene_id).topics) == 2
    finally:
        db.close()


def test_dream_stays_inside_its_own_domain(meh_path: str) -> None:
    db = open_new(
        meh_path,
        DreamModel(),
        defaults=defaults(content_retention_ms=60_000, sweep_unfolded=True),  # upstream's sweep
    )
    try:
        alpha = db.primary()
        beta = db.sub_agent(DreamModel(), memhop.ProfileInput(name="beta-domain"))
        for who, word in ((alpha, "alpha"), (beta, "beta")):
            close_turn(who, 1, now_ms(), new_scene=True)
            who.search()
            who.append_archive(
                content=f"a record past the window in {word}",
                created_at=now_ms() - 86_400_000,
                kind=1,
                event_type="n",
            )
            who.update(input=f"fresh close in {word}", created_at=now_ms())
        before = (beta.scene_context().to_dict(), beta.get_l0().to_dict())
        assert alpha.dream().l4_records_pruned == 1
        assert alpha.search_l4(keyword="past the window in alpha") == []
        assert len(beta.search_l4(keyword="past the window in beta")) == 1
        assert (beta.scene_context().to_dict(), beta.get_l0().to_dict()) == before
        assert beta.dream().l4_records_pruned == 1
        assert beta.search_l4(keyword="past the window in beta") == []
    finally:
        db.close()


def test_dream_leaves_the_open_turn_alone(dreamdb: memhop.DB) -> None:
    me = dreamdb.primary()
    for i in range(4):
        close_turn(me, i)
    opened = me.search()
    me.append_archive(content="tool ran", created_at=now_ms(), kind=1, event_type="tool")
    assert me.dream().l2_topics_compressed > 0
    assert opened.new_topic_id not in [r.topic_id for r in me.scene_context().topics]
    closed = me.update(input="after the dream", created_at=now_ms())
    assert (closed.id, closed.depth) == (opened.new_topic_id, 1)
    assert len(me.search_l4(topic_id=closed.id)) == 2


def test_reads_are_identical_after_reopen(meh_path: str) -> None:
    db = open_new(meh_path, DreamModel(), defaults=defaults())
    me = db.primary()
    for i in range(8):
        close_turn(me, 1000 * i)
    assert me.dream().l2_topics_compressed > 0
    rows = me.scene_context().topics

    def reads(s: memhop.Session) -> Any:
        return (s.scene_context().to_dict(), [a.to_dict() for a in s.search_l4()], s.get_l0())

    before = reads(me)
    db.close()
    again = memhop.open(meh_path, memhop.LocalModel())
    try:
        assert reads(again.primary()) == before
        assert again.primary().scene_context().topics == rows  # provenance included
        assert any(r.origin == "dream" for r in rows)
    finally:
        again.close()


# ---- the lock, the automatic pass, cancellation ---------------------------------------------


def test_a_turn_completes_while_the_dream_model_call_is_in_flight(
    dreamdb: memhop.DB, model: DreamModel
) -> None:
    me = dreamdb.primary()
    close_turn(me, 1)
    close_turn(me, 2)
    model.gate = threading.Event()
    dreamer, box = run_in_thread(me.dream)
    try:
        assert model.entered.wait(10)

        def a_turn() -> memhop.TopicSlot:
            opened = me.search()
            me.append_archive(content="while dreaming", created_at=now_ms(), kind=1, event_type="e")
            closed = me.update(input="question 3 about retries", created_at=TS + 3)
            assert closed.id == opened.new_topic_id
            return closed

        worker, result = run_in_thread(a_turn)
        worker.join(10)
        assert not worker.is_alive(), "the turn waited for the Dream's model call"
        assert isinstance(result[0], memhop.TopicSlot), result
        assert dreamer.is_alive()  # the model call is still in flight
    finally:
        model.gate.set()
        dreamer.join(10)
    report = box[0]
    assert isinstance(report, memhop.DreamReport), report
    assert report.l2_topics_compressed == 2
    depths = sorted(r.depth for r in me.scene_context().topics)
    assert depths == [1, 1, 2, 2]  # the fold and the new turn both landed


def test_the_automatic_pass_runs_on_its_own_named_thread(meh_path: str, model: DreamModel) -> None:
    db = open_new(meh_path, model, defaults=defaults(scene_dream_topic_threshold=3))
    try:
        me = db.primary()
        model.gate = threading.Event()
        turns = [close_turn(me, i) for i in range(4)]  # 4 > 3: a pass is scheduled
        assert model.entered.wait(10)
        name = f"memhop-dream-{me.agent_id}-{turns[0].scene_id}"
        assert [t.name for t in threading.enumerate() if t.name.startswith("memhop-dream-")] == [
            name
        ]
        close_turn(me, 5)  # still above the threshold, one pass already in flight
        assert model.calls["consolidate"] == 1
        model.gate.set()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if any(r.child_count >= 2 for r in me.scene_context().topics):
                break
            time.sleep(0.02)
        assert any(r.child_count >= 2 for r in me.scene_context().topics)
        opened = me.search()
        assert me.update(input="the loop goes on", created_at=now_ms()).id == opened.new_topic_id
    finally:
        db.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("memhop-dream-")]


def test_no_automatic_pass_at_or_below_the_threshold(meh_path: str, model: DreamModel) -> None:
    db = open_new(meh_path, model, defaults=defaults(scene_dream_topic_threshold=3))
    try:
        me = db.primary()
        for i in range(3):
            close_turn(me, i)
    finally:
        db.close()
    assert model.calls["consolidate"] == 0


def test_cancel_before_the_pass(dreamdb: memhop.DB, model: DreamModel) -> None:
    me = dreamdb.primary()
    close_turn(me, 1)
    close_turn(me, 2)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(memhop.OperationCancelledError) as info:
        me.dream(cancel=cancel)
    assert info.value.code == 5008
    assert [(s.name, s.status) for s in info.value.report.stages] == [("l4_prune", "cancelled")]  # type: ignore[attr-defined]
    assert model.calls["consolidate"] == 0
    assert me.dream().consolidated_scenes == 1  # positive control


def test_cancel_during_the_model_call(dreamdb: memhop.DB, model: DreamModel) -> None:
    me = dreamdb.primary()
    close_turn(me, 1)
    close_turn(me, 2)
    model.gate = threading.Event()
    cancel = threading.Event()
    dreamer, box = run_in_thread(lambda: me.dream(cancel=cancel))
    assert model.entered.wait(10)
    cancel.set()
    dreamer.join(10)
    (error,) = box
    assert isinstance(error, memhop.OperationCancelledError)
    assert error.report.stages[-1].name == "l2_compress"  # type: ignore[attr-defined]
    assert error.report.stages[-1].status == "cancelled"  # type: ignore[attr-defined]
    assert [r.depth for r in me.scene_context().topics] == [1, 1]


def test_close_cancels_a_foreground_dream(meh_path: str, model: DreamModel) -> None:
    db = open_new(meh_path, model, defaults=defaults())
    me = db.primary()
    close_turn(me, 1)
    close_turn(me, 2)
    model.gate = threading.Event()
    dreamer, box = run_in_thread(me.dream)
    assert model.entered.wait(10)
    db.close()
    dreamer.join(10)
    (error,) = box
    assert isinstance(error, memhop.OperationCancelledError)
    assert error.report.stages[-1].status == "cancelled"  # type: ignore[attr-defined]
    again = memhop.open(meh_path, memhop.LocalModel())
    try:
        assert [r.depth for r in again.primary().scene_context().topics] == [1, 1]
    finally:
        again.close()


def test_close_cancels_and_joins_a_background_dream(meh_path: str, model: DreamModel) -> None:
    db = open_new(meh_path, model, defaults=defaults(scene_dream_topic_threshold=1))
    me = db.primary()
    model.gate = threading.Event()
    close_turn(me, 1)
    close_turn(me, 2)
    assert model.entered.wait(10)
    started = time.monotonic()
    db.close()
    assert time.monotonic() - started < 5
    assert not [t for t in threading.enumerate() if t.name.startswith("memhop-dream-")]


# ---- property ------------------------------------------------------------------------------


@settings(deadline=None)
@given(st.lists(st.sampled_from(["turn-a", "turn-b", "dream"]), min_size=1, max_size=14))
# A compaction between passes left the edge stage a node without its offset (fixed).
@example(["turn-b"] * 4 + ["dream"] * 3 + ["turn-a", "dream"])
def test_every_topic_listed_once_no_row_deeper_than_two(ops: list[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        db = open_new(
            f"{folder}/p.meh", DreamModel(), defaults=defaults(dream_compress_min_topics=1)
        )
        try:
            me = db.primary()
            scenes: dict[str, str] = {}
            made: dict[str, list[str]] = {}
            for i, op in enumerate(ops):
                if op == "dream":
                    me.dream()
                    continue
                named = {"scene_id": scenes[op]} if op in scenes else {"new_scene": True}
                closed = close_turn(me, i, **named)
                scenes[op] = closed.scene_id
                made.setdefault(closed.scene_id, []).append(closed.id)
            for scene_id, turn_ids in made.items():
                rows = me.scene_context(scene_id).topics
                listed = [r.topic_id for r in rows]
                assert len(listed) == len(set(listed))
                assert set(turn_ids) <= set(listed)
                assert all(1 <= r.depth <= 2 for r in rows)
                by_id = {r.topic_id: r for r in rows}
                kids = Counter(p for p in (r.derived_from for r in rows) for p in p)
                assert all(n == 1 for n in kids.values())  # one parent per row
                for row in rows:
                    assert (row.depth == 2) == (kids[row.topic_id] == 1)
                    for child in row.derived_from:
                        assert by_id[child].depth == 2
        finally:
            db.close()


def _dream_threads_done() -> None:
    deadline = time.monotonic() + 10
    while any(t.name.startswith("memhop-dream-") for t in threading.enumerate()):
        assert time.monotonic() < deadline, "a background pass did not end"
        time.sleep(0.01)


def test_a_second_automatic_pass_within_the_hour_only_folds_its_scene(
    meh_path: str, model: DreamModel
) -> None:
    """The first automatic pass is whole (it distils); the next, in the same hour, folds only.

    The host's own ``dream()`` is whole whenever it runs (it distils again).
    """
    db = open_new(meh_path, model, defaults=defaults(scene_dream_topic_threshold=3))
    try:
        me = db.primary()
        for i in range(4):  # 4 > 3: a pass is scheduled for the first scene
            close_turn(me, i, new_scene=i == 0)
        _dream_threads_done()
        assert (model.calls["consolidate"], model.calls["distill"]) == (1, 1)
        for i in range(4):  # a second scene, a second pass
            close_turn(me, 10 + i, new_scene=i == 0)
        _dream_threads_done()
        assert model.calls["consolidate"] == 2  # the pass ran and folded its scene
        assert model.calls["distill"] == 1  # but swept nothing: no second distillation
        assert any(r.child_count >= 2 for r in me.scene_context().topics)
        report = me.dream()
        assert [s.name for s in report.stages] == STAGES
        assert model.calls["distill"] == 2
    finally:
        db.close()
