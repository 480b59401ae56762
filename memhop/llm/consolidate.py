"""Consolidation: show the model one scene's surface, read back the groups it proposes.

The listing names each topic by its decimal id with its depth and keyword track;
the model answers ``{"l2_groups": [{"node_hashes": [...], "keywords": [...],
"merged_summary": "..."}]}``. The reply's schema offers each group as one run of
two to ``MAX_RUN`` adjacent listed topics, with the run's keywords to copy before
the summary is written (so a small model writes it right after its members' own
words, not a neighbour's), and a summary that cannot open like a stand-in. An endpoint that
enforces the schema can only name a run the Dream pass may fold. The parser reads
``node_hashes`` and ``merged_summary`` (the copied keywords are not kept) and
refuses what it cannot read (bad JSON, an unreadable member id) and what would
invent: an id that was not listed, or a summary that is empty, a stand-in
("<text>", "...") or has no word in it. Whether a group is usable (two adjacent
members, no overlap) is still decided by the Dream pass that applies it: a reply
from an endpoint that ignores the schema is held to the same rules.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Collection, Sequence

from memhop.errors import LLMError
from memhop.llm._decode import as_list, as_object, as_str, field, first_object, is_placeholder
from memhop.llm.chat import (
    CONSOLIDATION_MAX_TOKENS,
    Ask,
    ChatClient,
    ReplySchema,
    ask_json,
    escalation_ceiling,
    parse_uint64_flex,
)
from memhop.llm.types import Group, TopicDigest

__all__ = [
    "CONSOLIDATE_FORMAT_SUFFIX",
    "CONSOLIDATE_TASK",
    "ECHO_CHARS",
    "MAX_RUN",
    "SUMMARY_PATTERN",
    "build_consolidate_system",
    "build_consolidate_user",
    "consolidate",
    "consolidation_schema",
    "go_list",
    "parse_consolidation",
]

CONSOLIDATE_TASK = "memory-consolidation"
"""The tag that opens the system prompt; test fakes dispatch on it."""
MAX_RUN = 4
"""The longest run the schema offers as one group (the schema grows with the listing times
this); a later pass folds the folds."""
SUMMARY_PATTERN = r'^[^<"\\\x00-\x20{}\[\],:][^"\\\x00-\x1f]*$'
"""A summary opens with neither a stand-in's ``<``, blank space nor JSON punctuation (a
model that lost its place writes ``{``), and holds no double quote, backslash or control
character. llama.cpp applies a pattern to the string as written inside the JSON text, so
these are excluded to keep every reply valid JSON there; other endpoints apply it to the
decoded text, where it means the same."""
ECHO_CHARS = 40_000
"""The most keyword text the schema fixes for copying, over all runs; a longer listing leaves
the copy free, so the schema stays within what hosted endpoints take (OpenAI caps the
total length of a schema's enum values)."""

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
- Copy the member ids exactly as they are listed, each as a quoted string, in listing \
order. Then copy every keyword of those members into "keywords", and only then write \
merged_summary from them: it retells these members and no others.
- Write merged_summary as plain sentences without double quotes.
- If nothing can be merged, or the scene already holds {floor} topics or fewer, return \
an empty group list.

Reply with one JSON object and nothing else (no markdown, no code fences), in this shape \
(the angle-bracketed parts stand for your own content):
{{"l2_groups": [{{"node_hashes": ["<id>", "<id>"], "keywords": ["<keyword>", "<keyword>"], \
"merged_summary": "<text>"}}]}}
Every group must carry a non-empty merged_summary.
"""

_WORD = re.compile(r"\w")

CONSOLIDATE_FORMAT_SUFFIX = """

That answer could not be used. Answer again with one JSON object in the shape the system \
message gives, naming only ids from the listing above and writing real text for every \
merged_summary. JSON only: no prose before or after it and no code fence."""


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


def consolidation_schema(topics: Sequence[TopicDigest]) -> ReplySchema:
    """The reply's schema for this listing: each group is one run of adjacent listed topics.

    A group is one of the listing's runs of two to ``MAX_RUN`` topics: its ids (decimal
    strings, in listing order) and, while they fit in ``ECHO_CHARS``, its keywords are
    each an ``enum`` of that one value, so a grammar-bound model copies them before it
    writes the summary, which must match ``SUMMARY_PATTERN``. At most one group per two
    topics.
    """
    runs = [
        topics[start:end]
        for start in range(len(topics))
        for end in range(start + 2, min(start + MAX_RUN, len(topics)) + 1)
    ]
    echoed = sum(len(k) + 4 for run in runs for t in run for k in t.keywords)
    groups = [_run_group(run, echo=echoed <= ECHO_CHARS) for run in runs]
    return ReplySchema(
        "consolidation",
        {
            "type": "object",
            "properties": {
                "l2_groups": {
                    "type": "array",
                    "items": {"anyOf": groups},
                    "maxItems": len(topics) // 2,
                }
            },
            "required": ["l2_groups"],
            "additionalProperties": False,
        },
    )


def _run_group(run: Sequence[TopicDigest], *, echo: bool) -> dict[str, object]:
    """One run as a closed group object: its ids, its keywords (fixed when ``echo``), a summary."""
    strings = {"type": "array", "items": {"type": "string"}}
    keywords = [k for t in run for k in t.keywords]
    return {
        "type": "object",
        "properties": {
            "node_hashes": {**strings, "enum": [[str(t.id) for t in run]]},
            "keywords": {**strings, "enum": [keywords]} if echo else strings,
            "merged_summary": {"type": "string", "pattern": SUMMARY_PATTERN},
        },
        "required": ["node_hashes", "keywords", "merged_summary"],
        "additionalProperties": False,
    }


def parse_consolidation(reply: str, listed: Collection[int]) -> tuple[Group, ...]:
    """Read the proposed groups; one unreadable or invented part refuses the whole reply.

    A missing ``l2_groups`` is a decline (no groups); a one-member group is kept:
    the applier judges usability.
    """
    what = "consolidation reply"
    groups: list[Group] = []
    for item in as_list(field(first_object(reply, what), "l2_groups"), f"{what} l2_groups"):
        group = as_object(item, f"{what} group")
        raw_ids = as_list(field(group, "node_hashes"), f"{what} node_hashes")
        try:
            ids = tuple(parse_uint64_flex(raw) for raw in raw_ids)
        except LLMError as exc:
            msg = f"{what}: {exc.message}"
            raise LLMError(msg) from exc
        unlisted = [f"{i}" for i in ids if i not in listed]
        if unlisted:
            msg = f"{what}: member ids {', '.join(unlisted)} were not in the listing"
            raise LLMError(msg)
        summary = as_str(field(group, "merged_summary"), f"{what} merged_summary")
        if is_placeholder(summary) or not _WORD.search(summary):
            msg = f"{what}: merged_summary {summary!r} is empty, a placeholder or wordless"
            raise LLMError(msg)
        groups.append(Group(member_ids=ids, summary=summary))
    return tuple(groups)


def consolidate(
    chat: ChatClient,
    topics: Sequence[TopicDigest],
    floor: int,
    *,
    cancel: threading.Event | None = None,
) -> tuple[Group, ...]:
    """Ask for folds of ``topics`` toward ``floor``; a listing of fewer than two asks nothing."""
    if len(topics) < 2:
        return ()
    listed = frozenset(t.id for t in topics)
    ask = Ask(
        what="consolidation",
        system=build_consolidate_system(floor),
        user=build_consolidate_user(topics),
        schema=consolidation_schema(topics),
        rungs=(CONSOLIDATION_MAX_TOKENS, escalation_ceiling(chat)),
        parse=lambda reply: parse_consolidation(reply, listed),
        format_suffix=CONSOLIDATE_FORMAT_SUFFIX,
    )
    return ask_json(chat, ask, cancel=cancel)
