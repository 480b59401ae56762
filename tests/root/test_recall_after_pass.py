"""A Dream pass brings the domain's built recall index up to date before it ends: the host's
next recall redoes nothing of what the pass changed (it was 2.6 ms of the slowest turns)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import memhop
from memhop.root import recall_index
from memhop.root.recall_docs import Refresh
from tests.interface.conftest import TS
from tests.interface.test_dream import DreamModel, defaults
from tests.interface.test_recall import FERRY, GARDEN, KITTEN, answers, say


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many topics each ``Refresh.run`` was given, in order."""
    runs: list[int] = []
    real = Refresh.run

    def run(self: Refresh, changed: set[int]) -> None:
        runs.append(len(changed))
        real(self, changed)

    monkeypatch.setattr(Refresh, "run", run)
    return runs


def _three_turns(path: str) -> memhop.DB:
    """A new file whose primary has said three turns (one scene, which a pass folds)."""
    db = memhop.open(path, DreamModel(), defaults(), memhop.ProfileInput(name="me"))
    for i, lines in enumerate((FERRY, KITTEN, GARDEN)):
        say(db.primary(), lines, TS + i)
    return db


def test_the_pass_redoes_what_it_changed_and_the_next_recall_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "mem.meh")
    runs = _counted(monkeypatch)
    with _three_turns(path) as db:
        me = db.primary()
        me.recall("kitten")  # the index is built: from here the pass keeps it current
        runs.clear()
        assert me.dream().consolidated_scenes == 1
        assert sum(runs) > 0  # the pass redid the rows it folded
        runs.clear()
        assert any(answers(me))
        assert runs == []  # the recalls after it had nothing left to redo
        say(me, ("the ferry again", "noon"), TS + 10)
        me.recall("ferry")
        assert sum(runs) > 0  # control: a turn's change is still the next recall's to redo
        kept = answers(me)
    with memhop.open(path, memhop.LocalModel()) as again:
        assert answers(again.primary()) == kept  # the same as the index the file saved


def test_a_pass_builds_no_index_a_recall_never_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = _counted(monkeypatch)
    with _three_turns(str(tmp_path / "mem.meh")) as db:
        me = db.primary()
        assert me.dream().consolidated_scenes == 1
        assert runs == []  # no recall yet: nothing to keep current
        assert me.recall("kitten")  # control: the first recall builds it then
        assert runs


@pytest.mark.parametrize("fused_first", [True, False])
def test_a_pass_taken_a_topic_a_hold_in_either_order_answers_as_a_fresh_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fused_first: bool
) -> None:
    """A pass's changes are redone a few topics a hold: when the row a fold made is redone
    before the turns it folded, those turns' own rows still go (they stayed in the index,
    answering as turns beside the row that folded them, until this was fixed)."""
    monkeypatch.setattr(recall_index, "_CHANGES_PER_UNIT", 1)
    monkeypatch.setattr(recall_index, "UPKEEP_STEP_S", 0.0)  # a unit a hold
    said: set[int] = set()
    real_units = recall_index._units

    def units(groups: list[list[int]], size: int = 256) -> list[list[int]]:
        # The build takes the last unit first: the fold's row last, or first.
        return sorted(real_units(groups, size), key=lambda u: (u[0] in said) == fused_first)

    monkeypatch.setattr(recall_index, "_units", units)
    path = tmp_path / "mem.meh"
    with memhop.open(str(path), DreamModel(), defaults(), memhop.ProfileInput(name="me")) as db:
        me = db.primary()
        for i, lines in enumerate((FERRY, KITTEN, GARDEN)):
            said.add(int(say(me, lines, TS + i).id, 16))
        me.recall("kitten")  # built: the pass keeps it current from here
        assert me.dream().consolidated_scenes == 1
        (hit,) = me.recall("kitten vaccinations")
        assert hit.origin == "dream"  # the fold's row, and no folded turn beside it
        kept = answers(me)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    shutil.copy(path, fresh / "mem.meh")  # the records alone: no saved index beside them
    with memhop.open(str(fresh / "mem.meh"), memhop.LocalModel()) as again:
        assert answers(again.primary()) == kept
