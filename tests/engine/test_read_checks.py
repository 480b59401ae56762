"""Every read checks that the frame is the record asked for, and that it fits the frame limit.

A crafted snapshot can point any (agent, id) at any offset. The read must
then refuse with CorruptionError naming the record and offset, never return
another domain's bytes, and count the record as damaged.
"""

from __future__ import annotations

import struct

import pytest

from memhop.engine import (
    RECORD_HEADER_SIZE,
    FileHeader,
    build_snapshot,
    create_engine,
    encode_frame,
    open_engine,
)
from memhop.engine.frame import MAX_PAYLOAD_BYTES
from memhop.engine.header import load_headers
from memhop.engine.snapshot import Index
from memhop.errors import CorruptionError, InvalidQueryError
from tests.faults import append_bytes, file_size, write_at

SUB = 0x77


def _point_snapshot_at(path: str, index: Index) -> None:
    """Append a snapshot of ``index`` and make it the active one (what a crafted file does)."""
    with open(path, "rb") as f:
        headers = load_headers(f.read(8192))
    at = file_size(path)
    blob = build_snapshot(index)
    append_bytes(path, blob)
    header: FileHeader = headers.current.next_generation(
        snapshot_offset=at, snapshot_length=len(blob)
    )
    write_at(path, headers.inactive_offset, header.to_bytes())


def _two_domains(path: str) -> tuple[int, int]:
    engine = create_engine(path)
    try:
        secret = engine.write(0, 0x01, 1, b"primary's secret")
        own = engine.write(SUB, 0x01, 1, b"sub-agent's own")
    finally:
        engine.close()
    return secret, own


def test_a_snapshot_pointing_a_sub_agent_at_the_primarys_frame_reads_as_corruption(
    meh_path: str,
) -> None:
    """The sub-agent's id aimed at the primary's frame is CorruptionError; its own id reads."""
    secret, own = _two_domains(meh_path)
    _point_snapshot_at(meh_path, {0: {1: secret}, SUB: {1: secret, 2: own}})
    engine = open_engine(meh_path)
    try:
        with pytest.raises(CorruptionError) as info:
            engine.read(SUB, 1)
        text = str(info.value)
        assert f"record {1:016x} of agent {SUB:016x} at offset {secret}" in text
        assert "holds agent 0000000000000000" in text
        assert b"secret" not in text.encode()
        with pytest.raises(CorruptionError, match="not the record the index names"):
            engine.read(SUB, 2)  # a right agent but the wrong id hash is refused too
        assert engine.read(0, 1).payload == b"primary's secret"  # the primary's own read
        assert engine.damage() == (2, 0)  # both misdirected entries are counted
    finally:
        engine.close()


def test_an_entry_naming_a_tombstone_reads_as_corruption(meh_path: str) -> None:
    """An index entry aimed at a tombstone frame is corruption, never an empty record."""
    engine = create_engine(meh_path)
    try:
        engine.write(0, 0x01, 5, b"kept")
        engine.delete(0, 5)
        stone = engine.record_end - RECORD_HEADER_SIZE
        engine.write(0, 0x01, 6, b"control")
    finally:
        engine.close()
    _point_snapshot_at(meh_path, {0: {5: stone, 6: stone + RECORD_HEADER_SIZE}})
    engine = open_engine(meh_path)
    try:
        with pytest.raises(CorruptionError, match="tombstone"):
            engine.read(0, 5)
        assert engine.read(0, 6).payload == b"control"
    finally:
        engine.close()


def test_a_frame_over_the_limit_is_refused_without_decoding(meh_path: str) -> None:
    """A frame claiming more than the limit is CorruptionError "over the frame limit"."""
    engine = create_engine(meh_path)
    try:
        big = engine.write(0, 0x01, 1, b"x" * 64)
        engine.write(0, 0x01, 2, b"control")
        engine.write(0, 0x01, 3, b"z" * MAX_PAYLOAD_BYTES)  # so the claim fits in the file
    finally:
        engine.close()
    write_at(meh_path, big + 2, struct.pack("<I", MAX_PAYLOAD_BYTES + 1))
    engine = open_engine(meh_path)
    try:
        with pytest.raises(CorruptionError, match="over the frame limit"):
            engine.read(0, 1)
        assert engine.read(0, 2).payload == b"control"
        assert len(engine.read(0, 3).payload) == MAX_PAYLOAD_BYTES
    finally:
        engine.close()


def test_a_write_over_the_frame_limit_is_refused(meh_path: str) -> None:
    """A payload over the limit is InvalidQueryError and writes nothing; one at it is fine."""
    engine = create_engine(meh_path)
    try:
        before = engine.record_end
        with pytest.raises(InvalidQueryError, match="frame limit"):
            engine.write(0, 0x01, 1, b"x" * (MAX_PAYLOAD_BYTES + 1))
        assert engine.record_end == before
        assert len(encode_frame(0, 1, 0, 1, b"x" * MAX_PAYLOAD_BYTES)) > MAX_PAYLOAD_BYTES
    finally:
        engine.close()
