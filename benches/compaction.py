"""Compaction benchmark: what in-place compaction costs, and the dead-bytes ratio it runs at.

Run ``python benches/compaction.py`` (about three minutes) or ``--quick`` for a smoke run.
In this one process, with the in-process ``memhop.LocalModel()`` (no network is timed):

1. For files of 10^4 and 10^5 turns (``search`` + one event + ``update`` on LoCoMo lines,
   a new scene every 24 turns; built with ``os.fsync`` switched off, which is setup, not
   measured), the oldest 30% of scenes are deleted. Then, with fsync back on: a turn's
   median latency at that size, the dead-bytes check the policy runs
   (``memhop.engine.inplace.occupancy``), and one ``DB.compact()``.
2. From those figures, per ratio: how many turns pass between two compactions when every
   byte a turn writes eventually dies (the worst case: a retention window), the amortised
   cost per turn (the compaction spread over those turns, plus one check per Dream pass,
   i.e. per 24 turns), and the bound on the file (live bytes / (1 - ratio)).
3. A measured check of 2 on a smaller file: turns with a retention window applied by
   deleting the oldest scene every 24 turns (fsync on), with the policy off and at each
   ratio: mean time per turn (deletes and compactions included), compactions, peak file.

A "Compaction" section is written into docs/performance.md (``--out``) between markers.
This file is not a pytest module: nothing here is named ``test_*``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

from _common import (
    REPO,
    busy_processes,
    fsync_off,
    load_average,
    log,
    machine,
    med,
    parse_args,
    publish,
    table,
    timed,
)

import memhop
from memhop import ids
from memhop.config import DEFAULT_COMPACT_DEAD_RATIO
from memhop.engine.inplace import occupancy
from memhop.root.compaction import POLICY_SAMPLE

DATA = REPO / "examples" / "data" / "locomo-conv-26.json"
BASE_MS = 1_700_000_000_000
TURNS_PER_SCENE = 24  # also the default Dream threshold: one policy check per this many turns
DELETED_SHARE = 0.3
RATIOS = (0.1, 0.25, 0.5, 0.75)


@dataclass(frozen=True)
class Sizes:
    files: tuple[int, ...]
    sim_turns: int
    sim_window: int
    turn_samples: int


FULL = Sizes(files=(10_000, 100_000), sim_turns=3_000, sim_window=960, turn_samples=30)
QUICK = Sizes(files=(1_000, 10_000), sim_turns=480, sim_window=192, turn_samples=10)


@dataclass(frozen=True)
class FileResult:
    turns: int
    records: int
    file_bytes: int
    live_bytes: int
    bytes_per_turn: float
    turn_s: float
    check_s: float
    exact_s: float
    estimate_error: float
    compact_s: float
    compacted_bytes: int


@dataclass(frozen=True)
class SimResult:
    ratio: float
    per_turn_s: float
    compactions: int
    peak_bytes: int
    final_bytes: int


def load_lines() -> list[tuple[str, str]]:
    item = json.loads(DATA.read_text(encoding="utf-8"))["items"][0]
    texts = [t["text"] for s in item["sessions"] for t in s["turns"]]
    return [(texts[i], texts[i + 1]) for i in range(0, len(texts) - 1, 2)]


def turn(session: memhop.Session, lines: list[tuple[str, str]], i: int) -> str:
    """One turn; a new scene every TURNS_PER_SCENE turns. Return the scene id."""
    said, answered = lines[i % len(lines)]
    at = BASE_MS + i * 1000
    opened = session.search(new_scene=i % TURNS_PER_SCENE == 0)
    session.append_archive(
        kind=memhop.ArchiveKind.EVENT,
        event_type="tool_call",
        content=f'recall(query="{said[:60]}")',
        created_at=at,
    )
    session.update(input=said, output=answered, created_at=at)
    return opened.scene.scene_id


def open_db(path: str, ratio: float) -> memhop.DB:
    table_ = memhop.Defaults(scene_dream_topic_threshold=-1, compact_dead_ratio=ratio)
    return memhop.open(path, memhop.LocalModel(), table_, memhop.ProfileInput(name="bench"))


def tombstone_scenes(db: memhop.DB, scenes: Sequence[str]) -> None:
    """Setup: delete whole scenes in one engine batch (their scene, topics, lines and events).

    ``delete_scene`` reads every topic of the domain per call, which makes deleting
    thousands of scenes of a 10^5-turn file take hours; the ids are derived here
    instead and the file is reopened after, so the mirrors are rebuilt from records.
    """
    doomed: list[int] = []
    for text in scenes:
        scene = int(text, 16)
        topics = [ids.turn_topic_id(scene, seq) for seq in range(1, TURNS_PER_SCENE + 1)]
        doomed += [ids.content_id(t, seq) for t in topics for seq in (1, 2, 3)]
        doomed += [*topics, scene]
    db._root.engine.delete_batch(ids.PRIMARY_AGENT_ID, doomed)


def bench_file(tmp: str, turns: int, sizes: Sizes, lines: list[tuple[str, str]]) -> FileResult:
    path = os.path.join(tmp, f"file-{turns}.meh")
    with open_db(path, 0) as db, fsync_off():
        me = db.primary()
        log(f"{turns:,} turns: building (fsync off)")
        scenes: list[str] = []
        for i in range(turns):
            scene = turn(me, lines, i)
            if not scenes or scenes[-1] != scene:
                scenes.append(scene)
            if i % 10_000 == 9_999:
                log(f"  {i + 1:,} turns")
        built = db.stats().file_bytes
        tombstone_scenes(db, scenes[: int(len(scenes) * DELETED_SHARE)])
    with open_db(path, 0) as db:
        me = db.primary()
        # The domain's load is not a turn's cost: its first read is served from the scene map
        # while the rest is built on a thread of its own, which list_scenes waits for.
        me.scene_context()
        me.list_scenes()
        samples = []
        for i in range(turns, turns + sizes.turn_samples):
            samples.append(timed(lambda i=i: turn(me, lines, i)))
        engine = db._root.engine  # the bench reads the engine's own measure
        checks = [timed(lambda: occupancy(engine, sample=POLICY_SAMPLE)) for _ in range(5)]
        exact = [timed(lambda: occupancy(engine)) for _ in range(3)]
        measured = occupancy(engine)
        estimate = occupancy(engine, sample=POLICY_SAMPLE)
        records = db.stats().record_count
        log(f"{turns:,} turns: compacting {measured.file_bytes / 2**20:.1f} MiB")
        compact_s = timed(db.compact)
        return FileResult(
            turns=turns,
            records=records,
            file_bytes=measured.file_bytes,
            live_bytes=measured.live_bytes,
            bytes_per_turn=built / turns,
            turn_s=med(samples),
            check_s=med(checks),
            exact_s=med(exact),
            estimate_error=estimate.dead_ratio - measured.dead_ratio,
            compact_s=compact_s,
            compacted_bytes=db.stats().file_bytes,
        )


def simulate(
    tmp: str, ratios: Sequence[float], sizes: Sizes, lines: list[tuple[str, str]]
) -> list[SimResult]:
    """Turns under a retention window (the oldest scene deleted every 24 turns), fsync on.

    One file per ratio, driven in lockstep (turn i on every file before turn i + 1), so
    load from elsewhere on the machine falls on all of them alike.
    """
    dbs = [open_db(os.path.join(tmp, f"sim-{r}.meh"), r) for r in ratios]
    sessions = [db.primary() for db in dbs]
    scenes: list[list[str]] = [[] for _ in ratios]
    spent = [0.0] * len(ratios)
    compactions = [0] * len(ratios)
    peak = [0] * len(ratios)
    try:
        for i in range(sizes.sim_turns):
            for k, (db, me) in enumerate(zip(dbs, sessions, strict=True)):
                t0 = time.perf_counter()
                scene = turn(me, lines, i)
                if not scenes[k] or scenes[k][-1] != scene:
                    scenes[k].append(scene)
                deleting = i % TURNS_PER_SCENE == TURNS_PER_SCENE - 1 and i >= sizes.sim_window
                if deleting:
                    before = db.stats().file_bytes
                    me.delete_scene(scenes[k].pop(0))
                spent[k] += time.perf_counter() - t0
                size = db.stats().file_bytes
                compactions[k] += deleting and size < before
                peak[k] = max(peak[k], size)
        return [
            SimResult(r, spent[k] / sizes.sim_turns, compactions[k], peak[k], db.stats().file_bytes)
            for k, (r, db) in enumerate(zip(ratios, dbs, strict=True))
        ]
    finally:
        for db in dbs:
            db.close()


def mib(n: float) -> str:
    return f"{n / 2**20:.1f}"


def report(
    files: Sequence[FileResult], sims: Sequence[SimResult], info: list[tuple[str, str]], quick: bool
) -> str:
    out = ["## Compaction (benches/compaction.py)", ""]
    if quick:
        out += ["**Quick run (smaller files): not the published figures.**", ""]
    out += [table(["", ""], info), ""]
    out += [
        "### One compaction, by file size",
        "",
        f"Files of N turns, then the oldest {DELETED_SHARE:.0%} of scenes deleted. A turn is "
        "search + one event + update, fsync on. The check is the policy's first, sampled "
        f"estimate of the dead share ({POLICY_SAMPLE} records read, under the engine lock; "
        "'error' is its dead ratio minus the exact one); the exact measure (one length read "
        "per live record) runs only once every call is held, just before a compaction. "
        "The compaction is `DB.compact()` (copy, fsync, rename, swap); every call waits.",
        "",
        table(
            [
                "turns",
                "live records",
                "file MiB",
                "live MiB",
                "bytes/turn",
                "turn ms",
                "check ms",
                "error",
                "exact ms",
                "compact ms",
                "compact MiB/s",
                "after MiB",
            ],
            [
                [
                    f"{f.turns:,}",
                    f"{f.records:,}",
                    mib(f.file_bytes),
                    mib(f.live_bytes),
                    f"{f.bytes_per_turn:,.0f}",
                    f"{f.turn_s * 1e3:.2f}",
                    f"{f.check_s * 1e3:.1f}",
                    f"{f.estimate_error:+.3f}",
                    f"{f.exact_s * 1e3:.0f}",
                    f"{f.compact_s * 1e3:.0f}",
                    f"{f.live_bytes / 2**20 / f.compact_s:.0f}",
                    mib(f.compacted_bytes),
                ]
                for f in files
            ],
        ),
        "",
        "### Amortised cost per turn, by ratio",
        "",
        "When every byte a turn writes eventually dies (a retention window: the worst case), "
        "a file of L live bytes compacts every ratio/(1-ratio) x L / (bytes per turn) turns. "
        "Per turn: that compaction spread over those turns, plus one check per 24 turns (a "
        "Dream pass at the default threshold). The file stays under L / (1 - ratio).",
        "",
    ]
    rows = []
    for f in files:
        for r in RATIOS:
            between = r / (1 - r) * f.live_bytes / f.bytes_per_turn
            per_turn = (f.compact_s + f.exact_s) / between + f.check_s / TURNS_PER_SCENE
            rows.append(
                [
                    f"{f.turns:,}",
                    f"{r:g}",
                    f"{between:,.0f}",
                    f"{per_turn * 1e3:.3f}",
                    f"{per_turn / f.turn_s:.1%}",
                    f"{1 / (1 - r):.2f}x",
                ]
            )
    out += [
        table(
            [
                "turns",
                "ratio",
                "turns between",
                "ms/turn",
                "of a turn",
                "file bound",
            ],
            rows,
        ),
        "",
        f"The default, `Defaults.compact_dead_ratio` = {DEFAULT_COMPACT_DEAD_RATIO:g}: the "
        "compactions themselves cost a small fraction of a turn at every ratio here (most of "
        "the per-turn figure is the check, the same at any ratio), so the ratio is chosen for "
        "the file bound and how soon deleted bytes leave the disk, against how often every "
        "call waits for one compaction ('compact ms'). 0 turns the policy off.",
        "",
        "### Measured: a retention window",
        "",
        "Turns as above, fsync on, with the oldest scene deleted "
        "every 24 turns once the window is full (one policy check per delete), one file per "
        "ratio driven in lockstep: mean time per turn including deletes and compactions.",
        "",
        table(
            ["ratio", "ms/turn", "vs off", "compactions", "peak MiB", "final MiB"],
            [
                [
                    "off (0)" if s.ratio == 0 else f"{s.ratio:g}",
                    f"{s.per_turn_s * 1e3:.2f}",
                    f"{s.per_turn_s / sims[0].per_turn_s - 1:+.1%}",
                    str(s.compactions),
                    mib(s.peak_bytes),
                    mib(s.final_bytes),
                ]
                for s in sims
            ],
        ),
        "",
    ]
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(__doc__, "smaller files and a shorter window run", argv)
    sizes = QUICK if args.quick else FULL
    lines = load_lines()
    tmp = tempfile.mkdtemp(prefix="memhop-compaction-bench-", dir=args.dir)
    info = machine(tmp, scope="memhop/")
    busy = [f"start: {busy_processes() or 'none'}"]
    started = time.perf_counter()
    try:
        files = [bench_file(tmp, n, sizes, lines) for n in sizes.files]
        busy.append(f"files: {busy_processes() or 'none'}")
        log("retention window, ratios off, 0.25 and 0.5 in lockstep")
        sims = simulate(tmp, (0.0, *RATIOS[1:3]), sizes, lines)
        busy.append(f"window: {busy_processes() or 'none'}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    info.append(("Load average at end", load_average()))
    info.append(("Benchmark wall time", f"{time.perf_counter() - started:.0f} s"))
    info.append(("Other test runs seen", "; ".join(busy)))
    section = report(files, sims, info, args.quick)
    return publish(args, "compaction.py", section)


if __name__ == "__main__":
    sys.exit(main())
