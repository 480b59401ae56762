"""What the fast readers match Go's compact JSON payloads with.

Go's ``encoding/json`` writes no whitespace and its keys in field order, so
a payload as Go and memhop write it matches one anchored pattern per record
type. The readers built on these pieces (``ArchiveSlot.from_json`` and
``plain_numbers``, ``TopicSlot.from_plain``, ``scene_node.plain_edge_clock``)
leave anything else to the full decode, or to their caller.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from memhop.errors import CorruptionError, CRCMismatchError, DeserializationError

__all__ = [
    "DAMAGE",
    "I64",
    "INT",
    "PLAIN_STRING",
    "STRING",
    "U64",
    "UINT",
    "UINT_DIGITS",
    "plain_text",
    "u8_digits",
]

DAMAGE = (CRCMismatchError, CorruptionError, DeserializationError)
"""What a record that will not read raises (the engine counts it)."""
U64 = 1 << 64
I64 = 1 << 63
UINT_DIGITS = rb"(?:0|[1-9][0-9]*)"
UINT = rb"(" + UINT_DIGITS + rb")"
INT = rb"(-?" + UINT_DIGITS + rb")"
# A string: runs of plain bytes between escapes, matched a run at a time.
_PLAIN = rb'[^"\\\x00-\x1f]*'
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
PLAIN_STRING = rb'"' + _PLAIN + rb'"'  # a string with no escape: its bytes are its text
STRING = rb'"' + _PLAIN + rb'(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})' + _PLAIN + rb')*"'


def u8_digits(members: Mapping[int, int] | None = None) -> dict[bytes, int]:
    """A u8's digits -> its value, as its member where ``members`` has one, for 0..255.

    A number over 255 is missing: the full decode names the error.
    """
    named = members or {}
    return {str(n).encode(): named.get(n, n) for n in range(0x100)}


def plain_text(quoted: bytes) -> str | None:
    """The text of a JSON string ``STRING`` matched, quotes included; None when Go's rules
    could read it otherwise (invalid UTF-8, or a surrogate's ``\\u`` escape, which may be
    a lone one): the full decode applies them."""
    if b"\\" not in quoted:
        try:
            return quoted[1:-1].decode("utf-8")
        except UnicodeDecodeError:
            return None
    if _SURROGATE_ESCAPE.search(quoted):
        return None
    try:
        # Decoded strictly first: json.loads of bytes lets encoded surrogates through.
        text: str = json.loads(quoted.decode("utf-8"))  # escapes Go reads the same way
    except ValueError:  # invalid UTF-8 among the escapes
        return None
    return text
