"""Profile distillation: show the model association samples, read back a profile.

The listing names each L1 sample by its 16-hex id with its importance and keywords;
the model answers with ``emotion``, ``mbti``, ``personality`` and ``per_node``. Both
the ``emotion`` and the ``mbti`` objects are required (``{}`` in each is a valid
neutral answer); values are clamped, the personality is cut to 160 runes, and a
``per_node`` row survives only if it names a sampled node. A personality that is a
template's stand-in ("<text>", "...") refuses the reply; an empty one is a valid
"no reading". No MBTI type is read: the caller derives it from the axes. The
reply's schema lists the sampled ids, so an endpoint that enforces it names no other.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Collection, Sequence

from memhop.errors import LLMError
from memhop.llm._decode import (
    as_float,
    as_list,
    as_object,
    as_str,
    field,
    first_object,
    is_placeholder,
)
from memhop.llm.chat import Ask, ChatClient, ReplySchema, ask_json, escalation_ceiling
from memhop.llm.consolidate import go_list
from memhop.llm.types import Distillation, NodeDigest, NodeMood

__all__ = [
    "DISTILL_FORMAT_SUFFIX",
    "DISTILL_MAX_TOKENS",
    "DISTILL_PERSONALITY_MAX_RUNES",
    "DISTILL_SYSTEM",
    "DISTILL_TASK",
    "build_distill_user",
    "distill",
    "distillation_schema",
    "parse_distillation",
]

DISTILL_TASK = "profile-distillation"
"""The tag that opens the system prompt; test fakes dispatch on it."""
DISTILL_MAX_TOKENS = 2048
DISTILL_PERSONALITY_MAX_RUNES = 160
_PER_NODE_ROWS = 20
_HEX = frozenset("0123456789abcdefABCDEF")

DISTILL_SYSTEM = f"""Task: {DISTILL_TASK}.
You read samples of an agent's associative memory: each line is one memory node with its \
importance and the keywords it gathers. From them, infer the agent's current emotional \
state, its MBTI-style leanings and a short sketch of its personality.

Reply with one JSON object of exactly this shape:
{{"emotion": {{"valence": <0..1>, "arousal": <0..1>, "dominance": <0..1>}},
 "mbti": {{"i_e": <-1..1>, "n_s": <-1..1>, "t_f": <-1..1>, "j_p": <-1..1>}},
 "personality": "<text>",
 "per_node": [{{"id_hex": "<the 16 hex digits of a listed node>", "valence": <0..1>, \
"arousal": <0..1>}}]}}

Rules:
- valence: 0 is very negative, 0.5 neutral, 1 very positive. arousal: 0 is calm, 1 \
highly excited. dominance: 0 is submissive, 1 dominant.
- Each MBTI axis is signed: a negative value leans to I, N, T or J, a positive value \
to E, S, F or P, and the magnitude is the strength of the lean. Use 0 only when the \
samples say nothing about that axis.
- personality: at most {DISTILL_PERSONALITY_MAX_RUNES} characters, in the third person, \
durable traits only, taken strictly from the samples; never invent.
- per_node: at most {_PER_NODE_ROWS} rows, only for the nodes with the strongest \
emotional signal; leave neutral nodes out; copy id_hex exactly as listed.
- Output the JSON object only: no markdown, no code fences, no commentary.
"""

DISTILL_FORMAT_SUFFIX = """

That answer could not be used. Answer again with one JSON object in the shape the system \
message gives, with numbers for every value and real text for personality. JSON only: \
no prose before or after it and no code fence."""


def _closed(properties: dict[str, object]) -> dict[str, object]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def distillation_schema(samples: Sequence[NodeDigest]) -> ReplySchema:
    """The reply's schema for these samples: ``per_node`` ids are the sampled ids in hex."""
    number = {"type": "number"}
    node = {"type": "string", "enum": [f"{s.id:016x}" for s in samples]}
    return ReplySchema(
        "distillation",
        _closed(
            {
                "emotion": _closed({"valence": number, "arousal": number, "dominance": number}),
                "mbti": _closed({"i_e": number, "n_s": number, "t_f": number, "j_p": number}),
                "personality": {"type": "string"},
                "per_node": {
                    "type": "array",
                    "items": _closed({"id_hex": node, "valence": number, "arousal": number}),
                },
            }
        ),
    )


def build_distill_user(samples: Sequence[NodeDigest]) -> str:
    """The listing: one ``- id_hex=<16 hex> importance=<x.xxx> kw=[...]`` line per sample."""
    lines = [f"# L1 samples ({len(samples)})", ""]
    lines += [
        f"- id_hex={s.id:016x} importance={s.importance:.3f} kw={go_list(s.keywords)}"
        for s in samples
    ]
    lines += ["", "Output the JSON now."]
    return "\n".join(lines)


def _clamp(value: float, low: float, high: float) -> float:
    if math.isnan(value):
        return 0.0
    return min(max(value, low), high)


def _node_id(text: str) -> int | None:
    text = text.strip()
    if len(text) == 16 and all(c in _HEX for c in text):
        return int(text, 16)
    return None


def parse_distillation(reply: str, sampled: Collection[int]) -> Distillation:
    """Read a distilled profile; rows for nodes outside ``sampled`` are dropped."""
    what = "distillation reply"
    obj = first_object(reply, what)
    emotion = as_object(field(obj, "emotion"), f"{what} emotion")
    mbti = as_object(field(obj, "mbti"), f"{what} mbti")
    if emotion is None or mbti is None:
        msg = f"{what}: the emotion and mbti objects are required"
        raise LLMError(msg)

    def unit(block: dict[str, object], name: str) -> float:
        return _clamp(as_float(field(block, name), f"{what} {name}"), 0.0, 1.0)

    def axis(name: str) -> float:
        return _clamp(as_float(field(mbti, name), f"{what} {name}"), -1.0, 1.0)

    personality = as_str(field(obj, "personality"), f"{what} personality").strip()
    if personality and is_placeholder(personality):
        msg = f"{what}: personality {personality!r} is a placeholder"
        raise LLMError(msg)
    rows: dict[int, NodeMood] = {}
    for item in as_list(field(obj, "per_node"), f"{what} per_node"):
        row = as_object(item, f"{what} per_node row") or {}
        node = _node_id(as_str(field(row, "id_hex"), f"{what} id_hex"))
        mood = (unit(row, "valence"), unit(row, "arousal"))
        if node is not None and node in sampled:
            rows[node] = NodeMood(id=node, valence=mood[0], arousal=mood[1])
    return Distillation(
        valence=unit(emotion, "valence"),
        arousal=unit(emotion, "arousal"),
        dominance=unit(emotion, "dominance"),
        i_e=axis("i_e"),
        n_s=axis("n_s"),
        t_f=axis("t_f"),
        j_p=axis("j_p"),
        personality=personality[:DISTILL_PERSONALITY_MAX_RUNES],
        per_node=tuple(rows[node] for node in sorted(rows)),
    )


def distill(
    chat: ChatClient, samples: Sequence[NodeDigest], *, cancel: threading.Event | None = None
) -> Distillation:
    """Ask for a profile over ``samples`` (the caller skips the stage when there are none)."""
    sampled = frozenset(s.id for s in samples)
    ask = Ask(
        what="distillation",
        system=DISTILL_SYSTEM,
        user=build_distill_user(samples),
        schema=distillation_schema(samples),
        rungs=(DISTILL_MAX_TOKENS, escalation_ceiling(chat)),
        parse=lambda reply: parse_distillation(reply, sampled),
        format_suffix=DISTILL_FORMAT_SUFFIX,
    )
    return ask_json(chat, ask, cancel=cancel)
