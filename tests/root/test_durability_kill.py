"""``Defaults.durability`` under real kills: what a call acknowledged survives.

A child process runs turns through the public API and prints a line after
each call returns (what that call stored); the parent kills it with SIGKILL at
a varying point, reopens the file and looks for every acknowledged line. With
"call" an event is acknowledged when ``append_archive`` returns; with "turn"
only when its turn's ``update`` returns.

A killed process leaves its writes in the page cache, so a kill alone cannot
tell a missing fsync. The child therefore also logs the file's size after
every fsync it makes (the one seam it patches), and the power-cut variant cuts
the file back to the last size an fsync covered and appends garbage where the
lost pages were, before reopening: the worst a power loss can leave.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import memhop

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

_CHILD = textwrap.dedent(
    """
    import sys
    import memhop

    import os
    from memhop.engine import storefile

    path, mode = sys.argv[1], sys.argv[2]
    real_fsync = storefile.fsync_file
    synced = open(path + ".synced", "a")

    def logged_fsync(fd):
        size = os.fstat(fd).st_size  # what this fsync covers at least
        real_fsync(fd)
        synced.write(f"{size}\\n")
        synced.flush()

    storefile.fsync_file = logged_fsync
    defaults = memhop.Defaults(durability=mode, scene_dream_topic_threshold=-1)
    db = memhop.open(path, memhop.LocalModel(), defaults, profile=memhop.ProfileInput(name="k"))
    me = db.primary()
    turn = 0
    while True:
        me.search(new_scene=turn % 5 == 0)
        event = f"event {turn} of the kill run"
        me.append_archive(
            content=event, created_at=1_700_000_000_000 + turn, kind=memhop.ArchiveKind.EVENT,
            event_type="step",
        )
        if mode == "call":
            print(event, flush=True)
        said = f"user line {turn} about kites"
        me.update(input=said, output=f"agent line {turn}", created_at=1_700_000_000_000 + turn)
        if mode == "turn":
            print(event, flush=True)
        print(said, flush=True)
        turn += 1
    """
)


def _killed_run(path: Path, mode: str, acks_before_kill: int) -> list[str]:
    """Run the child until it has acknowledged ``acks_before_kill`` lines, kill it, return all."""
    with subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path), mode], stdout=subprocess.PIPE, text=True
    ) as child:
        assert child.stdout is not None
        acked = [child.stdout.readline().strip() for _ in range(acks_before_kill)]
        os.kill(child.pid, signal.SIGKILL)
        acked += [line.strip() for line in child.stdout]  # printed before the kill landed
    assert child.returncode == -signal.SIGKILL
    return [line for line in acked if line]


def _power_cut(path: Path, rng: random.Random) -> None:
    """Cut ``path`` back to what its last fsync covered; garbage stands in for the lost pages."""
    sizes = [int(line) for line in path.with_name(path.name + ".synced").read_text().split()]
    lost = path.stat().st_size - sizes[-1]
    with path.open("r+b") as meh:
        meh.truncate(sizes[-1])
        meh.seek(sizes[-1])
        meh.write(rng.randbytes(rng.randint(0, max(lost, 1))))


@pytest.mark.parametrize("power_cut", [False, True], ids=["kill", "power-cut"])
@pytest.mark.parametrize("mode", ["call", "turn"])
def test_every_acknowledged_line_survives_a_kill(
    tmp_path: Path, mode: str, power_cut: bool
) -> None:
    rng = random.Random(f"durability-{mode}-{power_cut}")
    for run in range(4):
        path = tmp_path / f"{mode}-{run}.meh"
        acked = _killed_run(path, mode, rng.randint(3, 60))
        assert acked  # the control: the child did acknowledge lines before it died
        if power_cut:
            _power_cut(path, rng)
        with memhop.open(str(path), memhop.LocalModel()) as db:
            stored = {slot.content for slot in db.primary().search_l4()}
        missing = [line for line in acked if line not in stored]
        assert missing == [], f"run {run}: acknowledged but lost after the kill"
