"""Retention never takes the only words (memhop's own rule), and ``sweep_unfolded`` is upstream's.

Public names only. History is imported with 2023 timestamps, so every line is
far past the seven-day window when Dream runs.
"""

from __future__ import annotations

import pytest

import memhop
from tests.interface.conftest import open_new
from tests.interface.test_dream import SUMMARY, DreamModel, defaults

MAY_2023 = 1_683_554_160_000  # 8 May 2023 13:56 UTC, in milliseconds


def _import_history(me: memhop.Session, turns: int) -> list[memhop.TopicSlot]:
    rows = []
    for i in range(turns):
        me.search(new_scene=(i == 0))
        at = MAY_2023 + i * 60_000
        me.append_archive(
            content=f"event {i} of the old days", created_at=at, kind=1, event_type="n"
        )
        rows.append(me.update(input=f"old question {i}", output=f"old answer {i}", created_at=at))
    return rows


@pytest.mark.parametrize("sweep_unfolded", [False, True])
def test_imported_history_survives_a_pass_unless_sweep_unfolded(
    meh_path: str, sweep_unfolded: bool
) -> None:
    model = DreamModel()
    model.decline = True  # nothing is folded: no Dream row carries any turn
    with open_new(meh_path, model, defaults=defaults(sweep_unfolded=sweep_unfolded)) as db:
        me = db.primary()
        rows = _import_history(me, 3)
        stored = me.search_l4()
        assert len(stored) == 9  # control: two lines and one event per turn are stored
        report = me.dream()
        if sweep_unfolded:  # upstream: everything past the window goes
            assert (report.l4_records_pruned, report.l4_records_kept_unfolded) == (9, 0)
            assert me.search_l4() == []
        else:
            assert (report.l4_records_pruned, report.l4_records_kept_unfolded) == (0, 9)
            assert me.search_l4() == stored
        # the rows and their tracks stay either way
        assert [t.topic_id for t in me.scene_context().topics] == [r.id for r in rows]
    with memhop.open(meh_path, memhop.LocalModel()) as again:  # and across a reopen
        assert len(again.primary().search_l4()) == (0 if sweep_unfolded else 9)


def test_a_folded_turn_loses_the_lines_its_track_holds_once_past_the_window(
    meh_path: str,
) -> None:
    """A folded turn's lines ("old question 0", "old answer 0") say nothing its keyword
    track does not hold, so they go; its event ("event 0 of the old days") holds words
    nothing else keeps ("event", "days"), so it stays."""
    with open_new(meh_path, DreamModel(), defaults=defaults()) as db:
        me = db.primary()
        first, second, third = _import_history(me, 3)
        report = me.dream()  # the sweep runs before consolidation: nothing is carried yet
        assert (report.consolidated_scenes, report.l4_records_pruned) == (1, 0)
        folded = next(r for r in me.scene_context().topics if r.child_count == 2)
        assert set(folded.derived_from) == {first.id, second.id}
        assert "event" not in {k.casefold() for k in first.fused_keywords + folded.keywords}
        report = me.dream()  # now the first two turns are carried by the Dream row
        assert report.l4_records_pruned == 4
        assert report.l4_records_kept_unfolded == 5  # two events, and the third turn's three
        for i, turn in enumerate((first, second)):
            assert [s.content for s in me.search_l4(topic_id=turn.id)] == [
                f"event {i} of the old days"
            ]
        assert len(me.search_l4(topic_id=third.id)) == 3  # control: the unfolded turn keeps all
        rows = {r.topic_id: r for r in me.scene_context().topics}
        assert [m.content for m in rows[folded.topic_id].messages] == [SUMMARY]
        assert rows[first.id].keywords  # the folded turns' tracks are never swept
