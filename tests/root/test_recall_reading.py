"""A warm domain's recall reads its hits' own records, not their scenes' every line: the
answers are those of the built domain, and a scene read in full afterwards is whole."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

import pytest

import memhop
from memhop.engine import Engine
from memhop.layers import archive
from memhop.records import ArchiveSlot
from tests.root.recall_files import TABLE, WORDS, answers, written


def test_a_warm_recall_reads_its_hits_records_not_their_scenes(
    tmp_path: Path, held_builds: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    held_builds.set()
    path = str(tmp_path / "mem.meh")
    written(path, 30)  # ten scenes of three turns, two lines a turn
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        expected = answers(db.primary())  # built: the control
        scenes = {h.scene_id for h in db.primary().recall(WORDS[0], limit=3)}
    read: list[int] = []
    real = archive.read_contents

    def counted(engine: Engine, agent_id: int, ids: Iterable[int]) -> list[ArchiveSlot]:
        wanted = list(ids)
        read.append(len(wanted))
        return real(engine, agent_id, wanted)

    monkeypatch.setattr(archive, "read_contents", counted)
    held_builds.clear()
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        me = db.primary()
        hits = me.recall(WORDS[0], limit=3)
        assert db._root._contexts[0].built is None  # warm: the build waits at its gate
        assert {h.scene_id for h in hits} == scenes
        # Each hit's topic: its two lines and slot 1's address (read as one of them); the
        # three scenes' views would read every turn's (18 lines).
        assert 0 < sum(read) <= 3 * 2
        assert answers(me) == expected  # every word: the built domain's answers
        # A scene read in full after a hit read it in part holds every row and line.
        scene = hits[0].scene_id
        context = me.scene_context(scene)
        held_builds.set()
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        assert db.primary().scene_context(scene) == context  # built: the same scene
