"""A restart's first turn most often opens a new scene with an event (a new conversation):
the first recall after it answers from the saved state and the scenes' views, as any other,
without waiting for the domain's build."""

from __future__ import annotations

import threading
from pathlib import Path

import memhop
from tests.root.recall_files import T0, TABLE, WORDS, written

WAIT_S = 5.0


def _recall_in_time(me: memhop.Session, query: str) -> list[memhop.RecallHit]:
    """``me.recall(query)`` on another thread: [] if it did not answer within ``WAIT_S``
    (it waits for a build the test holds back)."""
    found: list[list[memhop.RecallHit]] = []
    worker = threading.Thread(target=lambda: found.append(me.recall(query, limit=20)))
    worker.start()
    worker.join(WAIT_S)
    return found[0] if found else []


def test_a_first_recall_in_a_new_scene_with_an_event_needs_no_build(
    tmp_path: Path, held_builds: threading.Event
) -> None:
    path = str(tmp_path / "mem.meh")
    written(path, 30)
    held_builds.clear()  # a recall that waits for the domain's build waits for the test
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        me = db.primary()
        scene = me.search(new_scene=True).scene.scene_id
        me.append_archive(
            content=f"a new talk about the {WORDS[0]}",
            kind=memhop.ArchiveKind.EVENT,
            event_type="session_start",
            created_at=T0 + 100,
        )
        hits = _recall_in_time(me, WORDS[0])
        assert hits, "the first recall waited for the domain's build"
        assert db._root._contexts[0].built is None  # answered while the build is held
        # The open turn's event is found in its scene; and the saved turns are found too.
        assert [(h.scene_id, h.event_type) for h in hits if h.event_type] == [
            (scene, "session_start")
        ]
        assert any(h.scene_id != scene for h in hits)  # control: the rows saved before
        me.update(input=f"more on the {WORDS[0]}", output="noted", created_at=T0 + 101)
        again = _recall_in_time(me, WORDS[0])
        assert scene in {h.scene_id for h in again if not h.event_type}  # the closed turn
        held_builds.set()
        me.list_scenes()  # a call of the whole domain: it waits for the build
        assert db._root._contexts[0].built is not None
        warm = [(h.topic_id, h.event_type, round(h.score, 9)) for h in again]
        built = [
            (h.topic_id, h.event_type, round(h.score, 9)) for h in me.recall(WORDS[0], limit=20)
        ]
        assert built == warm  # the built domain answers the same
        # The event stays found in its scene once its turn closed.
        assert (scene, "session_start") in {(h.scene_id, h.event_type) for h in again}
