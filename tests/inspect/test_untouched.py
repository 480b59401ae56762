"""Looking never changes the file: not the inspector, not an open/close that writes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import memhop
from tests.inspect.conftest import TS, Demo, signature

OLD_MTIME_NS = 1_000_000_000_000_000_000  # 2001: any write moves the mtime away from it


def _age(path: str) -> None:
    os.utime(path, ns=(OLD_MTIME_NS, OLD_MTIME_NS))


def test_every_inspector_call_leaves_bytes_and_mtime_alone(demo: Demo) -> None:
    _age(demo.path)
    before = signature(demo.path)
    view = memhop.inspect(demo.path)
    for call in (
        view.info,
        view.agents,
        view.profile,
        view.scenes,
        view.topics,
        view.content,
        view.events,
        view.plans,
        view.l1,
        view.graphs,
        view.frames,
        view.stats,
        view.verify,
        view.refresh,
        lambda: list(view.records()),
        lambda: view.grep("roses"),
        lambda: view._repr_html_(),
    ):
        call()
    assert signature(demo.path) == before
    assert before[2] == OLD_MTIME_NS


def test_open_and_close_with_no_writes_appends_nothing(demo: Demo) -> None:
    _age(demo.path)
    before = signature(demo.path)
    for _ in range(3):
        with memhop.open(demo.path, memhop.LocalModel()) as db:
            db.primary().scene_context()
            db.agents()
    assert signature(demo.path) == before
    # Positive control: a turn written is a change, and the next close checkpoints it.
    with memhop.open(demo.path, memhop.LocalModel()) as db:
        db.primary().search()
        db.primary().update(input="one more", output="ok", created_at=TS + 50_000)
    after = signature(demo.path)
    assert after[1] > before[1]
    assert after[2] != OLD_MTIME_NS
    # And a quiet open/close after that write leaves the new state alone again.
    with memhop.open(demo.path, memhop.LocalModel()):
        pass
    assert signature(demo.path) == after


def test_a_second_open_in_this_process_names_the_db_that_holds_the_file(demo: Demo) -> None:
    holder = memhop.open(demo.path, memhop.LocalModel())
    try:
        with pytest.raises(memhop.StorageIOError) as info:
            memhop.open(demo.path, memhop.LocalModel())
        text = str(info.value)
        assert "another instance" in text
        assert "already open in this process" in text
        assert repr(holder) in text  # <memhop.DB '...' open>
        # The read-only view works beside the holder.
        assert len(memhop.inspect(demo.path).topics()) > 0
    finally:
        holder.close()
    memhop.open(demo.path, memhop.LocalModel()).close()  # positive control: free once closed


def test_the_lock_error_from_another_process_names_the_path(demo: Demo) -> None:
    holder = textwrap.dedent(
        f"""
        import sys, memhop
        db = memhop.open({demo.path!r}, memhop.LocalModel())
        print("held", flush=True)
        sys.stdin.readline()
        db.close()
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "held"
        with pytest.raises(memhop.StorageIOError) as info:
            memhop.open(demo.path, memhop.LocalModel())
        assert "another instance" in str(info.value)
        assert demo.path in str(info.value)
        assert "in this process" not in str(info.value)
    finally:
        child.communicate("\n", timeout=60)
    assert child.returncode == 0
    memhop.open(demo.path, memhop.LocalModel()).close()  # positive control: free again
