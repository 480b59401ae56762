"""A Dream pass brings the domain's built recall index up to date before it ends: the host's
next recall redoes nothing of what the pass changed (it was 2.6 ms of the slowest turns)."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memhop
from memhop.root import recall_index
from memhop.root.ops import AgentOps
from memhop.root.recall_docs import Refresh
from memhop.root.recall_index import current_state
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


_VOCAB = ("ferry", "kitten", "garden", "harbour", "violin", "pier")
_UNITS = recall_index._units
_TURN = st.tuples(st.sampled_from(_VOCAB), st.sampled_from(_VOCAB))


@settings(max_examples=20, deadline=None)
@given(
    scenes=st.lists(st.lists(_TURN, min_size=2, max_size=4), min_size=1, max_size=3),
    seed=st.integers(0, 2**32 - 1),
    sweep=st.booleans(),
)
def test_a_pass_taken_a_topic_a_hold_in_any_order_leaves_the_index_a_fresh_build_makes(
    tmp_path_factory: pytest.TempPathFactory,
    scenes: list[list[tuple[str, str]]],
    seed: int,
    sweep: bool,
) -> None:
    """Whatever the scenes, a pass's changes (its folds; with ``sweep``, a second pass's
    sweep of the folded turns' lines and its own folds) taken one topic a hold in any order
    leave the documents (their terms, counts, scenes, times) an index of the records has."""
    order = random.Random(seed)

    def shuffled(groups: list[list[int]], size: int = 256) -> list[list[int]]:
        units = _UNITS(groups, size)
        order.shuffle(units)
        return units

    folder = tmp_path_factory.mktemp("any-order")
    path = folder / "mem.meh"
    at = TS
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(recall_index, "_CHANGES_PER_UNIT", 1)
        patch.setattr(recall_index, "UPKEEP_STEP_S", 0.0)
        patch.setattr(recall_index, "_units", shuffled)
        kept_for = {"content_retention_ms": 1} if sweep else {}
        settings_ = defaults(**kept_for)
        with memhop.open(str(path), DreamModel(), settings_, memhop.ProfileInput(name="me")) as db:
            me = db.primary()
            for turns in scenes:
                for t, (said, heard) in enumerate(turns):
                    me.search(new_scene=t == 0)
                    me.update(input=f"the {said} at {at}", output=f"and the {heard}", created_at=at)
                    at += 1
            me.recall("ferry")  # built: the pass keeps it current from here
            assert me.dream().consolidated_scenes == len(scenes)  # each folds its two oldest
            if sweep:  # a second pass sweeps the lines of the turns the first one folded
                assert me.dream().l4_records_pruned > 0
            kept = AgentOps(db._root, 0).run(current_state).index
            hits = [me.recall(word, limit=10) for word in _VOCAB]
    fresh = folder / "fresh"
    fresh.mkdir()
    shutil.copy(path, fresh / "mem.meh")  # the records alone: no saved index beside them
    with memhop.open(str(fresh / "mem.meh"), memhop.LocalModel()) as again:
        assert AgentOps(again._root, 0).run(current_state).index == kept
        assert [again.primary().recall(word, limit=10) for word in _VOCAB] == hits
    assert any(hits)  # control: the words find rows
