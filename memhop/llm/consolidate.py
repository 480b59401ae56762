"""Consolidation: show the model one scene's surface, read back the groups it proposes.

The listing names each topic by its decimal id with its depth and keyword track;
the model answers ``{"l2_groups": [{"node_hashes": [...], "merged_summary": "..."}]}``.
The parser refuses only what it cannot read (bad JSON, an unreadable member id);
whether a group is usable (two members, all listed, no overlap, a non-empty
summary) is decided by the Dream pass that applies it, not here.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from memhop.errors import LLMError
from memhop.llm._decode import as_list, as_object, as_str, field, loads
from memhop.llm.chat import (
    CONSOLIDATION_MAX_TOKENS,
    ChatClient,
    ask_json,
    parse_uint64_flex,
    strip_code_blocks,
)
from memhop.llm.types import Group, TopicDigest

__all__ = [
    "CONSOLIDATE_FORMAT_SUFFIX",
    "CONSOLIDATE_TASK",
    "build_consolidate_system",
    "build_consolidate_user",
    "consolidate",
    "go_list",
    "parse_consolidation",
]

CONSOLIDATE_TASK = "memory-consolidation"
"""The tag that opens the system prompt; test fakes dispatch on it."""

_SYSTEM = """Task: {task}.
You look after an agent's long-term conversation memory. The listing shows the topics on \
the surface of one scene, oldest first; each topic is the keyword track of one earlier \
turn or of an earlier merge. Find runs of ADJACENT topics that belong to one thread of \
conversation, and rewrite the keywords of each run as one natural text that reads like \
the conversation it came from.

Rules:
- Work from the newest topic back towards the oldest. Group adjacent topics that carry \
on one thread: the same subject, a chain of cause and effect, a follow-up, or clearly \
overlapping meaning.
- Never merge topics about clearly different subjects, even inside the same scene. This \
rule outranks the target below: fusing unrelated topics creates a false memory, while a \
pair left unmerged only costs a later pass.
- Target: bring the number of remaining topics down towards {floor} or fewer, using only \
the groups the previous rule allows, and go no further than that.
- For each group write one coherent text in natural language that retells what was \
said. It is a retelling, not a summary. Treat the members' keywords as a checklist of \
facts: every keyword of every member must appear, word for word or as the exact fact it \
names. Never drop, merge away or generalise an item; relative time words such as \
"yesterday" or "next week" stay exactly as they were said.
- There is no length limit. Keep names, numbers, dates, times, places, causes and \
effects, attitudes, preferences and every specific fact.
- Keep the emotional tone of the original.
- Keep the original language, mixed-language terms, numbers and proper names as they are.
- Copy the member ids exactly as they are listed.
- If nothing can be merged, or the scene already holds {floor} topics or fewer, return \
an empty group list.

Reply with one JSON object and nothing else (no markdown, no code fences):
{{"l2_groups": [{{"node_hashes": [<id>, <id>], "merged_summary": "<text>"}}]}}
Every group must carry a non-empty merged_summary.
"""

CONSOLIDATE_FORMAT_SUFFIX = """

Your previous answer could not be read. Reply with JSON only, in exactly the shape the \
system message gives, with no markdown and no commentary."""


def go_list(items: Sequence[str]) -> str:
    """A string list as Go's ``%v`` prints it: ``[a b c]`` (no quoting)."""
    return "[" + " ".join(items) + "]"


def build_consolidate_system(floor: int) -> str:
    """The system prompt with the floor (a negative floor reads as 0, "no floor")."""
    return _SYSTEM.format(task=CONSOLIDATE_TASK, floor=max(floor, 0))


def build_consolidate_user(topics: Sequence[TopicDigest]) -> str:
    """The listing, in the order given (the caller passes the scene's surface in turn order)."""
    lines = [f"# Surface topics of one scene ({len(topics)} topics, oldest first)", ""]
    lines += [f"- id={t.id} depth={t.depth} kw={go_list(t.keywords)}" for t in topics]
    lines += ["", "Return the merged groups now."]
    return "\n".join(lines)


def parse_consolidation(reply: str) -> tuple[Group, ...]:
    """Read the proposed groups; an unreadable reply or member id refuses the whole reply.

    A missing ``l2_groups`` is a decline (no groups); a missing ``merged_summary`` reads
    as ``""`` and a one-member group is kept: the applier judges usability.
    """
    what = "consolidation reply"
    obj = as_object(loads(strip_code_blocks(reply), what), what)
    groups: list[Group] = []
    for item in as_list(field(obj, "l2_groups"), f"{what} l2_groups"):
        group = as_object(item, f"{what} group")
        raw_ids = as_list(field(group, "node_hashes"), f"{what} node_hashes")
        try:
            ids = tuple(parse_uint64_flex(raw) for raw in raw_ids)
        except LLMError as exc:
            msg = f"{what}: {exc.message}"
            raise LLMError(msg) from exc
        summary = as_str(field(group, "merged_summary"), f"{what} merged_summary")
        groups.append(Group(member_ids=ids, summary=summary))
    return tuple(groups)


def consolidate(
    chat: ChatClient,
    topics: Sequence[TopicDigest],
    floor: int,
    *,
    cancel: threading.Event | None = None,
) -> tuple[Group, ...]:
    """Ask for folds of ``topics`` toward ``floor``; an empty listing asks nothing."""
    if not topics:
        return ()
    return ask_json(
        chat,
        build_consolidate_system(floor),
        build_consolidate_user(topics),
        ceiling=CONSOLIDATION_MAX_TOKENS,
        parse=parse_consolidation,
        format_suffix=CONSOLIDATE_FORMAT_SUFFIX,
        cancel=cancel,
    )
