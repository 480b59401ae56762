"""Scaling benchmark: how a domain's reads grow with the records it holds.

Run ``python benches/scale.py`` (about 25 minutes; ``--quick`` stops at 10^4 records,
``--top=N`` sets the largest domain in records, ``--only=search`` runs the scene-length part
alone and prints it without writing the page). For each size it builds one primary domain
through the public API (``search`` + one ``append_archive`` event + ``update``; a new scene
every 25 turns; ``os.fsync`` replaced by a no-op while building only, since durability is not
what is measured here), closes it, and measures on fresh opens of the closed file:

- open: ``memhop.open`` of the file (the engine reads its snapshot);
- first read: the first ``scene_context(scene)`` of one 25-turn scene after that open, without
  the file's scene map (the domain is built in full for it, as at the first open after a
  compaction or from a version without maps), and the warm median of further reads of it;
- first read with the map (the close before wrote it): the scene is read from the records the
  map names, and the domain is built on a thread of its own afterwards; then the first turn
  (``search`` + event + ``update``: the scene's view takes it while that build runs);
- first search: the first ``search(scene_id=...)`` after a fresh open without the map, with it,
  then the warm median;
- heap: Python heap held after the open, a scene read, a ``search``, a ``recall`` (so every
  mirror of the domain is built), per live record (tracemalloc, after ``gc.collect()``).

Then, in one scene of 10, 300 and 1,000 rows (a fresh file per loop): ``search`` thread CPU per
turn, in a loop of turns as an agent makes them; ``scene_context`` CPU in a loop of its own; and
``search`` again with a ``scene_context`` before each turn, which leaves the caches cold. It
writes a "Scaling" section of docs/performance.md (``--out``) between its markers. Not a
pytest module.
"""

from __future__ import annotations

import contextlib
import cProfile
import functools
import gc
import os
import pstats
import shutil
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
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
MAP_SAMPLES = 3  # fresh opens with the map, for its first read and its first search
RECORDS_PER_TURN = 4  # a topic row, two lines and one event (the scene record is shared)
SIZES = (1_000, 10_000, 100_000, 400_000, 1_000_000)
QUICK_SIZES = (1_000, 10_000)
SCENE_ROWS = (10, 300, 1_000)
MEASURED_TURNS = 21
# Each length is measured once a round, the lengths in turn, so that a busy spell of the shared
# machine (it moves a round's median by 2x) falls on every length alike.
ROUNDS = 5
RECALL_QUERY = "order warehouse"
OTHER_TURN_AFTER_S = 0.02


def speak(session: memhop.Session, i: int, *, new_scene: bool, scene_id: str = "") -> str:
    """One turn with varied words; return its scene id."""
    opened = session.search(new_scene=new_scene, scene_id=scene_id)
    close_turn(session, i)
    return opened.scene.scene_id


def close_turn(session: memhop.Session, i: int) -> None:
    """The rest of turn ``i`` after its ``search``: one event, then ``update``."""
    at = BASE_MS + i * 1000
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
    map_read_s: float
    map_turn_s: float
    first_search_s: float
    map_search_s: float
    warm_search_s: float
    first_recall_s: float
    warm_recall_s: float
    heap_b_per_record: float
    other_turn_s: float


def measure(path: str, scene: str, turns: int) -> Row:
    model = memhop.LocalModel()
    # Reads: open without the scene map, first read of the scene, warm reads.
    drop_scene_map(path)
    gc.collect()
    db_box: list[memhop.DB] = []
    open_s = seconds(lambda: db_box.append(memhop.open(path, model, DEFAULTS)))
    db = db_box[0]
    session = db.primary()
    first_read = seconds(lambda: session.scene_context(scene))
    warm = med([seconds(lambda: session.scene_context(scene)) for _ in range(WARM_READS)])
    # Recall: its index is built on the first call, from the mirrors the read built.
    first_recall = cpu_seconds(lambda: session.recall(RECALL_QUERY, limit=5))
    warm_recall = med(
        [cpu_seconds(lambda: session.recall(RECALL_QUERY, limit=5)) for _ in range(5)]
    )
    stats = db.stats()
    db.close()  # writes the scene map
    # The same read from the map on fresh opens (a session that only reads leaves the map
    # sealed), the last one followed by the first turn, which the scene's view takes.
    map_reads = []
    for _ in range(MAP_SAMPLES - 1):
        gc.collect()
        with memhop.open(path, model, DEFAULTS) as db:
            map_reads.append(seconds(functools.partial(db.primary().scene_context, scene)))
    gc.collect()
    with memhop.open(path, model, DEFAULTS) as db:
        session = db.primary()
        map_reads.append(seconds(lambda: session.scene_context(scene)))
        map_turn = seconds(lambda: speak(session, turns, new_scene=False, scene_id=scene))
    map_read = med(map_reads)
    # Searches: a fresh open, the first search of the scene, then warm searches.
    drop_scene_map(path)
    db = memhop.open(path, model, DEFAULTS)
    session = db.primary()
    first_search = seconds(lambda: session.search(scene_id=scene))
    warm_search = med([cpu_seconds(lambda: session.search(scene_id=scene)) for _ in range(5)])
    db.close()
    map_searches = []
    for _ in range(MAP_SAMPLES):  # each writes a record, and its close brings the map up to date
        gc.collect()
        with memhop.open(path, model, DEFAULTS) as db:
            map_searches.append(seconds(lambda: db.primary().search(scene_id=scene)))
    map_search = med(map_searches)
    # Heap with every mirror built (tracemalloc slows the calls: nothing is timed here).
    # Without the map: with it, the read takes the scene's records alone and the domain is
    # built on a thread that may not have finished when the heap is read.
    drop_scene_map(path)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    db = memhop.open(path, model, DEFAULTS)
    session = db.primary()
    session.scene_context(scene)
    session.search(scene_id=scene)
    session.recall(RECALL_QUERY, limit=5)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    db.close()
    other_turn = other_domain_turn(path, scene)
    return Row(
        records=stats.record_count,
        turns=turns,
        file_mb=stats.file_bytes / 1024 / 1024,
        open_s=open_s,
        first_read_s=first_read,
        warm_read_s=warm,
        map_read_s=map_read,
        map_turn_s=map_turn,
        first_search_s=first_search,
        map_search_s=map_search,
        warm_search_s=warm_search,
        first_recall_s=first_recall,
        warm_recall_s=warm_recall,
        heap_b_per_record=held / stats.record_count,
        other_turn_s=other_turn,
    )


def drop_scene_map(path: str) -> None:
    """Delete the file's scene map, so the next open builds each domain in full."""
    with contextlib.suppress(FileNotFoundError):
        os.remove(path + ".scenemap")


def other_domain_turn(path: str, scene: str) -> float:
    """Wall seconds of a small sub-agent's turn made while the primary's first read runs.

    The sub-agent is added to the file first (the last measurement of a size).
    """
    with memhop.open(path, memhop.LocalModel(), DEFAULTS) as db:
        other = db.sub_agent(memhop.LocalModel(), memhop.ProfileInput("other"))
        other_scene = speak(other, 0, new_scene=True)
    drop_scene_map(path)  # the primary's first read builds it in full
    with memhop.open(path, memhop.LocalModel(), DEFAULTS) as db:
        other = db.sub_agent(memhop.LocalModel(), memhop.ProfileInput("other"))
        reader = threading.Thread(target=lambda: db.primary().scene_context(scene))
        reader.start()
        time.sleep(OTHER_TURN_AFTER_S)  # the read is under way (it takes longer from 10^4 up)
        took = seconds(lambda: speak(other, 1, new_scene=False, scene_id=other_scene))
        reader.join()
    return took


@dataclass(frozen=True)
class SceneRow:
    rows: int
    search_s: float  # median thread CPU of search, one per turn
    calls: float  # Python function calls per search (cProfile)
    search_after_read_s: float  # the same, each turn right after a full scene_context
    calls_after_read: float
    read_s: float  # median thread CPU of scene_context


@contextmanager
def one_scene(tmp: str, rows: int, loop: str) -> Iterator[tuple[memhop.Session, str]]:
    """A session on a fresh file holding one scene of ``rows`` turns, and that scene's id."""
    path = os.path.join(tmp, f"rows-{rows}-{loop}.meh")
    with (
        fsync_off(),
        memhop.open(path, memhop.LocalModel(), DEFAULTS, memhop.ProfileInput("a")) as db,
    ):
        session = db.primary()
        scene = speak(session, 0, new_scene=True)
        for i in range(1, rows):
            speak(session, i, new_scene=False, scene_id=scene)
        yield session, scene
    os.remove(path)


def timed_turn(session: memhop.Session, scene: str, i: int) -> float:
    """Turn ``i`` of ``scene``; return its ``search``'s thread CPU."""
    cpu = cpu_seconds(functools.partial(session.search, scene_id=scene))
    close_turn(session, i)
    return cpu


def calls_per_search(
    session: memhop.Session, scene: str, first: int, before: Callable[[], object]
) -> float:
    """Python function calls one ``search`` makes (cProfile's count): its work, without noise.

    ``before`` runs, unprofiled, before each turn.
    """
    profiler = cProfile.Profile()
    for i in range(first, first + 5):
        before()
        profiler.enable()
        session.search(scene_id=scene)
        profiler.disable()
        close_turn(session, i)
    calls: int = pstats.Stats(profiler).total_calls  # type: ignore[attr-defined]
    return calls / 5


def search_cpu(tmp: str) -> list[SceneRow]:
    """search and scene_context against the length of the scene, each loop on a fresh scene."""
    searches: dict[int, list[float]] = {rows: [] for rows in SCENE_ROWS}
    reads: dict[int, list[float]] = {rows: [] for rows in SCENE_ROWS}
    after_read: dict[int, list[float]] = {rows: [] for rows in SCENE_ROWS}
    calls: dict[int, float] = {}
    calls_after_read: dict[int, float] = {}
    for _ in range(ROUNDS):
        for rows in SCENE_ROWS:
            turns = range(rows, rows + MEASURED_TURNS)
            with one_scene(tmp, rows, "turns") as (session, scene):
                searches[rows] += [timed_turn(session, scene, i) for i in turns]
                calls[rows] = calls_per_search(session, scene, turns.stop, lambda: None)
            with one_scene(tmp, rows, "reads") as (session, scene):
                read = functools.partial(session.scene_context, scene)
                reads[rows] += [cpu_seconds(read) for _ in turns]
            with one_scene(tmp, rows, "read-then-turn") as (session, scene):
                for i in turns:
                    session.scene_context(scene)  # its work evicts what search keeps warm
                    after_read[rows].append(timed_turn(session, scene, i))
                read = functools.partial(session.scene_context, scene)
                calls_after_read[rows] = calls_per_search(session, scene, turns.stop, read)
            log(
                f"  {rows} rows: search {med(searches[rows][-MEASURED_TURNS:]) * 1e3:.3f} ms "
                f"CPU per turn, {med(after_read[rows][-MEASURED_TURNS:]) * 1e3:.3f} ms after a "
                f"scene_context; {calls[rows]:.0f} calls"
            )
    return [
        SceneRow(
            rows=rows,
            search_s=med(searches[rows]),
            calls=calls[rows],
            search_after_read_s=med(after_read[rows]),
            calls_after_read=calls_after_read[rows],
            read_s=med(reads[rows]),
        )
        for rows in SCENE_ROWS
    ]


def ms(s: float, digits: int = 2) -> str:
    return f"{s * 1e3:,.{digits}f} ms"


def search_section(cpu: Sequence[SceneRow], note: str = "") -> str:
    """The "search and scene_context against the length of the scene" subsection."""
    prose = (
        f"Thread CPU of `search(scene_id=...)` per turn: {MEASURED_TURNS} turns (`search` + one "
        "event + `update`, as an agent makes them; the scene grows by one row a turn) in a "
        "file holding only that scene; the Python function calls one `search` makes "
        "(cProfile), a count of its work that the machine's load and caches do not move; "
        f"`scene_context` CPU, {MEASURED_TURNS} reads in a loop of their own. Each loop starts "
        f"on a freshly built scene and runs once in each of {ROUNDS} rounds, the lengths in "
        f"turn; a figure is the median of its {ROUNDS * MEASURED_TURNS} samples. "
        "*After a full scene_context* "
        "is `search` again with a `scene_context` of the same scene before each turn: that "
        "read's work (milliseconds at 1,000 rows) evicts the CPU caches, so the `search` "
        "after it makes the same function calls and runs each slower; it is what a host that "
        "reads the whole scene every turn pays, not more work done by `search` (this table's "
        "*search CPU* was once measured only that way).\n"
    )
    rows = [
        [
            f"{r.rows:,}",
            ms(r.search_s, 3),
            f"{r.calls:,.0f} ({r.calls_after_read:,.0f})",
            ms(r.search_after_read_s, 3),
            ms(r.read_s),
            f"{r.read_s / r.rows * 1e6:.1f} us",
        ]
        for r in cpu
    ]
    header = [
        "Rows in the scene",
        "search CPU per turn",
        "function calls per search (after a full scene_context)",
        "search CPU after a full scene_context",
        "scene_context CPU",
        "scene_context per row",
    ]
    return "\n".join(
        [
            "### search and scene_context against the length of the scene\n",
            *([note] if note else []),
            prose,
            table(header, rows) + "\n",
        ]
    )


def search_aim(cpu: Sequence[SceneRow]) -> list[str]:
    """The aims row for search: CPU per turn in the longest scene within 1.5x of the shortest."""
    small, large = cpu[0], cpu[-1]
    flat = large.search_s / small.search_s
    cold = large.search_after_read_s / small.search_after_read_s
    return [
        f"search flat in scene length ({large.rows:,} rows within 1.5x of {small.rows:,})",
        f"CPU per turn {ms(large.search_s, 3)} vs {ms(small.search_s, 3)} ({flat:.2f}x); after "
        f"a full scene_context {ms(large.search_after_read_s, 3)} vs "
        f"{ms(small.search_after_read_s, 3)} ({cold:.2f}x); function calls per search "
        f"{large.calls:,.0f} vs {small.calls:,.0f} ({large.calls_after_read:,.0f} vs "
        f"{small.calls_after_read:,.0f} after a scene_context)",
        verdict(flat <= 1.5),
    ]


def alone(cpu: Sequence[SceneRow], info: Sequence[tuple[str, str]]) -> str:
    """What ``--only=search`` prints: the dated subsection and its aims row (the page is left)."""
    facts = dict(info)
    note = (
        "Rerun alone with `python benches/scale.py --only=search` (memhop commit "
        f"{facts['memhop commit']}, {facts['Date']}; load average "
        f"{facts['Load average (1/5/15 min) at start']} at start, "
        f"{facts['Load average at end']} at end).\n"
    )
    aims = table(["Aim", "Measured", "Result"], [search_aim(cpu)])
    return search_section(cpu, note) + "\n" + aims + "\n"


def report(
    rows: Sequence[Row],
    cpu: Sequence[SceneRow],
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
        "after the open without the file's scene map (the domain is built in full: the first "
        "open after a compaction, or of a file a version without maps wrote), *warm* the median "
        f"of {WARM_READS} more; *map read* the same first read with the map the last close "
        "wrote (the scene from the records the map names; the domain is built on a thread of "
        f"its own afterwards), the median of {MAP_SAMPLES} fresh opens, *map turn* the wall "
        "time of the turn that follows the last of them (`search` + "
        "event + `update`: the scene's view takes it, without waiting for that build, which "
        "runs meanwhile and shares the interpreter); *first search* the first "
        "`search(scene_id=...)` after another fresh open without the map, *map search* with "
        f"it, the median of {MAP_SAMPLES} fresh opens (each writes one record, so its fsync "
        "is in it, and the first write after an open cuts the tail snapshot: a truncate, "
        "whose cost grows with the snapshot on a filesystem that discards freed blocks at "
        "once), *warm search* the median thread "
        "CPU of 5 more (no fsync in it); *first "
        "recall* the thread CPU of the first `recall` after the read (it builds the domain's "
        "recall index), *warm recall* the median of 5 more; *other domain's turn* the wall "
        "time of a turn of a small sub-agent started 20 ms into the primary's first read on "
        "another thread (from 10^4 records up the read is still running: the turn waits for "
        "no lock of the primary's, only for its share of the interpreter); *heap* "
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
                "map read",
                "map / warm",
                "map turn",
                "first search",
                "map search",
                "warm search (CPU)",
                "first recall (CPU)",
                "warm recall (CPU)",
                "heap B/record",
                "other domain's turn",
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
                    ms(r.map_read_s),
                    f"{r.map_read_s / r.warm_read_s:.1f}x",
                    ms(r.map_turn_s),
                    ms(r.first_search_s),
                    ms(r.map_search_s),
                    ms(r.warm_search_s),
                    ms(r.first_recall_s),
                    ms(r.warm_recall_s),
                    f"{r.heap_b_per_record:,.0f}",
                    ms(r.other_turn_s),
                ]
                for r in rows
            ],
        )
        + "\n"
    )
    out.append(
        "Why *first read* grows with the domain and *map read* hardly does: without a map, "
        "the first call that reaches a domain builds its topic and content mirrors from every "
        "topic and content record of the domain, since a format 0x0012 file cannot say which "
        "records belong to a scene (ids are hashes, and a merge moves topics into a scene under "
        "the ids of the scene they came from). The scene map (`<file>.scenemap`, memhop's own "
        "file, written at close) says it. A read from it checks that the file still ends in "
        "the index snapshot the map names (else it hashes the file up to the map's end, one C "
        "pass), maps the map file and checks the checksums of the blocks that hold the "
        "domain's heads and scene columns (each other block, and each range's order, is "
        "checked when a read first uses it), and reads the scene's own records, each decoded "
        "once. A turn on the scene is taken by its view too; the full build, on a thread of "
        "its own that pauses while a call is in flight, takes the turn in when it is done.\n"
    )
    out.append(search_section(cpu))
    big = rows[-1]
    out.append("### Aims\n")
    out.append(
        table(
            ["Aim", "Measured", "Result"],
            [
                [
                    "First read of a scene within 3x of a warm read (largest domain, with the "
                    "scene map)",
                    f"{ms(big.map_read_s)} vs {ms(big.warm_read_s)} at {big.records:,} records "
                    f"({big.map_read_s / big.warm_read_s:.1f}x; without the map "
                    f"{ms(big.first_read_s)})",
                    verdict(big.map_read_s <= 3 * big.warm_read_s),
                ],
                search_aim(cpu),
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
    flags = argv or sys.argv[1:]
    top_arg = [a for a in flags if a.startswith("--top=")]
    only = [a.split("=", 1)[1] for a in flags if a.startswith("--only=")]
    if only not in ([], ["search"]):
        raise SystemExit("--only takes one part: --only=search")
    rest = [a for a in flags if not a.startswith(("--top=", "--only="))]
    args = parse_args(__doc__, "sizes 10^3 and 10^4 records only", rest)
    sizes: tuple[int, ...] = QUICK_SIZES if args.quick else SIZES
    if top_arg:
        top = int(top_arg[0].split("=", 1)[1])
        sizes = tuple(s for s in SIZES if s <= top)
    if only:
        sizes = ()
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
    if only:
        print(alone(cpu, info))
        return 0
    section = report(rows, cpu, info, args.quick)
    return publish(args, "scale.py", section)


if __name__ == "__main__":
    sys.exit(main())
