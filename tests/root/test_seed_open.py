"""A process killed mid-session: the next open starts from the index seed its last close left.

The kill is a real SIGKILL of a child process after turns were written (so the
session's first write cut the file's own snapshot); the parent reopens.
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
from memhop.engine.seed import MIN_LOG_BYTES, SUFFIX

TS = 1_700_000_000_000
TABLE = memhop.Defaults(scene_dream_topic_threshold=-1, compact_dead_ratio=0)
LONG = "w" * 3000  # a turn of some 6 KB: the log passes the seed's floor in a few hundred

_KILLED_WRITER = textwrap.dedent(
    """
    import os, signal, sys, memhop
    table = memhop.Defaults(scene_dream_topic_threshold=-1, compact_dead_ratio=0)
    me = memhop.open(sys.argv[1], memhop.LocalModel(), table).primary()
    for i in range(3):
        me.search()
        me.update(input=f"late turn {i}", output="ok", created_at=int(sys.argv[2]) + i)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def _kill_after_turns(path: str, at: int) -> None:
    """Three turns stamped from ``at`` on, then SIGKILL."""
    args = [sys.executable, "-c", _KILLED_WRITER, path, str(at)]
    killed = subprocess.run(args, check=False)
    assert killed.returncode == -signal.SIGKILL


def _reopened(path: str) -> tuple[str, list[str]]:
    """(where the open took its index from, the current scene's user lines)."""
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        source = db._root.engine.index_source
        lines = [t.messages[0].content for t in db.primary().scene_context().topics]
    return source, lines


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_a_killed_session_reopens_from_the_seed_with_every_turn(tmp_path: Path) -> None:
    path = str(tmp_path / "mem.meh")
    turns = MIN_LOG_BYTES // 6000 + 20
    with memhop.open(path, memhop.LocalModel(), TABLE, memhop.ProfileInput(name="me")) as db:
        me = db.primary()
        for i in range(turns):
            me.search()
            me.update(input=f"early {i} {LONG}", output="ok", created_at=TS + i)
    assert os.path.exists(path + SUFFIX)
    _kill_after_turns(path, TS + 100_000)
    source, lines = _reopened(path)
    assert source == "seed"
    late = [f"late turn {i}" for i in range(3)]
    assert [line for line in lines if line.startswith("late")] == late
    assert sum(line.startswith("early") for line in lines) == turns
    # Control: the same kill without a seed is scanned in full, to the same rows.
    _kill_after_turns(path, TS + 200_000)  # the reopen above closed: kill once more
    os.remove(path + SUFFIX)
    source, again = _reopened(path)
    assert source == "scan"
    assert again[: len(lines)] == lines
    assert again[len(lines) :] == late


def test_an_explicit_checkpoint_keeps_a_seed(tmp_path: Path) -> None:
    path = str(tmp_path / "mem.meh")
    with memhop.open(path, memhop.LocalModel(), TABLE, memhop.ProfileInput(name="me")) as db:
        me = db.primary()
        me.search()
        me.update(input="a small turn", output="ok", created_at=TS)
        db.checkpoint()
        assert not os.path.exists(path + SUFFIX)  # a log this small is scanned at once
        for i in range(MIN_LOG_BYTES // 6000 + 20):
            me.search()
            me.update(input=f"turn {i} {LONG}", output="ok", created_at=TS + 1 + i)
        db.checkpoint()
        assert os.path.exists(path + SUFFIX)  # control: past the floor, a checkpoint keeps one
