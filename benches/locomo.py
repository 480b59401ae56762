"""LoCoMo through memhop: ingestion cost beside sqlite3, and what memory keeps and finds.

Data: LoCoMo -- Maharana et al., *Evaluating Very Long-Term Conversational Memory of LLM
Agents*, ACL 2024, https://github.com/snap-research/locomo (CC BY-NC 4.0), shipped as
``examples/data/locomo10.json``. The first five conversations carry evidence labels (the
utterances that hold each answer); the last five do not and are the held-out check: nothing
here is tuned to them.

Each conversation goes into its own ``.meh`` file through the public API with
``memhop.LocalModel()`` and default ``Defaults``: one scene per session, one turn per exchange
(speaker A's lines in, speaker B's lines out, each line as "Name: text"), dated by the
session's date one minute apart, plus a ``session_start`` event on each scene's first turn.
The same turns go to sqlite3 (WAL, synchronous=FULL, one transaction per turn).

Retention: a question counts as retained when at least half of its answer's content words
(lowercased, stop words removed, numbers kept) are in the text returned for its evidence
turns. Every text is shown with its date ("8 May 2023"), as a host renders rows, for all
three readers alike:
(a) scene_context: the evidence turn's listed row (lines and keywords) and its Dream parent's;
(b) recall(question) top 5: hits on an evidence turn (its row, a Dream row that folded it, or
    one of its events);
(c) sqlite3 FTS5 bm25 top 5 over the raw utterances (the baseline): hits that are evidence-turn
    utterances.
"reached" counts a question when any top-5 hit is on an evidence turn at all. On the held-out
five, "answer in top 5" counts a question when half its answer words are anywhere in the
top-5 texts.

Run: ``python benches/locomo.py`` (about two minutes; ``--quick`` ingests two conversations).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
import tempfile
import time
import tracemalloc
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from _common import (
    REPO,
    FsyncCounter,
    fsync_off,
    fsync_reference,
    log,
    machine,
    med,
    parse_args,
    publish,
    table,
)

import memhop
from memhop.index.recall import RecallIndex
from memhop.index.recall_terms import terms_of
from memhop.text import STOP_WORDS

DATA = REPO / "examples" / "data" / "locomo10.json"
LABELLED = 5
TURN_SPACING_MS = 60_000
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TOP = 5
STAGES = ("before Dream", "after 1 Dream", "after 2 Dreams")


@dataclass(frozen=True)
class Turn:
    scene: int
    started_ms: int
    said: tuple[str, ...]
    answered: tuple[str, ...]
    dia_ids: tuple[str, ...]
    event: str = ""


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    qa: list[dict[str, object]]
    utterances: dict[str, tuple[str, int]] = field(default_factory=dict)  # dia -> (text, ms)


def _session_ms(when: str) -> int:
    at = datetime.strptime(when, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    return int(at.timestamp() * 1000)


def _labelled(line: dict[str, str]) -> str:
    return f"{line['speaker']}: {line['text']}"


def load() -> list[Conversation]:
    items = json.loads(DATA.read_text(encoding="utf-8"))["items"]
    out = []
    for item in items:
        a, b = item["speaker_a"], item["speaker_b"]
        conv = Conversation(item["sample_id"], [], list(item.get("qa", ())))
        for raw in item["sessions"]:
            _, number, when = raw["id"].split("_", 2)
            start = _session_ms(when)
            runs: list[list[dict[str, str]]] = []
            for line in raw["turns"]:
                # A turn is A's run of lines then B's run: A speaking after B starts the next.
                if not runs or (line["speaker"] == a and runs[-1][-1]["speaker"] == b):
                    runs.append([])
                runs[-1].append(line)
            for i, run in enumerate(runs):
                at = start + i * TURN_SPACING_MS
                for line in run:
                    conv.utterances[line["dia_id"]] = (_labelled(line), at)
                conv.turns.append(
                    Turn(
                        scene=int(number),
                        started_ms=at,
                        said=tuple(_labelled(x) for x in run if x["speaker"] == a),
                        answered=tuple(_labelled(x) for x in run if x["speaker"] == b),
                        dia_ids=tuple(x["dia_id"] for x in run),
                        event=f"{a} and {b} talk, session {number}, {when}" if i == 0 else "",
                    )
                )
        out.append(conv)
    return out


# ---- ingestion -------------------------------------------------------------------------


def ingest_memhop(
    conv: Conversation, path: str, defaults: memhop.Defaults | None = None
) -> tuple[memhop.DB, dict[str, str], float, int]:
    """Write the conversation; return the open DB, dia_id -> topic id, seconds, fsyncs."""
    db = memhop.open(path, memhop.LocalModel(), defaults, profile=memhop.ProfileInput(name="agent"))
    me = db.primary()
    topic_of: dict[str, str] = {}
    scene = None
    started = time.perf_counter()
    with FsyncCounter().installed() as syncs:
        for turn in conv.turns:
            me.search(new_scene=turn.scene != scene)
            scene = turn.scene
            if turn.event:
                me.append_archive(
                    content=turn.event,
                    created_at=turn.started_ms,
                    kind=memhop.ArchiveKind.EVENT,
                    event_type="session_start",
                )
            row = me.update(
                input="\n".join(turn.said),
                output="\n".join(turn.answered),
                created_at=turn.started_ms,
            )
            for dia in turn.dia_ids:
                topic_of[dia] = row.id
    return db, topic_of, time.perf_counter() - started, syncs.calls


def ingest_sqlite(conv: Conversation, path: str) -> tuple[float, int]:
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=FULL")
    con.execute(
        "CREATE TABLE turns (id INTEGER PRIMARY KEY, scene INT, input TEXT, output TEXT, "
        "keywords TEXT, created_at INT)"
    )
    con.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, turn INT, type TEXT, content TEXT)")
    model = memhop.LocalModel()
    started = time.perf_counter()
    for turn in conv.turns:
        con.execute("BEGIN")
        said, answered = "\n".join(turn.said), "\n".join(turn.answered)
        keywords = model.extract_keywords(f"{said}\n{answered}")
        cur = con.execute(
            "INSERT INTO turns (scene, input, output, keywords, created_at) VALUES (?,?,?,?,?)",
            (turn.scene, said, answered, json.dumps(keywords), turn.started_ms),
        )
        if turn.event:
            con.execute(
                "INSERT INTO events (turn, type, content) VALUES (?,?,?)",
                (cur.lastrowid, "session_start", turn.event),
            )
        con.execute("COMMIT")
    elapsed = time.perf_counter() - started
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return elapsed, os.path.getsize(path)


# ---- scoring -----------------------------------------------------------------------------


def answer_words(answer: object) -> set[str]:
    words = re.findall(r"[a-z0-9]+", str(answer).lower())
    return {w for w in words if w not in STOP_WORDS}


def retained(answer: set[str], text: str) -> bool:
    if not answer:
        return False
    have = set(re.findall(r"[a-z0-9]+", text.lower()))
    return len(answer & have) * 2 >= len(answer)


def dated(ms: int, text: str) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%-d %B %Y") + ": " + text


def answerable(conv: Conversation) -> Iterator[dict[str, object]]:
    for qa in conv.qa:
        if "answer" in qa and qa.get("category") in CATEGORIES:
            yield qa


class Tally:
    def __init__(self) -> None:
        self.hits: dict[str, list[int]] = defaultdict(lambda: [0, 0])

    def add(self, category: str, ok: bool) -> None:
        for key in (category, "overall"):
            self.hits[key][0] += int(ok)
            self.hits[key][1] += 1

    def pct(self, key: str = "overall") -> float:
        got, total = self.hits[key]
        return 100.0 * got / total if total else 0.0


def context_texts(me: memhop.Session, scene_ids: Sequence[str]) -> dict[str, str]:
    """topic id -> the text its listed row and its Dream parent's row show, dated."""
    out: dict[str, str] = {}
    for scene_id in scene_ids:
        rows = {r.topic_id: r for r in me.scene_context(scene_id).topics}

        def shown(row: memhop.SceneContextTopic) -> str:
            body = " ".join(m.content for m in row.messages) + " " + " ".join(row.keywords)
            return dated(row.user_timestamp, body)

        parent = {child: r.topic_id for r in rows.values() for child in r.derived_from}
        for topic_id, row in rows.items():
            text = shown(row)
            if topic_id in parent and parent[topic_id] in rows:
                text += "\n" + shown(rows[parent[topic_id]])
            out[topic_id] = text
    return out


def fts_index(conv: Conversation) -> sqlite3.Connection:
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE utt USING fts5(dia_id UNINDEXED, text)")
    rows = [(dia, text) for dia, (text, _) in conv.utterances.items()]
    con.executemany("INSERT INTO utt VALUES (?, ?)", rows)
    return con


def fts_top(con: sqlite3.Connection, question: str) -> list[str]:
    words = [w for w in re.findall(r"\w+", question.lower()) if w not in STOP_WORDS]
    if not words:
        return []
    query = " OR ".join(f'"{w}"' for w in words)
    rows = con.execute(
        "SELECT dia_id FROM utt WHERE utt MATCH ? ORDER BY bm25(utt) LIMIT ?", (query, TOP)
    ).fetchall()
    return [r[0] for r in rows]


@dataclass
class Measures:
    context: Tally = field(default_factory=Tally)
    recall: Tally = field(default_factory=Tally)
    fts: Tally = field(default_factory=Tally)
    recall_reached: Tally = field(default_factory=Tally)
    fts_reached: Tally = field(default_factory=Tally)
    recall_answer: Tally = field(default_factory=Tally)
    fts_answer: Tally = field(default_factory=Tally)


def measure(
    conv: Conversation, me: memhop.Session, topic_of: dict[str, str], out: Measures, labelled: bool
) -> None:
    fts = fts_index(conv)
    scenes = [s.scene_id for s in me.list_scenes()]
    shown = context_texts(me, scenes) if labelled else {}
    for qa in answerable(conv):
        category = CATEGORIES[int(qa["category"])]  # type: ignore[call-overload]
        words = answer_words(qa["answer"])
        question = str(qa["question"])
        hits = me.recall(question, limit=TOP)
        fts_hits = fts_top(fts, question)
        hit_texts = [dated(h.created_at, h.text + " " + " ".join(h.keywords)) for h in hits]
        fts_texts = [dated(conv.utterances[d][1], conv.utterances[d][0]) for d in fts_hits]
        out.recall_answer.add(category, retained(words, "\n".join(hit_texts)))
        out.fts_answer.add(category, retained(words, "\n".join(fts_texts)))
        if not labelled:
            continue
        evidence = [d for d in qa.get("evidence", ()) if d in topic_of]  # type: ignore[attr-defined]
        turns = {topic_of[d] for d in evidence}
        out.context.add(category, retained(words, "\n".join(shown.get(t, "") for t in turns)))
        on_evidence = [
            text
            for h, text in zip(hits, hit_texts, strict=True)
            if h.topic_id in turns or turns & set(h.derived_from)
        ]
        out.recall.add(category, retained(words, "\n".join(on_evidence)))
        out.recall_reached.add(category, bool(on_evidence))
        fts_on = [t for d, t in zip(fts_hits, fts_texts, strict=True) if topic_of.get(d) in turns]
        out.fts.add(category, retained(words, "\n".join(fts_on)))
        out.fts_reached.add(category, bool(fts_on))


# ---- recall at scale ---------------------------------------------------------------------


def recall_at_scale(convs: list[Conversation], docs: int) -> dict[str, float]:
    """The recall index alone at ``docs`` documents made of LoCoMo turns (cycled).

    Median query CPU (thread time) and median and 90th-percentile wall time (ms) over
    LoCoMo questions, build time per document (µs), and heap bytes per document
    (tracemalloc, measured on a separate build of 10,000)."""
    texts = [terms_of(" ".join(t.said + t.answered)) for c in convs for t in c.turns]
    questions = [terms_of(str(qa["question"])) for c in convs for qa in answerable(c)][:200]

    def build(n: int) -> RecallIndex:
        index = RecallIndex()
        for i in range(n):
            index.put((0, i), i % 500, i, texts[i % len(texts)])
        return index

    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    small = build(10_000)
    heap = (tracemalloc.get_traced_memory()[0] - before) / len(small)
    tracemalloc.stop()
    del small
    started = time.perf_counter()
    index = build(docs)
    put_us = (time.perf_counter() - started) / docs * 1e6
    times, cpu = [], []
    for wanted in questions:
        t0, c0 = time.perf_counter(), time.thread_time()
        index.search(wanted, TOP)
        cpu.append((time.thread_time() - c0) * 1000)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return {
        "median_ms": med(times),
        "cpu_ms": med(cpu),
        "p90_ms": times[int(len(times) * 0.9)],
        "put_us": put_us,
        "heap_b": heap,
        "docs": docs,
    }


def recall_through_api(convs: list[Conversation], turns: int, tmp: str) -> dict[str, float]:
    """``Session.recall`` on one domain of ``turns`` turns (LoCoMo turns cycled, 25 a scene).

    The file is written with ``os.fsync`` made a no-op (setup, not what is measured), then
    reopened: the first recall builds the mirror (timed alone), then 200 questions are timed
    (thread CPU and wall, median), text and provenance of the top 5 included.
    """
    source = [t for c in convs for t in c.turns]
    questions = [str(qa["question"]) for c in convs for qa in answerable(c)][:200]
    path = os.path.join(tmp, "scale.meh")
    profile = memhop.ProfileInput(name="a")
    with fsync_off(), memhop.open(path, memhop.LocalModel(), profile=profile) as db:
        me = db.primary()
        for i in range(turns):
            turn = source[i % len(source)]
            me.search(new_scene=i % 25 == 0)
            me.update(
                input="\n".join(turn.said),
                output="\n".join(turn.answered),
                created_at=1_600_000_000_000 + i * 60_000,
            )
    with memhop.open(path, memhop.LocalModel()) as db:
        me = db.primary()
        started = time.perf_counter()
        me.recall("warm up")
        build_s = time.perf_counter() - started
        wall, cpu = [], []
        for q in questions:
            t0, c0 = time.perf_counter(), time.thread_time()
            me.recall(q)
            cpu.append((time.thread_time() - c0) * 1000)
            wall.append((time.perf_counter() - t0) * 1000)
    return {"turns": turns, "build_s": build_s, "cpu_ms": med(cpu), "wall_ms": med(wall)}


# ---- report ------------------------------------------------------------------------------


def run(argv: Sequence[str] | None = None) -> str:
    args = parse_args(__doc__, "ingest two conversations only", argv)
    convs = load()
    if args.quick:
        convs = [convs[0], convs[LABELLED]]
    stages = STAGES
    measures = {(s, held): Measures() for s in stages for held in (False, True)}
    totals = defaultdict(float)
    kept = pruned = 0
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        totals["fsync_before"] = fsync_reference(tmp)
        for conv in convs:
            labelled = conv.qa and "evidence" in conv.qa[0]
            path = os.path.join(tmp, f"{conv.sample_id}.meh")
            db, topic_of, secs, syncs = ingest_memhop(conv, path)
            lite_secs, lite_bytes = ingest_sqlite(conv, os.path.join(tmp, f"{conv.sample_id}.db"))
            turns = len(conv.turns)
            meh_bytes = db.stats().file_bytes
            totals["turns"] += turns
            totals["secs"] += secs
            totals["syncs"] += syncs
            totals["bytes"] += meh_bytes
            totals["lite_secs"] += lite_secs
            totals["lite_bytes"] += lite_bytes
            log(f"{conv.sample_id}: {turns} turns in {secs:.1f} s ({syncs / turns:.2f} fsync/turn)")
            me = db.primary()
            for stage in stages:
                if stage != stages[0]:
                    report = me.dream()
                    kept += report.l4_records_kept_unfolded
                    pruned += report.l4_records_pruned
                measure(conv, me, topic_of, measures[(stage, not labelled)], bool(labelled))
            db.close()
        totals["fsync_after"] = fsync_reference(tmp)
        variants = dream_variants([c for c in convs if c.qa and "evidence" in c.qa[0]], tmp)
        api = recall_through_api(convs, 2_000 if args.quick else 5_000, tmp)
    scale = recall_at_scale(convs, 20_000 if args.quick else 100_000)
    return report_text(measures, totals, kept, pruned, scale) + api_text(api) + variants


def api_text(api: dict[str, float]) -> str:
    return (
        f"Through the public API, one domain of {api['turns']:,.0f} turns: the first "
        f"`recall` after open builds the mirror in {api['build_s']:.1f} s; then a recall "
        f"(top 5, with text and provenance) takes {api['cpu_ms']:.2f} ms CPU median "
        f"(thread time), {api['wall_ms']:.2f} ms wall median.\n"
    )


VARIANTS = (
    (
        "no consolidation floor (LocalModel folds every overlapping run)",
        memhop.Defaults(dream_compress_min_topics=-1),
    ),
    ("upstream's sweep (sweep_unfolded=True)", memhop.Defaults(sweep_unfolded=True)),
)


def dream_variants(convs: list[Conversation], tmp: str) -> str:
    """The labelled conversations again under other Dream settings: what the defaults hide."""
    lines = ["", "### Other Dream settings, labelled conversations", ""]
    rows = []
    for name, defaults in VARIANTS:
        tallies = {stage: Measures() for stage in STAGES}
        folded = swept = 0
        for conv in convs:
            path = os.path.join(tmp, f"{conv.sample_id}-{len(rows)}.meh")
            db, topic_of, _, _ = ingest_memhop(conv, path, defaults)
            me = db.primary()
            for stage in STAGES:
                if stage != STAGES[0]:
                    report = me.dream()
                    folded += report.l2_topics_compressed
                    swept += report.l4_records_pruned
                measure(conv, me, topic_of, tallies[stage], True)
            db.close()
        log(f"variant {name}: {folded} turns folded, {swept} originals swept")
        for stage in STAGES:
            m = tallies[stage]
            rows.append(
                [
                    name,
                    stage,
                    f"{m.context.pct():.1f}%",
                    f"{m.recall.pct():.1f}%",
                    f"{m.fts.pct():.1f}%",
                ]
            )
        rows.append([name, f"{folded} turns folded, {swept} originals swept", "", "", ""])
    header = ["settings", "stage", "(a) scene_context", "(b) recall top 5", "(c) FTS5 top 5"]
    lines += [table(header, rows), ""]
    return "\n".join(lines)


def report_text(
    measures: dict[tuple[str, bool], Measures],
    totals: dict[str, float],
    kept: int,
    pruned: int,
    scale: dict[str, float],
) -> str:
    turns = totals["turns"]
    lines = [
        "## LoCoMo: ingestion, retention and recall (`benches/locomo.py`)",
        "",
        table(["machine", ""], [list(r) for r in machine(tempfile.gettempdir(), scope="memhop/")]),
        "",
        "Data: LoCoMo (Maharana et al., ACL 2024, CC BY-NC 4.0).",
        "",
        "### Ingestion through the public API (LocalModel, durability per call)",
        "",
        table(
            ["store", "turns/s", "fsyncs/turn", "bytes/turn"],
            [
                [
                    "memhop",
                    f"{turns / totals['secs']:.0f}",
                    f"{totals['syncs'] / turns:.2f}",
                    f"{totals['bytes'] / turns:.0f}",
                ],
                [
                    "sqlite3 WAL FULL, 1 txn/turn",
                    f"{turns / totals['lite_secs']:.0f}",
                    "n/a (own syncs)",
                    f"{totals['lite_bytes'] / turns:.0f}",
                ],
                ["ratio memhop/sqlite3", f"{totals['lite_secs'] / totals['secs']:.2f}", "", ""],
            ],
        ),
        "",
        f"{int(turns)} turns, the default Defaults (background Dream on). The fsync reference"
        f" (a 300-byte append + fsync to a plain file, median of 50) was"
        f" {totals['fsync_before'] * 1e3:.2f} ms before the ingestion and"
        f" {totals['fsync_after'] * 1e3:.2f} ms after. A turn here is `search` + `update` (+ an"
        " event at a session's start): memhop makes about 1.2 fsyncs of a growing file a turn,"
        " sqlite3 one of its WAL, so the ratio follows the disk, whose fsync swings with the"
        " hour on this machine (0.2 to 4 ms): with a fast fsync the CPU decides, and sqlite3's"
        " is lower. Dream passes after the ingestion:"
        f" {pruned} originals swept (folded turns whose words their tracks and Dream rows"
        f" keep), {kept} kept because no Dream row carries their turn or its words.",
        "",
        "### Evidence retention, labelled conversations (conv-26, -30, -41, -42, -43)",
        "",
    ]
    cats = [*CATEGORIES.values(), "overall"]
    rows = []
    for stage in ("before Dream", "after 1 Dream", "after 2 Dreams"):
        m = measures[(stage, False)]
        for name, tally in (
            ("(a) scene_context row", m.context),
            ("(b) recall top 5", m.recall),
            ("(c) sqlite3 FTS5 bm25 top 5", m.fts),
            ("recall top 5 reached evidence", m.recall_reached),
            ("FTS5 top 5 reached evidence", m.fts_reached),
        ):
            rows.append([stage, name, *(f"{tally.pct(c):.1f}%" for c in cats)])
        ratio = m.recall.pct() / m.fts.pct() if m.fts.pct() else float("inf")
        rows.append([stage, "(b)/(c)", *([""] * (len(cats) - 1)), f"{ratio:.2f}x"])
    lines.append(table(["stage", "reader", *cats], rows))
    lines += ["", "### Held-out conversations (conv-44, -47, -48, -49, -50; no labels)", ""]
    held_rows = []
    for stage in ("before Dream", "after 1 Dream", "after 2 Dreams"):
        m = measures[(stage, True)]
        for name, tally in (("recall top 5", m.recall_answer), ("FTS5 top 5", m.fts_answer)):
            held_rows.append([stage, f"answer in {name}", *(f"{tally.pct(c):.1f}%" for c in cats)])
    lines.append(table(["stage", "reader", *cats], held_rows))
    lines += [
        "",
        "### Recall at scale (the index alone, LoCoMo turns cycled)",
        "",
        f"{scale['docs']:,.0f} documents (a turn's terms each; terms are counted, text is not "
        f"held): query CPU median {scale['cpu_ms']:.2f} ms (thread time); wall median "
        f"{scale['median_ms']:.2f} ms, 90th percentile {scale['p90_ms']:.2f} ms, over 200 "
        f"LoCoMo questions, top {TOP}; "
        f"{scale['put_us']:.0f} µs to index a document; heap {scale['heap_b']:.0f} B per "
        "document (tracemalloc, 10,000 documents).",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(__doc__, "ingest two conversations only", argv)
    text = run(argv)
    return publish(args, "locomo.py", text)


if __name__ == "__main__":
    sys.exit(main())
