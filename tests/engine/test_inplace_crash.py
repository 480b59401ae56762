"""Real kills at each step of an in-place compaction: the name holds the old file or the new one.

A child process opens a file with deleted records and compacts it in place;
one seam (a StoreFile write, an fsync, the rename) sends the child SIGKILL on
its n-th call. Afterwards the parent opens the file under its name and finds a
whole file: every live record reads, and it is either the old file (same
size, the deleted payloads still in it) or the compacted one (smaller, no
deleted payload), never a mix. A leftover temporary sibling is never opened.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memhop.engine import RecordEntry, create_engine, open_engine
from memhop.engine.inplace import compact_in_place, occupancy
from memhop.engine.side_files import TEMP_SUFFIX

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

RECORDS = 2400  # about 1 MiB: the copy takes more than one blob
DOOMED = b"doomed-payload"

_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from memhop.engine import storefile, publish
    from memhop.engine.inplace import compact_in_place
    from memhop.engine.lifecycle import open_engine

    step, nth, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    calls = {"n": 0}

    def kill_on_nth(real, after=False):
        def wrapper(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == nth and not after:
                os.kill(os.getpid(), signal.SIGKILL)
            result = real(*args, **kwargs)
            if calls["n"] == nth and after:
                os.kill(os.getpid(), signal.SIGKILL)
            return result
        return wrapper

    if step == "write":
        storefile.StoreFile.write_at = kill_on_nth(storefile.StoreFile.write_at)
    elif step == "fsync":
        storefile.fsync_file = kill_on_nth(storefile.fsync_file)
    else:
        publish.os.replace = kill_on_nth(os.replace, after=step == "after-rename")

    engine = open_engine(path)  # from its snapshot: no write, no fsync
    compact_in_place(engine, path)
    print("finished")
    """
)


def _build(path: str) -> None:
    """RECORDS records in three domains, then every third one deleted (its payload marked)."""
    engine = create_engine(path)
    entries = [
        RecordEntry(i % 3, 0x08, i + 1, (DOOMED if i % 3 == 0 else b"kept") + b"%06d" % i * 30)
        for i in range(RECORDS)
    ]
    engine.write_batch(entries)
    engine.delete_batch(0, [i + 1 for i in range(0, RECORDS, 3)])
    engine.close()


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("orig") / "db.meh"
    _build(str(path))
    return path


def _kill_child(step: str, nth: int, path: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, step, str(nth), path],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("step", "nth", "compacted"),
    [
        ("write", 3, False),  # the first blob of frames in the copy
        ("fsync", 2, False),  # the copy's snapshot
        ("fsync", 3, False),  # the copy's header flip
        ("before-rename", 1, False),
        ("after-rename", 1, True),  # before the directory fsync
        ("fsync", 4, True),  # the directory fsync itself
    ],
)
def test_a_kill_at_each_step_leaves_one_whole_file(
    original: Path, tmp_path: Path, step: str, nth: int, compacted: bool
) -> None:
    path = tmp_path / "db.meh"
    path.write_bytes(original.read_bytes())
    old_size = path.stat().st_size
    _kill_child(step, nth, str(path))

    data = path.read_bytes()
    assert (DOOMED in data) is not compacted  # the old file, or the new one: nothing between
    assert (len(data) == old_size) is not compacted
    leftovers = [n for n in os.listdir(tmp_path) if n.endswith(TEMP_SUFFIX)]
    assert len(leftovers) == (0 if compacted else 1)
    engine = open_engine(str(path))
    # The open removes what the killed build left (no builder holds its lock).
    assert [n for n in os.listdir(tmp_path) if n.endswith(TEMP_SUFFIX)] == []
    try:
        assert engine.stats()[1] == RECORDS - RECORDS // 3
        assert all(engine.read(1, i + 1).payload.startswith(b"kept") for i in range(1, 90, 3))
        assert not engine.contains(0, 1)
        assert occupancy(engine).dead_ratio < (0.01 if compacted else 1)
        # A retry finishes the job whatever the kill left.
        engine = compact_in_place(engine, str(path))
        assert engine.stats()[1] == RECORDS - RECORDS // 3
    finally:
        engine.close()
    assert DOOMED not in path.read_bytes()
