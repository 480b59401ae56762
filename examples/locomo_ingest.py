"""Every LoCoMo conversation in a ``.meh`` file of its own, one Dream pass, and what was kept.

LoCoMo (Maharana et al., *Evaluating Very Long-Term Conversational Memory of LLM
Agents*, ACL 2024; CC BY-NC 4.0, see ``examples/data/README.md``) holds ten long
conversations between two people, each in up to 35 dated sessions. For each
conversation this script:

1. creates a file whose primary domain is ``speaker_b`` (the agent), talking
   with ``speaker_a`` (the user);
2. replays every session as a scene, dated by the session: a session's first
   exchange opens a new scene (named after the session with ``update_scene``),
   and exchange ``i`` is stamped at the session's start plus ``i`` minutes
   (LoCoMo dates sessions, not lines);
3. runs one Dream pass over the whole domain (the automatic background pass is
   turned off, so that pass is the only one);
4. prints what memory kept: the rows a host would see, the lines and events
   still searchable, the originals Dream kept past the retention window, the
   sessions the association layer (L1) joined, and the file's size.

LoCoMo's sessions span months of 2022-23, far longer than the default
retention window (7 days), so Dream's retention sweep meets lines past it.
memhop keeps such an original until its turn is folded into a Dream summary
that still exists; upstream MemHop sweeps it (``--sweep-unfolded`` shows that).

The model is ``memhop.LocalModel()`` (offline, deterministic, extractive).
``--limit N`` ingests the first N conversations and ``--sessions N`` the first
N sessions of each; ``--out DIR`` keeps the files. The conversation and session
pairing rules are the quickstart's (``examples/quickstart.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from quickstart import TURN_SPACING_MS, Conversation, LocomoSession, pair_turns, parse_session_id

import memhop

DATA = Path(__file__).resolve().parent / "data" / "locomo10.json"
SHOWN_ASSOCIATIONS = 5


@dataclass(frozen=True)
class Kept:
    """What one conversation's memory holds after ingest and Dream."""

    sample_id: str
    sessions: int
    lines: int
    turns: int
    report: memhop.DreamReport
    scenes: tuple[str, ...]  # scene names, in session order
    largest_scene: int
    surface_rows: int
    summaries: tuple[str, ...]  # each Dream summary row, rendered for a person
    searchable: int
    l1_nodes: int
    associated: tuple[tuple[str, ...], ...]
    file_bytes: int


def session_number(scene_name: str) -> int:
    """The LoCoMo session number in a scene name this script gave ("session 3 (...)")."""
    return int(scene_name.split()[1])


def describe(scene_name: str, row: memhop.SceneContextTopic) -> str:
    """A Dream summary row: where it is, how grounded, what it says (not what was said)."""
    text = " ".join(m.content for m in row.messages if m.role == memhop.ArchiveRole.DREAM)
    grounding = "n/a" if row.grounding is None else f"{row.grounding:.2f}"
    return (
        f"{scene_name}: a reconstruction of {len(row.derived_from)} turns "
        f"(grounding {grounding}): {text[:100]!r}"
    )


def load_conversations(path: Path) -> list[Conversation]:
    """Every conversation of the data file, its sessions dated and paired into exchanges."""
    items = json.loads(path.read_text(encoding="utf-8"))["items"]
    out = []
    for item in items:
        speaker_a, speaker_b = item["speaker_a"], item["speaker_b"]
        sessions = []
        for raw in item["sessions"]:
            number, when, started_at_ms = parse_session_id(raw["id"])
            exchanges = pair_turns(raw["turns"], speaker_a, speaker_b)
            sessions.append(LocomoSession(number, when, started_at_ms, exchanges))
        out.append(Conversation(item["sample_id"], speaker_a, speaker_b, tuple(sessions), ()))
    return out


def ingest(session: memhop.Session, sessions: Sequence[LocomoSession]) -> int:
    """Replay ``sessions`` through the turn loop, one scene each; return the number of turns."""
    turns = 0
    for locomo in sessions:
        for i, exchange in enumerate(locomo.exchanges):
            opened = session.search(new_scene=i == 0)
            if i == 0:
                name = f"session {locomo.number} ({locomo.when})"
                session.update_scene(opened.scene.scene_id, name=name)
            created_at = locomo.started_at_ms + i * TURN_SPACING_MS
            session.update(input=exchange.said, output=exchange.answered, created_at=created_at)
            turns += 1
    return turns


def remember(
    conversation: Conversation, path: str, sessions: int, defaults: memhop.Defaults
) -> Kept:
    """Ingest one conversation into a new file at ``path``, dream once, and take stock."""
    chosen = conversation.sessions[:sessions]
    lines = sum(bool(e.said) + bool(e.answered) for s in chosen for e in s.exchanges)
    profile = memhop.ProfileInput(
        name=conversation.speaker_b, role=f"talks with {conversation.speaker_a}"
    )
    with memhop.open(path, memhop.LocalModel(), defaults, profile) as db:
        me = db.primary()
        turns = ingest(me, chosen)
        report = me.dream()
        scenes = me.list_scenes()
        names = {s.scene_id: s.scene_name for s in scenes}
        surfaces = [
            [row for row in me.scene_context(s.scene_id).topics if row.depth == 1] for s in scenes
        ]
        surface = [row for rows in surfaces for row in rows]
        nodes = me.list_l1()
        by_edge: dict[str, list[str]] = {}
        for node in nodes:
            for edge in node.edge_ids:
                by_edge.setdefault(edge, []).append(names[node.scene_id])
        kept = Kept(
            sample_id=conversation.sample_id,
            sessions=len(chosen),
            lines=lines,
            turns=turns,
            report=report,
            scenes=tuple(sorted(names.values(), key=session_number)),
            largest_scene=max((len(rows) for rows in surfaces), default=0),
            surface_rows=len(surface),
            summaries=tuple(
                describe(names[s.scene_id], row)
                for s, rows in zip(scenes, surfaces, strict=True)
                for row in rows
                if row.origin == "dream"
            ),
            searchable=len(me.search_l4()),
            l1_nodes=len(nodes),
            associated=tuple(
                sorted(tuple(sorted(m, key=session_number)) for m in by_edge.values())
            ),
            file_bytes=0,
        )
    return Kept(**{**kept.__dict__, "file_bytes": os.path.getsize(path)})


def show(conversation: Conversation, kept: Kept) -> None:
    r = kept.report
    print(
        f"{kept.sample_id} ({conversation.speaker_a} and {conversation.speaker_b}): "
        f"{kept.sessions} sessions, {kept.lines} lines -> {kept.turns} turns"
    )
    span = kept.scenes[0] if len(kept.scenes) == 1 else f"{kept.scenes[0]} ... {kept.scenes[-1]}"
    print(f"  scenes: {span}")
    print(
        f"  dream: swept {r.l4_records_pruned} originals, kept {r.l4_records_kept_unfolded} "
        f"past the window (no summary carries them); folded {r.l2_topics_compressed} rows "
        f"in {r.consolidated_scenes} scenes; L1 +{r.l1_nodes_added} nodes "
        f"+{r.l1_edges_added} edges; profile updated: {r.l0_updated}"
    )
    print(
        f"  kept: {kept.surface_rows} rows in {len(kept.scenes)} scenes "
        f"({len(kept.summaries)} Dream summaries; the largest scene has {kept.largest_scene} rows,"
        f" folding starts above the floor of {memhop.DEFAULTS.dream_compress_min_topics}), "
        f"{kept.searchable} lines and events searchable, {kept.file_bytes:,} bytes"
    )
    for summary in kept.summaries:
        print(f"    {summary}")
    print(f"  L1: {kept.l1_nodes} scene nodes, {len(kept.associated)} associations")
    ordered = sorted(kept.associated, key=lambda m: [session_number(n) for n in m])
    for members in ordered[:SHOWN_ASSOCIATIONS]:
        print(f"    {' <-> '.join(members)}")
    if len(ordered) > SHOWN_ASSOCIATIONS:
        print(f"    ... and {len(ordered) - SHOWN_ASSOCIATIONS} more")


def positive(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    value = int(text)
    if value < 1:
        msg = f"must be at least 1, got {value}"
        raise argparse.ArgumentTypeError(msg)
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--limit", type=positive, metavar="N", help="the first N conversations")
    parser.add_argument(
        "--sessions", type=positive, metavar="N", help="the first N sessions of each"
    )
    parser.add_argument("--out", metavar="DIR", help="write the .meh files here (kept)")
    parser.add_argument(
        "--sweep-unfolded",
        action="store_true",
        help="sweep every original past the window, as upstream MemHop does",
    )
    args = parser.parse_args(argv)

    conversations = load_conversations(DATA)[: args.limit]
    sessions = (
        args.sessions if args.sessions is not None else max(len(c.sessions) for c in conversations)
    )
    defaults = memhop.Defaults(
        scene_dream_topic_threshold=-1,  # no background pass: the explicit one is the only one
        sweep_unfolded=args.sweep_unfolded,
    )
    print(
        f"LoCoMo: {len(conversations)} conversations, one .meh file each, "
        f"model memhop.LocalModel(), retention {memhop.DEFAULTS.content_retention_ms // 86_400_000}"
        f" days{' (sweep_unfolded)' if args.sweep_unfolded else ''}"
    )
    with tempfile.TemporaryDirectory(prefix="memhop-locomo-") as tmp:
        out = Path(args.out) if args.out else Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        totals = [0, 0, 0]
        for conversation in conversations:
            path = out / f"{conversation.sample_id}.meh"
            if path.exists():
                parser.error(f"{path} exists; give --out a new directory")
            kept = remember(conversation, str(path), sessions, defaults)
            show(conversation, kept)
            totals[0] += kept.turns
            totals[1] += kept.searchable
            totals[2] += kept.file_bytes
        print(
            f"total: {totals[0]} turns, {totals[1]} lines and events searchable, "
            f"{totals[2]:,} bytes in {len(conversations)} files"
            + (f" under {out}" if args.out else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
