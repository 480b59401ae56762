"""The compiled frame encoder (``memhop/engine/_frames.c``) against the Python one
(``writes.python_batch``): the same frames and placements, byte for byte, or None for a
batch the Python encoder must take.

Skipped where the install had no C compiler, unless ``MEMHOP_REQUIRE_KERNEL=1`` (CI sets
it), which makes the encoder's absence a failure.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhop.engine import writes
from memhop.engine.frame import MAX_PAYLOAD_BYTES, decode_frame
from memhop.engine.writes import RecordEntry, python_batch
from memhop.records import RecordType

if writes._compiled_batch is None and os.environ.get("MEMHOP_REQUIRE_KERNEL") != "1":
    pytest.skip("the compiled frame encoder was not built here", allow_module_level=True)

from memhop.engine._frames import encode_batch  # after the skip: absent without a compiler

U64 = st.one_of(st.integers(0, 2**64 - 1), st.sampled_from([0, 1, 2**63, 2**64 - 1]))
ENTRIES = st.lists(
    st.builds(
        RecordEntry,
        agent_id=U64,
        rec_type=st.one_of(st.integers(0, 255), st.sampled_from(list(RecordType))),
        id_hash=U64,
        payload=st.binary(max_size=600),
    ),
    max_size=8,
)


@settings(max_examples=300)
@given(entries=ENTRIES, as_tuple=st.booleans())
def test_the_compiled_encoder_writes_the_python_encoders_frames(
    entries: list[RecordEntry], as_tuple: bool
) -> None:
    """The same blob and placements (the entries' own objects); each frame decodes back to
    its entry, its CRC checked (the positive control that the bytes are frames)."""
    entries = entries or [RecordEntry(1, 8, 2, b"{}")]
    batch = tuple(entries) if as_tuple else entries
    done = encode_batch(batch)
    assert done == python_batch(entries)
    assert done is not None
    blob, placements = done
    for entry, (agent, ident, rec_type, at) in zip(entries, placements, strict=True):
        assert rec_type is entry.rec_type  # an enum member stays one, as in Python's
        if (agent, rec_type, ident, entry.payload) == (0, 0, 0, b""):
            continue  # its header is all zeros, which a reader takes for the log's end
        frame = decode_frame(blob, at, len(blob))
        assert frame is not None
        assert (frame.agent_id, frame.rec_type, frame.id_hash, frame.payload) == (
            agent,
            int(rec_type),
            ident,
            entry.payload,
        )


def test_entries_it_does_not_take_are_left_to_the_python_encoder() -> None:
    """A payload that is not exactly bytes, a type past a byte, an id past 64 bits or below
    zero, a payload over the frame limit, a malformed entry: None (the Python encoder
    then encodes or refuses); the same entry made plain is encoded (the control)."""
    plain = RecordEntry(1, 8, 2, b"{}")
    assert encode_batch([plain]) == python_batch([plain])
    assert encode_batch([]) == (b"", [])
    for entry in (
        RecordEntry(1, 8, 2, bytearray(b"{}")),  # type: ignore[arg-type]
        RecordEntry(1, 8, 2, "{}"),  # type: ignore[arg-type]
        RecordEntry(1, 256, 2, b"{}"),
        RecordEntry(-1, 8, 2, b"{}"),
        RecordEntry(1, 8, 2**64, b"{}"),
        RecordEntry(1, 8, 2, bytes(MAX_PAYLOAD_BYTES + 1)),
        (1, 8, 2),
    ):
        assert encode_batch([plain, entry]) is None  # type: ignore[list-item]
    with pytest.raises(TypeError, match="sequence of entries"):
        encode_batch(7)  # type: ignore[arg-type]


def test_without_the_compiled_encoder_a_batch_is_the_same_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As on an install without a compiler: ``encode_batch`` gives what it gives with it."""
    entries = [RecordEntry(1, RecordType.ARCHIVE, 2, b"{}"), RecordEntry(3, 4, 5, b"[]")]
    with_it = writes.encode_batch(entries)
    monkeypatch.setattr(writes, "_compiled_batch", None)
    assert writes.encode_batch(entries) == with_it
