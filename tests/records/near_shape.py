"""Payloads near and off the shape Go writes, for the records' plain paths.

Numbers at and past each Go range (and literals no integer field takes),
strings with every escape, invalid UTF-8 and lone surrogates, and objects
with their keys reordered, repeated or spaced out: mostly the usual shape,
so that whole payloads in it come up often.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from memhop.errors import DeserializationError

__all__ = ["CODES", "NUMBERS", "STAMPS", "json_strings", "mostly", "objects", "outcome"]

_HOSTILE = st.one_of(
    st.integers(0, 2**64 - 1).map(str),
    st.sampled_from(["0", "-0", "255", "256", "4294967295", "4294967296", "18446744073709551615"]),
    st.sampled_from(["18446744073709551616", "-1", "1.0", "1e3", "01", "9223372036854775808"]),
    st.sampled_from(["-9223372036854775808", "-9223372036854775809", "true", "null", '"3"']),
)


def mostly(usual: st.SearchStrategy[str]) -> st.SearchStrategy[bytes]:
    """Mostly ``usual``, else a number at or past a Go range, or another literal."""
    return st.integers(0, 7).flatmap(lambda k: _HOSTILE if k == 0 else usual).map(str.encode)


NUMBERS = mostly(st.integers(0, 2**64 - 1).map(str))
CODES = mostly(st.integers(0, 255).map(str))
STAMPS = mostly(st.integers(-(2**63), 2**63 - 1).map(str))
_PIECES = st.sampled_from(
    [
        *("plain", " ", "é", "日本", "\\n", '\\"', "\\\\", "\\/", "\\t"),
        *("\\u0041", "\\ud800", "\\u00e9", "\\udc00\\ud800", "\\ud83d\\ude00"),
        *("\\x", "\x01", "\u2028"),
    ]
)
_RAW_BYTES = st.sampled_from(
    [b"", b"", b"", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf0\x9f\x98\x80"]
)


@st.composite
def json_strings(draw: st.DrawFn) -> bytes:
    """A JSON string, quotes included, as it may be stored: valid or not."""
    text = "".join(draw(st.lists(_PIECES, max_size=4))).encode("utf-8", "surrogatepass")
    return b'"' + text + draw(_RAW_BYTES) + b'"'


@st.composite
def objects(draw: st.DrawFn, fields: list[tuple[str, bytes]]) -> bytes:
    """The object of ``fields`` in their order; now and then reordered, with a key given
    twice, or spaced out."""
    if draw(st.integers(0, 9)) == 0:
        fields = draw(st.permutations(fields))
    if draw(st.integers(0, 9)) == 0:
        fields = [*fields, draw(st.sampled_from(fields))]  # a key given twice
    sep = b", " if draw(st.integers(0, 19)) == 0 else b","
    return b"{" + sep.join(b'"' + k.encode() + b'":' + v for k, v in fields) + b"}"


def outcome(data: bytes, read: Callable[[bytes], object]) -> tuple[str, object]:
    """("slot", what ``read`` gives ``data``), or ("error", the DeserializationError's text)."""
    try:
        return "slot", read(data)
    except DeserializationError as exc:
        return "error", str(exc)
