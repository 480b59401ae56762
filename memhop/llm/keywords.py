"""Keyword extraction: prompt, schema, reply parser, normaliser and chunking.

One text (a rendered turn, or a Dream summary) becomes a tuple of keywords. Text
over 2,000 runes is cut into chunks at sentence or line boundaries and each chunk
is asked on its own, in order; the first failing chunk stops the call. Each chunk
walks ``ask_json``'s ladder over the rungs 512, 4096 and 8192 tokens: it climbs
only after a truncated reply; an unreadable one gets one format retry.

The reader never stores a template's stand-in: "...", "<keyword>" and empty items
are dropped, and a reply made only of them is off contract (the model echoed the
example instead of answering).

Items are keywords, not sentences. The schema holds each item to at most six words
(``KEYWORD_PATTERN``) and the list to one item per four characters of the text (at least
16), so a model that an endpoint's grammar holds to the schema can neither write a
sentence nor loop until its budget runs out. The reader holds what a weaker endpoint
sends to the same rule: an item that reads as a sentence or a list (``is_sentence``) is
replaced by its phrases (``memhop.text.phrases``: the runs of content words it holds, each
cut to six words), in place. Other items pass unchanged. A reply whose every item was a
sentence without one content word is kept as sent, so a turn is never refused for the
way its keywords were written.
"""

from __future__ import annotations

import re
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
from memhop.text import phrases

__all__ = [
    "KEYWORDS_FORMAT_SUFFIX",
    "KEYWORDS_RUNGS",
    "KEYWORDS_SYSTEM",
    "KEYWORDS_TASK",
    "KEYWORD_CHUNK_RUNES",
    "KEYWORD_MAX_WORDS",
    "KEYWORD_MIN_ITEMS",
    "KEYWORD_PATTERN",
    "build_keywords_user",
    "extract_keywords",
    "is_sentence",
    "keyword_pieces",
    "keywords_schema",
    "normalise_keywords",
    "parse_keywords",
    "split_chunks",
]

KEYWORDS_TASK = "keyword-extraction"
"""The tag that opens the system prompt; test fakes dispatch on it."""
KEYWORD_CHUNK_RUNES = 2000
_BOUNDARIES = frozenset("\n。；;.")
KEYWORDS_RUNGS = (512, 4096, CONSOLIDATION_MAX_TOKENS)
KEYWORD_MAX_WORDS = 6
"""The most words a keyword holds; an item with more is a sentence (see the module)."""
_WORD = r'[^"\\\x00-\x20]{1,32}'
KEYWORD_PATTERN = rf"^{_WORD}( {_WORD}){{0,{KEYWORD_MAX_WORDS - 1}}}$"
"""One to six words of at most 32 characters, one space apart, with no double quote,
backslash or control character. llama.cpp applies a pattern to the string as written
inside the JSON text and other endpoints to the decoded string; without those characters
both readings agree. Words are separated by spaces only, so the grammar it compiles to is
unambiguous, and bounded words keep a looping model from writing one endless word."""
KEYWORD_MIN_ITEMS = 16
"""The least ``maxItems`` a keyword schema allows, however short the text."""
_CHARS_PER_ITEM = 4
_SENTENCE = re.compile(r"[!?…。！？]|\.\.|[a-z]{2}\.(?:\s|$)|,[^,]*,")


def keywords_schema(text: str) -> ReplySchema:
    """The reply's schema for ``text``: items of ``KEYWORD_PATTERN``, one per four characters.

    The item count grows with the text, as the prompt asks (no fixed cap); the bound only
    ends a list that a model repeats without end.
    """
    most = max(KEYWORD_MIN_ITEMS, len(text) // _CHARS_PER_ITEM)
    items = {"type": "string", "pattern": KEYWORD_PATTERN}
    return ReplySchema(
        "keywords",
        {
            "type": "object",
            "properties": {"keywords": {"type": "array", "items": items, "maxItems": most}},
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
- Each item is a name, a term or a short phrase of one to six words: never a sentence, \
a clause or a greeting.
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


def is_sentence(item: str) -> bool:
    """True when ``item`` reads as a sentence or a list, not a keyword: more than six words,
    sentence punctuation (``!``, ``?``, an ellipsis, CJK full stops, or a period after a
    lower-case word, which spares "D.C." and "Dr. Who"), or two commas ("Paris, France"
    stays one keyword)."""
    return len(item.split()) > KEYWORD_MAX_WORDS or _SENTENCE.search(item) is not None


def keyword_pieces(item: str) -> list[str]:
    """``item`` itself when it is a keyword; else its phrases, each cut to six words.

    Deterministic and grounded: every piece is words of the item, in the item's order.
    """
    if not is_sentence(item):
        return [item]
    pieces: list[str] = []
    for phrase in phrases(item):
        words = phrase.split()
        for start in range(0, len(words), KEYWORD_MAX_WORDS):
            pieces.append(" ".join(words[start : start + KEYWORD_MAX_WORDS]))
    return pieces


def parse_keywords(reply: str) -> tuple[str, ...]:
    """Read the ``{"keywords": [...]}`` object in ``reply``; off contract raises ``LLMError``.

    Prose, a fence or trailing text around the object is ignored. A missing or null
    ``keywords`` is a valid empty answer; a non-string item is not. Stand-ins are
    dropped, and a reply whose items were all stand-ins is refused. A sentence is
    replaced by its phrases (``keyword_pieces``), unless no item gives one.
    """
    what = "keyword reply"
    items = as_list(field(first_object(reply, what), "keywords"), f"{what} keywords")
    texts = [as_str(item, f"{what} keyword") for item in items]
    kept = [text for text in texts if not is_placeholder(text)]
    if texts and not kept:
        msg = f"{what}: the reply holds only placeholders such as {texts[0]!r}"
        raise LLMError(msg)
    pieces = [piece for text in kept for piece in keyword_pieces(text)]
    return normalise_keywords(pieces or kept)


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
        schema=keywords_schema(text),
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
