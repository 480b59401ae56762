"""A turn's CPU as the memory ages: memhop against the sqlite3 table, by the turns held.

Run ``python benches/age.py`` (about three minutes; ``--turns`` sets the oldest age).
One domain grows through the public API, the turn of ``turn.py`` (search, two events,
update, ``LocalModel``, a new scene every 25 turns, automatic Dream off, fsync a no-op),
beside the sqlite3 memory table doing the same turns. At each checkpoint the next
``--window`` turns are timed, each store's turn by its thread CPU in turn, and the
medians printed: how much of a turn's cost grows with what the memory holds.

The same run is repeated in a child process with memhop's compiled parts hidden from the
import (the id maps' core, the payload writers, the frame encoder, the record builds, the
pair ids, the content mirror's row store), as on an install without a C compiler, so one
run shows both. Written to docs/performance.md by hand, not by this script. Data: LoCoMo
conversation 26 (Maharana et al., 2024), cycled.
"""

from __future__ import annotations

import sys

COMPILED_PARTS = (
    "memhop.intmap._core",
    "memhop.records._json",
    "memhop.engine._frames",
    "memhop._slots",
    "memhop._ids",
    "memhop.index._rows",
)
PURE_PYTHON = "--pure-python" in sys.argv
if PURE_PYTHON:  # before memhop is imported: each part then runs its Python code
    for part in COMPILED_PARTS:
        sys.modules[part] = None  # type: ignore[assignment]

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

from _common import fsync_off, machine  # noqa: E402
from turn import (  # noqa: E402
    BASE_MS,
    NO_AUTO_DREAM,
    TURNS_PER_SCENE,
    SqliteTurns,
    load_lines,
    memhop_turn,
)

import memhop  # noqa: E402
from memhop import intmap  # noqa: E402


def run(checkpoints: list[int], window: int) -> list[dict[str, float]]:
    """At each checkpoint (turns held), the medians of the next ``window`` turns' CPU."""
    lines = load_lines()
    table = SqliteTurns(memhop.LocalModel())
    rows: list[dict[str, float]] = []
    profile = memhop.ProfileInput(name="bench agent")
    with tempfile.TemporaryDirectory(prefix="memhop-age-") as tmp, fsync_off():
        path = os.path.join(tmp, "age.meh")
        with memhop.open(path, memhop.LocalModel(), NO_AUTO_DREAM, profile) as db:
            session = db.primary()
            done = 0
            for held in checkpoints:
                while done < held:  # age both stores, untimed
                    said, answered = lines[done % len(lines)]
                    at, fresh = BASE_MS + done * 1000, done % TURNS_PER_SCENE == 0
                    table.turn(said, answered, at, new_scene=fresh)
                    memhop_turn(session, said, answered, at, new_scene=fresh)
                    done += 1
                ours, theirs = [], []
                for _ in range(window):
                    said, answered = lines[done % len(lines)]
                    at, fresh = BASE_MS + done * 1000, done % TURNS_PER_SCENE == 0
                    t0 = time.thread_time_ns()
                    table.turn(said, answered, at, new_scene=fresh)
                    t1 = time.thread_time_ns()
                    memhop_turn(session, said, answered, at, new_scene=fresh)
                    t2 = time.thread_time_ns()
                    theirs.append(t1 - t0)
                    ours.append(t2 - t1)
                    done += 1
                rows.append(
                    {
                        "held": held,
                        "memhop_us": statistics.median(ours) / 1e3,
                        "sqlite_us": statistics.median(theirs) / 1e3,
                    }
                )
                print(f"  {held:>7,} turns held: {rows[-1]}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60_000, help="the oldest checkpoint")
    parser.add_argument("--window", type=int, default=1_000, help="turns timed a checkpoint")
    parser.add_argument("--pure-python", action="store_true", help="(the child's run)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON only")
    args = parser.parse_args()
    checkpoints = sorted({0, *(args.turns * k // 6 for k in range(1, 7))})
    if args.json:
        print(json.dumps(run(checkpoints, args.window)))
        return
    for name, value in machine(tempfile.gettempdir(), scope="the code measured"):
        print(f"{name}: {value}")
    print(f"memhop's id maps: {'compiled' if intmap.COMPILED else 'Python'} core")
    compiled = run(checkpoints, args.window)
    child = [sys.executable, __file__, "--pure-python", "--json"]
    child += ["--turns", str(args.turns), "--window", str(args.window)]
    python = json.loads(subprocess.run(child, capture_output=True, text=True, check=True).stdout)
    print("| turns held | sqlite3 table | memhop | ratio | memhop, pure Python | ratio |")
    print("|---|---|---|---|---|---|")
    for ours, plain in zip(compiled, python, strict=True):
        print(
            f"| {ours['held']:,} | {ours['sqlite_us']:.0f} us | {ours['memhop_us']:.0f} us"
            f" | {ours['memhop_us'] / ours['sqlite_us']:.2f}x | {plain['memhop_us']:.0f} us"
            f" | {plain['memhop_us'] / plain['sqlite_us']:.2f}x |"
        )


if __name__ == "__main__":
    main()
