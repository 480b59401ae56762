"""The content sweep, queued by when rows cross the line, sweeps what a sweep of every row sweeps.

Upstream (and memhop before the queue) looks at every content row of the domain on every
pass. ``retention.RetentionQueue`` looks only at the turns whose rows crossed the line or
that changed. Random rows, folds (a turn becomes carried), unfolds (its Dream row goes),
new rows in old turns and sweeps at rising lines run on a domain; after every sweep the
rows left, and the count kept, must be those of a full scan with the same rule: a row
past the line goes when its turn is folded and its words are all kept without it (the
turn's track, the Dream row's track and summary).
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from memhop.dream import prune, retention
from memhop.engine import create_engine
from memhop.ids import fused_topic_id
from memhop.layers import archive, topic
from memhop.records import ArchiveSlot
from tests.dream.conftest import NOW, Domain

HOUR = 3_600_000
TURNS = (1, 2, 3, 4)

# A row's words: none, the turn's own track word, the Dream row's track or summary words, a
# word nothing keeps; k2 is turn 2's track and in every summary.
_op_row = st.tuples(
    st.just("row"),
    st.sampled_from(TURNS),
    st.integers(0, 24),
    st.sampled_from(["", "the k1", "folded", "k2", "summary k2", "stray", "k3 stray"]),
)
_op_fold = st.tuples(st.just("fold"), st.sampled_from(TURNS))
_op_unfold = st.tuples(st.just("unfold"), st.sampled_from(TURNS))
_op_sweep = st.tuples(st.just("sweep"), st.integers(0, 8))
OPS = st.lists(
    st.one_of(_op_row, _op_row, _op_row, _op_fold, _op_unfold, _op_sweep, _op_sweep), max_size=40
)


class World:
    """A domain of turns (one topic each, all in one scene), with Dream rows folding some."""

    def __init__(self, dom: Domain) -> None:
        self.dom = dom
        self.seqs: dict[int, int] = {}
        self.parents: dict[int, int] = {}  # turn -> the Dream row folding it
        for turn in TURNS:
            dom.turn(turn, (f"k{turn}",), user_ts=NOW + turn)

    def row(self, turn: int, hours: int, text: str = "") -> None:
        seq = self.seqs[turn] = self.seqs.get(turn, 2) + 1
        at = NOW + hours * HOUR
        slot = ArchiveSlot(id_hash=0, topic_id=turn, seq=seq, created_at=at, content=text)
        self.dom.mirrors.contents.put(archive.write_content(self.dom.engine, 0, slot))

    def fold(self, turn: int) -> None:
        if turn in self.parents:
            return
        parent = fused_topic_id(1, turn, turn, [turn])
        self.dom.turn(parent, ("folded",), user_ts=NOW + turn)
        meta = self.dom.mirrors.topics
        for row in topic.sink_members(self.dom.engine, 0, parent, [turn]):
            meta.put(row)
        # Its summary, stamped far ahead so that no sweep here judges it.
        summary = ArchiveSlot(id_hash=0, topic_id=parent, seq=3, created_at=NOW + 10**4 * HOUR)
        summary = archive.write_content(self.dom.engine, 0, replace(summary, content="Summary K2"))
        self.dom.mirrors.contents.put(summary)
        self.parents[turn] = parent

    def unfold(self, turn: int) -> None:
        parent = self.parents.pop(turn, None)
        if parent is not None and topic.delete_topics(self.dom.engine, 0, [parent]):
            self.dom.mirrors.topics.remove([parent])

    def sweepable(self, turn: int, text: str) -> bool:
        """The rule, restated: folded, and every word kept by the track or the Dream row."""
        kept = {f"k{turn}", "folded", "summary", "k2"}
        return turn in self.parents and set(text.casefold().split()) - {"the"} <= kept


def _slots(dom: Domain) -> list[ArchiveSlot]:
    return archive.read_contents(dom.engine, 0, _rows(dom))


def _rows(dom: Domain) -> dict[int, int]:
    contents = dom.mirrors.contents
    return {
        i: at
        for t in TURNS
        for i, at in zip(contents.ids_in(t), contents.created_in(t), strict=True)
    }


@given(OPS, st.booleans(), st.integers(1, 3), st.booleans())
# A kept turn folded later, with nothing of its own written since: its rows go at once.
@example([("row", 1, 0, "k1"), ("sweep", 2), ("fold", 1), ("sweep", 0)], False, 1, False)
# A folded turn keeps the row with a word nothing else holds, and lets the other go.
@example(
    [("row", 3, 0, "k3 stray"), ("row", 3, 0, "summary k2"), ("fold", 3), ("sweep", 2)],
    False,
    1,
    False,
)
# A turn judged with a row past the line and one not yet: the second is looked at later.
# Holds whose time is spent at once: a topic a hold, whatever the budget.
@example([("row", 1, 0, ""), ("row", 2, 0, ""), ("row", 3, 5, ""), ("sweep", 6)], False, 3, True)
@example([("row", 1, 0, ""), ("row", 1, 5, ""), ("sweep", 2), ("sweep", 6)], False, 1, False)
def test_the_queued_sweep_leaves_what_a_sweep_of_every_row_leaves(
    ops: list[tuple[object, ...]], sweep_unfolded: bool, budget: int, spent: bool
) -> None:
    """``spent``: each hold's time is spent at once, so a hold judges one topic."""
    with tempfile.TemporaryDirectory() as tmp:
        dom = Domain(create_engine(str(Path(tmp) / "r.meh")))
        try:
            world = World(dom)
            hours = 0
            for op in ops:
                if op[0] == "row":
                    world.row(int(op[1]), int(op[2]), str(op[3]))  # type: ignore[call-overload]
                elif op[0] == "fold":
                    world.fold(int(op[1]))  # type: ignore[call-overload]
                elif op[0] == "unfold":
                    world.unfold(int(op[1]))  # type: ignore[call-overload]
                else:
                    hours += int(op[1])  # type: ignore[call-overload]
                    line = NOW + hours * HOUR
                    before = _rows(dom)
                    text = {s.id_hash: (s.topic_id, s.content) for s in _slots(dom)}
                    doomed = {
                        i
                        for i, at in before.items()
                        if at < line and (sweep_unfolded or world.sweepable(*text[i]))
                    }
                    pruned, kept, done = 0, 0, False
                    while not done:  # the pipeline's loop: a bounded number of turns a hold
                        with dom.spent_hold() if spent else dom.hold() as held:
                            step = prune.prune_contents(
                                held, line, sweep_unfolded=sweep_unfolded, budget=budget
                            )
                        pruned, kept, done = pruned + step.pruned, step.kept_unfolded, step.done
                    assert set(_rows(dom)) == set(before) - doomed
                    assert pruned == len(doomed)
                    left = _rows(dom)
                    assert kept == sum(1 for at in left.values() if at < line)
        finally:
            dom.engine.close()


class _Counted:
    """The content mirror, counting ``created_in`` by topic (what a queue reads a turn by)."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.reads: Counter[int] = Counter()

    def created_in(self, topic_id: int) -> list[int]:
        self.reads[topic_id] += 1
        return self.inner.created_in(topic_id)  # type: ignore[attr-defined, no-any-return]

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


def test_a_changed_turn_is_judged_only_once_a_row_of_it_is_past_the_line(dom: Domain) -> None:
    """A new row in a turn whose rows are all younger than the line queues the turn (one
    read of its rows) and does not judge it (a second read); a row past the line in the
    same turn has it judged at once, so the queue does look at changed turns."""
    world = World(dom)
    world.row(1, 0)
    world.row(2, 100)
    contents = _Counted(dom.mirrors.contents)
    queue = retention.RetentionQueue()
    line = NOW + HOUR

    def take() -> list[int]:
        with dom.hold() as held:
            step = queue.take(
                held.mirrors.topics,
                contents,  # type: ignore[arg-type]
                line,
                lambda _t, old: old,
                sweep_unfolded=True,
            )
        assert step.done
        return step.doomed

    assert len(take()) == 1  # the cold fill, and turn 1's row judged past the line
    assert queue.kept == 0
    contents.reads.clear()
    world.row(2, 101)  # every row of turn 2 younger than the line
    assert take() == []
    assert contents.reads[2] == 1  # queued under its oldest row, not judged
    contents.reads.clear()
    world.row(2, -5)  # a row past the line: judged in the same call
    contents_now = dom.mirrors.contents
    old = [
        i
        for i, at in zip(contents_now.ids_in(2), contents_now.created_in(2), strict=True)
        if at < line
    ]
    assert take() == old
    assert contents.reads[2] == 2


def test_the_queue_orders_turns_by_stamp_over_the_whole_range_of_ids_and_stamps(
    dom: Domain,
) -> None:
    """Turns with the largest u64 id and with stamps at, below and far above 0 are taken in
    their stamps' order: a line between two stamps takes the older turns and leaves the
    younger ones queued (the queue keeps each entry as one int, stamp and id together)."""
    top_id = 2**64 - 1
    for turn in (7, top_id, 9):
        dom.turn(turn, (f"k{turn % 100}",), user_ts=NOW)
    stamps = {7: -HOUR, top_id: 0, 9: NOW}  # a stamp before 1970, the epoch, and now
    ids = {}
    for turn, at in stamps.items():
        slot = ArchiveSlot(id_hash=0, topic_id=turn, seq=3, created_at=at, content="x")
        stored = archive.write_content(dom.engine, 0, slot)
        dom.mirrors.contents.put(stored)
        ids[turn] = stored.id_hash
    queue = retention.RetentionQueue()

    def take(line: int) -> list[int]:
        with dom.hold() as held:
            step = queue.take(
                held.mirrors.topics,
                held.mirrors.contents,
                line,
                lambda _t, old: old,
                sweep_unfolded=True,
            )
        assert step.done
        return step.doomed

    assert take(-HOUR) == []  # nothing is older than the oldest stamp
    assert take(1) == [ids[7], ids[top_id]]  # the two older turns, oldest first
    assert take(NOW + 1) == [ids[9]]  # and the youngest, still queued, at its line
