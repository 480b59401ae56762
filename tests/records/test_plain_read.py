"""ArchiveSlot.from_json's short path reads what the full decode reads.

Every scene read decodes its lines, so a payload in the shape Go and memhop
write is read by one anchored pattern (``_plain``) and anything else by the
Go-rules decoder (``_read``). For payloads near and off that shape (edge
numbers, escapes, invalid UTF-8, lone surrogates, other key orders, spaces),
``from_json`` must give ``_read``'s slot or raise its error, and the short path
must be taken for the usual payload (else this test would hold with no path).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from memhop.errors import DeserializationError
from memhop.records import ArchiveKind, ArchiveSlot

_HOSTILE = st.one_of(
    st.integers(0, 2**64 - 1).map(str),
    st.sampled_from(["0", "-0", "255", "256", "4294967295", "4294967296", "18446744073709551615"]),
    st.sampled_from(["18446744073709551616", "-1", "1.0", "1e3", "01", "9223372036854775808"]),
    st.sampled_from(["-9223372036854775808", "-9223372036854775809", "true", "null", '"3"']),
)


def _mostly(usual: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Mostly ``usual``, so whole payloads in the short path's shape come up often."""
    return st.integers(0, 7).flatmap(lambda k: _HOSTILE if k == 0 else usual)


_NUMBERS = _mostly(st.integers(0, 2**64 - 1).map(str))
_CODES = _mostly(st.integers(0, 255).map(str))
_STAMPS = _mostly(st.integers(-(2**63), 2**63 - 1).map(str))
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
def _strings(draw: st.DrawFn) -> bytes:
    text = "".join(draw(st.lists(_PIECES, max_size=4))).encode("utf-8", "surrogatepass")
    return b'"' + text + draw(_RAW_BYTES) + b'"'


@st.composite
def _payloads(draw: st.DrawFn) -> bytes:
    fields: list[tuple[str, bytes]] = [
        ("id_hash", draw(_NUMBERS).encode()),
        ("kind", draw(_CODES).encode()),
        ("seq", draw(_NUMBERS).encode()),
        ("content_type", draw(_CODES).encode()),
        ("role", draw(_CODES).encode()),
        ("topic_id", draw(_NUMBERS).encode()),
    ]
    if draw(st.booleans()):
        fields.append(("event_type", draw(_strings())))
    if draw(st.booleans()):
        fields.append(("node_seq", draw(_mostly(st.integers(0, 2**33).map(str))).encode()))
    fields += [("created_at", draw(_STAMPS).encode()), ("content", draw(_strings()))]
    if draw(st.integers(0, 9)) == 0:
        fields = draw(st.permutations(fields))
    if draw(st.integers(0, 9)) == 0:
        fields.append(draw(st.sampled_from(fields)))  # a key given twice
    sep = b", " if draw(st.integers(0, 19)) == 0 else b","
    return b"{" + sep.join(b'"' + k.encode() + b'":' + v for k, v in fields) + b"}"


def _outcome(data: bytes, read: Any) -> tuple[str, Any]:
    try:
        return "slot", read(data)
    except DeserializationError as exc:
        return "error", str(exc)


@given(_payloads())
def test_the_short_path_reads_what_the_full_decode_reads(data: bytes) -> None:
    assert _outcome(data, ArchiveSlot.from_json) == _outcome(data, ArchiveSlot._read)


@given(
    st.integers(0, 2**64 - 1),
    st.sampled_from(list(ArchiveKind)),
    st.integers(0, 2**64 - 1),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=20),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
    st.integers(-(2**63), 2**63 - 1),
)
def test_the_usual_payload_takes_the_short_path(
    id_hash: int, kind: int, topic: int, event: str, content: str, at: int
) -> None:
    """Control: written payloads of valid values are read by the pattern, and read back equal."""
    slot = ArchiveSlot(
        id_hash=id_hash, kind=kind, topic_id=topic, seq=3, event_type=event, content=content,
        created_at=at,
    )  # fmt: skip
    data = slot.to_json()
    assert ArchiveSlot._plain(data) == slot  # escapes and all: no surrogate is written
    assert ArchiveSlot.from_json(data) == slot
