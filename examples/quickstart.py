"""Quickstart: an agent's memory of a long conversation, kept in one ``.meh`` file.

The script replays the first sessions of one LoCoMo conversation (Maharana et al., ACL 2024;
see ``examples/data/README.md``) through memhop's turn loop, as an agent host would:

- each LoCoMo session is a scene: ``search(new_scene=True)`` opens its first turn;
- each exchange (``speaker_a`` says, ``speaker_b`` answers) is one turn: ``search()`` opens it,
  ``append_archive`` records a fact on it (here: when the session took place, on each scene's
  first turn) and ``update(input=..., output=..., created_at=...)`` closes it with one model
  call that extracts the turn's keywords;

then prints what the host would inject at its next turn: the profile brief that ``search()``
returns and the scene read ``scene_context("")``, rendered by the host rule (depth-1 rows only,
a summary line for a folded group, else the turn's own user and agent lines, each row dated by
its ``user_timestamp``), followed by a keyword search of the archive and the file's stats.

The model is ``memhop.LocalModel()`` (offline, deterministic, extractive keywords), unless
``LLM_URL``, ``LLM_KEY`` and ``LLM_MODEL`` are all set: then it is that OpenAI-compatible
chat-completions endpoint (``LLM_CONTEXT_TOKENS``, if set, is the model's context window).
A real model can fail a turn (it answered off contract, or too slowly): the script reports
that turn and goes on, and the end shows what memory holds all the same. Run
``python examples/quickstart.py --help`` for the options.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import memhop

DATA = Path(__file__).resolve().parent / "data" / "locomo-conv-26.json"
TURN_SPACING_MS = 60_000  # LoCoMo dates each session, not each line: one minute per exchange
DEFAULT_SESSIONS = 3
DEFAULT_KEYWORD = "support group"
ENV_VARS = ("LLM_URL", "LLM_KEY", "LLM_MODEL")
CONTEXT_VAR = "LLM_CONTEXT_TOKENS"


@dataclass(frozen=True)
class Exchange:
    """One turn of the agent loop: what ``speaker_a`` said and what ``speaker_b`` answered.

    Either side may be empty: a session that opens with ``speaker_b`` or ends with
    ``speaker_a`` gives a one-sided turn, which ``update`` accepts.
    """

    said: str
    answered: str


@dataclass(frozen=True)
class LocomoSession:
    number: int
    when: str  # as LoCoMo writes it: "1:56 pm on 8 May, 2023"
    started_at_ms: int
    exchanges: tuple[Exchange, ...]


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: tuple[LocomoSession, ...]
    qa: tuple[dict[str, Any], ...]


def parse_session_id(session_id: str) -> tuple[int, str, int]:
    """``"session_1_1:56 pm on 8 May, 2023"`` -> (1, "1:56 pm on 8 May, 2023", ms, as UTC)."""
    prefix, number, when = session_id.split("_", 2)
    if prefix != "session":
        msg = f"unexpected LoCoMo session id {session_id!r}"
        raise ValueError(msg)
    started = datetime.strptime(when, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    return int(number), when, int(started.timestamp() * 1000)


def pair_turns(
    turns: Sequence[dict[str, str]], speaker_a: str, speaker_b: str
) -> tuple[Exchange, ...]:
    """Group a session's lines into exchanges: ``speaker_a`` speaks, ``speaker_b`` answers."""
    exchanges: list[Exchange] = []
    said: list[str] = []
    answered: list[str] = []
    for turn in turns:
        if turn["speaker"] == speaker_a:
            if answered:  # speaker_a speaks again after an answer: the exchange is over
                exchanges.append(Exchange("\n".join(said), "\n".join(answered)))
                said, answered = [], []
            said.append(turn["text"])
        elif turn["speaker"] == speaker_b:
            answered.append(turn["text"])
        else:
            msg = f"unexpected speaker {turn['speaker']!r}"
            raise ValueError(msg)
    if said or answered:
        exchanges.append(Exchange("\n".join(said), "\n".join(answered)))
    return tuple(exchanges)


def load_conversation(path: Path) -> Conversation:
    item = json.loads(path.read_text(encoding="utf-8"))["items"][0]
    speaker_a, speaker_b = item["speaker_a"], item["speaker_b"]
    sessions = []
    for raw in item["sessions"]:
        number, when, started_at_ms = parse_session_id(raw["id"])
        exchanges = pair_turns(raw["turns"], speaker_a, speaker_b)
        sessions.append(LocomoSession(number, when, started_at_ms, exchanges))
    return Conversation(
        item["sample_id"], speaker_a, speaker_b, tuple(sessions), tuple(item.get("qa", ()))
    )


def choose_model() -> memhop.LlmConfig | memhop.LocalModel:
    """An endpoint when LLM_URL, LLM_KEY and LLM_MODEL are all set, else the offline model."""
    url, key, model = (os.environ.get(name, "").strip() for name in ENV_VARS)
    if url and key and model:
        print(f"model: {model} at {url} (from LLM_URL / LLM_MODEL; LLM_KEY set, not shown)")
        context = os.environ.get(CONTEXT_VAR, "").strip()
        context_tokens = int(context) if context.isdigit() else 0
        return memhop.LlmConfig(
            api_url=url, api_key=key, model=model, context_tokens=context_tokens
        )
    print(
        "model: memhop.LocalModel() (offline, extractive keywords; "
        "set LLM_URL, LLM_KEY and LLM_MODEL to use an endpoint)"
    )
    return memhop.LocalModel()


def format_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M")


def render_scene(context: memhop.SceneContext, labels: dict[int, str]) -> list[str]:
    """Fold a scene read into prompt lines by the host rule (api.md §9.2).

    (1) drop rows deeper than 1; (2) a row with children is a folded group: use its summary
    line (the Dream message); (3) otherwise the turn's own user and agent lines; (4) date each
    row by its ``user_timestamp``. A row whose messages have aged out renders its keywords.
    """
    lines: list[str] = []
    for row in context.topics:
        if row.depth > 1:
            continue
        stamp = format_ms(row.user_timestamp)
        if row.child_count > 0:
            texts = [
                (labels[int(m.role)], m.content)
                for m in row.messages
                if int(m.role) == memhop.ArchiveRole.DREAM
            ]
        else:
            texts = [
                (labels[int(m.role)], m.content)
                for m in row.messages
                if int(m.role) in (memhop.ArchiveRole.USER, memhop.ArchiveRole.AGENT)
            ]
        if not texts:  # aged out: the row's own keyword track is what is left
            texts = [("keywords", ", ".join(row.keywords))]
        for i, (label, text) in enumerate(texts):
            prefix = f"[{stamp}]" if i == 0 else " " * (len(stamp) + 2)
            for j, part in enumerate(text.splitlines() or [""]):
                lines.append(f"{prefix} {label}: {part}" if j == 0 else f"{prefix}   {part}")
    return lines


def replay(session: memhop.Session, conversation: Conversation, count: int) -> tuple[int, int]:
    """Drive the turn loop over the first ``count`` sessions; return (turns, failed turns).

    A turn the model fails (``MemHopError``: an off-contract reply, a timeout) is reported
    and left behind; the loop goes on with the next exchange.
    """
    turns = failed = 0
    for locomo in conversation.sessions[:count]:
        for i, exchange in enumerate(locomo.exchanges):
            created_at = locomo.started_at_ms + i * TURN_SPACING_MS
            session.search(new_scene=i == 0)  # a new LoCoMo session is a new scene
            if i == 0:  # a fact worth keeping on the open turn: when this session took place
                session.append_archive(
                    kind=memhop.ArchiveKind.EVENT,
                    event_type="session_start",
                    content=(
                        f"{conversation.speaker_a} and {conversation.speaker_b} talk, "
                        f"session {locomo.number}, {locomo.when}"
                    ),
                    created_at=created_at,
                )
            turns += 1
            try:
                session.update(input=exchange.said, output=exchange.answered, created_at=created_at)
            except memhop.MemHopError as exc:
                failed += 1
                print(f"turn {turns} (session {locomo.number}) not recorded: {exc}")
    return turns, failed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--sessions",
        type=int,
        default=DEFAULT_SESSIONS,
        metavar="N",
        help=f"replay the first N LoCoMo sessions (default {DEFAULT_SESSIONS})",
    )
    parser.add_argument("--all", action="store_true", help="replay every session")
    parser.add_argument(
        "--keyword",
        default=DEFAULT_KEYWORD,
        help=f"archive search example (default {DEFAULT_KEYWORD!r})",
    )
    args = parser.parse_args(argv)

    conversation = load_conversation(DATA)
    count = len(conversation.sessions) if args.all else max(1, args.sessions)
    count = min(count, len(conversation.sessions))
    labels: dict[int, str] = {
        memhop.ArchiveRole.USER: conversation.speaker_a,
        memhop.ArchiveRole.AGENT: conversation.speaker_b,
        memhop.ArchiveRole.SYSTEM: "system",
        memhop.ArchiveRole.DREAM: "summary",
    }
    print(
        f"LoCoMo {conversation.sample_id} ({conversation.speaker_a} and "
        f"{conversation.speaker_b}): replaying {count} of {len(conversation.sessions)} sessions"
    )
    llm = choose_model()
    profile = memhop.ProfileInput(
        name=conversation.speaker_b, role=f"talks with {conversation.speaker_a}"
    )

    with tempfile.TemporaryDirectory(prefix="memhop-quickstart-") as tmp:
        path = os.path.join(tmp, "agent.meh")
        with memhop.open(path, llm, profile=profile) as db:
            session = db.primary()
            started = time.perf_counter()
            turns, failed = replay(session, conversation, count)
            elapsed = time.perf_counter() - started
            scenes = "scene" if count == 1 else "scenes"
            recorded = f"{turns - failed} of {turns}" if failed else f"{turns}"
            print(
                f"recorded {recorded} turns in {count} {scenes} in {elapsed:.2f} s"
                f" (temporary {path})"
            )

            # The host's next turn: search() opens it and hands back the profile brief;
            # scene_context("") is the pure read of the current scene it injects. (This turn
            # is never closed here; an abandoned turn keeps its records, no read lists it.)
            upcoming = session.search()
            context = session.scene_context("")
            rendered = render_scene(context, labels)
            print()
            print("=== injected at the next turn ===")
            print("--- profile brief (search().profile_brief) ---")
            print(upcoming.profile_brief.rstrip("\n") or "(empty)")
            last = conversation.sessions[count - 1]
            print(
                f'--- scene "{context.scene_name}" = LoCoMo session {last.number}, {last.when} '
                '(scene_context(""), host rendering) ---'
            )
            print("\n".join(rendered) if rendered else "(empty)")
            print("=== end of injected block ===")

            print()
            print(f'--- search_l4(keyword="{args.keyword}", limit=3) ---')
            questions = [
                q for q in conversation.qa if args.keyword.lower() in q["question"].lower()
            ]
            if questions:
                q = questions[0]
                print(f"LoCoMo question: {q['question']}  (gold answer: {q['answer']})")
            for slot in session.search_l4(keyword=args.keyword, limit=3):
                spoken = int(slot.kind) == memhop.ArchiveKind.UTTERANCE
                label = labels[int(slot.role)] if spoken else slot.event_type
                print(f"[{format_ms(slot.created_at)}] {label}: {slot.content}")
            events = session.search_l4(kind=memhop.ArchiveKind.EVENT)
            print(f"--- events on record: {len(events)} ---")
            for slot in events:
                print(f"[{format_ms(slot.created_at)}] {slot.event_type}: {slot.content}")

            stats = db.stats()
            print()
            print(f"db.stats(): {json.dumps(stats.to_dict(), sort_keys=True)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
