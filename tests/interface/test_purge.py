"""Deletion that reaches the bytes: the audit users run, through public names only.

A sentinel word is written everywhere a domain keeps text (a turn's lines, an
event, a plan step title, a profile preference, a Dream summary); after the
delete it is still in the raw file (the positive control), and after a
compaction or a purge it is in no byte of any file in the directory, while
every kept turn answers its reads exactly as before.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import memhop
from tests.interface.conftest import PRIMARY_NAME, TS

SENTINEL = "zqsentinelwx"
QUIET = {"scene_dream_topic_threshold": -1, "dream_compress_min_topics": 2}
PROFILE = memhop.ProfileInput(name=PRIMARY_NAME, role="offline fixture")


def _open(folder: Path, **defaults: Any) -> memhop.DB:
    table = memhop.Defaults(**{**QUIET, "compact_dead_ratio": 0, **defaults})
    return memhop.open(str(folder / "mem.meh"), memhop.LocalModel(), table, PROFILE)


def _every_byte(folder: Path) -> bytes:
    """Every byte of every file under ``folder`` (the database and anything beside it)."""
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def _turn(me: memhop.Session, text: str, at: int, *, event: str = "") -> str:
    """One closed turn on the current scene; return its topic id."""
    me.search()
    if event:
        me.append_archive(
            content=event, created_at=at, kind=memhop.ArchiveKind.EVENT, event_type="note"
        )
    return me.update(input=f"{text} (asked)", output=f"{text} (answered)", created_at=at).id


def _reads(me: memhop.Session, scene_id: str, *, without: str = "") -> tuple[object, ...]:
    """Everything a host reads of the kept scene, whole (less the rows of topic ``without``)."""
    rows = [r for r in me.search_l4() if r.topic_id != without]
    return (me.scene_context(scene_id), rows, me.search_l4(keyword="kept"), me.list_scenes())


def _kept_scene(me: memhop.Session) -> str:
    """Three plain turns with an event each, on a new scene; return the scene id."""
    scene = me.search(new_scene=True).scene.scene_id
    me.update(input="the kept opening", output="noted", created_at=TS)
    for i in range(1, 4):
        _turn(me, f"kept words {i} about the orchard", TS + i, event=f"kept event {i}")
    return scene


def _kept_and_doomed(me: memhop.Session) -> tuple[str, str, str]:
    """A kept scene, then a scene of one turn that says the sentinel: the scene ids and
    that turn's topic id."""
    kept = _kept_scene(me)
    doomed = me.search(new_scene=True).scene.scene_id
    topic = me.update(input=f"{SENTINEL} said", output="ok", created_at=TS + 9).id
    return kept, doomed, topic


def _doomed_scene(me: memhop.Session) -> str:
    """A scene whose every kind of text carries the sentinel, Dream summary included."""
    scene = me.search(new_scene=True).scene.scene_id
    me.append_archive(
        content=f"{SENTINEL} event",
        created_at=TS + 100,
        kind=memhop.ArchiveKind.EVENT,
        event_type="note",
    )
    me.plan_node_add(0, title=f"step about {SENTINEL}")
    me.update(input=f"{SENTINEL} first", output=f"{SENTINEL} reply", created_at=TS + 100)
    for i in range(1, 6):
        _turn(me, f"{SENTINEL} line {i}", TS + 100 + i)
    me.dream(scene)
    dreamt = [
        m.content
        for t in me.scene_context(scene).topics
        for m in t.messages
        if m.role == memhop.ArchiveRole.DREAM
    ]
    assert any(SENTINEL in text for text in dreamt)  # a Dream summary quotes it
    return scene


def test_a_deleted_sentinel_is_in_no_byte_once_the_file_is_compacted(tmp_path: Path) -> None:
    """Delete leaves the sentinel in the file; DB.compact removes it; kept reads are unchanged."""
    folder = tmp_path / "audit"
    folder.mkdir()
    db = _open(folder)
    me = db.primary()
    other = db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="other"))
    _turn(other, "the other domain's plans", TS)
    me.update_l0(memhop.ProfileInput(name=PRIMARY_NAME, preferences={"nickname": SENTINEL}))
    doomed = _doomed_scene(me)
    kept = _kept_scene(me)
    me.search()  # a turn open on the kept scene, across the compaction
    me.append_archive(content="said before the compaction", created_at=TS + 50)

    me.update_l0(PROFILE)  # the preference goes (and the distilled personality with it)
    me.delete_scene(doomed)
    assert SENTINEL.encode() in _every_byte(folder)  # deleted, and still in the raw bytes
    before = _reads(me, kept)
    size_before = db.stats().file_bytes

    db.compact()

    assert SENTINEL.encode() not in _every_byte(folder)
    assert os.listdir(folder) == ["mem.meh"]
    assert db.stats().file_bytes < size_before
    assert _reads(me, kept) == before
    # The open turn and the current scene survived; so did the other domain.
    closed = me.update(input="after the compaction", output="still here", created_at=TS + 51)
    assert closed.scene_id == kept
    lines = [m.content for m in me.scene_context().topics[-1].messages]
    assert lines == ["after the compaction", "still here", "said before the compaction"]
    assert _turn(other, "the other domain again", TS + 1)
    db.close()

    with _open(folder) as again:
        me = again.primary()
        assert _reads(me, kept)[0].topics[:-1] == before[0].topics  # type: ignore[attr-defined]
        assert me.get_l0().preferences == {}
        assert me.recall("orchard")  # the recall index is built: the close saves it
    assert (folder / "mem.meh.recall").exists()  # so the audit below reads it too
    assert SENTINEL.encode() not in _every_byte(folder)


def test_a_saved_recall_index_goes_with_the_delete(tmp_path: Path) -> None:
    """The recall file holds words: it leaves with the delete, before any compaction."""
    folder = tmp_path / "audit"
    folder.mkdir()
    with _open(folder) as db:
        me = db.primary()
        kept, doomed, _ = _kept_and_doomed(me)
        assert me.recall(SENTINEL)
    assert SENTINEL.encode() in (folder / "mem.meh.recall").read_bytes()  # control
    with _open(folder) as db:
        me = db.primary()
        me.delete_scene(doomed)
        assert not (folder / "mem.meh.recall").exists()
        assert not me.recall(SENTINEL)
        assert me.recall("orchard", scene_id=kept)  # the kept scene still answers
        db.compact()
        assert SENTINEL.encode() not in _every_byte(folder)
    assert (folder / "mem.meh.recall").exists()
    assert SENTINEL.encode() not in _every_byte(folder)


@pytest.mark.parametrize("what", ["topic", "scene"])
def test_purge_returns_once_the_bytes_are_gone(tmp_path: Path, what: str) -> None:
    """purge_topic / purge_scene: delete and compact in one call; kept reads unchanged."""
    folder = tmp_path / "purge"
    folder.mkdir()
    with _open(folder) as db:
        me = db.primary()
        kept, doomed_scene, doomed_topic = _kept_and_doomed(me)
        assert SENTINEL.encode() in _every_byte(folder)  # before the purge it is there
        before = _reads(me, kept, without=doomed_topic)

        if what == "topic":
            me.purge_topic(doomed_topic)
        else:
            me.purge_scene(doomed_scene)

        assert SENTINEL.encode() not in _every_byte(folder)
        after = _reads(me, kept)
        assert after[:3] == before[:3]
        assert len(after[3]) == len(before[3]) - (what == "scene")  # type: ignore[arg-type]
        with pytest.raises(memhop.NotFoundError):
            me.purge_topic(doomed_topic)


def _retained_events(folder: Path, ratio: float) -> bytes:
    """Old events swept by Dream's retention (upstream's sweep), then the directory's bytes."""
    with _open(folder, sweep_unfolded=True, compact_dead_ratio=ratio) as db:
        me = db.primary()
        me.search(new_scene=True)
        me.update(input="an old turn", output="with old events", created_at=TS)
        for i in range(1, 8):
            _turn(me, f"old turn {i}", TS + i, event=f"{SENTINEL} {i} " + "x" * 600)
        assert SENTINEL.encode() in _every_byte(folder)
        report = me.dream()
        assert report.l4_records_pruned >= 7
        assert not me.search_l4(keyword=SENTINEL)
        return _every_byte(folder)


def test_a_retention_sweep_bounds_the_bytes_through_the_policy(tmp_path: Path) -> None:
    """With compact_dead_ratio the swept events leave the file; with 0 they stay (control)."""
    (tmp_path / "manual").mkdir()
    (tmp_path / "policy").mkdir()
    assert SENTINEL.encode() in _retained_events(tmp_path / "manual", 0)
    assert SENTINEL.encode() not in _retained_events(tmp_path / "policy", 0.2)


def test_a_delete_past_the_ratio_compacts_and_one_below_it_does_not(tmp_path: Path) -> None:
    """The policy runs after a delete: a small delete keeps the bytes, a large one drops them."""
    folder = tmp_path / "delete"
    folder.mkdir()
    with _open(folder, compact_dead_ratio=0.4) as db:
        me = db.primary()
        _kept_scene(me)
        for i in range(12):
            _turn(me, f"more kept words {i} " + "y" * 300, TS + 10 + i)
        me.search(new_scene=True)
        small = me.update(input=f"{SENTINEL} small", output="ok", created_at=TS + 40).id
        big = me.search(new_scene=True).scene.scene_id
        for i in range(30):
            _turn(me, f"{SENTINEL} big {i} " + "z" * 400, TS + 50 + i)

        me.delete_topic(small)
        assert SENTINEL.encode() in _every_byte(folder)  # a few dead bytes: no compaction
        me.delete_scene(big)
        assert SENTINEL.encode() not in _every_byte(folder)  # past the ratio: compacted


def test_compact_refuses_a_file_replaced_since_it_was_opened(tmp_path: Path) -> None:
    """A file moved away under the handle is not compacted; the handle keeps working."""
    folder = tmp_path / "moved"
    folder.mkdir()
    with _open(folder) as db:
        me = db.primary()
        _kept_scene(me)
        os.rename(folder / "mem.meh", folder / "elsewhere.meh")
        with pytest.raises(memhop.StorageIOError, match="moved or replaced"):
            db.compact()
        assert sorted(os.listdir(folder)) == ["elsewhere.meh"]
        assert _turn(me, "still writable", TS + 99)


def test_a_second_open_after_a_compaction_names_the_holder(tmp_path: Path) -> None:
    """The file's inode changed; a second open in this process still names the open DB."""
    folder = tmp_path / "twice"
    folder.mkdir()
    with _open(folder) as db:
        db.compact()
        with pytest.raises(memhop.StorageIOError, match="already open in this process"):
            _open(folder)


@pytest.mark.parametrize("ratio", [1, 1.5, float("nan"), "0.5", True])
def test_a_ratio_that_is_not_a_share_below_one_is_a_config_error(ratio: Any) -> None:
    with pytest.raises(memhop.ConfigError, match="compact_dead_ratio"):
        memhop.Defaults(compact_dead_ratio=ratio).validate()
    memhop.Defaults(compact_dead_ratio=0.99).validate()  # control: a share below one is taken


def test_the_ratio_defaults_on_and_zero_or_negative_means_manual_only() -> None:
    assert memhop.DEFAULTS.compact_dead_ratio == memhop.Defaults().compact_dead_ratio > 0
    assert memhop.Defaults(compact_dead_ratio=-1).normalized().compact_dead_ratio == 0
    assert memhop.Defaults(compact_dead_ratio=0).normalized().compact_dead_ratio == 0
