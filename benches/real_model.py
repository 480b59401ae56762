"""Memory formation with a real model, per ``structured_output`` mode (run by hand, never in CI).

Replays the first sessions of LoCoMo conv-26 (``examples/data``) through the turn loop
against the endpoint in ``LLM_URL`` / ``LLM_KEY`` / ``LLM_MODEL`` (it skips cleanly without
them), once per mode, then runs one Dream pass, and prints a markdown report: the share of
``update`` calls that produced keywords, requests per operation, the share of keywords
found in the turn's own words, the share of keywords of at most six words (a keyword, not
a sentence), the median latency of an ``update``, what the Dream pass did and the
summaries it wrote. ``docs/model.md`` records a run against a local
llama.cpp server (SmolLM2-135M).

    python benches/real_model.py                       # every mode, three sessions
    python benches/real_model.py --modes auto off --turns 10
    python benches/real_model.py --keep /tmp/rm        # keep each mode's .meh file
    python benches/real_model.py --dream-only /tmp/rm  # one more Dream pass on kept files
    python benches/real_model.py --no-dream            # the turns only
    python benches/real_model.py --modes auto --turns 20 --no-dream --show-keywords

A real model is slow: ``--turns`` caps the turns per mode (the report says so).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from _common import REPO, log, machine, med, table

import memhop

MODES = ("auto", "json_schema", "json_object", "off")
TURN_SPACING_MS = 60_000
SHORT_WORDS = 6  # an item of more words than this is a sentence, not a keyword
_WORD = re.compile(r"\w+")


def _quickstart() -> object:
    """The quickstart module: its LoCoMo loader is the one the example uses."""
    spec = importlib.util.spec_from_file_location("quickstart", REPO / "examples/quickstart.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["quickstart"] = module
    spec.loader.exec_module(module)
    return module


@dataclass
class ModeRun:
    mode: str
    turns: int = 0
    with_keywords: int = 0
    failed: int = 0
    keywords: int = 0
    grounded: int = 0
    short: int = 0
    latencies: list[float] = field(default_factory=list)
    operations: int = 0
    requests: int = 0
    dream: str = "not run"
    dream_s: float = 0.0
    summaries: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def grounded(keyword: str, words: set[str]) -> bool:
    """Every word of ``keyword`` occurs in the turn (case-folded)."""
    parts = _WORD.findall(keyword.casefold())
    return bool(parts) and all(part in words for part in parts)


def config(mode: str, context_tokens: int) -> memhop.LlmConfig:
    url, key, model = (os.environ[name] for name in ("LLM_URL", "LLM_KEY", "LLM_MODEL"))
    return memhop.LlmConfig(
        api_url=url,
        api_key=key,
        model=model,
        structured_output=mode,
        context_tokens=context_tokens,
        timeout_secs=120,
    )


def defaults(floor: int) -> memhop.Defaults:
    # No background passes while measuring; the one pass is asked for explicitly.
    return memhop.Defaults(scene_dream_topic_threshold=-1, dream_compress_min_topics=floor)


def replay(run: ModeRun, db: memhop.DB, sessions: int, cap: int, show: bool) -> None:
    quickstart = _quickstart()
    conversation = quickstart.load_conversation(quickstart.DATA)  # type: ignore[attr-defined]
    session = db.primary()
    for locomo in conversation.sessions[:sessions]:
        for i, exchange in enumerate(locomo.exchanges):
            if run.turns >= cap:
                return
            session.search(new_scene=i == 0)
            words = set(_WORD.findall(f"{exchange.said}\n{exchange.answered}".casefold()))
            created_at = locomo.started_at_ms + i * TURN_SPACING_MS
            started = time.perf_counter()
            run.turns += 1
            try:
                row = session.update(
                    input=exchange.said, output=exchange.answered, created_at=created_at
                )
            except memhop.MemHopError as exc:
                run.failed += 1
                run.errors.append(str(exc)[:160])
                log(f"  {run.mode} turn {run.turns}: failed: {str(exc)[:120]}")
                continue
            finally:
                run.latencies.append(time.perf_counter() - started)
            kws = row.fused_keywords
            run.with_keywords += bool(kws)
            run.keywords += len(kws)
            run.grounded += sum(grounded(k, words) for k in kws)
            run.short += sum(len(k.split()) <= SHORT_WORDS for k in kws)
            log(f"  {run.mode} turn {run.turns}: {len(kws)} keywords, {run.latencies[-1]:.1f} s")
            if show:
                log(f"    {list(kws)}")


def dream_once(run: ModeRun, db: memhop.DB) -> None:
    started = time.perf_counter()
    try:
        report = db.primary().dream()
    except memhop.MemHopError as exc:
        run.dream = f"failed: {str(exc)[:120]}"
    else:
        stages = ", ".join(f"{s.name}={s.status}" for s in report.stages if s.status != "ok")
        run.dream = (
            f"{report.consolidated_scenes} scene(s) consolidated, "
            f"{report.l2_topics_compressed} topics folded, L0 updated: {report.l0_updated}"
            + (f" ({stages})" if stages else "")
        )
    run.dream_s = time.perf_counter() - started
    rows = db.primary().search_l4()
    run.summaries = [r.content for r in rows if r.role == memhop.ArchiveRole.DREAM]


def measure(mode: str, path: Path, args: argparse.Namespace) -> ModeRun:
    run = ModeRun(mode)
    llm = config(mode, args.context_tokens)
    with memhop.open(
        str(path), llm, defaults(args.floor), profile=memhop.ProfileInput("Melanie")
    ) as db:
        replay(run, db, args.sessions, args.turns, args.show_keywords)
        usage = db.stats().model_usage["0000000000000000"]
        run.operations, run.requests = usage.operations, usage.requests
        if args.dream:
            log(f"  {mode}: Dream pass")
            dream_once(run, db)
    return run


def report(runs: Sequence[ModeRun], args: argparse.Namespace, tmp: str) -> str:
    rows = []
    for r in runs:
        answered = max(r.turns, 1)
        rows.append(
            [
                f"`{r.mode}`",
                str(r.turns),
                f"{r.with_keywords}/{r.turns} ({100 * r.with_keywords / answered:.0f}%)",
                f"{r.requests / max(r.operations, 1):.2f} ({r.requests}/{r.operations})",
                f"{100 * r.grounded / max(r.keywords, 1):.0f}% of {r.keywords}",
                f"{100 * r.short / max(r.keywords, 1):.0f}%",
                f"{med(r.latencies):.1f} s" if r.latencies else "-",
                f"{r.dream} ({r.dream_s:.0f} s)",
            ]
        )
    header = [
        "mode",
        "turns",
        "updates with keywords",
        "requests per operation",
        "keywords in the turn's words",
        f"keywords of <= {SHORT_WORDS} words",
        "median update",
        "one Dream pass",
    ]
    facts = machine(tmp, scope="memhop", extra=[("model", os.environ.get("LLM_MODEL", "?"))])
    lines = [table(["", ""], [[k, v] for k, v in facts]), "", table(header, rows)]
    lines.append(
        f"\nSessions 1-{args.sessions} of conv-26, at most {args.turns} turns per mode; "
        f"context_tokens={args.context_tokens}, Dream floor {args.floor}."
    )
    for r in runs:
        for error in sorted(set(r.errors))[:3]:
            lines.append(f"- `{r.mode}` failure: {error}")
        for summary in r.summaries:
            lines.append(f"- `{r.mode}` Dream summary: {summary[:200]}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--turns", type=int, default=1000, help="cap on turns per mode")
    parser.add_argument("--context-tokens", type=int, default=4096)
    parser.add_argument("--floor", type=int, default=4, help="Dream's dream_compress_min_topics")
    parser.add_argument("--keep", default=None, help="keep each mode's .meh file in this dir")
    parser.add_argument("--dream-only", default=None, help="one Dream pass on kept files")
    parser.add_argument(
        "--no-dream", dest="dream", action="store_false", help="measure the turns only"
    )
    parser.add_argument(
        "--show-keywords", action="store_true", help="log each update's keywords (stderr)"
    )
    args = parser.parse_args(argv)
    if not all(os.environ.get(n) for n in ("LLM_URL", "LLM_KEY", "LLM_MODEL")):
        print("skipped: set LLM_URL, LLM_KEY and LLM_MODEL to measure a real model")
        return 0
    tmp = args.keep or args.dream_only or tempfile.mkdtemp(prefix="memhop-real-model-")
    Path(tmp).mkdir(parents=True, exist_ok=True)
    runs = []
    for mode in args.modes:
        path = Path(tmp) / f"{mode}.meh"
        log(f"mode {mode}: {path}")
        if args.dream_only:
            run = ModeRun(mode)
            llm = config(mode, args.context_tokens)
            with memhop.open(str(path), llm, defaults(args.floor)) as db:
                dream_once(run, db)
            print(f"{mode}: {run.dream} ({run.dream_s:.0f} s)")
            for summary in run.summaries:
                print(f"  summary: {summary[:200]}")
            continue
        path.unlink(missing_ok=True)
        runs.append(measure(mode, path, args))
    if runs:
        print(report(runs, args, tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
