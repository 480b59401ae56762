"""Keyword extraction: prompt, schema, reply parser, normaliser and chunking.

One text (a rendered turn, or a Dream summary) becomes a tuple of keywords. Text
over 2,000 runes is cut into chunks at sentence or line boundaries and each chunk
is asked on its own, in order; the first failing chunk stops the call. Each chunk
walks ``ask_json``'s ladder over the rungs 512, 4096 and 8192 tokens: it climbs
only after a truncated reply; an unreadable one gets one format retry.

The reader never stores a template's stand-in: "...", "<keyword>" and empty items
are dropped, and a reply made only of them is off contract (the model echoed the
example instead of answering).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from memhop.errors import LLMError, MemHopError
from memhop.llm._decode import as_list, as_str, field, first_object, is_placeholder
from memhop.llm.chat import (
    CONSOLIDATION_MAX_TOKENS,
    Ask,
    ChatClient,
    ReplySchema,
    ask_json,
    rewrap,
)

__all__ = [
    "KEYWORDS_FORMAT_SUFFIX",
    "KEYWORDS_RUNGS",
    "KEYWORDS_SCHEMA",
    "KEYWORDS_SYSTEM",
    "KEYWORDS_TASK",
    "KEYWORD_CHUNK_RUNES",
    "build_keywords_user",
    "extract_keywords",
    "normalise_keywords",
    "parse_keywords",
    "split_chunks",
]

KEYWORDS_TASK = "keyword-extraction"
"""The tag that opens the system prompt; test fakes dispatch on it."""
KEYWORD_CHUNK_RUNES = 2000
_BOUNDARIES = frozenset("\n。；;.")
KEYWORDS_RUNGS = (512, 4096, CONSOLIDATION_MAX_TOKENS)
KEYWORDS_SCHEMA = ReplySchema(
    "keywords",
    {
        "type": "object",
        "properties": {"keywords": {"type": "array", "items": {"type": "string"}}},
        "required": ["keywords"],
        "additionalProperties": False,
    },
)

KEYWORDS_SYSTEM = f"""Task: {KEYWORDS_TASK}.
You turn a piece of conversation into the complete set of meaningful keywords and short \
phrases that carry its content. Strip the noise; keep all of the meaning and the tone.

Rules:
- Read together, the items must let someone rebuild what the text said: its facts, what \
the speakers wanted, how things relate to each other, and how people felt.
- Prefer the exact words a person would type later when searching for this memory.
- Cover named entities, subjects, actions together with what they act on, dates and \
times, places, quantities, causes and their effects, and signs of tone or attitude.
- Mix single words with short phrases; a phrase keeps context that a lone word loses.
- There is no upper limit on the number of items: a longer text gives proportionally \
more. Never summarise and never cut content; only leave out greetings, filler and \
repetition.
- For important terms also add common synonyms or everyday variants (for example \
跑步 and 慢跑, or "laptop" and 笔记本电脑), so the same idea can be found however a later \
turn words it.
- Keep every item short; never write a full sentence.
- Keep the text's own language, keep mixed-language terms as written, and copy numbers \
and proper names exactly.
- Leave out greetings, filler words, question words and generic verbs unless they belong \
to a specific action.
- Answer with one JSON object that holds a single array of strings under the key \
"keywords", like {{"keywords": ["...", "..."]}}. No markdown, no code fences, no commentary.
"""

KEYWORDS_FORMAT_SUFFIX = """

That answer could not be used. Answer again with the keywords of the text above as a JSON \
object with one key, "keywords", holding an array of strings taken from that text. JSON \
only: no prose before or after it and no code fence."""


def build_keywords_user(text: str) -> str:
    """The user message: a one-line lead-in, then the text."""
    return "Extract the keywords from the following text:\n" + text


def normalise_keywords(items: Iterable[str]) -> tuple[str, ...]:
    """Trim each item, drop empty ones and exact duplicates, keep first-seen order."""
    seen: dict[str, None] = {}
    for item in items:
        cleaned = item.strip()
        if cleaned:
            seen.setdefault(cleaned, None)
    return tuple(seen)


def parse_keywords(reply: str) -> tuple[str, ...]:
    """Read the ``{"keywords": [...]}`` object in ``reply``; off contract raises ``LLMError``.

    Prose, a fence or trailing text around the object is ignored. A missing or null
    ``keywords`` is a valid empty answer; a non-string item is not. Stand-ins are
    dropped, and a reply whose items were all stand-ins is refused.
    """
    what = "keyword reply"
    items = as_list(field(first_object(reply, what), "keywords"), f"{what} keywords")
    texts = [as_str(item, f"{what} keyword") for item in items]
    kept = [text for text in texts if not is_placeholder(text)]
    if texts and not kept:
        msg = f"{what}: the reply holds only placeholders such as {texts[0]!r}"
        raise LLMError(msg)
    return normalise_keywords(kept)


def split_chunks(text: str, limit: int = KEYWORD_CHUNK_RUNES) -> list[str]:
    """Cut ``text`` into pieces of at most ``limit`` runes.

    Each cut falls just before the last line or sentence boundary in the second half
    of the window (the boundary starts the next piece), or at ``limit`` if there is
    none. Pieces are not trimmed; joined, they give back ``text``.
    """
    chunks: list[str] = []
    start = 0
    while len(text) - start > limit:
        cut = start + limit
        for index in range(start + limit - 1, start + limit // 2 - 1, -1):
            if text[index] in _BOUNDARIES:
                cut = index
                break
        chunks.append(text[start:cut])
        start = cut
    chunks.append(text[start:])
    return chunks


def _extract_one(chat: ChatClient, text: str, cancel: threading.Event | None) -> tuple[str, ...]:
    ask = Ask(
        what="keyword extraction",
        system=KEYWORDS_SYSTEM,
        user=build_keywords_user(text),
        schema=KEYWORDS_SCHEMA,
        rungs=KEYWORDS_RUNGS,
        parse=parse_keywords,
        format_suffix=KEYWORDS_FORMAT_SUFFIX,
    )
    return ask_json(chat, ask, cancel=cancel)


def extract_keywords(
    chat: ChatClient, text: str, *, cancel: threading.Event | None = None
) -> tuple[str, ...]:
    """The keywords of ``text``; whitespace-only text gives ``()`` without asking the model."""
    trimmed = text.strip()
    if not trimmed:
        return ()
    chunks = split_chunks(trimmed)
    if len(chunks) == 1:
        return _extract_one(chat, trimmed, cancel)
    merged: list[str] = []
    for index, chunk in enumerate(chunks):
        try:
            merged.extend(_extract_one(chat, chunk, cancel))
        except MemHopError as exc:
            msg = f"keyword extraction chunk {index} of {len(chunks)} failed: {exc.message}"
            raise rewrap(exc, msg) from exc
    return normalise_keywords(merged)
