"""The interface journeys (turn loop, Dream, admin, the file) through both faces.

Each journey is written once against ``open_db`` and runs on ``memhop.open``
and on ``memhop.aio.open``: the async face must give the same results and
the same refusals (class and code) as the sync surface it drives.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import memhop

from .faces import FACES, Opener

TS = 1_700_000_000_000
NO_AUTO_DREAM = memhop.Defaults(scene_dream_topic_threshold=-1, dream_compress_min_topics=-1)


@pytest.fixture(params=sorted(FACES))
def open_db(request: pytest.FixtureRequest) -> Iterator[Opener]:
    with FACES[request.param]() as opener:
        yield opener


def _create(open_db: Opener, path: Path, **kwargs: Any) -> Any:
    profile = memhop.ProfileInput(name="Ada", role="assistant")
    return open_db(str(path), memhop.LocalModel(), NO_AUTO_DREAM, profile, **kwargs)


def _turn(me: Any, i: int) -> Any:
    opened = me.search()
    me.append_archive(
        content=f"lookup({i})",
        created_at=TS + 10 * i,
        kind=memhop.ArchiveKind.EVENT,
        event_type="tool_call",
    )
    closed = me.update(
        input=f"question {i} about coffee",
        output=f"answer {i} about walks",
        created_at=TS + 10 * i + 1,
    )
    assert closed.id == opened.new_topic_id
    return closed


def test_turn_loop_and_plans(open_db: Opener, tmp_path: Path) -> None:
    path = tmp_path / "loop.meh"
    db = _create(open_db, path)
    me = db.primary()
    opened = me.search()
    assert opened.profile.name == "Ada"
    step = me.plan_node_add(0, title="look it up")
    assert step == 1
    seq = me.append_archive(
        content="weather(Lisbon)", created_at=TS, kind=1, event_type="tool_call", node_seq=step
    )
    assert seq == 3
    me.plan_node_update(step, status="done", summary="sunny")
    assert me.plan_state().done_count == 1
    closed = me.update(input="Weather in Lisbon?", output="Sunny", created_at=TS + 1)
    assert closed.id == opened.new_topic_id
    context = me.scene_context()
    assert [m.content for m in context.topics[0].messages][:2] == ["Weather in Lisbon?", "Sunny"]
    assert [r.content for r in me.search_l4(keyword="lisbon")] == [
        "weather(Lisbon)",
        "Weather in Lisbon?",
    ]
    hits = me.recall("weather lisbon", limit=3)
    assert hits
    assert hits[0].topic_id == closed.id
    with pytest.raises(memhop.InvalidQueryError, match="16 hex digits") as refused:
        me.search(scene_id="zz")
    assert refused.value.code == 1003
    db.close()
    with pytest.raises(memhop.ClosedError):
        db.close()
    with memhop.open(str(path), memhop.LocalModel()) as again:  # the file holds the turn
        assert again.primary().scene_context().topics[0].topic_id == closed.id


def test_dream(open_db: Opener, tmp_path: Path) -> None:
    db = _create(open_db, tmp_path / "dream.meh")
    me = db.primary()
    for i in range(4):
        _turn(me, i)
    report = me.dream()
    assert report.stages[0].name == "l4_prune"
    assert all(s.status for s in report.stages)
    assert report.l0_updated in (True, False)
    assert len(me.scene_context().topics) >= 1
    with pytest.raises(memhop.NotFoundError):
        me.dream("f" * 16)
    db.close()


def test_admin_and_domains(open_db: Opener, tmp_path: Path) -> None:
    path = tmp_path / "admin.meh"
    db = _create(open_db, path)
    me = db.primary()
    first = _turn(me, 0)
    second = _turn(me, 1)
    scene = me.list_scenes()[0]
    renamed = me.update_scene(scene.scene_id, name="coffee chat")
    assert renamed.scene_name == "coffee chat"
    assert me.rename_topic(first.id, "the first").name == "the first"
    me.delete_topic(second.id)
    assert [t.topic_id for t in me.scene_context().topics] == [first.id]
    with pytest.raises(memhop.NotFoundError) as missing:
        me.delete_topic(second.id)
    assert missing.value.code == 3001
    sub = db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="helper"))
    assert sub.scene_context().topics == ()  # a domain never reads another's records
    _turn(sub, 5)
    again = db.agent(memhop.LocalModel(), sub.agent_id)
    assert len(again.scene_context().topics) == 1
    assert [a.name for a in db.agents()] == ["Ada", "helper"]
    with pytest.raises(memhop.AgentNotFoundError):
        db.agent(memhop.LocalModel(), "1" * 16)
    db.checkpoint()
    assert db.stats().record_count > 0
    copy = tmp_path / "copy.meh"
    db.compact_to(str(copy))
    salvaged = db.salvage_to(str(tmp_path / "salvaged.meh"))
    assert salvaged.records_copied > 0
    assert salvaged.left_behind == ()
    db.compact()
    assert [t.topic_id for t in me.scene_context().topics] == [first.id]  # kept through it
    me.delete_scene(scene.scene_id)
    assert me.list_scenes() == []
    db.close()
    with memhop.open(str(copy), memhop.LocalModel()) as copied:
        assert copied.primary().list_scenes()[0].scene_name == "coffee chat"


def test_refused_open_is_the_same_refusal(open_db: Opener, tmp_path: Path) -> None:
    """A missing file with no profile is ConfigError through both faces; with one it opens."""
    with pytest.raises(memhop.ConfigError):
        open_db(str(tmp_path / "absent.meh"), memhop.LocalModel())
    assert not (tmp_path / "absent.meh").exists()
    _create(open_db, tmp_path / "present.meh").close()
    assert (tmp_path / "present.meh").exists()
