"""``Defaults.durability``: how many fsyncs each turn call makes, by mode.

fsyncs are counted at the engine's one seam (``storefile.fsync_file``). What
a crash can take back in each mode is tested with real kills in
test_durability_kill.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import pytest

import memhop
from memhop.engine import storefile

TS = 1_700_000_000_000
EVENT = memhop.ArchiveKind.EVENT
SEED = memhop.ProfileInput(name="a")


@contextmanager
def counted() -> Iterator[mock.MagicMock]:
    counter = mock.MagicMock(side_effect=storefile.fsync_file)
    with mock.patch.object(storefile, "fsync_file", counter):
        yield counter


def _calls(path: str, mode: str) -> dict[str, int]:
    """fsyncs per call of a turn on a new scene, then of a turn on the same scene."""
    defaults = memhop.Defaults(durability=mode, scene_dream_topic_threshold=-1)
    seen: dict[str, int] = {}
    with memhop.open(path, memhop.LocalModel(), defaults, profile=SEED) as db:
        me = db.primary()
        for label, new_scene in (("first turn", True), ("next turn", False)):
            with counted() as n:
                me.search(new_scene=new_scene)
                seen[f"{label}: search"] = n.call_count
                me.append_archive(content="went hiking", created_at=TS, kind=EVENT, event_type="e")
                seen[f"{label}: append_archive"] = n.call_count - seen[f"{label}: search"]
                me.update(input="I went hiking", output="Where?", created_at=TS)
                seen[f"{label}: whole turn"] = n.call_count
    return seen


def test_call_mode_syncs_each_recording_call_and_a_new_scene(meh_path: str) -> None:
    assert _calls(meh_path, "call") == {
        "first turn: search": 1,  # a new scene: its id goes to the host
        "first turn: append_archive": 1,
        "first turn: whole turn": 3,
        "next turn: search": 0,  # the turn counter rides on the turn's next write
        "next turn: append_archive": 1,
        "next turn: whole turn": 2,
    }


def test_turn_mode_makes_one_fsync_per_turn_at_update(meh_path: str) -> None:
    counts = _calls(meh_path, "turn")
    assert counts["next turn: append_archive"] == 0
    assert counts["next turn: whole turn"] == 1  # update's fsync covers the event
    assert counts["first turn: whole turn"] == 2  # the control: a new scene still syncs
    with memhop.open(meh_path, memhop.LocalModel()) as db:
        events = [s.content for s in db.primary().search_l4(kind=EVENT)]
    assert events == ["went hiking", "went hiking"]


@pytest.mark.parametrize("bad", ["never", "", "CALL", 1])
def test_an_unknown_durability_is_refused_by_name(meh_path: str, bad: object) -> None:
    with pytest.raises(memhop.ConfigError, match="durability") as info:
        memhop.open(meh_path, memhop.LocalModel(), memhop.Defaults(durability=bad))  # type: ignore[arg-type]
    assert repr(bad) in str(info.value)
    # The control: the same open with a known mode succeeds.
    defaults = memhop.Defaults(durability="turn")
    with memhop.open(meh_path, memhop.LocalModel(), defaults, profile=SEED):
        pass
