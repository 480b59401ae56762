"""Compaction benchmark: what in-place compaction costs, and the dead-bytes ratio it runs at.

Run ``python benches/compaction.py`` (about three minutes) or ``--quick`` for a smoke run.
In this one process, with the in-process ``memhop.LocalModel()`` (no network is timed):

1. For files of 10^4 and 10^5 turns (``search`` + one event + ``update`` on LoCoMo lines,
   a new scene every 24 turns; built with ``os.fsync`` switched off, which is setup, not
   measured), the oldest 30% of scenes are deleted. Then, with fsync back on: a turn's
   median latency at that size, the dead-bytes check the policy runs
   (``memhop.engine.inplace.occupancy``), and one ``DB.compact()`` while a second thread
   makes turns back to back and a third times a one-lock engine call every millisecond:
   the compaction's time and bytes written (its thread's ``write`` calls), its longest
   hold of every call (``Root.quiesced``), and the longest turn and engine call made
   meanwhile.
2. From those figures, per ratio: how many turns pass between two compactions when every
   byte a turn writes eventually dies (the worst case: a retention window), the amortised
   cost per turn (the compaction spread over those turns, plus one check per Dream pass,
   i.e. per 24 turns), and the bound on the file (live bytes / (1 - ratio)).
3. A measured check of 2 on a smaller file: turns with a retention window applied by
   deleting the oldest scene every 24 turns (fsync on), with the policy off and at each
   ratio: mean time per turn (deletes and compactions included), compactions, peak file.

4. Write amplification as a file grows: turns (fsync on, no deletes), each superseding a
   700-byte scratch record (dead bytes), the policy run every 24 turns, per ratio: every
   byte the process
   writes (frames, snapshots, compactions, side files, the close) per turn, against the
   live bytes a turn adds.

A "Compaction" section is written into docs/performance.md (``--out``) between markers.
This file is not a pytest module: nothing here is named ``test_*``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from _common import (
    REPO,
    busy_processes,
    fsync_off,
    fsync_reference,
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
import memhop.engine
from memhop import ids
from memhop.config import DEFAULT_COMPACT_DEAD_RATIO
from memhop.engine.header import DATA_START
from memhop.engine.inplace import occupancy
from memhop.root import compaction
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
    growth_turns: int


FULL = Sizes(
    files=(10_000, 100_000), sim_turns=3_000, sim_window=960, turn_samples=30, growth_turns=3_000
)
QUICK = Sizes(
    files=(1_000, 10_000), sim_turns=480, sim_window=192, turn_samples=10, growth_turns=480
)
GROWTH_RATIOS = (0.25, 1 / 3, 0.5)
SCRATCH_AGENT, SCRATCH_TYPE = 0xD0D0, 0x7F  # a domain no layer reads
SCRATCH_BYTES = 700  # superseded each turn: the dead bytes a turn leaves (issue 27: 0.5-1 KB)


@dataclass(frozen=True)
class UnderLoad:
    """One ``DB.compact()`` with turns made beside it."""

    compact_s: float
    written: int  # bytes the compacting thread wrote
    hold_max_s: float  # its longest hold of every call (Root.quiesced), 0 if none
    holds: int
    turns: int  # turns that overlapped the compaction
    turn_med_s: float
    turn_max_s: float
    probe_max_s: float  # the longest one-lock engine call meanwhile
    step_max_s: float  # the compaction's longest step under the engine lock alone (0: none)


@dataclass(frozen=True)
class Growth:
    ratio: float
    turns: int
    written_per_turn: float
    live_per_turn: float
    dead_per_turn: float  # with the policy off: what a turn leaves dead
    compactions: int


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
    load: UnderLoad


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
        log(f"{turns:,} turns: compacting {measured.file_bytes / 2**20:.1f} MiB beside turns")
        load = compact_under_turns(db, me, lines, turns + sizes.turn_samples)
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
            compact_s=load.compact_s,
            compacted_bytes=db.stats().file_bytes,
            load=load,
        )


def thread_written() -> int:
    """Bytes this thread has passed to ``write`` calls so far (Linux; 0 elsewhere)."""
    try:
        with open("/proc/thread-self/io", encoding="ascii") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("wchar:"))
    except (OSError, StopIteration):
        return 0


@contextlib.contextmanager
def timed_steps(steps: list[float]) -> Iterator[None]:
    """Record how long each step a compaction takes under the engine lock alone lasts (the
    look at the index per chunk; an older memhop has none: it held every call throughout)."""
    online = getattr(memhop.engine, "online", None)
    if online is None:
        yield
        return
    real = online.OnlineAccess.live_among

    def live_among(self: object, frames: Sequence[tuple[int, int, int]]) -> list[bool]:
        t0 = time.perf_counter()
        try:
            return real(self, frames)
        finally:
            steps.append(time.perf_counter() - t0)

    online.OnlineAccess.live_among = live_among
    try:
        yield
    finally:
        online.OnlineAccess.live_among = real


@contextlib.contextmanager
def timed_holds(db: memhop.DB, holds: list[float]) -> Iterator[None]:
    """Record how long each ``Root.quiesced`` (every call of the handle waits) is held."""
    root = db._root
    real = type(root).quiesced

    @contextlib.contextmanager
    def quiesced() -> Iterator[object]:
        with real(root) as contexts:
            t0 = time.perf_counter()
            try:
                yield contexts
            finally:
                holds.append(time.perf_counter() - t0)

    root.quiesced = quiesced  # type: ignore[method-assign]
    try:
        yield
    finally:
        del root.quiesced


def compact_under_turns(
    db: memhop.DB, me: memhop.Session, lines: list[tuple[str, str]], first: int
) -> UnderLoad:
    """``DB.compact()`` while one thread makes turns back to back and another times a
    one-lock engine call every millisecond; figures for what overlapped the compaction."""
    root = db._root
    done = threading.Event()
    turns: list[tuple[float, float]] = []  # (start, seconds)
    probes: list[tuple[float, float]] = []

    def talk() -> None:
        i = first
        while not done.is_set():
            t0 = time.perf_counter()
            turn(me, lines, i)
            turns.append((t0, time.perf_counter() - t0))
            i += 1

    def probe() -> None:
        while not done.is_set():
            t0 = time.perf_counter()
            root.engine.contains(ids.PRIMARY_AGENT_ID, 1)
            probes.append((t0, time.perf_counter() - t0))
            time.sleep(0.001)

    workers = [threading.Thread(target=talk), threading.Thread(target=probe)]
    holds: list[float] = []
    steps: list[float] = []
    with timed_holds(db, holds), timed_steps(steps):
        for w in workers:
            w.start()
        time.sleep(0.3)
        written = thread_written()
        start = time.perf_counter()
        db.compact()
        end = time.perf_counter()
        written = thread_written() - written
        time.sleep(0.3)
        done.set()
        for w in workers:
            w.join()

    def during(rows: list[tuple[float, float]]) -> list[float]:
        return [s for t0, s in rows if t0 < end and t0 + s > start]

    made, waits = during(turns), during(probes)
    return UnderLoad(
        compact_s=end - start,
        written=written,
        hold_max_s=max(holds, default=0.0),
        holds=len(holds),
        turns=len(made),
        turn_med_s=med(made) if made else 0.0,
        turn_max_s=max(made, default=0.0),
        probe_max_s=max(waits, default=0.0),
        step_max_s=max(steps, default=0.0),
    )


def process_written() -> int:
    """Bytes the whole process has passed to ``write`` calls so far (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/io", encoding="ascii") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("wchar:"))
    except (OSError, StopIteration):
        return 0


def growth(
    tmp: str, ratios: Sequence[float], sizes: Sizes, lines: list[tuple[str, str]]
) -> list[Growth]:
    """A growing file (no deletes, Dream off), each turn also superseding one scratch record
    of ``SCRATCH_BYTES`` (dead bytes as a Dream pass leaves them), the policy run every 24
    turns as a pass runs it: bytes written per turn, against the live bytes a turn adds."""
    out = []
    ran: list[bool] = []
    real = compaction.compact

    def counted(root: object, *, above: float = 0.0) -> bool:
        done = real(root, above=above)  # type: ignore[arg-type]
        ran.append(done)
        return done

    compaction.compact = counted  # type: ignore[assignment]
    try:
        for ratio in (0.0, *ratios):
            path = os.path.join(tmp, f"growth-{ratio:.3f}.meh")
            before, ran[:] = process_written(), []
            with open_db(path, ratio) as db:
                me = db.primary()
                for i in range(sizes.growth_turns):
                    turn(me, lines, i)
                    db._root.engine.write(SCRATCH_AGENT, SCRATCH_TYPE, 1, b"s" * SCRATCH_BYTES)
                    if i % TURNS_PER_SCENE == TURNS_PER_SCENE - 1:
                        db._root.compact_if_due()  # what a Dream pass runs once it returns
                measured = occupancy(db._root.engine)
            written = process_written() - before
            n = sizes.growth_turns
            out.append(
                Growth(
                    ratio=ratio,
                    turns=n,
                    written_per_turn=written / n,
                    live_per_turn=(measured.live_bytes - DATA_START) / n,
                    dead_per_turn=measured.dead_bytes / n,
                    compactions=sum(ran),
                )
            )
            log(f"growth at ratio {ratio:g}: {written / n:,.0f} B written a turn")
    finally:
        compaction.compact = real
    return out


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
    files: Sequence[FileResult],
    sims: Sequence[SimResult],
    grown: Sequence[Growth],
    info: list[tuple[str, str]],
    quick: bool,
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
        "'error' is its dead ratio minus the exact one); the exact measure ('exact', one "
        "length read per live record under the engine lock) is what `occupancy` costs; a "
        "compaction the policy starts measures the dead share itself as it copies. The "
        "compaction is `DB.compact()` (copy beside the calls, catch up, then replay the last "
        "frames, fsync, rename and swap holding every call), with turns made beside it "
        "(next table).",
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
        "### Beside turns",
        "",
        "The same `DB.compact()`, while one thread makes turns back to back on the file and "
        "another times a one-lock engine call (`contains`) every millisecond. 'hold' is the "
        "longest time the compaction held every call of the handle (`Root.quiesced`: the "
        "registry, every domain lock, the pool lock); 'longest turn' and 'longest engine "
        "call' are over those that overlapped the compaction. 'written' is what the "
        "compacting thread passed to `write` (the copy, its snapshot, the side files). "
        "'lock step' is the longest of the copy's looks at the index (one per 512 frames), "
        "its only hold of the engine lock alone before the last step.",
        "",
        table(
            [
                "turns",
                "file MiB",
                "compact ms",
                "written MiB",
                "holds",
                "hold ms",
                "turns beside",
                "median turn ms",
                "longest turn ms",
                "longest engine call ms",
                "longest lock step ms",
            ],
            [
                [
                    f"{f.turns:,}",
                    mib(f.file_bytes),
                    f"{f.load.compact_s * 1e3:.0f}",
                    mib(f.load.written),
                    str(f.load.holds),
                    f"{f.load.hold_max_s * 1e3:.1f}",
                    str(f.load.turns),
                    f"{f.load.turn_med_s * 1e3:.2f}",
                    f"{f.load.turn_max_s * 1e3:.1f}",
                    f"{f.load.probe_max_s * 1e3:.1f}",
                    f"{f.load.step_max_s * 1e3:.2f}",
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
        "the file bound, how soon deleted bytes leave the disk and the bytes written (last "
        "table). 0 turns the policy off.",
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
        "### Bytes written per turn as the file grows",
        "",
        f"{grown[0].turns:,} turns on a new file (fsync on, no deletes, Dream off), each also "
        f"superseding one {SCRATCH_BYTES}-byte record (the dead bytes a Dream pass leaves, "
        "which the in-process model does not), the policy run every 24 turns as a Dream pass "
        "runs it: every byte the process wrote (frames, "
        "snapshots, compactions, side files, the close) per turn, against the live bytes a "
        "turn adds ('x live'). 'dead/turn' is what is dead in the file at the end. With d "
        "dead and b live bytes a turn, a ratio r writes about b + d + d (1 - r) / r a turn: "
        "a compaction copies (1 - r) / r live bytes per dead byte.",
        "",
        table(
            ["ratio", "compactions", "written B/turn", "live B/turn", "x live", "dead B/turn"],
            [
                [
                    "off (0)" if g.ratio == 0 else f"{g.ratio:.2f}",
                    str(g.compactions),
                    f"{g.written_per_turn:,.0f}",
                    f"{g.live_per_turn:,.0f}",
                    f"{g.written_per_turn / g.live_per_turn:.2f}",
                    f"{g.dead_per_turn:,.0f}",
                ]
                for g in grown
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
        grown = growth(tmp, GROWTH_RATIOS, sizes, lines)
        busy.append(f"growth: {busy_processes() or 'none'}")
        info.append(
            ("fsync reference (300-byte append + fsync)", f"{fsync_reference(tmp) * 1e3:.2f} ms")
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    info.append(("Load average at end", load_average()))
    info.append(("Benchmark wall time", f"{time.perf_counter() - started:.0f} s"))
    info.append(("Other test runs seen", "; ".join(busy)))
    section = report(files, sims, grown, info, args.quick)
    return publish(args, "compaction.py", section)


if __name__ == "__main__":
    sys.exit(main())
