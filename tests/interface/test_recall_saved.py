"""The recall index saved beside the file: a reopened domain recalls as it did, at once.

Through public names only. Each answer after a reopen is compared with the
answer the same query gave before the close (and with a full build, the file
beside removed: the control that the saved state is not answering alone).
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import pytest

import memhop
from tests.interface.conftest import PRIMARY_NAME, TS

QUIET = memhop.Defaults(scene_dream_topic_threshold=-1, compact_dead_ratio=0)
PROFILE = memhop.ProfileInput(name=PRIMARY_NAME, role="offline fixture")
QUERIES = ("violin lessons", "the orchard harvest", "what did Mia paint", "rain on the lake")
TALK = [
    ("I started violin lessons with Mia", "violin is hard at first"),
    ("Mia painted the lake at sunset", "a lovely painting of the lake"),
    ("the orchard harvest was apples and pears", "pears keep well"),
    ("rain kept us inside all weekend", "rain on the lake is calm"),
    ("my violin teacher moved to Lisbon", "Lisbon has good teachers"),
    ("we sold orchard cider at the market", "cider from the harvest"),
]


def _open(path: Path) -> memhop.DB:
    return memhop.open(str(path), memhop.LocalModel(), QUIET, PROFILE)


def _write(me: memhop.Session, talk: list[tuple[str, str]], at: int) -> list[str]:
    """A scene per two turns, each with an event; return the topic ids."""
    topics = []
    for i, (said, answered) in enumerate(talk):
        me.search(new_scene=i % 2 == 0)
        me.append_archive(
            content=f"note: {said}",
            created_at=at + i,
            kind=memhop.ArchiveKind.EVENT,
            event_type="note",
        )
        topics.append(me.update(input=said, output=answered, created_at=at + i).id)
    return topics


def _answers(me: memhop.Session) -> list[list[memhop.RecallHit]]:
    return [me.recall(q, limit=4) for q in QUERIES]


def _side(path: Path) -> Path:
    return Path(str(path) + ".recall")


def test_a_reopened_domain_recalls_what_it_recalled_before_the_close(tmp_path: Path) -> None:
    path = tmp_path / "mem.meh"
    with _open(path) as db:
        me = db.primary()
        _write(me, TALK, TS)
        before = _answers(me)
        assert all(before)  # every query finds something (the comparison is not of nothing)
    assert _side(path).stat().st_size > 0  # the close saved the state

    with _open(path) as db:
        me = db.primary()
        me.search()  # a turn opens, as a host's loop does
        assert _answers(me) == before
    # Control: without the file the domain is indexed from its records, to the same answers.
    os.remove(_side(path))
    with _open(path) as db:
        assert _answers(db.primary()) == before


def test_turns_written_after_a_reopen_are_recalled(tmp_path: Path) -> None:
    path = tmp_path / "mem.meh"
    with _open(path) as db:
        me = db.primary()
        _write(me, TALK, TS)
        me.recall("violin")  # the state is built, so the close saves it
    with _open(path) as db:
        me = db.primary()
        me.search(new_scene=True)
        new = me.update(
            input="a heron stood on the pier", output="herons fish there", created_at=TS + 50
        )
        hits = me.recall("heron on the pier", limit=3)
        assert hits[0].topic_id == new.id
        assert me.recall("violin lessons", limit=1)[0].text  # and the saved rows still answer
        after = [*_answers(me), hits]
    os.remove(_side(path))
    with _open(path) as db:
        me = db.primary()
        assert [*_answers(me), me.recall("heron on the pier", limit=3)] == after


def test_a_state_saved_before_later_sessions_is_brought_up_to_date(tmp_path: Path) -> None:
    """A recall file older than the log (a crash before the close wrote it again) still
    serves: what the log gained since is redone."""
    path = tmp_path / "mem.meh"
    with _open(path) as db:
        me = db.primary()
        _write(me, TALK[:3], TS)
        me.recall("violin")
    old = tmp_path / "old.recall"
    shutil.copy(_side(path), old)
    with _open(path) as db:
        me = db.primary()
        _write(me, TALK[3:], TS + 10)
        expected = _answers(me)
    shutil.copy(old, _side(path))  # the file as the first close left it
    with _open(path) as db:
        me = db.primary()
        me.search()
        assert _answers(me) == expected
        assert any("Lisbon" in h.text for h in me.recall("Lisbon teacher"))


def test_a_delete_takes_the_recall_file_with_it(tmp_path: Path) -> None:
    """The file holds words of what was said: it is gone before a delete returns, and the
    next close writes it again without the deleted turn."""
    path = tmp_path / "mem.meh"
    with _open(path) as db:
        me = db.primary()
        topics = _write(me, TALK, TS)
        me.recall("violin")
    assert b"lisbon" in _side(path).read_bytes()  # a stemmed, folded word of the doomed turn
    with _open(path) as db:
        me = db.primary()
        me.search()
        assert any(h.topic_id == topics[4] for h in me.recall("Lisbon", limit=3))
        assert _side(path).exists()  # reads leave it
        me.delete_topic(topics[4])
        assert not _side(path).exists()
        hits = me.recall("Lisbon violin", limit=5)
        assert hits  # the other violin turn still answers: scoping, not an empty index
        assert topics[4] not in {h.topic_id for h in hits}
    assert b"violin" in _side(path).read_bytes()  # written again at the close,
    assert b"lisbon" not in _side(path).read_bytes()  # without the deleted turn's words


def test_an_old_file_that_missed_a_delete_is_not_trusted(tmp_path: Path) -> None:
    """A recall file put back from before a delete (restored by hand, or written by another
    writer) is refused: the deleted turn is not recalled from it."""
    path = tmp_path / "mem.meh"
    with _open(path) as db:
        me = db.primary()
        topics = _write(me, TALK, TS)
        me.recall("violin")
    old = tmp_path / "old.recall"
    shutil.copy(_side(path), old)
    with _open(path) as db:
        me = db.primary()
        assert any(h.topic_id == topics[2] for h in me.recall("orchard harvest"))  # control
        me.delete_topic(topics[2])
    shutil.copy(old, _side(path))
    with _open(path) as db:
        me = db.primary()
        me.search()
        hits = me.recall("orchard harvest apples pears", limit=5)
        assert hits
        assert topics[2] not in {h.topic_id for h in hits}


@pytest.mark.parametrize("where", ["header", "body", "truncated"])
def test_a_damaged_recall_file_is_ignored_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, where: str
) -> None:
    path = tmp_path / "mem.meh"
    with _open(path) as db:
        me = db.primary()
        _write(me, TALK, TS)
        before = _answers(me)
    raw = bytearray(_side(path).read_bytes())
    if where == "truncated":
        del raw[len(raw) // 2 :]
    else:
        at = 3 if where == "header" else len(raw) - 100
        raw[at] ^= 0xFF
    _side(path).write_bytes(bytes(raw))
    with caplog.at_level(logging.WARNING, logger="memhop"), _open(path) as db:
        me = db.primary()
        me.search()
        assert _answers(me) == before
    assert "recall" in caplog.text
    assert "ignored" in caplog.text or "not used" in caplog.text


def test_a_session_that_changed_no_row_keeps_the_file_and_stamps_it(tmp_path: Path) -> None:
    """Writing the whole index costs what the domain holds: a session whose recalls
    changed nothing keeps the file's bytes and appends one 64-byte stamp (docs/format.md);
    one with a turn writes it again (the control)."""
    path = tmp_path / "mem.meh"
    with _open(path) as db:
        me = db.primary()
        _write(me, TALK, TS)
        before = _answers(me)
    saved = _side(path).read_bytes()
    with _open(path) as db:
        me = db.primary()
        me.search()
        assert _answers(me) == before
    stamped = _side(path).read_bytes()
    assert stamped.startswith(saved)
    assert len(stamped) == len(saved) + 64
    with _open(path) as db:
        me = db.primary()
        me.search()
        me.update(input="a heron by the lake", output="noted", created_at=TS + 40)
        assert me.recall("heron")
    assert _side(path).read_bytes() != saved
    assert b"heron" in _side(path).read_bytes()
