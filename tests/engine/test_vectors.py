"""Pinned byte vectors of the .meh format 0x0012 (storage.md §1, §2.1, §6.2), decoder refusals."""

from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import assume, event, given
from hypothesis import strategies as st

from memhop.engine import (
    DATA_START,
    FLAG_DELETED,
    FORMAT_VERSION,
    HEADER_SIZE,
    RECORD_HEADER_SIZE,
    SNAPSHOT_VERSION,
    FileHeader,
    Frame,
    build_snapshot,
    create_engine,
    decode_frame,
    encode_frame,
    parse_snapshot,
)
from memhop.engine.header import parse_header  # white-box: the slot parser is not exported
from memhop.errors import (
    Code,
    CorruptionError,
    CRCMismatchError,
    InvalidMagicError,
)
from tests.faults import file_size

U64 = st.integers(min_value=0, max_value=2**64 - 1)
U8 = st.integers(min_value=0, max_value=255)

LIVE_FRAME_HEX = "01 00 05000000 0000000000000000 3930000000000000 5f13374e 68656c6c6f"
TOMBSTONE_HEX = "01 01 00000000 0000000000000000 3930000000000000 babb3a12"
REGISTRY_HEX = "10 00 08000000 8877665544332211 8877665544332211 427f7897 22776f726b657222"
EMPTY_SNAPSHOT_HEX = "50414e5303000000000699e2a8"
ONE_ENTRY_SNAPSHOT_HEX = (
    "50414e53 03 01000000 0000000000000000 01000000 3930000000000000 0020000000000000 ec1acb6f"
)


def _hex(spaced: str) -> bytes:
    return bytes.fromhex(spaced.replace(" ", ""))


def _with_crc(body: bytes) -> bytes:
    """Append a correct CRC32 so a snapshot blob gets past the checksum check."""
    return body + struct.pack("<I", zlib.crc32(body))


# ---- the fresh file ---------------------------------------------------------------------


def test_fresh_header_slot_matches_the_pinned_layout_and_crc() -> None:
    """A default header serialises to magic, version 0x0012, zeros, CRC 0xbbb81916, tail magic."""
    slot = FileHeader().to_bytes()
    assert len(slot) == HEADER_SIZE == 4096
    assert slot[0:4] == b"MEH2" == bytes.fromhex("4d454832")
    assert slot[4:6] == b"\x12\x00"
    assert FORMAT_VERSION == 0x0012
    assert slot[6:4088] == bytes(4082)
    assert struct.unpack_from("<I", slot, 4088)[0] == 0xBBB81916
    assert slot[4088:4092] == bytes.fromhex("1619b8bb")
    assert slot[4092:4096] == b"2HEM" == bytes.fromhex("3248454d")


def test_fresh_file_is_8192_bytes_of_two_identical_fresh_headers(meh_path: str) -> None:
    """create_engine writes exactly two identical fresh header slots and nothing else."""
    engine = create_engine(meh_path)
    assert engine.stats() == (DATA_START, 0)
    engine.close_without_checkpoint()
    assert file_size(meh_path) == DATA_START == 8192
    with open(meh_path, "rb") as f:
        data = f.read()
    slot_a, slot_b = data[:4096], data[4096:]
    assert slot_a == slot_b == FileHeader().to_bytes()
    assert zlib.crc32(slot_a[:4088]) == 0xBBB81916
    assert slot_a[0:4] == b"MEH2"
    assert slot_a[4:6] == b"\x12\x00"
    assert slot_a[4092:] == b"2HEM"


# ---- frame vectors ----------------------------------------------------------------------


def test_live_frame_vector_encodes_exactly() -> None:
    """A live type-0x01 frame for agent 0, id 12345, payload "hello" has the pinned bytes."""
    frame = encode_frame(0, 0x01, 0, 12345, b"hello")
    assert frame == _hex(LIVE_FRAME_HEX)
    assert len(frame) == RECORD_HEADER_SIZE + 5


def test_tombstone_vector_encodes_exactly() -> None:
    """The tombstone for id 12345 is a flags-0x01, zero-length frame with the pinned CRC."""
    assert FLAG_DELETED == 0x01
    assert encode_frame(0, 0x01, FLAG_DELETED, 12345, b"") == _hex(TOMBSTONE_HEX)


def test_registry_frame_vector_encodes_exactly() -> None:
    """A registry frame with agent = id = 0x1122334455667788 and payload "worker" is pinned."""
    ident = 0x1122334455667788
    assert encode_frame(ident, 0x10, 0, ident, b'"worker"') == _hex(REGISTRY_HEX)


@pytest.mark.parametrize(
    ("spaced", "expected"),
    [
        (LIVE_FRAME_HEX, (0x01, 0, 0, 12345, b"hello")),
        (TOMBSTONE_HEX, (0x01, FLAG_DELETED, 0, 12345, b"")),
        (REGISTRY_HEX, (0x10, 0, 0x1122334455667788, 0x1122334455667788, b'"worker"')),
    ],
)
def test_decode_frame_reads_each_vector_back(spaced: str, expected: tuple[object, ...]) -> None:
    """decode_frame returns the type, flags, agent, id, payload and extent of each vector."""
    raw = _hex(spaced)
    frame = decode_frame(raw, 0, len(raw))
    assert frame is not None
    assert (frame.rec_type, frame.flags, frame.agent_id, frame.id_hash, frame.payload) == expected
    assert frame.offset == 0
    assert frame.end == len(raw)
    assert frame.deleted == bool(expected[1])


def test_decode_frame_reads_a_frame_at_a_nonzero_offset_and_stops_at_the_end() -> None:
    """Two frames back to back decode in turn, and the offset equal to the size is the end."""
    buf = _hex(LIVE_FRAME_HEX) + _hex(TOMBSTONE_HEX)
    first = decode_frame(buf, 0, len(buf))
    assert first is not None
    second = decode_frame(buf, first.end, len(buf))
    assert second is not None
    assert second.deleted
    assert second.offset == first.end
    assert second.end == len(buf)
    assert decode_frame(buf, len(buf), len(buf)) is None


@given(agent=U64, rec_type=U8, id_hash=U64, payload=st.binary(max_size=300))
def test_encode_decode_round_trips_any_record(
    agent: int, rec_type: int, id_hash: int, payload: bytes
) -> None:
    """Any (agent, type, id, payload) survives encode then decode; an all-zero header is the end."""
    raw = encode_frame(agent, rec_type, 0, id_hash, payload)
    assert len(raw) == RECORD_HEADER_SIZE + len(payload)
    decoded = decode_frame(raw, 0, len(raw))
    if rec_type == 0 and agent == 0 and id_hash == 0 and not payload:
        # Zero-filled space is the end of the log; the CRC bytes are not looked at (§2.5).
        assert decoded is None
    else:
        assert decoded == Frame(rec_type, 0, agent, id_hash, payload, 0, len(raw))


def _flip_outcome(mutated: bytes, original_length: int) -> str:
    """Name what §2.5 says decoding a frame with one flipped byte must produce.

    The checks run in order: all five header fields zero is the end of the log
    ("end"); a length past the end of the buffer is CorruptionError ("corrupt");
    anything else reaches the CRC ("crc"). With the length unchanged the CRC
    input differs from the original in one byte (or the stored CRC changed), and
    CRC-32 detects every burst of up to 32 bits, so that check must fail. A
    length shrunk by the flip also changes the input's length, where CRC-32
    gives no guarantee, so the oracle checks that one case itself ("collision",
    a 2**-32 event that would decode as a shorter record).
    """
    rec_type, flags, length, agent, id_hash, stored = struct.unpack_from("<BBIQQI", mutated, 0)
    if rec_type == 0 and flags == 0 and length == 0 and agent == 0 and id_hash == 0:
        return "end"
    if length > original_length:
        return "corrupt"
    covered = mutated[:22] + mutated[RECORD_HEADER_SIZE : RECORD_HEADER_SIZE + length]
    if length < original_length and zlib.crc32(covered) == stored:
        return "collision"
    return "crc"


# Frames whose header is all zero but for one field, so a single flip can zero it entirely.
SPARSE_FRAMES = st.one_of(
    st.tuples(st.just(0), U8, st.just(0), st.just(b"")),
    st.tuples(st.just(0), st.just(0), st.integers(0, 2**16 - 1), st.just(b"")),
    st.tuples(st.just(0), st.just(0), st.just(0), st.binary(min_size=1, max_size=3)),
    st.tuples(U64, st.just(0), st.just(0), st.just(b"")),
)


@given(
    fields=st.one_of(st.tuples(U64, U8, U64, st.binary(max_size=64)), SPARSE_FRAMES),
    data=st.data(),
)
def test_any_single_flipped_byte_of_a_frame_is_detected(
    fields: tuple[int, int, int, bytes], data: st.DataObject
) -> None:
    """Flipping any one byte of a frame is refused by CRC or length check, or reads as the end."""
    agent, rec_type, id_hash, payload = fields
    raw = encode_frame(agent, rec_type, 0, id_hash, payload)
    assume(decode_frame(raw, 0, len(raw)) is not None)  # positive control: the original reads
    nonzero_fields = [i for i in range(22) if raw[i]]  # never empty: the frame is not the end
    at = data.draw(
        st.one_of(
            st.integers(0, len(raw) - 1),
            st.integers(0, RECORD_HEADER_SIZE - 1),
            st.sampled_from(nonzero_fields),
        ),
        label="offset",
    )
    # Half the time clear the byte outright, so header-zeroing flips get explored too.
    zero_it = raw[at] != 0 and data.draw(st.booleans(), label="zero the byte")
    mask = raw[at] if zero_it else data.draw(st.integers(1, 255), label="mask")
    mutated = bytearray(raw)
    mutated[at] ^= mask
    flipped = bytes(mutated)
    outcome = _flip_outcome(flipped, len(payload))
    event(outcome)
    if outcome == "end":
        # Only a flip that zeroes the last non-zero header field (type..id) lands here.
        assert at < 22
        assert decode_frame(flipped, 0, len(flipped)) is None
    elif outcome == "corrupt":
        assert 2 <= at < 6  # only the length field can claim more bytes than there are
        (claimed,) = struct.unpack_from("<I", flipped, 2)
        with pytest.raises(CorruptionError) as info:
            decode_frame(flipped, 0, len(flipped))
        assert info.value.code == Code.CORRUPTION
        assert str(info.value) == (
            f"record at offset 0 claims length {claimed} but file ends at {len(flipped)}"
        )
    elif outcome == "collision":  # pragma: no cover - a 2**-32 event, kept so the oracle is exact
        assert 2 <= at < 6
        assert decode_frame(flipped, 0, len(flipped)) is not None
    else:
        with pytest.raises(CRCMismatchError) as crc_info:
            decode_frame(flipped, 0, len(flipped))
        assert crc_info.value.code == Code.CRC_MISMATCH
        assert str(crc_info.value) == "record at offset 0 failed CRC32 check"


def test_a_flip_that_zeroes_the_whole_header_reads_as_the_end_of_the_log() -> None:
    """A frame whose only non-zero header byte is flipped to zero decodes as None (§2.5 step 3)."""
    raw = encode_frame(0, 0, 0, 0x80, b"")
    assert decode_frame(raw, 0, len(raw)) is not None  # positive control: it is a real frame
    mutated = bytearray(raw)
    mutated[14] ^= 0x80
    assert decode_frame(bytes(mutated), 0, len(mutated)) is None


def test_decode_frame_refuses_a_header_running_past_the_buffer() -> None:
    """Fewer than 26 bytes left at the offset is CorruptionError naming offset and size."""
    raw = _hex(LIVE_FRAME_HEX)
    assert decode_frame(raw, 0, len(raw)) is not None
    with pytest.raises(CorruptionError, match="record header at offset 0 exceeds file size 25"):
        decode_frame(raw[:25], 0, 25)


# ---- header round trip and refusals -----------------------------------------------------


@given(
    commit=U64,
    snap_off=U64,
    snap_len=st.integers(min_value=0, max_value=2**32 - 1),
    count=st.integers(min_value=0, max_value=2**32 - 1),
    record_end=U64,
    reserved=st.integers(min_value=0, max_value=2**16 - 1),
    flags=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_header_to_bytes_and_parse_round_trip(
    commit: int,
    snap_off: int,
    snap_len: int,
    count: int,
    record_end: int,
    reserved: int,
    flags: int,
) -> None:
    """Every header field, including reserved and flags, survives to_bytes then parse."""
    header = FileHeader(
        commit_id=commit,
        snapshot_offset=snap_off,
        snapshot_length=snap_len,
        record_count=count,
        record_end=record_end,
        reserved=reserved,
        flags=flags,
    )
    slot = header.to_bytes()
    assert len(slot) == HEADER_SIZE
    assert slot[44:4088] == bytes(4044)
    assert parse_header(slot) == header


def test_header_field_offsets_match_the_layout() -> None:
    """Each field sits at the offset and width of storage.md §1.1."""
    header = FileHeader(
        commit_id=0x0102030405060708,
        snapshot_offset=0x1112131415161718,
        snapshot_length=0x21222324,
        record_count=0x31323334,
        record_end=0x4142434445464748,
        reserved=0x5152,
        flags=0x61626364,
    )
    slot = header.to_bytes()
    assert struct.unpack_from("<4sHHQQIIIQ", slot, 0) == (
        b"MEH2",
        0x0012,
        0x5152,
        0x0102030405060708,
        0x1112131415161718,
        0x21222324,
        0x31323334,
        0x61626364,
        0x4142434445464748,
    )
    assert struct.unpack_from("<I", slot, 4088)[0] == zlib.crc32(slot[:4088])


def _resealed(slot: bytearray) -> bytes:
    """Recompute the CRC of a header slot after editing it."""
    struct.pack_into("<I", slot, 4088, zlib.crc32(bytes(slot[:4088])))
    return bytes(slot)


def test_header_parse_refuses_a_bad_magic_before_anything_else() -> None:
    """Bad magic is InvalidMagicError "invalid magic bytes" even when the CRC is also wrong."""
    good = FileHeader(commit_id=3).to_bytes()
    assert parse_header(good).commit_id == 3
    slot = bytearray(good)
    slot[0:4] = b"MEH1"  # the CRC no longer matches either
    with pytest.raises(InvalidMagicError, match="invalid magic bytes") as info:
        parse_header(bytes(slot))
    assert info.value.code == Code.INVALID_MAGIC == 5003
    with pytest.raises(InvalidMagicError, match="invalid magic bytes"):
        parse_header(_resealed(slot))


def test_header_parse_refuses_a_bad_tail_magic_before_the_crc() -> None:
    """A wrong tail magic is InvalidMagicError too; the CRC does not cover it."""
    slot = bytearray(FileHeader(commit_id=3).to_bytes())
    slot[4092:4096] = b"2HEN"
    with pytest.raises(InvalidMagicError, match="invalid magic bytes") as info:
        parse_header(bytes(slot))
    assert info.value.code == 5003
    slot[10] ^= 0xFF  # also break the CRC: magic is still reported first
    with pytest.raises(InvalidMagicError, match="invalid magic bytes"):
        parse_header(bytes(slot))


def test_header_parse_refuses_a_crc_mismatch_before_the_version() -> None:
    """A CRC mismatch is CRCMismatchError "crc32 mismatch", even over a wrong version."""
    slot = bytearray(FileHeader(commit_id=3).to_bytes())
    slot[8] ^= 0x01
    with pytest.raises(CRCMismatchError, match="crc32 mismatch") as info:
        parse_header(bytes(slot))
    assert info.value.code == Code.CRC_MISMATCH == 5004
    struct.pack_into("<H", slot, 4, 0x0013)  # wrong version and still a wrong CRC
    with pytest.raises(CRCMismatchError, match="crc32 mismatch"):
        parse_header(bytes(slot))
    assert parse_header(_resealed(bytearray(FileHeader(commit_id=2).to_bytes()))).commit_id == 2


@pytest.mark.parametrize("version", [0x0004, 0x0006, 0x0011, 0x0013, 0xFFFF])
def test_header_parse_refuses_any_other_format_version(version: int) -> None:
    """A sealed header with a version other than 0x0012 is CorruptionError naming both versions."""
    assert parse_header(FileHeader().to_bytes()).version == FORMAT_VERSION
    slot = bytearray(FileHeader().to_bytes())
    struct.pack_into("<H", slot, 4, version)
    with pytest.raises(CorruptionError) as info:
        parse_header(_resealed(slot))
    assert info.value.code == Code.CORRUPTION == 5005
    expected = f"unsupported file format version 0x{version:04x} (expected 0x0012)"
    assert str(info.value) == expected


# ---- snapshot vectors and refusals ------------------------------------------------------


def test_empty_index_snapshot_is_the_pinned_13_bytes() -> None:
    """An empty index (and one with only empty domains) serialises to the 13-byte vector."""
    assert SNAPSHOT_VERSION == 0x03
    blob = build_snapshot({})
    assert blob == bytes.fromhex(EMPTY_SNAPSHOT_HEX)
    assert len(blob) == 13
    assert build_snapshot({7: {}}) == blob
    assert parse_snapshot(blob) == {}


def test_one_entry_snapshot_is_the_pinned_vector_and_parses_back() -> None:
    """{agent 0: id 12345 -> 8192} serialises to the pinned bytes and parses back."""
    blob = build_snapshot({0: {12345: 8192}})
    assert blob == _hex(ONE_ENTRY_SNAPSHOT_HEX)
    assert parse_snapshot(blob) == {0: {12345: 8192}}


@given(
    index=st.dictionaries(
        U64, st.dictionaries(U64, U64, min_size=1, max_size=5), min_size=0, max_size=4
    )
)
def test_snapshot_build_and_parse_round_trip(index: dict[int, dict[int, int]]) -> None:
    """Any index of non-empty domains survives build_snapshot then parse_snapshot."""
    blob = build_snapshot(index)
    entries = sum(len(ids) for ids in index.values())
    assert len(blob) == 13 + 12 * len(index) + 16 * entries
    assert parse_snapshot(blob) == index


def test_snapshot_parse_refuses_a_blob_shorter_than_13_bytes() -> None:
    """Twelve bytes is CorruptionError "snapshot too short"; thirteen valid bytes parse."""
    blob = bytes.fromhex(EMPTY_SNAPSHOT_HEX)
    assert parse_snapshot(blob) == {}
    with pytest.raises(CorruptionError, match="snapshot too short") as info:
        parse_snapshot(blob[:12])
    assert info.value.code == 5005


def test_snapshot_parse_refuses_a_crc_mismatch() -> None:
    """A flipped entry byte is CRCMismatchError "crc32 mismatch"."""
    blob = bytearray(_hex(ONE_ENTRY_SNAPSHOT_HEX))
    assert parse_snapshot(bytes(blob)) == {0: {12345: 8192}}
    blob[25] ^= 0x01
    with pytest.raises(CRCMismatchError, match="crc32 mismatch") as info:
        parse_snapshot(bytes(blob))
    assert info.value.code == 5004


def test_snapshot_parse_refuses_a_wrong_magic_under_a_correct_crc() -> None:
    """A sealed blob with another magic is CorruptionError "invalid snapshot magic"."""
    body = b"SNAP" + bytes([SNAPSHOT_VERSION]) + struct.pack("<I", 0)
    assert parse_snapshot(_with_crc(b"PANS" + body[4:])) == {}
    with pytest.raises(CorruptionError, match="invalid snapshot magic") as info:
        parse_snapshot(_with_crc(body))
    assert info.value.code == 5005


def test_snapshot_parse_refuses_an_unsupported_version_under_a_correct_crc() -> None:
    """A sealed blob with version 0x7f names the version it found and the one it expected."""
    fresh = build_snapshot({0: {1: DATA_START}})
    assert fresh[4] == 0x03
    assert parse_snapshot(fresh) == {0: {1: DATA_START}}
    body = bytearray(fresh[:-4])
    body[4] = 0x7F
    with pytest.raises(CorruptionError) as info:
        parse_snapshot(_with_crc(bytes(body)))
    assert str(info.value) == "unsupported snapshot version 0x7f (expected 0x03)"
    assert info.value.code == 5005


def test_snapshot_parse_refuses_an_agent_header_past_the_crc() -> None:
    """An agent count of one with no agent section is "snapshot agent header truncated"."""
    prefix = b"PANS" + bytes([SNAPSHOT_VERSION])
    section = struct.pack("<QI", 9, 0)
    assert parse_snapshot(_with_crc(prefix + struct.pack("<I", 1) + section)) == {9: {}}
    with pytest.raises(CorruptionError, match="snapshot agent header truncated") as info:
        parse_snapshot(_with_crc(prefix + struct.pack("<I", 1)))
    assert info.value.code == 5005
    with pytest.raises(CorruptionError, match="snapshot agent header truncated"):
        parse_snapshot(_with_crc(prefix + struct.pack("<I", 2) + section))


def test_snapshot_parse_refuses_entries_past_the_crc() -> None:
    """An agent claiming two entries but holding one is "snapshot entries truncated"."""
    prefix = b"PANS" + bytes([SNAPSHOT_VERSION]) + struct.pack("<I", 1)
    entry = struct.pack("<QQ", 12345, DATA_START)
    whole = prefix + struct.pack("<QI", 0, 1) + entry
    assert parse_snapshot(_with_crc(whole)) == {0: {12345: DATA_START}}
    with pytest.raises(CorruptionError, match="snapshot entries truncated") as info:
        parse_snapshot(_with_crc(prefix + struct.pack("<QI", 0, 2) + entry))
    assert info.value.code == 5005
