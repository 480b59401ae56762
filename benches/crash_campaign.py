"""A kill campaign: SIGKILL a writer at random moments; count acknowledged turns lost.

Each round starts a child that creates (or reopens) a file and closes turns
in a loop, printing each turn's number once ``update`` has returned (its
acknowledgement); every few turns it also checkpoints or compacts to a copy.
The parent kills it after a random delay, then opens the file and every
copy the child made: all must open, every acknowledged line must be there,
and a copy must be whole (or absent). It also counts the opens of the file
that took their index from the index seed (``<file>.seed``, kept by the
checkpoints once the log passes 1 MiB) rather than a scan of the whole log.
docs/reliability.md quotes the result.
Run from the repository root: ``python benches/crash_campaign.py [rounds]``
(about 0.7 s a round). POSIX only.
"""

from __future__ import annotations

import logging
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

import memhop

_CHILD = r"""
import os, sys, time
import memhop

path, folder, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
db = memhop.open(path, memhop.LocalModel(), profile=memhop.ProfileInput(name="campaign"))
me = db.primary()
for i in range(start, start + 100_000):
    me.search()
    # Stamped now: lines older than the retention window would be swept by Dream.
    me.update(input=f"ack-{i} question", output=f"answer {i}", created_at=time.time_ns() // 10**6)
    print(i, flush=True)
    if i % 7 == 3:
        db.compact_to(os.path.join(folder, f"copy-{i}.meh"))
    elif i % 5 == 4:
        db.checkpoint()
"""


class _SeedOpens(logging.Handler):
    """Counts the engine's log line of an open that started from the index seed."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += str(record.msg).startswith("index from the seed")


def _lines(path: str) -> set[str]:
    """Every acknowledged-turn line the file holds (a read that writes nothing)."""
    with memhop.open(path, memhop.LocalModel()) as db:
        return {row.content for row in db.primary().search_l4(keyword="ack-")}


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    rng = random.Random(20261202)
    acked_total = copies = bad_copies = refused_opens = seeded_rounds = 0
    lost: set[int] = set()
    seed_opens = _SeedOpens()
    engine_log = logging.getLogger("memhop.engine")
    engine_log.addHandler(seed_opens)
    engine_log.setLevel(logging.INFO)
    start_time = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "campaign.meh")
        acked: set[int] = set()
        for r in range(rounds):
            start = max(acked, default=-1) + 1
            child = subprocess.Popen(
                [sys.executable, "-c", _CHILD, path, folder, str(start)],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            time.sleep(rng.uniform(0.2, 1.2 if r % 10 else 0.3))  # some land in the open or create
            child.send_signal(signal.SIGKILL)
            out, _ = child.communicate()
            acked |= {int(x) for x in out.split()}
            if not os.path.exists(path):
                assert not acked, "acknowledged turns but no file"
                continue
            try:
                before = seed_opens.count
                found = _lines(path)
                seeded = seed_opens.count > before
            except memhop.MemHopError as exc:
                refused_opens += 1
                print(f"round {r}: the file would not open: {exc}")
                continue
            lost |= {i for i in acked if f"ack-{i} question" not in found}
            seeded_rounds += seeded
            for name in os.listdir(folder):
                if name.startswith("copy-") and name.endswith(".meh"):
                    copies += 1
                    copy = os.path.join(folder, name)
                    upto = int(name[5:-4])
                    try:
                        held = _lines(copy)
                        if any(f"ack-{i} question" not in held for i in range(upto + 1)):
                            bad_copies += 1
                    except memhop.MemHopError:
                        bad_copies += 1
                    os.remove(copy)
        acked_total = len(acked)
    elapsed = time.perf_counter() - start_time
    print(
        f"{rounds} kills in {elapsed:.0f} s: {acked_total} acknowledged turns, {len(lost)} lost;"
        f" {refused_opens} refused opens; {copies} compaction copies checked, {bad_copies} partial;"
        f" {seeded_rounds} opens after a kill started from the index seed"
    )


if __name__ == "__main__":
    main()
