"""Damage is contained to the record it hits, and salvage_to is the way out.

A file gets three turns (each with two lines) in a child process, which then
closes it cleanly or is SIGKILLed (a crash). One byte of one line's text is
flipped on disk, found by its unique text. Whatever the file went through,
the domain keeps working: listings skip the damaged line, stats count the
damage, and the single record names itself when read.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import memhop
from tests.faults import flip_byte
from tests.interface.conftest import FakeModel

DAMAGED = "the line that rots DAMAGE-ME-7c1e"

_WRITER = textwrap.dedent(
    """
    import os, signal, sys
    import memhop
    from tests.interface.conftest import FakeModel, PRIMARY_NAME

    path, ending = sys.argv[1], sys.argv[2]
    profile = memhop.ProfileInput(name=PRIMARY_NAME)
    db = memhop.open(path, FakeModel(), profile=profile)
    me = db.primary()
    for i, line in enumerate(("first question", sys.argv[3], "third question")):
        me.search()
        me.update(input=line, output=f"answer {i}", created_at=1_700_000_000_000 + i)
    if ending == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    db.close()
    """
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")


def _damaged_file(path: str, ending: str) -> None:
    """Write the three turns in a child that closes or crashes, then rot the DAMAGED line."""
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", _WRITER, path, ending, DAMAGED],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    expected = -signal.SIGKILL if ending == "crash" else 0
    assert done.returncode == expected, done.stderr
    with open(path, "rb") as f:
        data = f.read()
    at = data.find(DAMAGED.encode())
    assert at > 0
    assert data.count(DAMAGED.encode()) == 1  # only the line's own record holds it
    flip_byte(path, at + 5, 0x01)


@pytest.mark.parametrize("ending", ["closed", "crash"])
def test_one_damaged_line_costs_only_itself(meh_path: str, ending: str) -> None:
    """search, list_scenes, get_l0, search_l4 and scene_context all work; the line is gone."""
    _damaged_file(meh_path, ending)
    with memhop.open(meh_path, FakeModel()) as db:
        me = db.primary()
        topics = me.search().topics
        assert len(topics) == 3
        assert me.list_scenes()
        assert me.get_l0().name
        lines = [r.content for t in topics for r in me.search_l4(topic_id=t.id)]
        # Positive control: the five healthy lines read; the rotten one is left out.
        assert sorted(lines) == sorted(
            ["first question", "answer 0", "answer 1", "third question", "answer 2"]
        )
        context = me.scene_context()
        assert sum(len(t.messages) for t in context.topics) == 5
        stats = db.stats()
        # Both endings report the damage: a read met the damaged record (closed), or
        # the open's scan skipped its frame (crash, when no index named it yet).
        assert stats.damaged_records + stats.damaged_frames == 1
        assert stats.to_dict()["damaged_records"] == stats.damaged_records


def test_compact_to_refuses_a_damaged_file_and_names_salvage(meh_path: str, tmp_path: Path) -> None:
    """compact_to will not copy a damaged record and says where to go; nothing is left behind."""
    _damaged_file(meh_path, "closed")
    with memhop.open(meh_path, FakeModel()) as db:
        dest = tmp_path / "copy.meh"
        with pytest.raises(memhop.CRCMismatchError, match="salvage_to") as info:
            db.compact_to(dest)
        assert "at offset" in str(info.value)
        assert not dest.exists()
        # Nothing is left behind (the scene map and the index seed are the ones the writer
        # left at its close).
        left = [n for n in os.listdir(tmp_path) if not n.endswith((".scenemap", ".seed"))]
        assert left == [os.path.basename(meh_path)]


def test_salvage_copies_every_record_that_verifies_and_reports_the_rest(
    meh_path: str, tmp_path: Path
) -> None:
    """salvage_to leaves the damaged line behind, names it, and the copy is whole and clean."""
    _damaged_file(meh_path, "closed")
    copy = str(tmp_path / "salvaged.meh")
    with memhop.open(meh_path, FakeModel()) as db:
        before = db.stats()
        report = db.salvage_to(copy)
        with pytest.raises(memhop.InvalidQueryError, match="already exists"):
            db.salvage_to(copy)  # crash-safe, so never over an existing file
    assert report.records_copied == before.record_count - 1
    (lost,) = report.left_behind
    assert lost.agent_id == "0" * 16
    assert lost.record_kind == "archive"
    assert lost.offset > 8192
    assert "CRC" in lost.reason
    assert report.to_dict()["left_behind"][0]["id"] == lost.id

    with memhop.open(copy, FakeModel()) as salvaged:
        me = salvaged.primary()
        topics = me.search().topics
        assert len(topics) == 3
        lines = [r.content for t in topics for r in me.search_l4(topic_id=t.id)]
        assert len(lines) == 5
        assert DAMAGED not in lines
        stats = salvaged.stats()
        assert (stats.damaged_records, stats.damaged_frames) == (0, 0)
        assert stats.record_count == report.records_copied
        salvaged.compact_to(tmp_path / "again.meh")  # the copy compacts: nothing is damaged


def test_a_damaged_profile_does_not_block_the_open(meh_path: str) -> None:
    """The primary's profile rotted: the file opens, get_l0 names the record, turns still work."""
    with memhop.open(
        meh_path, FakeModel(), profile=memhop.ProfileInput(name="prof", role="ROT-ROLE-91")
    ) as db:
        db.primary().search()
    with open(meh_path, "rb") as f:
        at = f.read().find(b"ROT-ROLE-91")
    flip_byte(meh_path, at, 0x01)
    with memhop.open(meh_path, FakeModel(), profile=memhop.ProfileInput(name="prof")) as db:
        me = db.primary()
        with pytest.raises(memhop.CRCMismatchError, match="at offset"):
            me.get_l0()
        me.search()
        me.update(input="still works", output="yes", created_at=1)  # the control
        assert db.stats().damaged_records == 1
