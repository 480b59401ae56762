"""The 26-byte record frame: type, flags, length, agent id, id hash, CRC32.

All integers are little-endian. The CRC covers header bytes [0, 22) and then
the payload; the CRC field itself is excluded.
"""

from __future__ import annotations

import mmap
import struct
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from memhop.errors import CorruptionError, CRCMismatchError, InvalidQueryError

ByteView = bytes | bytearray | memoryview | mmap.mmap
"""Anything the decoders read from: file bytes or the live mapping."""

RECORD_HEADER_SIZE = 26
FLAG_DELETED = 0x01
MAX_PAYLOAD_BYTES = (1 << 24) - 1
"""The frame limit: a payload of at most 16 MiB - 1 bytes (the length's high byte is zero).

Writes over it are refused; a frame claiming more is damage, refused before
its checksum is computed, so a crafted length cannot make a read (or the
open's resync) checksum gigabytes.
"""

_HEAD = struct.Struct("<BBIQQ")  # the 22 bytes the CRC starts with
_CRC = struct.Struct("<I")
_FULL = struct.Struct("<BBIQQI")
LENGTH_FIELD = struct.Struct("<I")
"""A frame's payload length, at ``LENGTH_AT``: after the type and flags bytes."""
LENGTH_AT = 2


@dataclass(frozen=True, slots=True)
class Frame:
    """One decoded frame; ``end`` is the offset just past its payload."""

    rec_type: int
    flags: int
    agent_id: int
    id_hash: int
    payload: bytes
    offset: int
    end: int

    @property
    def deleted(self) -> bool:
        return bool(self.flags & FLAG_DELETED)


def encode_frame(agent_id: int, rec_type: int, flags: int, id_hash: int, payload: bytes) -> bytes:
    """Return the frame bytes for one record (a tombstone has an empty payload).

    InvalidQueryError for a payload over ``MAX_PAYLOAD_BYTES``.
    """
    if len(payload) > MAX_PAYLOAD_BYTES:
        msg = f"a record of {len(payload)} bytes exceeds the {MAX_PAYLOAD_BYTES}-byte frame limit"
        raise InvalidQueryError(msg)
    head = _HEAD.pack(rec_type, flags, len(payload), agent_id, id_hash)
    crc = zlib.crc32(payload, zlib.crc32(head))
    return head + _CRC.pack(crc) + payload


def frame_bounds(buf: ByteView, offset: int, size: int) -> tuple[int, int, int, int, int] | None:
    """Check the frame at ``offset`` in the first ``size`` bytes of ``buf``.

    Returns (type, flags, agent id, id hash, end) without copying the payload,
    or None at the end of the log: ``offset == size`` or an all-zero header
    (zero-filled space; the CRC bytes are not looked at). Raises
    CorruptionError for a header or payload running past ``size`` or a length
    over the frame limit, and CRCMismatchError for a frame that fails its CRC.
    """
    if offset == size:
        return None
    if offset + RECORD_HEADER_SIZE > size:
        msg = f"record header at offset {offset} exceeds file size {size}"
        raise CorruptionError(msg)
    rec_type, flags, length, agent_id, id_hash, crc = _FULL.unpack_from(buf, offset)
    if rec_type == 0 and flags == 0 and length == 0 and agent_id == 0 and id_hash == 0:
        return None
    start = offset + RECORD_HEADER_SIZE
    if length > size - start:
        msg = f"record at offset {offset} claims length {length} but file ends at {size}"
        raise CorruptionError(msg)
    if length > MAX_PAYLOAD_BYTES:
        msg = f"record at offset {offset} claims length {length}, over the frame limit"
        raise CorruptionError(msg)
    end = start + length
    # A view, not a slice, so the payload is not copied; released before any
    # raise so a traceback never pins the mapping open.
    with memoryview(buf) as view:
        good = zlib.crc32(view[start:end], zlib.crc32(view[offset : offset + 22])) == crc
    if not good:
        msg = f"record at offset {offset} failed CRC32 check"
        raise CRCMismatchError(msg)
    return rec_type, flags, agent_id, id_hash, end


def decode_frame(buf: ByteView, offset: int, size: int) -> Frame | None:
    """Decode and copy out the frame at ``offset``; None at the end of the log."""
    bounds = frame_bounds(buf, offset, size)
    if bounds is None:
        return None
    rec_type, flags, agent_id, id_hash, end = bounds
    payload = bytes(buf[offset + RECORD_HEADER_SIZE : end])
    return Frame(rec_type, flags, agent_id, id_hash, payload, offset, end)


def frame_end(buf: ByteView, offset: int) -> int:
    """Where the frame at ``offset`` ends by its length field, unchecked (its header must
    lie in ``buf``)."""
    length: int = LENGTH_FIELD.unpack_from(buf, offset + LENGTH_AT)[0]
    return offset + RECORD_HEADER_SIZE + length


def decode_record(buf: ByteView, offset: int, size: int, agent_id: int, id_hash: int) -> Frame:
    """Decode the live frame of (agent, id) the index places at ``offset``.

    Every check a read makes: the frame's own (``frame_bounds``), then that
    it is the record asked for: its agent id and id hash match and it is not
    a tombstone. CorruptionError (or CRCMismatchError) otherwise: a frame
    that answers for another record is damage, never data.
    """
    frame = decode_frame(buf, offset, size)
    if frame is None:
        msg = "the index names a record the record area does not hold"
        raise CorruptionError(msg)
    if frame.agent_id != agent_id or frame.id_hash != id_hash:
        msg = (
            f"the frame holds agent {frame.agent_id:016x} id {frame.id_hash:016x},"
            " not the record the index names"
        )
        raise CorruptionError(msg)
    if frame.deleted:
        msg = "the index names a tombstone"
        raise CorruptionError(msg)
    return frame


def named_damage(
    exc: CorruptionError | CRCMismatchError, agent_id: int, id_hash: int, offset: int
) -> CorruptionError | CRCMismatchError:
    """``exc`` (a read's refusal) reworded to name the record and its offset; same class, code."""
    msg = f"record {id_hash:016x} of agent {agent_id:016x} at offset {offset}: {exc}"
    return type(exc)(msg, code=exc.code)


def record_payloads(
    buf: mmap.mmap | bytes,
    size: int,
    agent_id: int,
    rec_type: int,
    placed: Iterable[tuple[int, int]],
    damaged: Callable[[int, int, Exception], None],
) -> list[tuple[int, bytes]]:
    """(id, payload) of each (id, offset) in ``placed`` whose frame is a live ``rec_type`` record.

    In the order of ``placed``. Each frame gets every check ``decode_record``
    makes; a frame of another type is left out. A frame that fails a check
    is passed to ``damaged`` as (id, offset, the error ``decode_record``
    raises) and left out.
    """
    found: list[tuple[int, bytes]] = []
    unpack, crc32 = _FULL.unpack_from, zlib.crc32
    for id_hash, offset in placed:
        # decode_record's checks inlined, for a domain's worth of frames. A nonzero
        # type rules out the all-zero header; anything refused here goes to
        # decode_record itself, which names the error.
        start = offset + RECORD_HEADER_SIZE
        if start <= size:
            t, flags, length, agent, ident, crc = unpack(buf, offset)
            end = start + length
            if (
                t
                and agent == agent_id
                and ident == id_hash
                and not flags & FLAG_DELETED
                and end <= size
                and length <= MAX_PAYLOAD_BYTES
            ):
                payload = buf[start:end]
                if crc32(payload, crc32(buf[offset : offset + 22])) == crc:
                    if t == rec_type:
                        found.append((id_hash, payload))
                    continue  # a good frame of another type is left out
        try:
            frame = decode_record(buf, offset, size, agent_id, id_hash)
        except (CorruptionError, CRCMismatchError) as exc:
            damaged(id_hash, offset, exc)
            continue
        if frame.rec_type == rec_type:
            found.append((id_hash, frame.payload))
    return found
