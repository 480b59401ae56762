"""The dead-bytes policy after a Dream pass: it measures again once enough changed."""

from __future__ import annotations

from pathlib import Path

import pytest

import memhop
from memhop.engine.inplace import Occupancy
from memhop.root import compaction

TS = 1_700_000_000_000
# The policy on (far from the ratio, so nothing is compacted), no automatic pass.
DEFAULTS = memhop.Defaults(scene_dream_topic_threshold=-1, compact_dead_ratio=0.99)
PROFILE = memhop.ProfileInput(name="me")


def _turns(session: memhop.Session, count: int, start: int = 0) -> None:
    for i in range(start, start + count):
        session.search()
        session.update(input=f"turn {i} about the lake", output="noted", created_at=TS + i)


def test_a_pass_asks_the_policy_again_only_once_one_record_in_100_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    measured: list[Occupancy] = []
    real = compaction.occupancy

    def counted(*args: object, **kwargs: object) -> Occupancy:
        measured.append(real(*args, **kwargs))  # type: ignore[arg-type]
        return measured[-1]

    monkeypatch.setattr(compaction, "occupancy", counted)
    with memhop.open(str(tmp_path / "m.meh"), memhop.LocalModel(), DEFAULTS, PROFILE) as db:
        me = db.primary()
        _turns(me, 400)
        root = db._root
        records = root.engine.stats()[1]
        assert records > 1_000  # so that 1% is more than one turn's four changes

        root.compact_if_due(after_pass=True)
        assert len(measured) == 1  # the first ask measures: nothing measured before
        root.compact_if_due(after_pass=True)
        assert len(measured) == 1  # nothing changed since: not measured again
        _turns(me, 1, start=400)  # a turn's few records: under 1% of them
        root.compact_if_due(after_pass=True)
        assert len(measured) == 1
        _turns(me, records // 100, start=401)  # now past 1% of the live records
        root.compact_if_due(after_pass=True)
        assert len(measured) == 2  # control: enough changed, so it measures

        root.compact_if_due()  # a delete's ask (not a pass's) always measures
        assert len(measured) == 3
        root.compact()  # a new engine: the next pass measures whatever changed
        root.compact_if_due(after_pass=True)
        assert len(measured) == 4


def test_a_new_mark_measures_and_a_policy_off_never_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    real = compaction.occupancy
    monkeypatch.setattr(compaction, "occupancy", lambda *a, **k: calls.append(1) or real(*a, **k))
    off = memhop.Defaults(scene_dream_topic_threshold=-1, compact_dead_ratio=0)
    with memhop.open(str(tmp_path / "off.meh"), memhop.LocalModel(), off, PROFILE) as db:
        _turns(db.primary(), 5)
        db._root.compact_if_due(after_pass=True)
        db._root.compact_if_due()
    assert calls == []  # the policy is off: nothing is measured
    with memhop.open(str(tmp_path / "on.meh"), memhop.LocalModel(), DEFAULTS, PROFILE) as db:
        _turns(db.primary(), 5)
        db._root.compact_if_due(after_pass=True)
    assert calls == [1]  # control: on, the first ask of a DB measures
