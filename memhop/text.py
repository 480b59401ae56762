"""Words in text: the tokenizer, the English stop list and CJK splitting, shared by readers.

A leaf module (stdlib only) so that the offline model (``memhop.llm.local``),
the keyword reader (``memhop.llm.keywords``) and the recall index
(``memhop.index.recall``) cut text the same way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["STOP_WORDS", "content_words", "is_stop_word", "phrases", "tokens"]

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
# A letter: a word character, not "_" and not CJK. One class, as a negated set: a
# lookahead a character, ``(?![CJK])[^\W_]``, matched the same at 1.7x the time (9.3 against
# 5.4 us a LoCoMo line; every turn's model, keyword reader and recall index cut with it).
_LETTER = rf"[^\W_{_CJK}]"
_WORD = rf"{_LETTER}+(?:['’\-]{_LETTER}+)*"
# A word first: the two cannot begin at the same character, and most tokens are words.
_TOKEN = re.compile(rf"{_WORD}|[{_CJK}]+")
_SPLIT = re.compile(rf"([{_CJK}]+)|({_WORD})")  # ``_TOKEN``, a CJK run or a word in its group
_CJK_RUN = re.compile(rf"[{_CJK}]+")
_CJK_PIECE_MAX = 8
_CJK_PIECE = 4
# Function characters that separate content words inside a CJK run.
_CJK_BREAK = frozenset(
    "的了是在和与及或也就都很吗呢吧啊呀把被给对从到说我你他她它们这那个有没不还又而要会能着过地得之其并但如果因为所以しはがをにでとものへやか"
)

STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can can't could couldn't did didn't do does doesn't
    doing don't down during each else even ever few for from further get gets got had hadn't has
    hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his
    how how's however i i'd i'll i'm i've if in into is isn't it it's its itself just let's like
    may maybe me might more most much must mustn't my myself no nor not now of off oh ok okay on
    once only or other ought our ours ourselves out over own please quite rather re really recap
    same shall shan't she she'd she'll she's should shouldn't so some such sure than thank
    thanks that that's the their theirs them themselves then there there's these they they'd
    they'll they're they've this those though through to too under until up upon us very was
    wasn't we we'd we'll we're we've well were weren't what what's when when's where where's
    whether which while who who's whom why why's will with won't would wouldn't yeah yes yet you
    you'd you'll you're you've your yours yourself yourselves
    """.split()  # noqa: SIM905 - a word list reads better as text
)
"""Lower-case English function words that carry no content on their own."""


def is_stop_word(token: str) -> bool:
    """True for a function word. "May" written with a capital is the month, not the modal:
    dates matter to memory."""
    return token != "May" and token.lower() in STOP_WORDS


def _cjk_pieces(run: str) -> list[str]:
    """Split a CJK run at function characters; long pieces are cut into short ones."""
    pieces: list[str] = []
    current = ""
    for char in run + "的":  # a final break flushes the last piece
        if char not in _CJK_BREAK:
            current += char
            continue
        if len(current) > _CJK_PIECE_MAX:
            pieces += [current[i : i + _CJK_PIECE] for i in range(0, len(current), _CJK_PIECE)]
        else:
            pieces.append(current)
        current = ""
    return [piece for piece in pieces if len(piece) >= 2]


def tokens(text: str) -> list[str]:
    """The tokens of ``text`` in order, as written: what ``content_words`` judges one by one."""
    return _TOKEN.findall(text)


def _carries(word: str) -> bool:
    """A Latin word carries content unless it is a stop word or a single letter (a digit does)."""
    return not is_stop_word(word) and (len(word) > 1 or word.isdigit())


def content_words(text: str) -> list[tuple[str, bool]]:
    """Every word of ``text`` in order, as written, with whether it carries content.

    A CJK run gives its pieces (all content; the whole run, not content, when
    it has none). A Latin word carries content unless it is a stop word or a
    single letter; a single digit does carry content.
    """
    if text.isascii():
        words: Sequence[str] = _TOKEN.findall(text)  # no CJK run in ASCII text
    else:
        found = _SPLIT.findall(text)
        if not found:
            return []
        runs, words = zip(*found, strict=True)
        if any(runs):
            return _with_cjk(found)
    # Text without a CJK run, the offline model's usual input: the words judged in one pass
    # with no call a word (``w[1:2]`` is "" for one character; ``isdigit`` runs only then).
    stop = STOP_WORDS
    return [
        (word, (word == "May" or low not in stop) and (word[1:2] != "" or word.isdigit()))
        for word, low in zip(words, map(str.lower, words), strict=True)
    ]


def _with_cjk(found: list[tuple[str, str]]) -> list[tuple[str, bool]]:
    """``content_words`` of a text with a CJK run: ``_SPLIT``'s matches judged one by one."""
    out: list[tuple[str, bool]] = []
    for run, word in found:
        if word:
            out.append((word, _carries(word)))
        else:
            pieces = _cjk_pieces(run)
            if pieces:
                out += [(piece, True) for piece in pieces]
            else:
                out.append((run, False))
    return out


def phrases(text: str) -> list[str]:
    """The runs of content words in ``text``, in order, each as written.

    A run is a stretch of Latin words that carry content (``content_words``' rule) with
    only blank space between them: a stop word, a single letter or any other character
    (punctuation, a symbol) ends it ("I ran a charity race for mental health." gives
    "ran", "charity race", "mental health"). A CJK run gives its pieces, each on its own.
    """
    found: list[str] = []
    start = end = -1  # the open run's span; start < 0: none open
    for match in _TOKEN.finditer(text):
        token = match.group()
        joins = start >= 0 and text[end : match.start()].isspace()
        if not _CJK_RUN.fullmatch(token) and _carries(token):
            if not joins:
                if start >= 0:
                    found.append(text[start:end])
                start = match.start()
            end = match.end()
            continue
        if start >= 0:
            found.append(text[start:end])
            start = -1
        if _CJK_RUN.fullmatch(token):
            found.extend(_cjk_pieces(token))
    if start >= 0:
        found.append(text[start:end])
    return found
