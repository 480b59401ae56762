"""Real kills: a child process SIGKILLs itself at a chosen step of a create or a compaction.

The child patches one seam (a StoreFile write, an fsync, the final hard link)
to send itself SIGKILL on its n-th call, so each kill lands at a known step and
the test is deterministic. Afterwards the parent checks what a reader finds:
never a partial copy or a half-made file under the final name.
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
from memhop.engine import RecordEntry, compact_to, create_engine, open_engine
from memhop.engine.publish import TEMP_SUFFIX

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

RECORDS = 3000

_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from memhop.engine import storefile, publish

    step, nth, action, source, dest = sys.argv[1], int(sys.argv[2]), sys.argv[3], *sys.argv[4:6]
    calls = {"n": 0}

    def kill_on_nth(real):
        def wrapper(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == nth and step != "after-link":
                os.kill(os.getpid(), signal.SIGKILL)
            result = real(*args, **kwargs)
            if calls["n"] == nth and step == "after-link":
                os.kill(os.getpid(), signal.SIGKILL)
            return result
        return wrapper

    if step == "write":
        storefile.StoreFile.write_at = kill_on_nth(storefile.StoreFile.write_at)
    elif step == "fsync":
        storefile.fsync_file = kill_on_nth(storefile.fsync_file)
    else:
        publish.os.link = kill_on_nth(os.link)

    if action == "compact":
        from memhop.engine import compact_to, open_engine
        # Opening the source writes nothing and syncs nothing: the counts start at the copy.
        engine = open_engine(source)
        compact_to(engine, dest)
    else:
        import memhop
        memhop.open(dest, memhop.LocalModel(), profile=memhop.ProfileInput(name="kid"))
    print("finished")
    """
)


def _kill_child(step: str, nth: int, action: str, source: str, dest: str) -> None:
    """Run the child; it must die of SIGKILL at the chosen step."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, step, str(nth), action, source, dest],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stdout + done.stderr


def _temp_siblings(folder: Path) -> list[str]:
    return [n for n in os.listdir(folder) if n.endswith(TEMP_SUFFIX)]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A closed file of RECORDS records (about 1.3 MiB, so the copy takes several 1 MiB blobs)."""
    path = str(tmp_path_factory.mktemp("src") / "source.meh")
    engine = create_engine(path)
    engine.write_batch(
        [RecordEntry(i % 3, 0x08, i + 1, b"%06d" % i + b"x" * 420) for i in range(RECORDS)]
    )
    engine.close()
    os.chmod(path, 0o600)
    return path


@pytest.mark.parametrize(
    ("step", "nth"),
    [("write", 3), ("write", 4), ("fsync", 1), ("fsync", 2), ("fsync", 3)],
    ids=["first-blob", "second-blob", "headers-sync", "snapshot-sync", "header-flip-sync"],
)
def test_a_kill_during_compaction_leaves_nothing_under_the_new_path(
    source: str, tmp_path: Path, step: str, nth: int
) -> None:
    """Killed mid-copy, compact_to leaves no file at newPath; a retry makes a whole copy."""
    dest = str(tmp_path / "copy.meh")
    _kill_child(step, nth, "compact", source, dest)
    assert not os.path.lexists(dest)
    assert len(_temp_siblings(tmp_path)) == 1  # the kill's leftover, never taken for a database

    engine = open_engine(source)  # the source is intact
    try:
        assert engine.stats()[1] == RECORDS
        compact_to(engine, dest)  # the retry is not refused with "already exists"
    finally:
        engine.close()
    copy = open_engine(dest)
    try:
        assert copy.stats()[1] == RECORDS
        assert copy.read(1, 2).payload.startswith(b"000001")
    finally:
        copy.close()
    assert os.stat(dest).st_mode & 0o777 == 0o600  # the copy keeps the source's bits


def test_a_kill_just_after_the_rename_leaves_a_whole_copy(source: str, tmp_path: Path) -> None:
    """Killed after the copy got its name (before tidying up), newPath holds every record."""
    dest = str(tmp_path / "copy.meh")
    _kill_child("after-link", 1, "compact", source, dest)
    copy = open_engine(dest)
    try:
        assert copy.stats()[1] == RECORDS
    finally:
        copy.close()


@pytest.mark.parametrize(
    ("step", "nth"), [("write", 1), ("write", 2), ("fsync", 1)], ids=["A", "B", "sync"]
)
def test_a_kill_during_create_leaves_no_file(tmp_path: Path, step: str, nth: int) -> None:
    """Killed while memhop.open creates a file, the path stays free and a retry creates it."""
    path = str(tmp_path / "new.meh")
    _kill_child(step, nth, "create", "", path)
    assert not os.path.lexists(path)
    profile = memhop.ProfileInput(name="kid")
    with memhop.open(path, memhop.LocalModel(), profile=profile) as db:
        assert db.primary().get_l0().name == "kid"


def test_a_kill_after_the_create_rename_reopens_with_a_profile(tmp_path: Path) -> None:
    """Killed between the create and the profile, the file opens and is seeded by a profile."""
    path = str(tmp_path / "new.meh")
    _kill_child("after-link", 1, "create", "", path)
    with pytest.raises(memhop.ConfigError, match="no primary profile"):
        memhop.open(path, memhop.LocalModel()).close()
    profile = memhop.ProfileInput(name="kid")
    with memhop.open(path, memhop.LocalModel(), profile=profile) as db:
        assert db.primary().get_l0().name == "kid"
