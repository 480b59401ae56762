"""The inspector beside a DB writing in another process: sees every closed turn, harms nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator

import pytest

import memhop
from tests.inspect.conftest import TS, Demo

# A writer that holds the file open. "turn" closes one turn and prints its topic id
# once update() has returned (acknowledged); "run N" closes N turns back to back;
# "quit" reads its scene back, prints how many turns it holds, and closes.
WRITER = textwrap.dedent(
    """
    import sys, memhop
    db = memhop.open(sys.argv[1], memhop.LocalModel())
    me = db.primary()
    stamp = int(sys.argv[2])

    def turn():
        global stamp
        stamp += 1000
        me.search()
        row = me.update(input=f"writer line {stamp}", output="ok", created_at=stamp)
        print("closed", row.id, flush=True)

    print("ready", flush=True)
    for line in sys.stdin:
        word, *rest = line.split()
        if word == "turn":
            turn()
        elif word == "run":
            for _ in range(int(rest[0])):
                turn()
            print("ran", flush=True)
        elif word == "quit":
            print("holds", len(me.scene_context().topics), flush=True)
            db.close()
            break
    """
)


class Writer:
    """The child process and the topic ids it acknowledged so far."""

    def __init__(self, path: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, path, str(TS + 100_000)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.acked: list[str] = []
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.wait_for("ready")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._cond:
                if line.startswith("closed "):
                    self.acked.append(line.split()[1])
                self.lines.append(line.strip())
                self._cond.notify_all()

    def wait_for(self, prefix: str) -> str:
        with self._cond:
            assert self._cond.wait_for(
                lambda: any(x.startswith(prefix) for x in self.lines), timeout=120
            ), f"writer never said {prefix!r}: {self.lines}"
            found = next(x for x in self.lines if x.startswith(prefix))
            self.lines.remove(found)
            return found

    def send(self, command: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def snapshot(self) -> list[str]:
        with self._cond:
            return list(self.acked)

    def finish(self) -> int:
        """Ask the writer to read its scene back and close; return how many rows it holds."""
        self.send("quit")
        holds = int(self.wait_for("holds").split()[1])
        assert self.proc.wait(timeout=120) == 0
        return holds

    def close(self) -> None:
        """End the child (if still running) and release its pipes and the reader thread."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=60)
        self._reader.join(timeout=60)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


@pytest.fixture
def writer(demo: Demo) -> Iterator[Writer]:
    w = Writer(demo.path)
    try:
        yield w
    finally:
        w.close()


def _topic_ids(view: memhop.Inspector) -> set[str]:
    return {t["topic_id"] for t in view.topics()}


def test_every_closed_turn_is_seen_and_refresh_shows_new_ones(demo: Demo, writer: Writer) -> None:
    with pytest.raises(memhop.StorageIOError, match="another instance"):
        memhop.open(demo.path, memhop.LocalModel())  # the writer really holds the file
    view = memhop.inspect(demo.path)
    before = _topic_ids(view)
    assert set(demo.turn_ids) <= before  # what was there before the writer came
    for _ in range(3):
        writer.send("turn")
        writer.wait_for("closed")
        newest = writer.snapshot()[-1]
        assert newest not in _topic_ids(view)  # the old read does not invent it ...
        assert newest in _topic_ids(view.refresh())  # ... and a refresh shows it
    assert set(writer.snapshot()) | before == _topic_ids(view)
    rows_in_writer = writer.finish()
    after = memhop.inspect(demo.path)
    assert after.verify().ok
    assert _topic_ids(after) == _topic_ids(view)
    assert rows_in_writer > 0


def test_refreshing_while_the_writer_runs_free_never_misses_an_acknowledged_turn(
    demo: Demo, writer: Writer
) -> None:
    """Reads race the writer's appends (torn tails included); each sees every earlier ack."""
    view = memhop.inspect(demo.path)
    writer.send("run 40")
    reads = 0
    while True:
        acked = writer.snapshot()
        seen = _topic_ids(view.refresh())
        assert set(acked) <= seen
        reads += 1
        if len(acked) == 40:
            break
    writer.wait_for("ran")
    assert reads >= 2
    writer.finish()  # the writer read its own scene and closed cleanly after all that
    final = memhop.inspect(demo.path)
    assert final.verify().ok
    assert set(writer.acked) <= _topic_ids(final)
    with memhop.open(demo.path, memhop.LocalModel()) as db:  # and it opens as a writer again
        assert db.primary().scene_context().topics


def test_a_writers_reserve_reads_as_room_not_as_a_torn_tail(demo: Demo) -> None:
    """An open writer's file ends in its reserve: no torn tail, no problem, a "reserve" row."""
    with memhop.open(demo.path, memhop.LocalModel()) as db:
        me = db.primary()
        me.search()
        row = me.update(input="a line while open", output="ok", created_at=TS + 50_000)
        view = memhop.inspect(demo.path)
        info = view.info()
        frames = view.frames().to_dicts()
        problems = view.verify().problems.to_dicts()
    assert info["torn_tail_at"] is None
    assert info["damaged_frames_skipped"] == 0
    assert problems == []
    assert frames[-1]["kind"] == "reserve"
    assert row.id in _topic_ids(view)  # the writer's acknowledged turn, read beside its reserve
    after = memhop.inspect(demo.path)
    assert after.frames().to_dicts()[-1]["kind"] != "reserve"  # the close cut it
    # Control: bytes past the log that are not a reserve are still a torn tail.
    size = os.path.getsize(demo.path)
    with open(demo.path, "ab") as f:
        f.write(b"\xff" * 10 + b"\x01" * 30)
    torn = memhop.inspect(demo.path).info()
    assert torn["torn_tail_at"] == size
