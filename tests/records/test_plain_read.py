"""ArchiveSlot.from_json's short path reads what the full decode reads.

Every scene read decodes its lines, so a payload in the shape Go and memhop
write is read by one anchored pattern (``_plain``) and anything else by the
Go-rules decoder (``_read``). For payloads near and off that shape (edge
numbers, escapes, invalid UTF-8, lone surrogates, other key orders, spaces),
``from_json`` must give ``_read``'s slot or raise its error, and the short path
must be taken for the usual payload (else this test would hold with no path).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memhop.records import ArchiveKind, ArchiveSlot
from tests.records.near_shape import (
    CODES,
    NUMBERS,
    STAMPS,
    json_strings,
    mostly,
    objects,
    outcome,
)


@st.composite
def _payloads(draw: st.DrawFn) -> bytes:
    fields: list[tuple[str, bytes]] = [
        ("id_hash", draw(NUMBERS)),
        ("kind", draw(CODES)),
        ("seq", draw(NUMBERS)),
        ("content_type", draw(CODES)),
        ("role", draw(CODES)),
        ("topic_id", draw(NUMBERS)),
    ]
    if draw(st.booleans()):
        fields.append(("event_type", draw(json_strings())))
    if draw(st.booleans()):
        fields.append(("node_seq", draw(mostly(st.integers(0, 2**33).map(str)))))
    fields += [("created_at", draw(STAMPS)), ("content", draw(json_strings()))]
    return draw(objects(fields))


@given(_payloads())
def test_the_short_path_reads_what_the_full_decode_reads(data: bytes) -> None:
    assert outcome(data, ArchiveSlot.from_json) == outcome(data, ArchiveSlot._read)


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
