"""Scaling benchmark: how a domain's reads grow with the records it holds.

Run ``python benches/scale.py`` (a few minutes; ``--quick`` stops at 10^4 records, ``--top N``
sets the largest domain in records). For each size it builds one primary domain through the
public API (``search`` + one ``append_archive`` event + ``update``; a new scene every 25 turns;
``os.fsync`` replaced by a no-op while building only, since durability is not what is measured
here), closes it, and measures on fresh opens of the closed file:

- open: ``memhop.open`` of the file (the engine reads its snapshot);
- first read: the first ``scene_context(scene)`` of one 25-turn scene after that open (whatever
  the domain loads on first use is in it), and the warm median of further reads of it;
- first search: the first ``search(scene_id=...)`` after a fresh open, then the warm median;
- heap: Python heap held after the open, a scene read, a ``search``, a ``recall`` (so every
  mirror of the domain is built), per live record (tracemalloc, after ``gc.collect()``).

Then ``search`` CPU (thread time, so no fsync is in it) in one scene of 10, 300 and 1,000 rows:
how a turn's cost grows with the length of its scene. It writes a "Scaling" section of
docs/performance.md (``--out``) between its markers. Not a pytest module.
"""

from __future__ import annotations

import cProfile
import functools
import gc
import os
import pstats
import shutil
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from _common import (
    fsync_off,
    load_average,
    log,
    machine,
    med,
    parse_args,
    publish,
    table,
    verdict,
)

import memhop

DEFAULTS = memhop.Defaults(scene_dream_topic_threshold=-1)
TURNS_PER_SCENE = 25
BASE_MS = 1_700_000_000_000
WARM_READS = 15
RECORDS_PER_TURN = 4  # a topic row, two lines and one event (the scene record is shared)
SIZES = (1_000, 10_000, 100_000, 400_000, 1_000_000)
QUICK_SIZES = (1_000, 10_000)
SCENE_ROWS = (10, 300, 1_000)


def speak(session: memhop.Session, i: int, *, new_scene: bool, scene_id: str = "") -> str:
    """One turn with varied words; return its scene id."""
    at = BASE_MS + i * 1000
    opened = session.search(new_scene=new_scene, scene_id=scene_id)
    session.append_archive(
        kind=memhop.ArchiveKind.EVENT,
        event_type="tool_call",
        content=f"lookup order {i % 491} for customer {i % 83} in region {i % 7}",
        created_at=at,
    )
    session.update(
        input=f"where is order {i % 491} for customer {i % 83}, it was due on day {i % 29}",
        output=f"order {i % 491} ships from warehouse {i % 11} on day {(i + 3) % 29}",
        created_at=at,
    )
    return opened.scene.scene_id


def build(path: str, turns: int) -> str:
    """A primary domain of ``turns`` turns; return the id of a scene from its middle."""
    middle = ""
    with (
        fsync_off(),
        memhop.open(path, memhop.LocalModel(), DEFAULTS, memhop.ProfileInput("a")) as db,
    ):
        session = db.primary()
        for i in range(turns):
            sid = speak(session, i, new_scene=i % TURNS_PER_SCENE == 0)
            if i == (turns // 2) // TURNS_PER_SCENE * TURNS_PER_SCENE:
                middle = sid
    return middle


def seconds(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - t0) / 1e9


def cpu_seconds(fn: Callable[[], object]) -> float:
    t0 = time.thread_time_ns()
    fn()
    return (time.thread_time_ns() - t0) / 1e9


@dataclass(frozen=True)
class Row:
    records: int
    turns: int
    file_mb: float
    open_s: float
    first_read_s: float
    warm_read_s: float
    first_search_s: float
    warm_search_s: float
    heap_b_per_record: float


def measure(path: str, scene: str, turns: int) -> Row:
    model = memhop.LocalModel()
    # Reads: open, first read of the scene, warm reads.
    gc.collect()
    db_box: list[memhop.DB] = []
    open_s = seconds(lambda: db_box.append(memhop.open(path, model, DEFAULTS)))
    db = db_box[0]
    session = db.primary()
    first_read = seconds(lambda: session.scene_context(scene))
    warm = med([seconds(lambda: session.scene_context(scene)) for _ in range(WARM_READS)])
    stats = db.stats()
    db.close()
    # Searches: a fresh open, the first search of the scene, then warm searches.
    db = memhop.open(path, model, DEFAULTS)
    session = db.primary()
    first_search = seconds(lambda: session.search(scene_id=scene))
    warm_search = med([cpu_seconds(lambda: session.search(scene_id=scene)) for _ in range(5)])
    db.close()
    # Heap with every mirror built (tracemalloc slows the calls: nothing is timed here).
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    db = memhop.open(path, model, DEFAULTS)
    session = db.primary()
    session.scene_context(scene)
    session.search(scene_id=scene)
    session.recall("order warehouse", limit=5)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    db.close()
    return Row(
        records=stats.record_count,
        turns=turns,
        file_mb=stats.file_bytes / 1024 / 1024,
        open_s=open_s,
        first_read_s=first_read,
        warm_read_s=warm,
        first_search_s=first_search,
        warm_search_s=warm_search,
        heap_b_per_record=held / stats.record_count,
    )


def calls_per_search(session: memhop.Session, scene: str, at: int) -> float:
    """Python function calls one ``search`` makes (cProfile's count): its work, without noise."""
    profiler = cProfile.Profile()
    for i in range(5):
        profiler.enable()
        session.search(scene_id=scene)
        profiler.disable()
        session.update(input=f"call {i}", output="counted", created_at=at + i * 1000)
    calls: int = pstats.Stats(profiler).total_calls  # type: ignore[attr-defined]
    return calls / 5


def search_cpu(tmp: str) -> list[tuple[int, float, float, float]]:
    """(rows, search CPU, scene_context CPU, calls per search) in one scene of each length."""
    out = []
    model = memhop.LocalModel()
    for rows in SCENE_ROWS:
        path = os.path.join(tmp, f"rows-{rows}.meh")
        with fsync_off(), memhop.open(path, model, DEFAULTS, memhop.ProfileInput("a")) as db:
            session = db.primary()
            scene = speak(session, 0, new_scene=True)
            for i in range(1, rows):
                speak(session, i, new_scene=False, scene_id=scene)
            searches, reads = [], []
            for i in range(rows, rows + 20):
                searches.append(cpu_seconds(functools.partial(session.search, scene_id=scene)))
                at = BASE_MS + i * 1000  # the newest turn, as in a live scene
                session.update(input=f"line {i}", output=f"reply {i}", created_at=at)
                reads.append(cpu_seconds(functools.partial(session.scene_context, scene)))
            calls = calls_per_search(session, scene, BASE_MS + (rows + 20) * 1000)
        out.append((rows, med(searches), med(reads), calls))
        log(f"  {rows} rows: search {med(searches) * 1e3:.2f} ms CPU")
    return out


def ms(s: float) -> str:
    return f"{s * 1e3:,.2f} ms"


def report(
    rows: Sequence[Row],
    cpu: Sequence[tuple[int, float, float, float]],
    info: list[tuple[str, str]],
    quick: bool,
) -> str:
    out = ["## Scaling\n"]
    out.append(
        "Generated by `python benches/scale.py`"
        + (" --quick" if quick else "")
        + f". One primary domain per size, built through the public API (a turn is `search` + "
        f"one event + `update`, a new scene every {TURNS_PER_SCENE} turns, about "
        f"{RECORDS_PER_TURN} records per turn; fsync no-op'd while building only). Measured on "
        "fresh opens of the closed file: *open* is `memhop.open`; *first read* is the first "
        f"`scene_context` of one {TURNS_PER_SCENE}-turn scene from the middle of the domain "
        f"after the open, *warm* the median of {WARM_READS} more; *first search* the first "
        "`search(scene_id=...)` after another fresh open (it writes one record, so its fsync "
        "is in it), *warm search* the median thread CPU of 5 more (no fsync in it); *heap* "
        "the Python heap held after an open, a scene read, a search and a `recall` (every "
        "mirror built, the recall index included), per live record, tracemalloc.\n"
    )
    out.append(table(["Item", "Value"], info) + "\n")
    out.append(
        table(
            [
                "Records",
                "Turns",
                "File MB",
                "open",
                "first read",
                "warm read",
                "first / warm",
                "first search",
                "warm search (CPU)",
                "heap B/record",
            ],
            [
                [
                    f"{r.records:,}",
                    f"{r.turns:,}",
                    f"{r.file_mb:.1f}",
                    ms(r.open_s),
                    ms(r.first_read_s),
                    ms(r.warm_read_s),
                    f"{r.first_read_s / r.warm_read_s:.1f}x",
                    ms(r.first_search_s),
                    ms(r.warm_search_s),
                    f"{r.heap_b_per_record:,.0f}",
                ]
                for r in rows
            ],
        )
        + "\n"
    )
    out.append(
        "Why the first read still grows with the domain: the first call that reaches a domain "
        "builds its topic and content mirrors from every topic and content record of the "
        "domain (the content records read for their fields only, the text left on disk). A "
        "scene's rows cannot be found from the scene alone in a format 0x0012 file: turn ids "
        "derive from (scene, turn), but a merge moves topics into a scene under the ids of "
        "the scene they came from, and a Dream row whose members were deleted is reachable "
        "from nothing; only a stored per-scene enumeration (a new record type, which Go "
        "readers would refuse) would make the first read O(scene). What the load costs per "
        "record is in the table; every later read and turn costs its own scene's rows.\n"
    )
    out.append("### search and scene_context against the length of the scene\n")
    out.append(
        "Thread CPU of `search(scene_id=...)` (median of 20 turns, each closed with `update`, "
        "each followed by a `scene_context` of the same scene), in a file holding only that "
        "scene; and the Python function calls one `search` makes (cProfile), a count of its "
        "work that the machine's load and caches do not move.\n"
    )
    out.append(
        table(
            [
                "Rows in the scene",
                "search CPU",
                "function calls per search",
                "scene_context CPU",
                "scene_context per row",
            ],
            [[f"{n:,}", ms(s), f"{c:,.0f}", ms(r), f"{r / n * 1e6:.1f} us"] for n, s, r, c in cpu],
        )
        + "\n"
    )
    big = rows[-1]
    flat = cpu[-1][1] / cpu[0][1]
    out.append("### Aims\n")
    out.append(
        table(
            ["Aim", "Measured", "Result"],
            [
                [
                    "First read of a scene within 3x of a warm read (largest domain)",
                    f"{ms(big.first_read_s)} vs {ms(big.warm_read_s)} at {big.records:,} records "
                    f"({big.first_read_s / big.warm_read_s:.1f}x)",
                    verdict(big.first_read_s <= 3 * big.warm_read_s),
                ],
                [
                    "search flat in scene length (1,000 rows within 1.5x of 10)",
                    f"CPU {ms(cpu[-1][1])} vs {ms(cpu[0][1])} ({flat:.2f}x); function calls "
                    f"per search {cpu[-1][3]:,.0f} vs {cpu[0][3]:,.0f}",
                    verdict(flat <= 1.5),
                ],
                [
                    "Heap at most 300 B per record, every mirror built (largest domain)",
                    f"{big.heap_b_per_record:,.0f} B/record at {big.records:,} records",
                    verdict(big.heap_b_per_record <= 300),
                ],
            ],
        )
        + "\n"
    )
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    top_arg = [a for a in (argv or sys.argv[1:]) if a.startswith("--top=")]
    rest = [a for a in (argv or sys.argv[1:]) if not a.startswith("--top=")]
    args = parse_args(__doc__, "sizes 10^3 and 10^4 records only", rest)
    sizes = QUICK_SIZES if args.quick else SIZES
    if top_arg:
        top = int(top_arg[0].split("=", 1)[1])
        sizes = tuple(s for s in SIZES if s <= top)
    tmp = tempfile.mkdtemp(prefix="memhop-scale-bench-", dir=args.dir)
    info = machine(tmp, scope="memhop/")
    started = time.perf_counter()
    rows: list[Row] = []
    try:
        for records in sizes:
            turns = records // RECORDS_PER_TURN
            path = os.path.join(tmp, f"scale-{records}.meh")
            log(f"building {turns:,} turns (~{records:,} records)")
            scene = build(path, turns)
            log("measuring")
            rows.append(measure(path, scene, turns))
            r = rows[-1]
            log(
                f"  open {ms(r.open_s)} first {ms(r.first_read_s)} warm {ms(r.warm_read_s)} "
                f"first search {ms(r.first_search_s)} heap {r.heap_b_per_record:.0f} B/rec"
            )
            os.remove(path)
        log("search against scene length")
        cpu = search_cpu(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    info.append(("Load average at end", load_average()))
    info.append(("Benchmark wall time", f"{time.perf_counter() - started:.0f} s"))
    section = report(rows, cpu, info, args.quick)
    return publish(args, "scale.py", section)


if __name__ == "__main__":
    sys.exit(main())
