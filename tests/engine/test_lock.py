"""The exclusive file lock (storage.md §11.1): one open engine per file, in or across processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from memhop.engine import create_engine, open_engine
from memhop.errors import Code, InvalidQueryError, StorageIOError
from tests.faults import file_size

# Prints the outcome of one open_engine call as "ok <live>" or "error <code> <message>".
_OPEN_IN_CHILD = textwrap.dedent(
    """
    import sys
    from memhop.engine import open_engine
    from memhop.errors import MemHopError
    try:
        engine = open_engine(sys.argv[1])
    except MemHopError as exc:
        print("error", exc.code, exc)
    else:
        print("ok", engine.stats()[1], engine.read(0, 1).payload.decode())
        engine.close()
    """
)


def _open_in_another_process(path: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _OPEN_IN_CHILD, path],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_second_open_in_this_process_is_refused(meh_path: str) -> None:
    """A second open_engine of a file this process holds is refused with StorageIOError 5001."""
    holder = create_engine(meh_path)
    try:
        holder.write(0, 0x01, 1, b"held")
        with pytest.raises(StorageIOError) as info:
            open_engine(meh_path)
        assert info.value.code == Code.IO == 5001
        assert "another instance" in str(info.value)
        assert "already open" in str(info.value)
        assert str(info.value) == "database already open by another instance"
        assert holder.read(0, 1).payload == b"held"  # the holder is unaffected
    finally:
        holder.close()

    reopened = open_engine(meh_path)  # positive control: after close the file opens
    try:
        assert reopened.read(0, 1).payload == b"held"
    finally:
        reopened.close()


def test_create_on_a_held_file_is_refused_and_changes_nothing(meh_path: str) -> None:
    """create_engine on an existing (held) file fails, leaves its bytes alone; the holder reads."""
    holder = create_engine(meh_path)
    try:
        holder.write(0, 0x02, 1, b"precious")
        holder.checkpoint()
        with open(meh_path, "rb") as f:
            before = f.read()
        assert len(before) > 8192
        with pytest.raises(InvalidQueryError, match="already exists") as info:
            create_engine(meh_path)
        assert info.value.code == 1003
        with open(meh_path, "rb") as f:
            assert f.read() == before
        assert holder.read(0, 1).payload == b"precious"
        holder.write(0, 0x02, 2, b"still writable")
        assert holder.stats()[1] == 2
    finally:
        holder.close()

    reopened = open_engine(meh_path)
    try:
        assert reopened.read(0, 1).payload == b"precious"
        assert reopened.read(0, 2).payload == b"still writable"
    finally:
        reopened.close()


def test_a_refused_open_does_not_release_the_holders_lock(meh_path: str) -> None:
    """After one refused open, a further open is refused too: the failed attempt freed nothing."""
    holder = create_engine(meh_path)
    try:
        for _ in range(2):
            with pytest.raises(StorageIOError, match="already open"):
                open_engine(meh_path)
        assert file_size(meh_path) == 8192
    finally:
        holder.close_without_checkpoint()
    open_engine(meh_path).close()  # positive control


def test_an_open_from_another_process_is_refused_until_the_holder_closes(meh_path: str) -> None:
    """A child process's open_engine fails with 5001 while held and succeeds after close."""
    holder = create_engine(meh_path)
    try:
        holder.write(0, 0x01, 1, b"shared")
        outcome = _open_in_another_process(meh_path)
        assert outcome == f"error {Code.IO.value} database already open by another instance"
        assert "another instance" in outcome
        assert "already open" in outcome
        assert holder.read(0, 1).payload == b"shared"
    finally:
        holder.close()

    assert _open_in_another_process(meh_path) == "ok 1 shared"
