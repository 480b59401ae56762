"""Durable turns per second: ``Defaults.durability`` modes, sqlite3 FULL and NORMAL, threads.

Run ``python benches/durability.py`` (about two minutes) or ``--quick`` for a smoke run. A turn
is the turn bench's (``benches/turn.py``): ``search()`` + two ``append_archive`` events +
``update(input, output)`` with the in-process ``memhop.LocalModel()``, on LoCoMo lines, a new
scene every 25 turns, automatic Dream off, every fsync real. Two measurements, one process:

1. One thread: memhop with durability "call" and "turn", against the same turn's work on a
   sqlite3 file (``SqliteTurns``: one transaction per call, WAL, ``synchronous`` FULL and
   NORMAL). The four stores take turns in blocks of 10 turns, so load from elsewhere hits
   them alike. fsyncs are counted for memhop (``os.fsync`` wrapped); sqlite3's are its own.
2. Threads: T threads, each running turns on its own domain (sub-agents) of one file,
   durability "call": durable turns per second of all threads together, against one thread,
   and fsyncs per turn (writers on different domains share fsyncs made outside the engine
   lock). The thread counts take turns round by round.

Writes a "Durability" section into docs/performance.md (``--out``), keeping the rest.
This file is not a pytest module.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from itertools import cycle

from _common import (
    FsyncCounter,
    fsync_reference,
    load_average,
    log,
    machine,
    med,
    parse_args,
    publish,
    table,
)
from turn import BASE_MS, TURNS_PER_SCENE, SqliteTurns, load_lines

import memhop

EVENTS = memhop.ArchiveKind.EVENT
BLOCK = 10
SLOW_FSYNC_S = 0.002
SEED = memhop.ProfileInput(name="bench")


class MemhopTurns:
    """A memhop file in one durability mode, turn by turn on its primary domain."""

    def __init__(self, path: str, durability: str) -> None:
        defaults = memhop.Defaults(scene_dream_topic_threshold=-1, durability=durability)  # type: ignore[arg-type]
        self.db = memhop.open(path, memhop.LocalModel(), defaults, profile=SEED)
        self.me = self.db.primary()
        self.count = 0

    def turn(self, said: str, answered: str, at: int) -> None:
        run_turn(self.me, self.count, said, answered, at)
        self.count += 1


def run_turn(me: memhop.Session, n: int, said: str, answered: str, at: int) -> None:
    me.search(new_scene=n % TURNS_PER_SCENE == 0)
    me.append_archive(content=said[:60], created_at=at, kind=EVENTS, event_type="tool_call")
    me.append_archive(content=answered[:100], created_at=at, kind=EVENTS, event_type="tool_result")
    me.update(input=said, output=answered, created_at=at)


def single_thread(tmp: str, blocks: int) -> dict[str, tuple[float, float]]:
    """turns/s and fsyncs/turn (nan for sqlite3) per store, blocks of turns taken in turn."""
    lines = load_lines()
    model = memhop.LocalModel()
    stores: dict[str, Callable[[str, str, int], None]] = {}
    memhop_stores: dict[str, MemhopTurns] = {}
    for mode in ("call", "turn"):
        memhop_stores[mode] = MemhopTurns(os.path.join(tmp, f"{mode}.meh"), mode)
        stores[f'memhop durability="{mode}"'] = memhop_stores[mode].turn
    for sync in ("FULL", "NORMAL"):
        table_store = SqliteTurns(model, os.path.join(tmp, f"{sync}.sqlite"), sync)

        def sqlite_turn(said: str, answered: str, at: int, t: SqliteTurns = table_store) -> None:
            t.turn(said, answered, at, new_scene=t.topic % TURNS_PER_SCENE == 0)

        stores[f"sqlite3 WAL {sync}"] = sqlite_turn
    seconds = dict.fromkeys(stores, 0.0)
    syncs = dict.fromkeys(stores, 0)
    done = dict.fromkeys(stores, 0)
    line = cycle(lines)
    for block in range(blocks):
        batch = [next(line) for _ in range(BLOCK)]
        for name, turn in stores.items():
            with FsyncCounter().installed() as counter:
                started = time.perf_counter()
                for i, (said, answered) in enumerate(batch):
                    turn(said, answered, BASE_MS + (block * BLOCK + i) * 1000)
                seconds[name] += time.perf_counter() - started
            syncs[name] += counter.calls
            done[name] += BLOCK
    for store in memhop_stores.values():
        store.db.close()
    return {
        name: (done[name] / seconds[name], syncs[name] / done[name] if "memhop" in name else -1)
        for name in stores
    }


Runs = dict[int, list[tuple[float, float]]]


@contextmanager
def slow_disk(latency_s: float) -> Iterator[None]:
    """Every ``os.fsync`` takes at least ``latency_s``: the real flush, then a wait for the rest.

    A disk-bound machine, modelled: the wait holds no CPU and releases the GIL, as a
    real slow flush does. This machine's fsync swings between about 0.2 and 4 ms.
    """
    real = os.fsync

    def fsync(fd: int) -> None:
        started = time.perf_counter()
        real(fd)
        rest = latency_s - (time.perf_counter() - started)
        if rest > 0:
            time.sleep(rest)

    os.fsync = fsync
    try:
        yield
    finally:
        os.fsync = real


def threaded(tmp: str, counts: Sequence[int], turns_per_round: int, rounds: int, name: str) -> Runs:
    """Per thread count: (durable turns/s, fsyncs/turn) per round; one file per count."""
    lines = load_lines()
    dbs: dict[int, tuple[memhop.DB, list[memhop.Session]]] = {}
    for n in counts:
        db = memhop.open(
            os.path.join(tmp, f"{name}-{n}.meh"),
            memhop.LocalModel(),
            memhop.Defaults(scene_dream_topic_threshold=-1),
            profile=SEED,
        )
        agents = [
            db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name=f"a{i}")) for i in range(n)
        ]
        dbs[n] = (db, agents)
    results: dict[int, list[tuple[float, float]]] = {n: [] for n in counts}
    done = dict.fromkeys(counts, 0)
    for _ in range(rounds):
        for n in counts:
            agents = dbs[n][1]
            per_thread = max(turns_per_round // n, 1)
            results[n].append(one_round(agents, lines, per_thread, done[n] // n))
            done[n] += per_thread * n
    for db, _ in dbs.values():
        db.close()
    return results


def one_round(
    agents: Sequence[memhop.Session], lines: Sequence[tuple[str, str]], per: int, first: int
) -> tuple[float, float]:
    """Run ``per`` turns on each agent, a thread each, started at once: (turns/s, fsyncs/turn)."""
    errors: list[BaseException] = []
    gate = threading.Barrier(len(agents) + 1)

    def work(me: memhop.Session) -> None:
        gate.wait()
        try:
            for n in range(first, first + per):
                said, answered = lines[n % len(lines)]
                run_turn(me, n, said, answered, BASE_MS + n * 1000)
        except BaseException as exc:  # raised after the round
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(me,)) for me in agents]
    for t in threads:
        t.start()
    with FsyncCounter().installed() as counter:
        started = time.perf_counter()
        gate.wait()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - started
    if errors:
        raise errors[0]
    total = per * len(agents)
    return total / elapsed, counter.calls / total


def _thread_rows(runs: Runs) -> tuple[float, list[list[str]]]:
    """(8 threads vs 1, table rows) of one thread-count series."""
    one = med([r for r, _ in runs[1]])
    rows = [
        [
            str(n),
            f"{med([r for r, _ in per]):,.0f}",
            f"{med([r for r, _ in per]) / one:.2f}",
            f"{med([s for _, s in per]):.2f}",
        ]
        for n, per in runs.items()
    ]
    return med([r for r, _ in runs[max(runs)]]) / one, rows


def report(
    head: list[tuple[str, str]],
    fsync_s: tuple[float, float],
    single: dict[str, tuple[float, float]],
    threads: Runs,
    slow: Runs,
    wall: float,
) -> str:
    sqlite_full = single["sqlite3 WAL FULL"][0]
    rows = [
        [
            name,
            f"{rate:,.0f}",
            f"{rate / sqlite_full:.2f}",
            "own syncs" if syncs < 0 else f"{syncs:.2f}",
        ]
        for name, (rate, syncs) in single.items()
    ]
    real_eight, real_rows = _thread_rows(threads)
    slow_eight, slow_rows = _thread_rows(slow)
    aims = [
        [
            "8 threads on 8 domains >= 3x one thread's durable turns/s, disk the limit",
            f"{slow_eight:.2f}x with fsync at least {SLOW_FSYNC_S * 1e3:.0f} ms;"
            f" {real_eight:.2f}x on the disk as it was ({fsync_s[0] * 1e3:.2f} ms fsync)",
            "PASS" if slow_eight >= 3 else "FAIL",
        ],
    ]
    parts = [
        "## Durability and threads (benches/durability.py)",
        "",
        table(
            ["Item", "Value"],
            [
                *head,
                ("Load average at end", load_average()),
                ("Benchmark wall time", f"{wall:.0f} s"),
            ],
        ),
        "",
        "### Aims",
        "",
        table(["Aim", "Measured", "Result"], aims),
        "",
        "### One thread, every fsync real",
        "",
        "A turn is `search` + two `append_archive` events + `update` (LocalModel), LoCoMo"
        " lines, a new scene every 25 turns; the sqlite3 stores do the same work with one"
        " transaction per call (`SqliteTurns` of benches/turn.py) on a WAL file. Stores take"
        " turns in blocks of 10 turns.",
        "",
        table(["store", "turns/s", "vs sqlite3 FULL", "fsyncs/turn"], rows),
        "",
        '### Threads on their own domains of one file (durability "call")',
        "",
        "Each thread runs turns on its own sub-agent; median over rounds of durable turns/s"
        " of all threads together. Thread counts take turns round by round. Sharing fsyncs"
        " pays when the disk is the limit: once the threads together are bound by the CPU"
        " (one core's worth under the GIL, about a millisecond a turn with its fsyncs), more"
        " threads add nothing. The fsync reference (a 300-byte append + fsync to a plain"
        f" file, median of 50) was {fsync_s[0] * 1e3:.2f} ms before the threads and"
        f" {fsync_s[1] * 1e3:.2f} ms after. The second table models a disk-bound machine:"
        f" every fsync takes at least {SLOW_FSYNC_S * 1e3:.0f} ms (the real flush, then a"
        " wait that holds no CPU), within the 0.2-4 ms this machine's fsync swings over.",
        "",
        "On the disk as it was:",
        "",
        table(["threads", "turns/s", "vs 1 thread", "fsyncs/turn"], real_rows),
        "",
        f"With every fsync at least {SLOW_FSYNC_S * 1e3:.0f} ms:",
        "",
        table(["threads", "turns/s", "vs 1 thread", "fsyncs/turn"], slow_rows),
    ]
    return "\n".join(parts) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(__doc__, "a smoke run: fewer turns", argv)
    started = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="memhop-durability-", dir=args.dir)
    head = machine(tmp, scope="memhop/", extra=[("sqlite3", sqlite3.sqlite_version)])
    try:
        blocks = 3 if args.quick else 30
        log(f"one thread: {blocks * BLOCK} turns per store")
        single = single_thread(tmp, blocks)
        counts = (1, 2, 4, 8)
        rounds, per_round = (1, 16) if args.quick else (5, 160)
        log(f"threads {counts}: {rounds} rounds of {per_round} turns")
        before = fsync_reference(tmp)
        threads = threaded(tmp, counts, per_round, rounds, "threads")
        fsync_s = (before, fsync_reference(tmp))
        with slow_disk(SLOW_FSYNC_S):
            slow = threaded(tmp, counts, per_round, rounds, "slow")
        section = report(head, fsync_s, single, threads, slow, time.perf_counter() - started)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return publish(args, "durability.py", section)


if __name__ == "__main__":
    sys.exit(main())
