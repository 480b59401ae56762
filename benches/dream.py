"""Dream benchmark: the CPU of one pass, per stage, as a domain grows.

Run ``python benches/dream.py`` (``--quick`` stops at 2,000 turns; ``--turns N [N ...]`` sets
the sizes). For each size it builds one primary domain through the public API (the turns of
``benches/scale.py``: a new scene every 25 turns, ``os.fsync`` a no-op throughout, since CPU is
what is measured; no compaction), then times three passes of ``dream()`` on it:

- first: the domain's first pass (every scene new to the association layer);
- steady: after 24 more turns in the current scene, a pass scoped to that scene (what the
  background trigger runs);
- idle: another pass with nothing changed since the last;
- an hour on: a pass with the file's clock moved on an hour (``db._root.clock``, a private
  hook the bench alone uses), when the write-back of every node's and edge's decay is due;
- reopen: the file closed and opened again, the first whole pass (its cache cold: every
  topic, node and edge read again, every pair weighed) while another thread makes a turn
  every 5 ms in the same domain; the longest a turn took shows how long a stage held the
  domain lock against it.

``--locomo N`` runs the reopen part on talk instead: the ten LoCoMo conversations
(examples/data/locomo10.json; Maharana et al., 2024) recorded N times over into one domain,
a scene per session, each copy a year after the one before; a first pass, then the reopen.

Each pass prints its thread CPU in all and per stage, and the bytes it appended to the file.

``--background`` measures what the automatic passes cost instead: the same turns with the
library's default ``Defaults`` (a pass for every scene that grows past 24 rows), the process
CPU per turn less the turn's own thread CPU, by window of a fifth of the turns; once as memhop
runs them (the domain-wide stages at most hourly) and once with every background pass whole, as
upstream runs them (``SWEEP_INTERVAL_MS`` set to 0 for that run).

It prints only; it writes nothing to docs/performance.md. Not a pytest module.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from _common import fsync_off
from scale import DEFAULTS, TURNS_PER_SCENE, speak

import memhop
from memhop.dream import pipeline
from memhop.root import dreams

STEADY_TURNS = 24
HOUR_MS = 3_600_000
# No compaction after a pass: the bytes a pass appends are part of what is measured.
BENCH_DEFAULTS = dataclasses.replace(DEFAULTS, compact_dead_ratio=0)
STRUCTURE = ("index_rebuild", "l1_nodes", "l1_hyperedges", "l1_rebuild", "l1_decay")


def _timed_stages(spent: dict[str, float]) -> Callable[[], None]:
    """Record each stage's thread CPU into ``spent``; return the undo."""
    real = pipeline._stage

    def stage(env, report, name, body, *, soft=False):  # type: ignore[no-untyped-def]
        def timed() -> str:
            t0 = time.thread_time()
            try:
                return body()
            finally:
                spent[name] = spent.get(name, 0.0) + time.thread_time() - t0

        real(env, report, name, timed, soft=soft)

    pipeline._stage = stage  # type: ignore[assignment]
    return lambda: setattr(pipeline, "_stage", real)


def _pass(
    label: str, path: str, run: Callable[[], memhop.DreamReport], *, alone: bool = True
) -> None:
    """Run and print one pass; ``alone``: nothing else writes meanwhile (its bytes are shown)."""
    spent: dict[str, float] = {}
    undo = _timed_stages(spent)
    size = os.path.getsize(path)
    t0 = time.thread_time()
    try:
        report = run()
    finally:
        undo()
    total = time.thread_time() - t0
    grown = os.path.getsize(path) - size
    stages = " ".join(f"{name}={spent.get(name, 0.0) * 1000:.1f}" for name in STRUCTURE)
    structure = sum(spent.get(n, 0.0) for n in STRUCTURE)
    counts = (
        f"nodes +{report.l1_nodes_added} -{report.l1_nodes_removed}"
        f" edges +{report.l1_edges_added} -{report.l1_edges_removed}"
    )
    appended = f"{grown / 1e6:6.2f} MB" if alone else "   (turns)"
    print(
        f"  {label:<6} cpu {total:7.3f} s  structure {structure:7.3f} s"
        f"  appended {appended}  {counts}"
    )
    print(f"         per stage (ms): {stages}")


def run(turns: int, workdir: str) -> None:
    path = str(Path(workdir) / f"dream{turns}.meh")
    print(f"{turns} turns ({turns // TURNS_PER_SCENE} scenes)")
    with (
        fsync_off(),
        memhop.open(path, memhop.LocalModel(), BENCH_DEFAULTS, memhop.ProfileInput("a")) as db,
    ):
        session = db.primary()
        scene = ""
        for i in range(turns):
            scene = speak(session, i, new_scene=i % TURNS_PER_SCENE == 0)
        _pass("first", path, session.dream)
        for i in range(turns, turns + STEADY_TURNS):
            speak(session, i, new_scene=False, scene_id=scene)
        _pass("steady", path, lambda: session.dream(scene))
        _pass("idle", path, lambda: session.dream(scene))
        root = db._root
        wall = root.clock
        root.clock = lambda: wall() + HOUR_MS
        _pass("hour+", path, lambda: session.dream(scene))
    _reopened(path, scene, turns + STEADY_TURNS)


def _reopened(path: str, scene: str, first_turn: int) -> None:
    with (
        fsync_off(),
        memhop.open(path, memhop.LocalModel(), BENCH_DEFAULTS) as db,
    ):
        session = db.primary()
        session.scene_context(scene)
        session.search_l4(keyword="no such line")  # waits for the domain's build to end
        took: list[float] = []
        done = threading.Event()

        def turns() -> None:
            i = first_turn
            while not done.is_set():
                t0 = time.perf_counter()
                speak(session, i, new_scene=False, scene_id=scene)
                took.append(time.perf_counter() - t0)
                i += 1
                time.sleep(0.005)

        beside = threading.Thread(target=turns)
        beside.start()
        try:
            _pass("reopen", path, session.dream, alone=False)
        finally:
            done.set()
            beside.join()
        print(
            f"         turns beside it: {len(took)}, the longest {max(took) * 1000:.0f} ms,"
            f" median {statistics.median(took) * 1000:.1f} ms"
        )


def on_locomo(repeats: int, workdir: str) -> None:
    import locomo  # benches/locomo.py: its reader of the data set

    path = str(Path(workdir) / f"locomo{repeats}.meh")
    year = 365 * 24 * HOUR_MS
    with (
        fsync_off(),
        memhop.open(path, memhop.LocalModel(), BENCH_DEFAULTS, memhop.ProfileInput("a")) as db,
    ):
        session = db.primary()
        turns, opened, scene = 0, None, ""
        for copy in range(repeats):
            for conv in locomo.load():
                for turn in conv.turns:
                    key = (copy, conv.sample_id, turn.scene)
                    scene = session.search(new_scene=key != opened).scene.scene_id
                    opened = key
                    at = turn.started_ms + copy * year
                    session.update(
                        input="\n".join(turn.said), output="\n".join(turn.answered), created_at=at
                    )
                    turns += 1
        print(f"LoCoMo x{repeats}: {turns} turns")
        _pass("first", path, session.dream)
    _reopened(path, scene, 10**9)


def background(turns: int, workdir: str, *, every_pass_whole: bool) -> None:
    label = "every background pass whole" if every_pass_whole else "memhop"
    print(f"{turns} turns, default Defaults, {label}")
    path = str(Path(workdir) / f"background{turns}-{int(every_pass_whole)}.meh")
    interval = dreams.SWEEP_INTERVAL_MS
    dreams.SWEEP_INTERVAL_MS = 0 if every_pass_whole else interval
    window = max(turns // 5, 1)
    try:
        with (
            fsync_off(),
            memhop.open(path, memhop.LocalModel(), None, memhop.ProfileInput("a")) as db,
        ):
            session = db.primary()
            process, thread = time.process_time(), time.thread_time()
            for i in range(turns):
                speak(session, i, new_scene=i % TURNS_PER_SCENE == 0)
                if (i + 1) % window == 0:
                    spent_all = time.process_time() - process
                    spent_turns = time.thread_time() - thread
                    print(
                        f"  turns {i + 1 - window + 1:>6}-{i + 1:<6} per turn: the turn"
                        f" {spent_turns / window * 1e6:7.0f} us, background passes"
                        f" {(spent_all - spent_turns) / window * 1e6:7.0f} us"
                    )
                    process, thread = time.process_time(), time.thread_time()
    finally:
        dreams.SWEEP_INTERVAL_MS = interval


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="2,000 turns only")
    parser.add_argument("--turns", type=int, nargs="+", default=[2_000, 8_000])
    parser.add_argument("--background", action="store_true", help="the automatic passes")
    parser.add_argument("--locomo", type=int, metavar="N", help="the reopen on LoCoMo, N copies")
    args = parser.parse_args(argv)
    sizes = [2_000] if args.quick else args.turns
    with tempfile.TemporaryDirectory() as workdir:
        if args.locomo:
            on_locomo(args.locomo, workdir)
            return
        for turns in sizes:
            if args.background:
                background(turns, workdir, every_pass_whole=False)
                background(turns, workdir, every_pass_whole=True)
            else:
                run(turns, workdir)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
