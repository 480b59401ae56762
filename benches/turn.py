"""Turn-loop benchmark: one agent turn against the machine's fsync, and the scene read's cost.

Run ``python benches/turn.py`` (about a minute) or ``--quick`` for a smoke run. It measures,
in this one process, with the in-process ``memhop.LocalModel()`` (so no network is timed):

1. the fsync latency of the file system the ``.meh`` files live on: one 300-byte append to a
   plain file + ``os.fsync``, interleaved probe by probe with the turns below so that load from
   elsewhere hits both alike;
2. one turn: ``search()`` + two ``append_archive`` events + ``update(input, output)``, on
   LoCoMo lines (``examples/data``), a new scene every 25 turns, automatic Dream off
   (``scene_dream_topic_threshold=-1``) so no background pass runs during the timing. Every
   ``os.fsync`` made during the turns is counted (``os.fsync`` is wrapped), per call; in a
   separate run with fsync a no-op, the same turns' CPU beside the sqlite3 table and beside
   ``FormatFloor`` (the records alone, in format 0x0012, with memhop's own encoders);
3. the function calls a turn makes (``sys.setprofile``: Python functions and C functions
   called from Python code), and, where valgrind is installed, the instructions it
   executes, memhop's and the sqlite3 table's (and the ``LocalModel`` call both make):
   ``_turn_count.py`` under cachegrind, the turns less none; counts the machine's hour
   does not move;
4. ``scene_context(scene_id)`` of a 300-turn scene in a file that holds only that scene, in a
   file that also holds ~20,000 records of a sub-agent domain, and in one that also holds
   ~20,000 records in other scenes of the scene's own domain: the first read after opening the
   closed file, and the warm median after it.

Medians are printed and a "Turn loop" section is written into docs/performance.md (``--out``)
between markers, replacing an earlier run's section and keeping everything else in the file.
This file is not a pytest module: nothing here is named ``test_*``.
"""

from __future__ import annotations

import gc
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from _common import (
    REPO,
    FsyncCounter,
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
    verdict,
)

import memhop
from memhop import ids
from memhop.engine.frame import encode_frame
from memhop.records import ArchiveKind, ArchiveRole, ArchiveSlot, SceneSlot, TopicSlot

DATA = REPO / "examples" / "data" / "locomo-conv-26.json"
NO_AUTO_DREAM = memhop.Defaults(scene_dream_topic_threshold=-1)
PROBE_BYTES = 300
TURNS_PER_SCENE = 25
BASE_MS = 1_700_000_000_000  # Nov 2023, in the milliseconds band
OTHER_EVENTS_PER_TURN = 3


@dataclass(frozen=True)
class Sizes:
    turns: int
    warmup: int
    scene_turns: int
    other_records: int
    reads: int
    long_turn: int  # events appended to one open turn


FULL = Sizes(turns=300, warmup=20, scene_turns=300, other_records=20_000, reads=30, long_turn=4_000)
QUICK = Sizes(turns=40, warmup=5, scene_turns=300, other_records=2_000, reads=10, long_turn=500)
LONG_TURN_SAMPLE = 100  # appends timed at each end of the long turn


# ---- helpers -----------------------------------------------------------------------------


def load_lines() -> list[tuple[str, str]]:
    """LoCoMo (said, answered) pairs to speak in the turns: realistic text, lengths and words."""
    item = json.loads(DATA.read_text(encoding="utf-8"))["items"][0]
    texts = [t["text"] for s in item["sessions"] for t in s["turns"]]
    return [(texts[i], texts[i + 1]) for i in range(0, len(texts) - 1, 2)]


class FsyncProbe:
    """A plain file on the same file system: append 300 bytes and fsync, timed."""

    def __init__(self, directory: str) -> None:
        self.path = os.path.join(directory, "fsync-probe.bin")
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.payload = b"x" * (PROBE_BYTES - 1) + b"\n"
        self.seconds: list[float] = []

    def once(self) -> None:
        t0 = time.perf_counter_ns()
        os.write(self.fd, self.payload)
        os.fsync(self.fd)
        self.seconds.append((time.perf_counter_ns() - t0) / 1e9)

    def close(self) -> None:
        os.close(self.fd)


# ---- the same turn on a sqlite3 memory table ------------------------------------------------


class SqliteTurns:
    """The turn's work on a sqlite3 in-memory database: the baseline for CPU per turn.

    ``search``: read the profile and the scene, count the turn, read the scene's surface;
    each ``append_archive``: take the next seq, insert the event; ``update``: insert the two
    lines, read the turn's lines back, ask the same ``LocalModel`` for keywords, insert the
    topic row. One transaction per call, as memhop's one write per call. No fsync: the
    database is in memory, so this is the CPU floor of a table store doing the same work.
    """

    def __init__(
        self, model: memhop.LocalModel, path: str = ":memory:", synchronous: str = ""
    ) -> None:
        """``path`` and ``synchronous`` (WAL with FULL or NORMAL) make it a durable baseline."""
        self.model = model
        self.db = sqlite3.connect(path)
        if synchronous:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(f"PRAGMA synchronous={synchronous}")
        self.db.executescript(
            "CREATE TABLE profile (id INTEGER PRIMARY KEY, body TEXT);"
            "CREATE TABLE scenes (id INTEGER PRIMARY KEY, name TEXT, turn_seq INT, used INT);"
            "CREATE TABLE topics (id INTEGER PRIMARY KEY, scene INT, depth INT, keywords TEXT,"
            " uts INT, ats INT);"
            "CREATE INDEX topics_scene ON topics (scene, depth, uts, id);"
            "CREATE TABLE contents (topic INT, seq INT, kind INT, role INT, event_type TEXT,"
            " created INT, body TEXT, PRIMARY KEY (topic, seq));"
        )
        self.db.execute("INSERT INTO profile VALUES (1, ?)", (json.dumps({"name": "bench"}),))
        self.db.commit()
        self.scene = 0
        self.topic = 0

    def turn(self, said: str, answered: str, at: int, *, new_scene: bool) -> None:
        db = self.db
        # search
        json.loads(db.execute("SELECT body FROM profile WHERE id = 1").fetchone()[0])
        if new_scene or not self.scene:
            self.scene += 1
            db.execute("INSERT INTO scenes VALUES (?, ?, 0, ?)", (self.scene, "s", at))
        db.execute("SELECT * FROM scenes WHERE id = ?", (self.scene,)).fetchone()
        db.execute(
            "UPDATE scenes SET turn_seq = turn_seq + 1, used = ? WHERE id = ?", (at, self.scene)
        )
        db.execute(
            "SELECT * FROM topics WHERE scene = ? AND depth = 1 ORDER BY uts, id", (self.scene,)
        ).fetchall()
        db.commit()
        self.topic += 1
        # two append_archive events
        for event_type, body in (("tool_call", said[:60]), ("tool_result", answered[:100])):
            (top,) = db.execute(
                "SELECT COALESCE(MAX(seq), 2) FROM contents WHERE topic = ?", (self.topic,)
            ).fetchone()
            db.execute(
                "INSERT INTO contents VALUES (?, ?, 1, 0, ?, ?, ?)",
                (self.topic, max(top, 2) + 1, event_type, at, body),
            )
            db.commit()
        # update
        db.executemany(
            "INSERT INTO contents VALUES (?, ?, 0, ?, '', ?, ?)",
            [(self.topic, 1, 1, at, said), (self.topic, 2, 2, at, answered)],
        )
        lines = db.execute(
            "SELECT role, body FROM contents WHERE topic = ? AND kind = 0 ORDER BY seq",
            (self.topic,),
        ).fetchall()
        text = "\n".join(f"{'User' if r == 1 else 'Assistant'}: {b}" for r, b in lines)
        keywords = self.model.extract_keywords(text)
        db.execute(
            "INSERT INTO topics VALUES (?, ?, 1, ?, ?, ?)",
            (self.topic, self.scene, json.dumps(keywords), at, at),
        )
        db.commit()


class FormatFloor:
    """The turn's records in format 0x0012 and nothing else: what the format itself costs.

    Each record is memhop's own record class, its ``to_json`` and the engine's frame
    encoder, appended to a plain file with ``os.pwrite`` and indexed in dicts: no
    validation, domain or engine lock, group commit, mirror, cache or result object.
    It keeps no index on disk and survives no crash; it is a yardstick, not a store.
    """

    def __init__(self, model: memhop.LocalModel, path: str) -> None:
        self.model = model
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self.end = 8192  # the record area starts after the two header slots
        self.offsets: dict[int, int] = {}
        self.surface: dict[int, list[TopicSlot]] = {}
        self.listed: tuple[TopicSlot, ...] = ()
        self.scene = SceneSlot(scene_id=0)

    def _put(self, id_hash: int, record: ArchiveSlot | SceneSlot | TopicSlot) -> None:
        frame = encode_frame(1, record.RECORD_TYPE, 0, id_hash, record.to_json())
        os.pwrite(self.fd, frame, self.end)
        self.offsets[id_hash] = self.end
        self.end += len(frame)

    def turn(self, said: str, answered: str, at: int, *, new_scene: bool) -> None:
        # search: count the turn on its scene, list the surface
        if new_scene or not self.scene.scene_id:
            self.scene = SceneSlot(scene_id=ids.hash_id(f"scene:{at}"), scene_name="s")
        scene_id, seq = self.scene.scene_id, self.scene.turn_seq + 1
        self.scene = SceneSlot(scene_id=scene_id, scene_name="s", turn_seq=seq, last_used_at=at)
        self._put(scene_id, self.scene)
        self.listed = tuple(self.surface.get(scene_id, ()))  # what search hands back
        topic_id = ids.turn_topic_id(scene_id, seq)
        # two events, then the turn's two lines
        records = [
            ArchiveSlot(
                id_hash=ids.content_id(topic_id, 3 + n),
                kind=ArchiveKind.EVENT,
                seq=3 + n,
                topic_id=topic_id,
                event_type=event_type,
                created_at=at,
                content=body,
            )
            for n, (event_type, body) in enumerate(
                (("tool_call", said[:60]), ("tool_result", answered[:100]))
            )
        ]
        records += [
            ArchiveSlot(
                id_hash=ids.content_id(topic_id, n),
                seq=n,
                role=role,
                topic_id=topic_id,
                created_at=at,
                content=text,
            )
            for n, role, text in ((1, ArchiveRole.USER, said), (2, ArchiveRole.AGENT, answered))
        ]
        for record in records:
            self._put(record.id_hash, record)
        # update: keywords of the lines, the topic row
        keywords = self.model.extract_keywords(f"User: {said}\nAssistant: {answered}")
        row = TopicSlot(
            id=topic_id,
            scene_id=scene_id,
            depth=1,
            fused_keywords=tuple(keywords),
            user_timestamp=at,
            agent_timestamp=at,
        )
        self._put(topic_id, row)
        self.surface.setdefault(scene_id, []).append(row)

    def close(self) -> None:
        os.close(self.fd)


# ---- 1 + 2: the turn against the fsync ------------------------------------------------------


@dataclass
class TurnResult:
    turn: list[float] = field(default_factory=list)
    search: list[float] = field(default_factory=list)
    append: list[float] = field(default_factory=list)
    update: list[float] = field(default_factory=list)
    fsyncs_turn: list[int] = field(default_factory=list)
    fsyncs_search: list[int] = field(default_factory=list)
    fsyncs_append: list[int] = field(default_factory=list)
    fsyncs_update: list[int] = field(default_factory=list)
    fsync_probe: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # thread CPU of the whole turn
    sqlite_cpu: list[float] = field(default_factory=list)  # the same turn on a sqlite3 table
    nosync_cpu: list[float] = field(default_factory=list)  # memhop turn, fsync a no-op
    sqlite_nosync_cpu: list[float] = field(default_factory=list)
    floor_cpu: list[float] = field(default_factory=list)  # FormatFloor, the same turns


def bench_turns(tmp: str, sizes: Sizes, lines: list[tuple[str, str]]) -> TurnResult:
    res = TurnResult()
    probe = FsyncProbe(tmp)
    counter = FsyncCounter()
    path = os.path.join(tmp, "turns.meh")
    profile = memhop.ProfileInput(name="bench agent")
    table = SqliteTurns(memhop.LocalModel())
    with memhop.open(path, memhop.LocalModel(), NO_AUTO_DREAM, profile) as db:
        session = db.primary()
        for i in range(sizes.warmup + sizes.turns):
            said, answered = lines[i % len(lines)]
            at = BASE_MS + i * 1000
            new_scene = i % TURNS_PER_SCENE == 0
            probe.once()  # interleaved: one probe per turn
            s0 = time.thread_time_ns()
            table.turn(said, answered, at, new_scene=new_scene)
            sqlite_cpu = (time.thread_time_ns() - s0) / 1e9
            with counter.installed():
                c0 = counter.calls
                cpu0 = time.thread_time_ns()
                t0 = time.perf_counter_ns()
                session.search(new_scene=new_scene)
                t1 = time.perf_counter_ns()
                c1 = counter.calls
                session.append_archive(
                    kind=memhop.ArchiveKind.EVENT,
                    event_type="tool_call",
                    content=f'recall(query="{said[:60]}")',
                    created_at=at,
                )
                t2 = time.perf_counter_ns()
                c2 = counter.calls
                session.append_archive(
                    kind=memhop.ArchiveKind.EVENT,
                    event_type="tool_result",
                    content=f"3 rows; first: {answered[:100]}",
                    created_at=at,
                )
                t3 = time.perf_counter_ns()
                c3 = counter.calls
                session.update(input=said, output=answered, created_at=at)
                t4 = time.perf_counter_ns()
                cpu4 = time.thread_time_ns()
                c4 = counter.calls
            if i < sizes.warmup:
                continue
            res.cpu.append((cpu4 - cpu0) / 1e9)
            res.sqlite_cpu.append(sqlite_cpu)
            res.turn.append((t4 - t0) / 1e9)
            res.search.append((t1 - t0) / 1e9)
            res.append += [(t2 - t1) / 1e9, (t3 - t2) / 1e9]
            res.update.append((t4 - t3) / 1e9)
            res.fsyncs_turn.append(c4 - c0)
            res.fsyncs_search.append(c1 - c0)
            res.fsyncs_append += [c2 - c1, c3 - c2]
            res.fsyncs_update.append(c4 - c3)
    probe.close()
    res.fsync_probe = probe.seconds[sizes.warmup :]
    return res


def memhop_turn(
    session: memhop.Session, said: str, answered: str, at: int, *, new_scene: bool
) -> None:
    """One turn of the CPU comparison: search, two events, update (``SqliteTurns.turn``'s)."""
    session.search(new_scene=new_scene)
    for event_type, body in (("tool_call", said[:60]), ("tool_result", answered[:100])):
        session.append_archive(
            kind=memhop.ArchiveKind.EVENT, event_type=event_type, content=body, created_at=at
        )
    session.update(input=said, output=answered, created_at=at)


def bench_nosync(tmp: str, sizes: Sizes, lines: list[tuple[str, str]], res: TurnResult) -> None:
    """A separate run of the same turns with fsync a no-op, beside the sqlite3 table: CPU."""
    path = os.path.join(tmp, "turns-nosync.meh")
    table = SqliteTurns(memhop.LocalModel())
    floor = FormatFloor(memhop.LocalModel(), os.path.join(tmp, "floor.bin"))
    profile = memhop.ProfileInput(name="bench agent")
    with fsync_off(), memhop.open(path, memhop.LocalModel(), NO_AUTO_DREAM, profile) as db:
        session = db.primary()
        for i in range(sizes.warmup + sizes.turns):
            said, answered = lines[i % len(lines)]
            at = BASE_MS + i * 1000
            new_scene = i % TURNS_PER_SCENE == 0
            f0 = time.thread_time_ns()
            floor.turn(said, answered, at, new_scene=new_scene)
            t0 = time.thread_time_ns()
            table.turn(said, answered, at, new_scene=new_scene)
            t1 = time.thread_time_ns()
            memhop_turn(session, said, answered, at, new_scene=new_scene)
            t2 = time.thread_time_ns()
            if i >= sizes.warmup:
                res.floor_cpu.append((t0 - f0) / 1e9)
                res.sqlite_nosync_cpu.append((t1 - t0) / 1e9)
                res.nosync_cpu.append((t2 - t1) / 1e9)
    floor.close()


ISSUE_CALLS = 1_423  # calls a turn made when issue 29 was filed (its "about 1,400")


@dataclass(frozen=True)
class CallCount:
    python: float  # calls of Python functions a turn (``sys.setprofile`` "call" events)
    c: float  # calls of C functions from Python code ("c_call" events)

    @property
    def total(self) -> float:
        return self.python + self.c


def count_calls(tmp: str, sizes: Sizes, lines: list[tuple[str, str]]) -> CallCount:
    """The function calls a turn makes, counted by ``sys.setprofile`` (fsync a no-op, after
    the warm-up): a count of the structure's work that the machine's load does not move."""
    path = os.path.join(tmp, "turns-calls.meh")
    profile = memhop.ProfileInput(name="bench agent")
    seen = {"call": 0, "c_call": 0}

    def count(_frame: object, event: str, _arg: object) -> None:
        if event in seen:
            seen[event] += 1

    with fsync_off(), memhop.open(path, memhop.LocalModel(), NO_AUTO_DREAM, profile) as db:
        session = db.primary()
        for i in range(sizes.warmup + sizes.turns):
            said, answered = lines[i % len(lines)]
            new_scene = i % TURNS_PER_SCENE == 0
            if i >= sizes.warmup:
                sys.setprofile(count)
            try:
                memhop_turn(session, said, answered, BASE_MS + i * 1000, new_scene=new_scene)
            finally:
                sys.setprofile(None)
    return CallCount(seen["call"] / sizes.turns, seen["c_call"] / sizes.turns)


MODEL_CODE = ("memhop/llm/local.py", "memhop/text.py")  # the LocalModel call's own code


@dataclass(frozen=True)
class Bytecodes:
    """Python bytecodes a turn runs (``sys.settrace``'s opcode events) in one store."""

    total: float
    model: float  # of them, the ``LocalModel`` call's
    most: list[tuple[str, float]]  # the functions that run the most, with their share


def count_bytecodes(tmp: str, sizes: Sizes, lines: list[tuple[str, str]]) -> dict[str, Bytecodes]:
    """The bytecodes a turn runs in each store, counted after the warm-up (fsync a no-op):
    what the interpreter fetches and dispatches, which a time follows more than it follows
    the machine instructions."""
    path = os.path.join(tmp, "turns-bytecodes.meh")
    profile = memhop.ProfileInput(name="bench agent")
    with fsync_off(), memhop.open(path, memhop.LocalModel(), NO_AUTO_DREAM, profile) as db:
        session, table = db.primary(), SqliteTurns(memhop.LocalModel())
        return {
            "memhop": _bytecodes_of(
                lambda said, answered, at, new: memhop_turn(
                    session, said, answered, at, new_scene=new
                ),
                sizes,
                lines,
            ),
            "sqlite": _bytecodes_of(
                lambda said, answered, at, new: table.turn(said, answered, at, new_scene=new),
                sizes,
                lines,
            ),
        }


def _bytecodes_of(
    turn: Callable[[str, str, int, bool], None], sizes: Sizes, lines: list[tuple[str, str]]
) -> Bytecodes:
    ran: dict[types.CodeType, int] = {}

    def trace(frame: types.FrameType, event: str, _arg: object) -> object:
        frame.f_trace_opcodes = True
        if event == "opcode":
            ran[frame.f_code] = ran.get(frame.f_code, 0) + 1
        return trace

    for i in range(sizes.warmup + sizes.turns):
        said, answered = lines[i % len(lines)]
        if i >= sizes.warmup:
            sys.settrace(trace)
        try:
            turn(said, answered, BASE_MS + i * 1000, i % TURNS_PER_SCENE == 0)
        finally:
            sys.settrace(None)
    n = sizes.turns
    model = sum(v for c, v in ran.items() if c.co_filename.endswith(MODEL_CODE))
    own = [
        (c.co_qualname, v / n)
        for c, v in ran.items()
        if "memhop" + os.sep in c.co_filename and not c.co_filename.endswith(MODEL_CODE)
    ]
    own.sort(key=lambda kv: -kv[1])
    return Bytecodes(sum(ran.values()) / n, model / n, own[:6])


@dataclass(frozen=True)
class LongTurn:
    events: int
    first: list[float]  # thread CPU of the turn's first appends
    last: list[float]  # and of its last


def bench_long_turn(tmp: str, sizes: Sizes, lines: list[tuple[str, str]]) -> LongTurn:
    """One open turn taking ``sizes.long_turn`` events (fsync a no-op): CPU at each end."""
    path = os.path.join(tmp, "long-turn.meh")
    profile = memhop.ProfileInput(name="bench agent")
    cpu: list[float] = []
    with fsync_off(), memhop.open(path, memhop.LocalModel(), NO_AUTO_DREAM, profile) as db:
        session = db.primary()
        session.search(new_scene=True)
        for i in range(sizes.long_turn):
            body = lines[i % len(lines)][1][:200]
            t0 = time.thread_time_ns()
            session.append_archive(
                kind=memhop.ArchiveKind.EVENT,
                event_type="tool_result",
                content=body,
                created_at=BASE_MS,
            )
            cpu.append((time.thread_time_ns() - t0) / 1e9)
    return LongTurn(sizes.long_turn, cpu[:LONG_TURN_SAMPLE], cpu[-LONG_TURN_SAMPLE:])


# ---- 3: instructions a turn executes ------------------------------------------------------

COUNTER = REPO / "benches" / "_turn_count.py"
STORES = ("memhop", "sqlite", "model")


@dataclass(frozen=True)
class TurnCounts:
    """What a turn executes, per turn (cachegrind's simulation of the machine's caches)."""

    instructions: float
    data_misses: float  # first-level data cache misses, reads and writes
    mispredicts: float  # branches mispredicted, conditional and indirect


_COUNTED = {
    "instructions": r"I\s+refs:\s+([\d,]+)",
    "data_misses": r"D1\s+misses:\s+([\d,]+)",
    "mispredicts": r"Mispredicts:\s+([\d,]+)",
}


def instructions(turns: int) -> dict[str, TurnCounts] | None:
    """What a turn executes in each store (``_turn_count.py`` under cachegrind with its
    cache and branch simulation, the turns less none, one hash seed), or None where
    valgrind is not installed. The misses and mispredictions are why a count and a time
    differ: the interpreter reads each function's bytecode as data."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    env = {**os.environ, "PYTHONHASHSEED": "0"}  # dict layouts, and so the count, repeat
    tool = [
        valgrind,
        "--tool=cachegrind",
        "--cache-sim=yes",
        "--branch-sim=yes",
        "--cachegrind-out-file=/dev/null",
    ]

    def counted(store: str, n: int) -> dict[str, int]:
        done = subprocess.run(
            [*tool, sys.executable, str(COUNTER), store, str(n)],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        found = {name: re.search(pattern, done.stderr) for name, pattern in _COUNTED.items()}
        missing = [name for name, match in found.items() if match is None]
        if missing:
            msg = f"cachegrind gave no {missing} for {store}: {done.stderr[-500:]}"
            raise RuntimeError(msg)
        return {name: int(m.group(1).replace(",", "")) for name, m in found.items() if m}

    def per_turn(store: str) -> TurnCounts:
        some, none = counted(store, turns), counted(store, 0)
        return TurnCounts(**{name: (some[name] - none[name]) / turns for name in _COUNTED})

    return {store: per_turn(store) for store in STORES}


# ---- 4: scene_context of a 300-turn scene, alone and among other records -----------------


@dataclass(frozen=True)
class SceneReadResult:
    label: str
    records: int
    file_bytes: int
    first: float  # the first read after a fresh open of the closed file
    warm: list[float]


@dataclass(frozen=True)
class SceneFile:
    label: str
    same_domain: int  # other records in other scenes of the scene's own domain (before it)
    other_domain: int  # other records in a sub-agent domain (after it)


def scene_files(sizes: Sizes) -> tuple[SceneFile, ...]:
    n = sizes.other_records
    return (
        SceneFile("the scene alone", 0, 0),
        SceneFile(f"+ {n:,} records in another domain", 0, n),
        SceneFile(f"+ {n:,} records in other scenes of its domain", n, 0),
    )


def speak_turns(
    session: memhop.Session, lines: list[tuple[str, str]], turns: int, start: int, events: int
) -> None:
    """``turns`` turns; with events, a new scene every TURNS_PER_SCENE turns, else one scene."""
    for k in range(turns):
        i = start + k
        said, answered = lines[i % len(lines)]
        at = BASE_MS + i * 1000
        session.search(new_scene=events > 0 and k % TURNS_PER_SCENE == 0)
        for e in range(events):
            session.append_archive(
                kind=memhop.ArchiveKind.EVENT,
                event_type="tool_result",
                content=f"step {e}: {answered[:120]}",
                created_at=at,
            )
        session.update(input=said, output=answered, created_at=at)


def build_scene_file(
    path: str, lines: list[tuple[str, str]], scene_turns: int, spec: SceneFile
) -> str:
    """Write the scene of ``scene_turns`` turns and the other records; return its scene id."""
    profile = memhop.ProfileInput(name="bench agent")
    # Each "other" turn writes 3 events + 2 utterances + 1 topic record (+ its scene record).
    per_turn = OTHER_EVENTS_PER_TURN + 3
    with memhop.open(path, memhop.LocalModel(), NO_AUTO_DREAM, profile) as db:
        primary = db.primary()
        if spec.same_domain:
            log(f"  {spec.same_domain // per_turn} turns in other scenes of the same domain")
            speak_turns(primary, lines, spec.same_domain // per_turn, 10_000, OTHER_EVENTS_PER_TURN)
        scene_id = primary.search(new_scene=True).scene.scene_id
        said, answered = lines[0]
        primary.update(input=said, output=answered, created_at=BASE_MS)
        speak_turns(primary, lines, scene_turns - 1, 1, 0)
        if spec.other_domain:
            log(f"  {spec.other_domain // per_turn} turns in a sub-agent domain")
            worker = db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="worker"))
            speak_turns(worker, lines, spec.other_domain // per_turn, 50_000, OTHER_EVENTS_PER_TURN)
    return scene_id


def time_read(session: memhop.Session, scene_id: str) -> float:
    return timed(lambda: session.scene_context(scene_id))


def bench_scene_reads(
    tmp: str, sizes: Sizes, lines: list[tuple[str, str]]
) -> list[SceneReadResult]:
    """Build the three files, then read the scene in all three, round-robin, in one process."""
    specs = scene_files(sizes)
    paths = [os.path.join(tmp, f"scene-{n}.meh") for n in range(len(specs))]
    scene_ids = []
    for path, spec in zip(paths, specs, strict=True):
        log(f"building {sizes.scene_turns}-turn scene, {spec.label}")
        scene_ids.append(build_scene_file(path, lines, sizes.scene_turns, spec))
    gc.collect()
    dbs = [memhop.open(path, memhop.LocalModel(), NO_AUTO_DREAM) for path in paths]
    try:
        sessions = [db.primary() for db in dbs]
        first: list[float] = []
        for session, scene_id, spec in zip(sessions, scene_ids, specs, strict=True):
            first.append(time_read(session, scene_id))
            rows = len(session.scene_context(scene_id).topics)
            if rows != sizes.scene_turns:
                raise RuntimeError(f"{spec.label}: {rows} rows listed, want {sizes.scene_turns}")
        warm: list[list[float]] = [[] for _ in specs]
        for _ in range(sizes.reads):
            for k, (session, scene_id) in enumerate(zip(sessions, scene_ids, strict=True)):
                warm[k].append(time_read(session, scene_id))
        out = []
        for k, (db, spec) in enumerate(zip(dbs, specs, strict=True)):
            stats = db.stats()
            out.append(
                SceneReadResult(spec.label, stats.record_count, stats.file_bytes, first[k], warm[k])
            )
            log(
                f"  {spec.label}: {stats.record_count:,} records, first read "
                f"{first[k] * 1e3:.2f} ms, warm median {med(warm[k]) * 1e3:.2f} ms"
            )
    finally:
        for db in dbs:
            db.close()
    return out


# ---- report ------------------------------------------------------------------------------


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} us"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def counts(xs: Sequence[int]) -> str:
    """Median, and the range when it varies."""
    lo, hi = min(xs), max(xs)
    m = statistics.median(xs)
    text = f"{m:g}"
    return text if lo == hi else f"{text} (range {lo}-{hi})"


def report(
    turns: TurnResult,
    long_turn: LongTurn,
    calls: CallCount,
    bytecodes: dict[str, Bytecodes],
    counts_of: dict[str, TurnCounts] | None,
    scenes: list[SceneReadResult],
    sizes: Sizes,
    quick: bool,
    info: list[tuple[str, str]],
    notes: str,
) -> str:
    fsync = med(turns.fsync_probe)
    turn = med(turns.turn)
    fsyncs = statistics.median(turns.fsyncs_turn)
    ratio = turn / (fsyncs * fsync)
    cpu_ratio = med(turns.cpu) / med(turns.sqlite_cpu)
    nosync_ratio = med(turns.nosync_cpu) / med(turns.sqlite_nosync_cpu)
    long_ratio = med(long_turn.last) / med(long_turn.first)
    # A call that records something syncs once; search syncs only when it makes a scene.
    recording = turns.fsyncs_append + turns.fsyncs_update
    one_each = all(n == 1 for n in recording) and all(n <= 1 for n in turns.fsyncs_search)
    alone, *crowded = scenes
    warm_ratios = [med(c.warm) / med(alone.warm) for c in crowded]
    first_ratios = [c.first / alone.first for c in crowded]
    independent = (
        f"warm read {ms(med(alone.warm))} alone; "
        + "; ".join(
            f"{c.label}: {ms(med(c.warm))} (ratio {w:.2f})"
            for c, w in zip(crowded, warm_ratios, strict=True)
        )
        + ". First read after open, ratio to alone: "
        + ", ".join(f"{f:.2f}" for f in first_ratios)
    )
    out: list[str] = ["## Turn loop\n"]
    out.append(
        "Generated by `python benches/turn.py`"
        + (" --quick (smoke run: fewer turns and other records)" if quick else "")
        + ". One turn is `search()` + two `append_archive` events + `update(input, output)` "
        "with the in-process `memhop.LocalModel()` (no network), on LoCoMo lines "
        f"(examples/data), a new scene every {TURNS_PER_SCENE} turns, automatic Dream off. "
        f"{sizes.turns} measured turns after {sizes.warmup} warm-up turns. The fsync reference "
        f"is one {PROBE_BYTES}-byte append + `os.fsync` to a plain file in the same directory, "
        "one probe before each turn. fsyncs are counted by wrapping `os.fsync` during the "
        "calls.\n"
    )
    out.append(table(["Item", "Value"], info) + "\n")
    if notes:
        out.append(notes + "\n")
    out.append("### Aims\n")
    out.append(
        table(
            ["Aim", "Measured", "Result"],
            [
                [
                    "One fsync per recording call (append_archive, update); search at most one"
                    " (a new scene)",
                    f"search {counts(turns.fsyncs_search)}, append_archive "
                    f"{counts(turns.fsyncs_append)}, update {counts(turns.fsyncs_update)} "
                    f"(median fsyncs per call); {counts(turns.fsyncs_turn)} per turn",
                    verdict(one_each),
                ],
                [
                    "CPU per turn within 1.5x of a sqlite3 memory table doing the same work",
                    f"fsync a no-op (a separate run): thread CPU {us(med(turns.nosync_cpu))} vs "
                    f"{us(med(turns.sqlite_nosync_cpu))} (ratio {nosync_ratio:.2f})",
                    verdict(nosync_ratio <= 1.5),
                ],
                [
                    "Calls a turn (search, two events, update, `LocalModel`) at most half of"
                    f" the {ISSUE_CALLS:,} counted when issue 29 was filed",
                    f"{calls.python:.1f} calls of Python functions + {calls.c:.1f} of C"
                    f" functions = {calls.total:,.0f} ({calls.total / ISSUE_CALLS:.2f} of"
                    f" {ISSUE_CALLS:,})",
                    verdict(calls.total <= ISSUE_CALLS / 2),
                ],
                [
                    "append_archive CPU flat in the number of events the turn already holds"
                    " (within 1.5x)",
                    f"fsync a no-op: {us(med(long_turn.first))} for the first "
                    f"{LONG_TURN_SAMPLE} events of a turn, {us(med(long_turn.last))} for the "
                    f"last {LONG_TURN_SAMPLE} of {long_turn.events:,} (ratio {long_ratio:.2f})",
                    verdict(long_ratio <= 1.5),
                ],
                [
                    f"scene_context of a {sizes.scene_turns}-turn scene independent of the "
                    "other records in the file (within 1.5x)",
                    independent,
                    verdict(max(warm_ratios) <= 1.5),
                ],
            ],
        )
        + "\n"
    )
    out.append("### One turn\n")
    out.append(
        table(
            ["Call", "Median", "p90", "fsyncs per call (median)"],
            [
                [
                    "fsync reference (300-byte append + fsync)",
                    us(fsync),
                    us(p90(turns.fsync_probe)),
                    "1",
                ],
                [
                    "search()",
                    us(med(turns.search)),
                    us(p90(turns.search)),
                    counts(turns.fsyncs_search),
                ],
                [
                    "append_archive() (event)",
                    us(med(turns.append)),
                    us(p90(turns.append)),
                    counts(turns.fsyncs_append),
                ],
                [
                    "update() (LocalModel keywords)",
                    us(med(turns.update)),
                    us(p90(turns.update)),
                    counts(turns.fsyncs_update),
                ],
                ["whole turn", us(turn), us(p90(turns.turn)), counts(turns.fsyncs_turn)],
            ],
        )
        + "\n"
    )
    out.append(
        f"The turn's wall time is {ratio:.2f}x its own fsyncs ({counts(turns.fsyncs_turn)} "
        f"per turn x the {us(fsync)} reference). CPU is measured directly, never as a "
        "difference of medians: *thread CPU* is `time.thread_time` around the turn; with real "
        "fsyncs it holds the kernel's CPU for the flushes (not their wait), so the aim is "
        "taken from a separate run of the same turns with `os.fsync` a no-op. The sqlite3 "
        "baseline (`SqliteTurns`) does the turn's work on "
        "an in-memory table, one transaction per call, with the same `LocalModel` keywords; "
        "both stores take turns, turn by turn. `FormatFloor` writes the same turn's six "
        "records in format 0x0012 with memhop's own record classes and frame encoder to a "
        "plain file, indexed in dicts, with nothing else (no validation, lock, group commit, "
        "mirror, cache or result object): what the format costs, so the rest of memhop's "
        "figure is its own structure.\n"
    )
    out.append(
        table(
            ["Per turn", "memhop", "sqlite3 memory table", "ratio"],
            [
                [
                    "thread CPU, fsync a no-op (separate run): the aim",
                    us(med(turns.nosync_cpu)),
                    us(med(turns.sqlite_nosync_cpu)),
                    f"{nosync_ratio:.2f}",
                ],
                [
                    "thread CPU of the format's own work (`FormatFloor`), the same turns in the"
                    " same run",
                    us(med(turns.floor_cpu)),
                    us(med(turns.sqlite_nosync_cpu)),
                    f"{med(turns.floor_cpu) / med(turns.sqlite_nosync_cpu):.2f}",
                ],
                [
                    "thread CPU, real fsyncs (includes the kernel's CPU for the flushes)",
                    us(med(turns.cpu)),
                    us(med(turns.sqlite_cpu)) + " (no fsync)",
                    f"{cpu_ratio:.2f}",
                ],
            ],
        )
        + "\n"
    )
    if counts_of is None:
        out.append("Instructions a turn executes: not counted (valgrind is not installed).\n")
    else:
        ours, table_c, model_c = (counts_of[store] for store in STORES)
        mine, table_s, model = ours.instructions, table_c.instructions, model_c.instructions
        out.append(
            "Instructions a turn executes (cachegrind; the same turns, fsync a no-op, less a "
            f"run of none): memhop {mine:,.0f}, the sqlite3 table {table_s:,.0f} (ratio "
            f"{mine / table_s:.2f}); of each, the `LocalModel` keyword call {model:,.0f}, "
            f"so {mine - model:,.0f} against {table_s - model:,.0f} besides it "
            f"({(mine - model) / (table_s - model):.2f}x). A count, not a time: it does not "
            "move with the machine's hour, and a change's effect shows to a few tenths of a "
            "per cent. The same runs' cache and branch simulation: first-level data misses "
            f"{ours.data_misses:,.0f} against {table_c.data_misses:,.0f} a turn "
            f"({ours.data_misses / table_c.data_misses:.2f}x), mispredicted branches "
            f"{ours.mispredicts:,.0f} against {table_c.mispredicts:,.0f} "
            f"({ours.mispredicts / table_c.mispredicts:.2f}x): a time follows these more "
            "than the count (the interpreter reads each function's bytecode as data, and "
            "dispatches each bytecode by an indirect branch).\n"
        )
    ours, table_b = bytecodes["memhop"], bytecodes["sqlite"]
    most = ", ".join(f"`{name}` {runs:,.0f}" for name, runs in ours.most[:5])
    out.append(
        "Python bytecodes a turn runs (`sys.settrace`'s opcode events, the same turns): "
        f"memhop {ours.total:,.0f}, the sqlite3 table {table_b.total:,.0f}; besides the "
        f"`LocalModel` call ({ours.model:,.0f} and {table_b.model:,.0f}) "
        f"{ours.total - ours.model:,.0f} against {table_b.total - table_b.model:,.0f}: "
        "the table's work is in C, memhop's in the interpreter, which reads each bytecode "
        f"as data and dispatches it by an indirect branch. memhop's most: {most}.\n"
    )
    if med(turns.fsyncs_update) > 1:
        out.append(
            f"`update()` makes {counts(turns.fsyncs_update)} fsyncs: its dialogue records are "
            "written and synced before the model call (so they survive a failing model, as "
            "upstream), and the topic row after it.\n"
        )
    out.append(f"### scene_context of a {sizes.scene_turns}-turn scene\n")
    out.append(
        f"The same {sizes.scene_turns}-turn scene (one user and one agent line per turn) read "
        "with `scene_context(scene_id)` in three files: alone; with other records in a "
        "sub-agent domain written after it; with other records in other scenes of its own "
        f"domain written before it (other turns carry {OTHER_EVENTS_PER_TURN} events each). "
        "*First read*: the first call after a fresh `memhop.open` of the closed file (it "
        "includes whatever the domain loads on first use). *Warm*: median of "
        f"{sizes.reads} further calls; the three files are open at once and read in turn, "
        "call by call, so load from elsewhere hits them alike.\n"
    )
    out.append(
        table(
            ["File", "Records", "File MB", "first read", "warm median", "warm / alone"],
            [
                [
                    s.label,
                    f"{s.records:,}",
                    f"{s.file_bytes / 1024 / 1024:.1f}",
                    ms(s.first),
                    ms(med(s.warm)),
                    f"{med(s.warm) / med(alone.warm):.2f}",
                ]
                for s in scenes
            ],
        )
        + "\n"
    )
    return "\n".join(out) + "\n"


def p90(xs: Sequence[float]) -> float:
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


# ---- main --------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(__doc__, "fewer turns and other records", argv)
    sizes = QUICK if args.quick else FULL
    lines = load_lines()

    tmp = tempfile.mkdtemp(prefix="memhop-turn-bench-", dir=args.dir)
    info = machine(tmp, scope="memhop/")
    busy = [f"start: {busy_processes() or 'none'}"]
    started = time.perf_counter()
    try:
        log(f"turns: {sizes.warmup} warm-up + {sizes.turns} measured")
        turns = bench_turns(tmp, sizes, lines)
        log("the same turns with fsync a no-op, beside the sqlite3 table")
        bench_nosync(tmp, sizes, lines, turns)
        log(f"one turn of {sizes.long_turn:,} events")
        long_turn = bench_long_turn(tmp, sizes, lines)
        log("calls a turn makes (sys.setprofile)")
        calls = count_calls(tmp, sizes, lines)
        log("bytecodes a turn runs (sys.settrace)")
        bytecodes = count_bytecodes(tmp, sizes, lines)
        log("instructions a turn executes (cachegrind)")
        counts_of = instructions(sizes.turns)
        busy.append(f"turns: {busy_processes() or 'none'}")
        scenes = bench_scene_reads(tmp, sizes, lines)
        busy.append(f"scene reads: {busy_processes() or 'none'}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    info.append(("Load average at end", load_average()))
    info.append(("Benchmark wall time", f"{time.perf_counter() - started:.0f} s"))
    notes = ""
    if any(not b.endswith("none") for b in busy):
        notes = (
            "Note: the machine was shared during this run (other pytest runs seen: "
            + "; ".join(busy)
            + "), so absolute numbers carry some noise; the fsync probe is interleaved with the "
            "turns, so the turn/fsync ratio is steadier than either number alone."
        )
    section = report(
        turns, long_turn, calls, bytecodes, counts_of, scenes, sizes, args.quick, info, notes
    )
    return publish(args, "turn.py", section)


if __name__ == "__main__":
    sys.exit(main())
