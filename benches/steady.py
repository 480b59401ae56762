"""Steady state: what a turn and the background work cost as a memory ages.

Run ``python benches/steady.py`` (20,000 turns, about ten minutes with real fsync;
``--turns N``, ``--quick`` for a 2,000-turn smoke run, ``--threshold 0 8`` for a run
with the default Defaults and one with upstream's trigger at 8, ``--reopen-at N`` for a
reopen on the way, ``--fsync-off`` to measure CPU alone, ``--think-ms N`` for a host
whose model answers in N ms between a turn's recall and its update: the turns otherwise
run back to back, the most a background pass can overlap them).

The memory: LoCoMo's 272 sessions (Maharana et al., *Evaluating Very Long-Term
Conversational Memory of LLM Agents*, ACL 2024, CC BY-NC 4.0; ``examples/data/locomo10.json``)
repeated until the turns are done, one scene per session, one minute between turns, a session
every ``SESSION_GAP_MS`` (so 20,000 turns span about 60 days and 10^5 about 300), into one
primary domain with ``memhop.LocalModel()``. Each turn is what a host does: ``search`` (a new
scene on a session's first turn, with a ``session_start`` event), ``recall`` of the user's
words, ``update`` with the exchange. The library's clock (``memhop.open(clock=...)``) is the
turns' time, so hours and days pass as they would, and Dream's cadence, retention and decay
run on it.

Per window of 1,000 turns (``--window``): p50 / p99 / max wall time of search, recall, update
and the whole turn; Dream passes begun (whole ones apart) and the longest hold of the domain
lock by a background thread (Dream and the compactions it runs); compactions; bytes appended
to the file (its log: ``stats().file_bytes``, not the reserve an open file has past it) and
bytes written in all (``/proc/self/io`` ``wchar``: side files and other write calls, plus the
appends copied into a file's mapped room, which ``wchar`` does not see: a ``StoreFile.write_at``
whose bytes reached no write call) per turn, beside the bytes a turn's own
calls write (the same two counts of the host's thread: the live bytes a turn adds); fsyncs
per turn; RSS.

At the end: an idle whole pass an hour after the last (bytes it appends, edges it adds and
removes); then the file is closed and opened again (``--reopen-at`` also does it on the way):
the open, the first ``search`` and the first ``recall``, a warm ``recall``, and a turn made
while another thread's first ``recall`` runs. Last, a restart under load
(``--restart-turns``, 6,000 turns by default): opened once more, the next turns played back to
back with nothing between the memory's calls (a busy host): the turn by which the domain's
full build ended, the Dream passes that ran, the most passes' threads alive at once, and the
turn's p50 / p99 before and after. Lock holds are timed by wrapping the domain's
lock (``db._root``, a private hook the bench alone uses), Dream passes and compactions by
wrapping ``memhop.root.dreams.run_pass`` and ``memhop.root.compaction.compact``.

Writes its section of docs/performance.md unless ``--no-write``. Not a pytest module.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import re
import statistics
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import locomo  # benches/locomo.py: its reader of the data set
from _common import (
    DEFAULT_OUT,
    FsyncCounter,
    fsync_off,
    log,
    machine,
    publish,
    table,
    verdict,
)

import memhop
from memhop.dream import decay
from memhop.engine import storefile
from memhop.engine.storefile import StoreFile
from memhop.layers import scene
from memhop.root import compaction, dreams

T0_MS = 1_672_531_200_000  # 2023-01-01 00:00 UTC
TURN_GAP_MS = 60_000
SESSION_GAP_MS = 49 * 60_000  # 20,000 turns (about 1,770 sessions) span about 60 days
HOUR_MS = 3_600_000
WINDOW = 1_000


# ---- the turns ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Turn:
    at: int
    first: bool  # a session's first turn: a new scene and its event
    said: str
    answered: str
    event: str


def turns(count: int) -> Iterator[Turn]:
    """LoCoMo's sessions in order, over and over, each on its own clock slot."""
    convs = locomo.load()
    session = 0
    made = 0
    while True:
        for conv in convs:
            by_scene: dict[int, list[locomo.Turn]] = {}
            for t in conv.turns:
                by_scene.setdefault(t.scene, []).append(t)
            for scene_turns in by_scene.values():
                start = T0_MS + session * SESSION_GAP_MS
                session += 1
                for i, t in enumerate(scene_turns):
                    if made == count:
                        return
                    yield Turn(
                        at=start + i * TURN_GAP_MS,
                        first=i == 0,
                        said="\n".join(t.said),
                        answered="\n".join(t.answered),
                        event=t.event or f"session {session}",
                    )
                    made += 1


def open_turn(me: memhop.Session, turn: Turn) -> None:
    """A turn's ``search``: a new scene and its ``session_start`` event on a session's first."""
    me.search(new_scene=turn.first)
    if turn.first:
        me.append_archive(
            content=turn.event,
            kind=memhop.ArchiveKind.EVENT,
            event_type="session_start",
            created_at=turn.at,
        )


def query_of(turn: Turn) -> str:
    """The user's words, without the speaker labels."""
    text = turn.said or turn.answered
    return " ".join(line.split(": ", 1)[-1] for line in text.splitlines()) or "hello"


# ---- instruments ----------------------------------------------------------------------------


class Clock:
    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


LONG_HOLD_S = 0.020
# A background pass's own thread (a whole pass's fan-out of model calls is named apart)
PASS_THREAD = re.compile(r"memhop-dream-[0-9a-f]{16}-[0-9a-f]{16}")
REOPENS = 5  # rounds of each reopen measurement (medians reported; one round swings 2x)
BESIDE_SAID = "Quick check-in while you were away."
BESIDE_ANSWERED = "All quiet here."


class Collector:
    """CPython's collector pauses, summed (``gc.callbacks``): a pause stops every thread
    (the collector holds the interpreter), so a lock hold it falls in lasts that much longer."""

    def __init__(self) -> None:
        self.paused = 0.0  # seconds, every collection so far
        self.on_thread: dict[int, float] = {}  # the same, by the thread that ran it
        self.full = 0  # generation-2 collections
        self.longest_full = 0.0
        self._since = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._since = time.perf_counter()
            return
        took = time.perf_counter() - self._since
        self.paused += took
        me = threading.get_ident()
        self.on_thread[me] = self.on_thread.get(me, 0.0) + took
        if info["generation"] == 2:
            self.full += 1
            self.longest_full = max(self.longest_full, took)

    def installed(self) -> Callable[[], None]:
        """Count from now (one run at a time); returns the undo."""
        self.full, self.longest_full = 0, 0.0
        gc.callbacks.append(self)
        return lambda: gc.callbacks.remove(self)


COLLECTOR = Collector()


def _holder_stack() -> str:
    """Where a long hold ends: memhop's frames on the releasing thread, innermost last."""
    frames = [f for f in traceback.extract_stack()[:-2] if "/memhop/" in f.filename]
    return " < ".join(f"{Path(f.filename).stem}.{f.name}" for f in reversed(frames[-4:]))


@dataclass
class Holds:
    """Domain-lock holds by thread: the host's thread apart from the background ones."""

    mu: threading.Lock = field(default_factory=threading.Lock)
    background: list[tuple[float, str]] = field(default_factory=list)
    long: dict[str, tuple[int, float]] = field(default_factory=dict)  # where -> count, longest
    # the longest background hold less the collector's pauses in it and the holder's own
    # syncs (the disk's time, not memhop's: this machine's fsync swings 0.2-4 ms and more)
    less_gc: float = 0.0
    # the longest holder's own CPU in a hold (thread time, less the collections it ran)
    cpu: tuple[float, str] = (0.0, "")
    syncs: FsyncCounter | None = None
    # seconds the host's thread waited to take a domain lock another thread held as it
    # asked (the lock's release and the interpreter's return to it included)
    host_waited: float = 0.0

    def synced(self) -> float:
        """Seconds the calling thread has spent in its own syncs so far."""
        return 0.0 if self.syncs is None else self.syncs.waited(threading.get_ident())

    def add(
        self, seconds: float, thread: str, where: str = "", gc_s: float = 0.0, cpu: float = 0.0
    ) -> None:
        if thread != "MainThread":
            with self.mu:
                self.background.append((seconds, thread))
                self.less_gc = max(self.less_gc, seconds - gc_s)
                if cpu > self.cpu[0]:
                    self.cpu = (cpu, where or _holder_stack())
                if where:
                    count, longest = self.long.get(where, (0, 0.0))
                    self.long[where] = (count + 1, max(longest, seconds))

    def take(self) -> list[tuple[float, str]]:
        with self.mu:
            found, self.background = self.background, []
        return found

    def take_less_gc(self) -> float:
        with self.mu:
            found, self.less_gc = self.less_gc, 0.0
        return found

    def take_cpu(self) -> tuple[float, str]:
        with self.mu:
            found, self.cpu = self.cpu, (0.0, "")
        return found


def _own_cpu() -> float:
    """This thread's CPU time so far, less the collections it ran."""
    return time.thread_time() - COLLECTOR.on_thread.get(threading.get_ident(), 0.0)


class TimedLock:
    """A domain lock that reports how long each hold lasted (it wraps the real lock)."""

    def __init__(self, inner: Any, holds: Holds) -> None:
        self.inner = inner
        self.holds = holds
        self.since = 0.0
        self.owner = ""
        self.gc_since = 0.0
        self.sync_since = 0.0
        self.cpu_since = 0.0  # the holder's thread time, less the collections it ran

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        asked = time.perf_counter()
        # A wait that began with the lock free is a wait for the interpreter (another
        # thread took it meanwhile), not for the lock: it stays in the turn's rest.
        held = self.inner.locked()
        ok = bool(self.inner.acquire(blocking, timeout))
        if held and threading.current_thread() is threading.main_thread():
            self.holds.host_waited += time.perf_counter() - asked
        if ok:
            self.since, self.owner = time.perf_counter(), threading.current_thread().name
            self.gc_since = COLLECTOR.paused
            self.sync_since = self.holds.synced()
            self.cpu_since = _own_cpu()
        return ok

    def release(self) -> None:
        since, owner = self.since, self.owner
        self.since = 0.0
        held = time.perf_counter() - since if since else 0.0
        cpu = _own_cpu() - self.cpu_since
        # Read before the release: the next holder overwrites the marks when it acquires.
        waited = COLLECTOR.paused - self.gc_since + self.holds.synced() - self.sync_since
        long = held > LONG_HOLD_S or cpu > LONG_HOLD_S
        where = _holder_stack() if long and owner != "MainThread" else ""
        self.inner.release()
        if since:
            self.holds.add(held, owner, where, waited, cpu)

    def locked(self) -> bool:
        return bool(self.inner.locked())

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *_: object) -> None:
        self.release()


def time_locks(db: memhop.DB, holds: Holds) -> None:
    for ctx in list(db._root._contexts.values()):
        if not isinstance(ctx.lock, TimedLock):
            ctx.lock = TimedLock(ctx.lock, holds)


@dataclass
class Passes:
    mu: threading.Lock = field(default_factory=threading.Lock)
    rows: list[dict[str, Any]] = field(default_factory=list)

    def take(self) -> list[dict[str, Any]]:
        with self.mu:
            found, self.rows = self.rows, []
        return found


def wrap_passes(passes: Passes, compactions: Passes) -> Callable[[], None]:
    """Record every Dream pass and compaction; returns the undo."""
    real_pass, real_compact = dreams.run_pass, compaction.compact

    def run_pass(root: Any, agent_id: int, scene_id: int, cancel: Any, **kw: Any) -> Any:
        started = time.perf_counter()
        report, error = real_pass(root, agent_id, scene_id, cancel, **kw)
        row = {
            "seconds": time.perf_counter() - started,
            "whole": any(s.name == "l4_prune" for s in report.stages),
            "consolidated": report.consolidated_scenes,
            "l0": report.l0_updated,
            "edges_added": report.l1_edges_added,
            "edges_removed": report.l1_edges_removed,
            "error": repr(error) if error else "",
        }
        with passes.mu:
            passes.rows.append(row)
        return report, error

    def compact(root: Any, **kw: Any) -> bool:
        before = root.engine.stats()[0]
        started = time.perf_counter()
        ran = real_compact(root, **kw)
        if ran:
            row = {
                "seconds": time.perf_counter() - started,
                "before": before,
                "after": root.engine.stats()[0],
            }
            with compactions.mu:
                compactions.rows.append(row)
        return bool(ran)

    dreams.run_pass = run_pass
    compaction.compact = compact

    def undo() -> None:
        dreams.run_pass, compaction.compact = real_pass, real_compact

    return undo


class _Copied(threading.local):
    """Bytes this thread copied into a file's room (no write call: ``wchar`` misses them),
    and the append it is making."""

    mine = 0
    data: object = None
    through = False


ROOM_COPIES = _Copied()
ROOM_COPIES_ALL = [0]


def count_room_copies() -> Callable[[], None]:
    """Count every write a store file copies into its room rather than writing through:
    one whose bytes never reached a write call (the engine decides which; the count
    does not restate its rule). Return the undo."""
    real_write, real_some = StoreFile.write_at, storefile._write_some

    def write_some(handle: Any, data: Any, offset: int) -> int:
        if data is ROOM_COPIES.data:
            ROOM_COPIES.through = True
        return real_some(handle, data, offset)

    def counted(self: StoreFile, offset: int, data: bytes) -> None:
        ROOM_COPIES.data, ROOM_COPIES.through = data, False
        try:
            real_write(self, offset, data)
        finally:
            ROOM_COPIES.data = None
        if not ROOM_COPIES.through:
            ROOM_COPIES.mine += len(data)
            ROOM_COPIES_ALL[0] += len(data)

    StoreFile.write_at = counted  # type: ignore[method-assign]
    storefile._write_some = write_some

    def undo() -> None:
        StoreFile.write_at = real_write  # type: ignore[method-assign]
        storefile._write_some = real_some

    return undo


def _proc_wchar(path: str) -> int:
    for line in Path(path).read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0


def wchar() -> int:
    """Bytes the process wrote: its write calls and its copies into rooms."""
    return _proc_wchar("/proc/self/io") + ROOM_COPIES_ALL[0]


def thread_wchar() -> int:
    """The same, of the calling thread."""
    return _proc_wchar("/proc/thread-self/io") + ROOM_COPIES.mine


def rss_kib(field: str = "VmRSS") -> int:
    """The process's resident memory in KiB (``RssAnon``: its heap and stacks, without the
    pages of the mapped ``.meh`` file, which the kernel may drop and read again)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def crossed(edge: Any, nodes: dict[int, Any], then: int, now: int) -> bool:
    """Whether ``edge`` crossed a threshold decay acts on between ``then`` and ``now``: its
    weight fell below 0.05, or a member's importance below 0.15 (or the member is gone)."""
    floor = decay.EDGE_REMOVE_THRESHOLD
    if decay.edge_weight_at(edge, then) >= floor > decay.edge_weight_at(edge, now):
        return True
    fade = decay.NODE_PRUNE_EDGES_THRESHOLD
    for member in edge.node_ids:
        node = nodes.get(member)
        if node is None:
            return True
        if decay.node_importance_at(node, then) >= fade > decay.node_importance_at(node, now):
            return True
    return False


def settle(db: memhop.DB) -> None:
    """Wait until no background pass runs."""
    while db._root.dreams._running:
        time.sleep(0.005)


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(int(p * len(xs)), len(xs) - 1)]


# ---- the run --------------------------------------------------------------------------------


@dataclass
class Window:
    end: int
    search: list[float] = field(default_factory=list)
    recall: list[float] = field(default_factory=list)
    update: list[float] = field(default_factory=list)
    turn: list[float] = field(default_factory=list)
    bare: list[float] = field(default_factory=list)  # the turn without its recall
    # the turn's wall time in parts: its thread's CPU, its waits for a domain lock held by
    # another thread, its fsyncs, and the rest: waits for the interpreter (held by another
    # thread; a wait for a lock found free is one), for the engine's own lock, or a core
    own_cpu: list[float] = field(default_factory=list)
    locked: list[float] = field(default_factory=list)
    synced: list[float] = field(default_factory=list)
    rest: list[float] = field(default_factory=list)
    cpu: float = 0.0
    turn_bytes: int = 0


@dataclass
class Row:
    """One window's figures, in ms, bytes and KiB."""

    end: int
    search: tuple[float, float, float]
    recall: tuple[float, float, float]
    update: tuple[float, float, float]
    turn: tuple[float, float, float]
    bare: tuple[float, float, float]
    parts: tuple[float, float, float, float]  # p99 of own_cpu, locked, synced, rest
    cpu_ms: float
    passes: int
    whole: int
    longest_hold_ms: float
    longest_less_gc_ms: float
    holder: str
    longest_cpu_ms: float  # the holder's own CPU in a hold (the longest), less its collections
    cpu_holder: str
    compactions: int
    longest_compaction_ms: float
    appended: float
    written: float
    turn_bytes: float
    fsyncs: float
    rss_mib: float
    anon_mib: float
    file_mib: float


def _three(xs: list[float]) -> tuple[float, float, float]:
    return statistics.median(xs) * 1e3, pct(xs, 0.99) * 1e3, max(xs) * 1e3


@dataclass
class Reopen:
    at: int
    open_ms: float
    first_search_ms: float
    first_recall_ms: float
    warm_recall_ms: float
    beside_turn_ms: float
    beside_recall_ms: float
    longest_hold_ms: float


@dataclass
class Restart:
    """A restart under load: a new open, then turns back to back (a busy host's)."""

    turns: int
    build_turn: int | None  # the turn by which the domain's full build had ended (None: not)
    build_s: float  # seconds from the open to then
    passes: int  # Dream passes that ended meanwhile
    most_threads: int  # Dream passes' threads alive at once, at most
    during: tuple[float, float]  # turn p50 / p99 (ms) while the build ran
    after: tuple[float, float]  # the same once it had ended


@dataclass
class Outcome:
    label: str
    turns: int
    rows: list[Row]
    reopens: list[Reopen]
    idle: dict[str, float]
    passes: list[dict[str, Any]]
    compactions: list[dict[str, Any]]
    folded_scenes: int
    scenes: int
    l0_changes: int
    rss_start_kib: int
    anon_start_kib: int
    seconds: float
    full_collections: int
    longest_full_ms: float
    # one full collection at the end of the run with the file open (before the last reopen),
    # then once closed: what the memory's own objects add to each full collection
    collect_open_ms: float
    collect_closed_ms: float
    tracked_open: int
    tracked_closed: int
    restart: Restart | None = None


def full_collection() -> tuple[float, int]:
    """The quickest of three full collections in a row, in ms, and the objects the
    collector tracks after them (what each full collection walks)."""
    took = []
    for _ in range(3):
        started = time.perf_counter()
        gc.collect()
        took.append(time.perf_counter() - started)
    return min(took) * 1e3, len(gc.get_objects())


class Run:
    def __init__(
        self,
        path: str,
        defaults: memhop.Defaults,
        clock: Clock,
        passes: Passes,
        comps: Passes,
        think_s: float = 0.0,
    ) -> None:
        self.path = path
        self.think_s = think_s  # the host's own time inside a turn (its model's call)
        self.defaults = defaults
        self.clock = clock
        self.holds = Holds()
        self.passes = passes
        self.compactions = comps
        self.all_passes: list[dict[str, Any]] = []
        self.all_compactions: list[dict[str, Any]] = []
        self.db = self.open()

    def open(self) -> memhop.DB:
        return memhop.open(
            self.path,
            memhop.LocalModel(),
            self.defaults,
            memhop.ProfileInput(name="Melanie", role="friend"),
            clock=self.clock,
        )

    def turn(self, turn: Turn, window: Window) -> None:
        me = self.db.primary()
        self.clock.now = turn.at
        cpu, mine = time.thread_time(), thread_wchar()
        locked, synced = self.holds.host_waited, self.holds.synced()
        t0 = time.perf_counter()
        open_turn(me, turn)
        t1 = time.perf_counter()
        me.recall(query_of(turn), limit=5)
        t2 = time.perf_counter()
        if self.think_s:  # the agent's model answers (memhop idle): not in the turn's times
            time.sleep(self.think_s)
        t3 = time.perf_counter()
        me.update(input=turn.said, output=turn.answered, created_at=turn.at)
        t4 = time.perf_counter()
        spent = time.thread_time() - cpu
        window.cpu += spent
        window.turn_bytes += thread_wchar() - mine
        locked, synced = self.holds.host_waited - locked, self.holds.synced() - synced
        window.own_cpu.append(spent)
        window.locked.append(locked)
        window.synced.append(synced)
        window.rest.append(max(t2 - t0 + t4 - t3 - spent - locked - synced, 0.0))
        window.search.append(t1 - t0)
        window.recall.append(t2 - t1)
        window.update.append(t4 - t3)
        window.turn.append(t2 - t0 + t4 - t3)
        window.bare.append(t1 - t0 + t4 - t3)
        time_locks(self.db, self.holds)

    def close_window(self, window: Window, io: tuple[int, int, int], fsyncs: int) -> Row:
        """``io``: (file size, wchar, fsyncs) at the window's start."""
        passes = self.passes.take()
        comps = self.compactions.take()
        self.all_passes += passes
        self.all_compactions += comps
        holds = self.holds.take()
        longest = max(holds, default=(0.0, ""))
        cpu = self.holds.take_cpu()
        n = len(window.turn)
        shrunk = sum(c["before"] - c["after"] for c in comps)
        file_now = self.db.stats().file_bytes
        return Row(
            end=window.end,
            search=_three(window.search),
            recall=_three(window.recall),
            update=_three(window.update),
            turn=_three(window.turn),
            bare=_three(window.bare),
            parts=(
                pct(window.own_cpu, 0.99) * 1e3,
                pct(window.locked, 0.99) * 1e3,
                pct(window.synced, 0.99) * 1e3,
                pct(window.rest, 0.99) * 1e3,
            ),
            cpu_ms=window.cpu / n * 1e3,
            passes=len(passes),
            whole=sum(p["whole"] for p in passes),
            longest_hold_ms=longest[0] * 1e3,
            longest_less_gc_ms=self.holds.take_less_gc() * 1e3,
            holder=longest[1],
            longest_cpu_ms=cpu[0] * 1e3,
            cpu_holder=cpu[1],
            compactions=len(comps),
            longest_compaction_ms=max((c["seconds"] for c in comps), default=0.0) * 1e3,
            appended=(file_now - io[0] + shrunk) / n,
            written=(wchar() - io[1]) / n,
            turn_bytes=window.turn_bytes / n,
            fsyncs=(fsyncs - io[2]) / n,
            rss_mib=rss_kib() / 1024,
            anon_mib=rss_kib("RssAnon") / 1024,
            file_mib=file_now / 2**20,
        )

    def idle_pass(self) -> dict[str, float]:
        """A whole pass an hour after the last, with no turn between. The edges are read
        before and after it (memhop's own reader: the API lists no edges) to tell an edge
        the pass took out unchanged from one that crossed a decay threshold in the hour."""
        settle(self.db)
        me = self.db.primary()
        me.dream()  # whatever the turns left to do
        before, nodes, last = self.layer(), self.layer_nodes(), self.clock.now
        self.clock.now += HOUR_MS
        size, written = self.db.stats().file_bytes, wchar()
        started = time.perf_counter()
        report = me.dream()
        seconds = time.perf_counter() - started
        holds = self.holds.take()
        self.all_passes += self.passes.take()
        settle(self.db)
        after = self.layer()
        removed = [before[i] for i in before.keys() - after.keys()]
        unchanged = [e for e in removed if not crossed(e, nodes, last, self.clock.now)]
        return {
            "seconds": seconds,
            "appended": self.db.stats().file_bytes - size,
            "written": wchar() - written,
            "file": size,
            "edges_added": report.l1_edges_added,
            "edges_removed": report.l1_edges_removed,
            "edges_standing": len(before),
            "edges_gone": len(removed),
            "edges_gone_unchanged": len(unchanged),
            "nodes_removed": report.l1_nodes_removed,
            "longest_hold_ms": max((h for h, _ in holds), default=0.0) * 1e3,
            "longest_less_gc_ms": self.holds.take_less_gc() * 1e3,
            "longest_cpu_ms": self.holds.take_cpu()[0] * 1e3,
        }

    def layer(self) -> dict[int, Any]:
        """The primary domain's L1 edges as stored, by id (Dream settled: nothing writes)."""
        return {e.id_hash: e for e in scene.list_scene_edges(self.db._root.engine, 0)}

    def layer_nodes(self) -> dict[int, Any]:
        return {n.id_hash: n for n in scene.list_scene_nodes(self.db._root.engine, 0)}

    def under_load(self, stream: Iterator[Turn]) -> Restart:
        """Close, open again and play ``stream`` back to back: when the domain's build ends
        (the first whole Dream pass waits for it), the passes and threads meanwhile."""
        settle(self.db)
        self.db.close()
        gc.collect()
        self.passes.take()
        opened = time.perf_counter()
        self.db = self.open()
        contexts = self.db._root._contexts
        build_turn, build_s, most = None, 0.0, 0
        took: list[float] = []
        me = self.db.primary()
        for turn in stream:  # the memory's calls alone, one after the other: a busy host
            self.clock.now = turn.at
            started = time.perf_counter()
            open_turn(me, turn)
            me.recall(query_of(turn), limit=5)
            me.update(input=turn.said, output=turn.answered, created_at=turn.at)
            took.append(time.perf_counter() - started)
            most = max(most, sum(bool(PASS_THREAD.match(t.name)) for t in threading.enumerate()))
            if build_turn is None and all(
                c.warm is None or c.warm.result() is not None for c in list(contexts.values())
            ):
                build_turn, build_s = len(took), time.perf_counter() - opened
        played = len(took)
        cut = build_turn if build_turn is not None else played
        during, after = took[:cut], took[cut:]
        return Restart(
            turns=played,
            build_turn=build_turn,
            build_s=build_s,
            passes=len(self.passes.take()),
            most_threads=most,
            during=(pct(during, 0.5) * 1e3, pct(during, 0.99) * 1e3) if during else (0.0, 0.0),
            after=(pct(after, 0.5) * 1e3, pct(after, 0.99) * 1e3) if after else (0.0, 0.0),
        )

    def reopen(self, at: int, probe: Turn) -> Reopen:
        """Close and open again, ``REOPENS`` times: the first search and recall; a turn
        beside a first recall. Each figure is the median of the rounds (one first recall
        is one sample: a switch interval lost or not moves it by 5 ms)."""
        rounds = [self._reopen_once(probe) for _ in range(REOPENS)]
        for r in rounds:
            log(
                f"  reopen round: first recall {r.first_recall_ms:.1f} ms (warm"
                f" {r.warm_recall_ms:.2f}), turn beside {r.beside_turn_ms:.1f} ms"
            )

        def median(field: str) -> float:
            return float(statistics.median(getattr(r, field) for r in rounds))

        return Reopen(
            at=at,
            open_ms=median("open_ms"),
            first_search_ms=median("first_search_ms"),
            first_recall_ms=median("first_recall_ms"),
            warm_recall_ms=median("warm_recall_ms"),
            beside_turn_ms=median("beside_turn_ms"),
            beside_recall_ms=median("beside_recall_ms"),
            longest_hold_ms=max(r.longest_hold_ms for r in rounds),
        )

    def _reopen_once(self, probe: Turn) -> Reopen:
        settle(self.db)
        self.db.close()
        # A restart is a new process: what the run (and the census of its scenes) left
        # young is collected here, not by the first call of the new open, which it is not
        # part of (a young collection of it took 6-10 ms of a first recall at 10^5).
        gc.collect()
        query = query_of(probe)
        self.clock.now += TURN_GAP_MS  # the restart takes a minute: time goes on from here
        stamp = self.clock.now

        def opened() -> tuple[memhop.DB, float]:
            started = time.perf_counter()
            db = self.open()
            return db, time.perf_counter() - started

        # A: the first search, the first recall, warm recalls.
        db, open_s = opened()
        me = db.primary()
        t0 = time.perf_counter()
        me.search()
        t1 = time.perf_counter()
        me.recall(query, limit=5)
        t2 = time.perf_counter()
        warm = []
        for _ in range(9):
            w0 = time.perf_counter()
            me.recall(query, limit=5)
            warm.append(time.perf_counter() - w0)
        settle(db)
        db.close()
        # B: a first recall on another thread while this one makes a turn.
        db, _ = opened()
        self.db = db
        me = db.primary()
        me.search()
        time_locks(db, self.holds)
        self.holds.take()
        took: list[float] = []

        def first_recall() -> None:
            r0 = time.perf_counter()
            me.recall(query, limit=5)
            took.append(time.perf_counter() - r0)

        beside = threading.Thread(target=first_recall, name="first-recall")
        beside.start()
        waits = []
        while beside.is_alive() or not waits:  # turns until the first recall is done
            b0 = time.perf_counter()
            me.search()
            # Words the query does not hold: the next round's first recall ranks the
            # same documents as this one's, not these turns.
            me.update(input=BESIDE_SAID, output=BESIDE_ANSWERED, created_at=stamp)
            waits.append(time.perf_counter() - b0)
        turn_s = max(waits)
        beside.join()
        holds = self.holds.take()
        return Reopen(
            at=0,
            open_ms=open_s * 1e3,
            first_search_ms=(t1 - t0) * 1e3,
            first_recall_ms=(t2 - t1) * 1e3,
            warm_recall_ms=statistics.median(warm) * 1e3,
            beside_turn_ms=turn_s * 1e3,
            beside_recall_ms=took[0] * 1e3,
            longest_hold_ms=max((h for h, _ in holds), default=0.0) * 1e3,
        )


def run(
    count: int, defaults: memhop.Defaults, label: str, workdir: str, args: argparse.Namespace
) -> Outcome:
    path = os.path.join(workdir, f"steady-{label}.meh")
    log(f"{label}: {count:,} turns into {path}")
    # The turns are made as they are played: a list of them would put one tracked object a
    # turn of the bench's own in every full collection that memhop's holds are timed with.
    stream = turns(count)
    probe = next(itertools.islice(turns(count + 1), count, None))  # the turn the reopens make
    clock = Clock(T0_MS)
    counter = FsyncCounter()
    started = time.perf_counter()
    with ExitStack() as stack:
        stack.enter_context(counter.installed())
        if args.fsync_off:
            stack.enter_context(fsync_off())
        passes, comps = Passes(), Passes()
        stack.callback(wrap_passes(passes, comps))
        stack.callback(count_room_copies())
        stack.callback(COLLECTOR.installed())
        if args.freeze:  # a host that keeps what it imported out of every collection
            gc.collect()
            gc.freeze()
            stack.callback(gc.unfreeze)
        rss0, anon0 = rss_kib(), rss_kib("RssAnon")
        bench = Run(path, defaults, clock, passes, comps, args.think_ms / 1e3)
        bench.holds.syncs = counter
        rows: list[Row] = []
        reopens: list[Reopen] = []
        every = args.window
        window = Window(end=min(every, count))
        io = (bench.db.stats().file_bytes, wchar(), counter.calls)
        for i, turn in enumerate(stream, 1):
            bench.turn(turn, window)
            if i % every == 0 or i == count:
                row = bench.close_window(window, io, counter.calls)
                rows.append(row)
                log(
                    f"{label} {i:>7,}: turn p50/p99/max {row.turn[0]:.1f}/{row.turn[1]:.1f}/"
                    f"{row.turn[2]:.1f} ms, recall p99 {row.recall[1]:.1f} ms, passes"
                    f" {row.passes} ({row.whole} whole), hold {row.longest_hold_ms:.0f} ms,"
                    f" compactions {row.compactions}, appended {row.appended / 1024:.1f} KiB"
                    f" written {row.written / 1024:.1f} KiB turn {row.turn_bytes / 1024:.2f}"
                    f" KiB, RSS {row.rss_mib:.0f} MiB (anon {row.anon_mib:.0f})"
                )
                if i in args.reopen_at and i != count:
                    reopens.append(bench.reopen(i, probe))
                    log(f"{label} reopen at {i:,}: {reopens[-1]}")
                window = Window(end=min(i + every, count))
                io = (bench.db.stats().file_bytes, wchar(), counter.calls)
        idle = bench.idle_pass()
        log(f"{label} idle whole pass: {idle}")
        for where, (n, longest) in sorted(bench.holds.long.items(), key=lambda kv: -kv[1][1]):
            log(f"{label} holds over 20 ms: {n} x, up to {longest * 1e3:,.0f} ms in {where}")
        stats = bench.db.primary().list_scenes()
        folded = 0
        for scene in stats:
            ctx = bench.db.primary().scene_context(scene.scene_id)
            if any(t.origin == "dream" for t in ctx.topics):
                folded += 1
        l0_changes = sum(p["l0"] for p in bench.all_passes)
        collect_open, tracked_open = full_collection()  # the run's process, every structure built
        reopens.append(bench.reopen(count, probe))
        log(f"{label} reopen at {count:,}: {reopens[-1]}")
        restart = None
        if args.restart_turns:
            after = itertools.islice(turns(count + 1 + args.restart_turns), count + 1, None)
            restart = bench.under_load(after)
            log(f"{label} restart under load at {count:,}: {restart}")
        bench.db.close()
        all_passes, all_compactions = bench.all_passes, bench.all_compactions
        del bench  # the closed file's objects go with it
        collect_closed, tracked_closed = full_collection()
        log(
            f"{label} a full collection: {collect_open:.1f} ms over {tracked_open:,} objects"
            f" open, {collect_closed:.1f} ms over {tracked_closed:,} closed"
        )
    return Outcome(
        label=label,
        turns=count,
        rows=rows,
        reopens=reopens,
        idle=idle,
        passes=all_passes,
        compactions=all_compactions,
        folded_scenes=folded,
        scenes=len(stats),
        l0_changes=l0_changes,
        rss_start_kib=rss0,
        anon_start_kib=anon0,
        seconds=time.perf_counter() - started,
        full_collections=COLLECTOR.full,
        longest_full_ms=COLLECTOR.longest_full * 1e3,
        collect_open_ms=collect_open,
        collect_closed_ms=collect_closed,
        tracked_open=tracked_open,
        tracked_closed=tracked_closed,
        restart=restart,
    )


# ---- the report -----------------------------------------------------------------------------


def _ms(x: float) -> str:
    return f"{x:,.1f}"


def rows_table(out: Outcome) -> str:
    header = [
        "turns",
        "search p50/p99/max",
        "recall p50/p99/max",
        "update p50/p99/max",
        "turn p50/p99/max",
        "without its recall",
        "turn p99 in parts: CPU / waits for a held lock / fsyncs / the rest",
        "turn CPU",
        "passes (whole)",
        "longest background hold (less the collector's pauses and its own fsyncs)"
        " [the most CPU a holder spent in one]",
        "compactions (longest, ms)",
        "appended / turn",
        "written / turn",
        "turn's own",
        "fsyncs / turn",
        "RSS (anon)",
        "file",
    ]
    body = []
    for r in out.rows:
        three = [f"{_ms(a)} / {_ms(b)} / {_ms(c)}" for a, b, c in (r.search, r.recall, r.update)]
        body.append(
            [
                f"{r.end:,}",
                *three,
                f"{_ms(r.turn[0])} / {_ms(r.turn[1])} / {_ms(r.turn[2])}",
                f"{_ms(r.bare[0])} / {_ms(r.bare[1])} / {_ms(r.bare[2])}",
                " / ".join(map(_ms, r.parts)),
                f"{r.cpu_ms:.2f}",
                f"{r.passes} ({r.whole})",
                f"{r.longest_hold_ms:,.1f}"
                + (f" ({r.holder.split('-')[1]})" if r.holder else "")
                + f" ({r.longest_less_gc_ms:,.1f}) [{r.longest_cpu_ms:,.1f}]",
                f"{r.compactions} ({r.longest_compaction_ms:,.0f})",
                f"{r.appended / 1024:,.1f} KiB",
                f"{r.written / 1024:,.1f} KiB",
                f"{r.turn_bytes / 1024:,.2f} KiB",
                f"{r.fsyncs:.2f}",
                f"{r.rss_mib:,.0f} ({r.anon_mib:,.0f}) MiB",
                f"{r.file_mib:,.1f} MiB",
            ]
        )
    return table(header, body)


def reopen_table(out: Outcome) -> str:
    header = [
        "at turns",
        "open",
        "first search",
        "first recall",
        "warm recall",
        "first / warm",
        "longest turn beside a first recall",
        "that recall",
        "longest hold meanwhile",
    ]
    body = [
        [
            f"{r.at:,}",
            f"{r.open_ms:,.1f}",
            f"{r.first_search_ms:,.1f}",
            f"{r.first_recall_ms:,.1f}",
            f"{r.warm_recall_ms:,.2f}",
            f"{r.first_recall_ms / max(r.warm_recall_ms, 1e-9):,.1f}x",
            f"{r.beside_turn_ms:,.1f}",
            f"{r.beside_recall_ms:,.1f}",
            f"{r.longest_hold_ms:,.1f}",
        ]
        for r in out.reopens
    ]
    return table(header, body)


def aims(out: Outcome) -> list[tuple[str, str, bool]]:
    rows = out.rows
    first, last = rows[0], rows[-1]
    holds = [r.longest_hold_ms for r in rows]
    worst_hold = max([*holds, out.idle["longest_hold_ms"]], default=0.0)
    less_gc = [r.longest_less_gc_ms for r in rows]
    worst_less_gc = max([*less_gc, out.idle["longest_less_gc_ms"]], default=0.0)
    cpu_row = max(rows, key=lambda r: r.longest_cpu_ms)
    worst_cpu = max(cpu_row.longest_cpu_ms, out.idle["longest_cpu_ms"])
    idle_share = out.idle["appended"] / max(out.idle["file"], 1)
    written = sum(r.written * (r.end - (rows[i - 1].end if i else 0)) for i, r in enumerate(rows))
    own = sum(r.turn_bytes * (r.end - (rows[i - 1].end if i else 0)) for i, r in enumerate(rows))
    amplification = written / max(own, 1)
    rss_per_turn = (last.rss_mib * 1024 - out.rss_start_kib) / out.turns
    anon_per_turn = (last.anon_mib * 1024 - out.anon_start_kib) / out.turns
    found = [
        (
            "turn p99 in the last 1,000 turns <= 2x the first 1,000",
            f"{last.turn[1]:.1f} vs {first.turn[1]:.1f} ms ({last.turn[1] / first.turn[1]:.2f}x)",
            last.turn[1] <= 2 * first.turn[1],
        ),
        (
            "the same without the recall a turn makes (search, event, update)",
            f"{last.bare[1]:.1f} vs {first.bare[1]:.1f} ms ({last.bare[1] / first.bare[1]:.2f}x)",
            last.bare[1] <= 2 * first.bare[1],
        ),
        (
            "every background lock hold (Dream, compaction) <= 20 ms",
            f"longest {worst_hold:,.1f} ms",
            worst_hold <= 20,
        ),
        (
            "the same less CPython's collector pauses and the holder's own fsyncs inside"
            f" the hold ({out.full_collections} full collections, the longest"
            f" {out.longest_full_ms:,.0f} ms; one at the end {out.collect_open_ms:,.0f} ms over"
            f" {out.tracked_open:,} objects with the file open, {out.collect_closed_ms:,.0f} ms"
            f" over {out.tracked_closed:,} once closed)",
            f"longest {worst_less_gc:,.1f} ms",
            worst_less_gc <= 20,
        ),
        (
            "the holder's own CPU in a hold (its thread time, less the collections it ran):"
            " what memhop's work under the lock costs, whatever else runs",
            f"longest {worst_cpu:,.1f} ms (in {cpu_row.cpu_holder or 'the idle pass'})",
            worst_cpu <= 20,
        ),
        (
            "an idle whole pass appends <= 1% of the file, adds no edge and removes none"
            " that did not cross a decay threshold in the hour",
            f"{out.idle['appended']:,} B ({idle_share:.2%}), edges +{out.idle['edges_added']}"
            f" -{out.idle['edges_gone']} of {out.idle['edges_standing']:,} standing"
            f" ({out.idle['edges_gone_unchanged']} of them unchanged)",
            idle_share <= 0.01
            and not out.idle["edges_added"]
            and not out.idle["edges_gone_unchanged"],
        ),
        (
            "bytes written per turn <= 4x the bytes a turn's own calls write",
            f"{written / out.turns / 1024:,.1f} KiB vs {own / out.turns / 1024:,.2f} KiB"
            f" ({amplification:.1f}x)",
            amplification <= 4,
        ),
        (
            "RSS <= 2 KiB per turn (anonymous memory; all resident pages in brackets)",
            f"{anon_per_turn:.2f} KiB per turn ({rss_per_turn:.2f})",
            anon_per_turn <= 2,
        ),
        (
            "old scenes folded and the profile distilled with these Defaults",
            f"{out.folded_scenes} of {out.scenes} scenes folded; L0 changed {out.l0_changes}"
            f" times in {len(out.passes)} passes",
            out.folded_scenes > 0 and out.l0_changes > 0,
        ),
    ]
    last_reopen = out.reopens[-1]
    ratio = last_reopen.first_recall_ms / max(last_reopen.warm_recall_ms, 1e-9)
    found.append(
        (
            "first recall after reopen <= 25x a warm recall",
            f"{last_reopen.first_recall_ms:,.1f} vs {last_reopen.warm_recall_ms:,.2f} ms"
            f" ({ratio:,.1f}x)",
            ratio <= 25,
        )
    )
    found.append(
        (
            "a turn beside a first recall waits <= 20 ms",
            f"{last_reopen.beside_turn_ms:,.1f} ms",
            last_reopen.beside_turn_ms <= 20,
        )
    )
    if out.restart is not None:
        r = out.restart
        ended = (
            f"the build ended by turn {r.build_turn:,} ({r.build_s:,.1f} s)"
            if r.build_turn is not None
            else f"the build had not ended after {r.turns:,} turns"
        )
        found.append(
            (
                f"after a restart, {r.turns:,} turns back to back: the domain's build ends and"
                " Dream's passes run again, at most two at a time (memhop's own aim)",
                f"{ended}; turn p50/p99 {r.during[0]:.1f}/{r.during[1]:.1f} ms until then,"
                f" {r.after[0]:.1f}/{r.after[1]:.1f} after; {r.passes:,} passes;"
                f" {r.most_threads} pass threads at most",
                r.build_turn is not None and r.passes > 0 and r.most_threads <= 2,
            )
        )
    return found


def report(outcomes: list[Outcome], args: argparse.Namespace, workdir: str) -> str:
    parts = [
        "## Steady state as the memory ages (`benches/steady.py`)",
        "",
        "Generated by `python benches/steady.py`. " + (__doc__ or "").split("\n\n")[1],
        "",
        table(["Item", "Value"], machine(workdir, scope="memhop")),
        "",
        f"Fsync: {'a no-op (CPU alone)' if args.fsync_off else 'real'}."
        + (
            " `gc.freeze()` before each run (a host's choice, docs/integration.md): full"
            " collections walk what the run made, not the modules imported before it."
            if args.freeze
            else ""
        )
        + (
            f" The host thinks {args.think_ms:g} ms in each turn, between its recall and its"
            " update (its model's answer: memhop idle, left out of the turn's times)."
            if args.think_ms
            else ""
        ),
    ]
    for n, out in enumerate(outcomes):
        parts += [
            "",
            f"### {out.label}: {out.turns:,} turns ({out.seconds:,.0f} s)",
            "",
            "Times in ms (wall); bytes per turn.",
            "",
            rows_table(out),
            "",
            f"Reopen (ms; each the median of {REOPENS} rounds of close and open):",
            "",
            reopen_table(out),
            "",
            f"Idle whole pass an hour after the last: {out.idle['seconds'] * 1e3:,.0f} ms,"
            f" {out.idle['appended']:,} bytes appended to a {out.idle['file']:,}-byte file,"
            f" edges +{out.idle['edges_added']} -{out.idle['edges_removed']}, nodes"
            f" -{out.idle['nodes_removed']}.",
            "",
            table(
                ["aim", "measured", "verdict"],
                [[a, m, verdict(ok)] for a, m, ok in aims(out)],
            ),
        ]
        if n:
            parts += [
                "",
                "This run followed another in the same process: its memory grew into the"
                " heap the run before freed, so its KiB a turn read low (the first run's are"
                " the figure).",
            ]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="2,000 turns, windows of 200")
    parser.add_argument("--window", type=int, default=WINDOW)
    parser.add_argument(
        "--threshold",
        type=int,
        nargs="+",
        default=[0],
        help="scene_dream_topic_threshold of each run (0: the default Defaults)",
    )
    parser.add_argument("--reopen-at", type=int, nargs="*", default=[])
    parser.add_argument(
        "--restart-turns",
        type=int,
        default=6000,
        help="turns played back to back after the last reopen (0: none)",
    )
    parser.add_argument("--fsync-off", action="store_true", help="os.fsync a no-op: CPU alone")
    parser.add_argument(
        "--freeze",
        action="store_true",
        help="gc.freeze() before each run, as a host may (docs/integration.md): full"
        " collections then walk what the run made, not the modules imported before it",
    )
    parser.add_argument(
        "--think-ms",
        type=float,
        default=0.0,
        help="the host's own time in each turn, between recall and update (a model's call)",
    )
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--dir", default=None)
    args = parser.parse_args(argv)
    if args.think_ms < 0:
        parser.error(f"--think-ms must be 0 or more, not {args.think_ms:g}")
    if args.restart_turns < 0:
        parser.error(f"--restart-turns must be 0 or more, not {args.restart_turns}")
    if args.quick:
        args.turns, args.window = 2_000, 200
        args.restart_turns = min(args.restart_turns, 300)
    with tempfile.TemporaryDirectory(dir=args.dir) as workdir:
        outcomes = []
        for threshold in args.threshold:
            defaults = memhop.Defaults(scene_dream_topic_threshold=threshold)
            label = f"threshold {threshold}" if threshold else "default Defaults"
            outcomes.append(run(args.turns, defaults, label, workdir, args))
        text = report(outcomes, args, workdir)
    if args.quick:
        args.no_write = True
    return publish(args, "steady.py", text)


if __name__ == "__main__":
    sys.exit(main())
