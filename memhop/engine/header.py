"""The two 4096-byte file headers (slots A and B) and the choice between them.

Every header write goes to the inactive slot and is fsynced before it becomes
active, so a torn header write leaves the previous generation readable.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, replace

from memhop.engine.frame import ByteView
from memhop.errors import CorruptionError, CRCMismatchError, InvalidMagicError, MemHopError

FORMAT_VERSION = 0x0012
HEADER_SIZE = 4096
HEADER_A_OFFSET = 0
HEADER_B_OFFSET = 4096
DATA_START = 8192

MAGIC = b"MEH2"
TAIL_MAGIC = b"2HEM"
MAX_COMMIT_ID = (1 << 64) - 1
"""The top of the commit id's range (a u64): a header there has no next generation."""
_CRC_AT = 4088
_FIELDS = struct.Struct("<4sHHQQIIIQ")  # magic .. record_end, 44 bytes


@dataclass(frozen=True, slots=True)
class FileHeader:
    """One header generation; ``reserved`` and ``flags`` are carried forward untouched."""

    commit_id: int = 0
    snapshot_offset: int = 0
    snapshot_length: int = 0
    record_count: int = 0
    record_end: int = 0
    reserved: int = 0
    flags: int = 0
    version: int = FORMAT_VERSION

    @property
    def has_snapshot(self) -> bool:
        return self.snapshot_offset != 0 and self.snapshot_length != 0

    def to_bytes(self) -> bytes:
        """Serialise to one 4096-byte slot with its CRC and tail magic."""
        buf = bytearray(HEADER_SIZE)
        _FIELDS.pack_into(
            buf,
            0,
            MAGIC,
            self.version,
            self.reserved,
            self.commit_id,
            self.snapshot_offset,
            self.snapshot_length,
            self.record_count,
            self.flags,
            self.record_end,
        )
        struct.pack_into("<I", buf, _CRC_AT, zlib.crc32(buf[:_CRC_AT]))
        buf[4092:4096] = TAIL_MAGIC
        return bytes(buf)

    def next_generation(self, **changes: int) -> FileHeader:
        """Return this header one commit later, with ``changes`` applied.

        CorruptionError at ``MAX_COMMIT_ID``: no honest file gets there (one
        commit per checkpoint or trim), and a wrapped id would lose to the
        older slot at the next open.
        """
        if self.commit_id >= MAX_COMMIT_ID:
            msg = f"the header's commit id is {self.commit_id}, the top of its range"
            raise CorruptionError(msg)
        return replace(self, commit_id=self.commit_id + 1, **changes)


def parse_header(buf: ByteView) -> FileHeader:
    """Parse one slot, checking magic, tail magic, CRC and version in that order."""
    raw = bytes(buf[:HEADER_SIZE])
    if len(raw) < HEADER_SIZE or raw[:4] != MAGIC or raw[4092:4096] != TAIL_MAGIC:
        msg = "invalid magic bytes"
        raise InvalidMagicError(msg)
    (stored_crc,) = struct.unpack_from("<I", raw, _CRC_AT)
    if zlib.crc32(raw[:_CRC_AT]) != stored_crc:
        msg = "crc32 mismatch"
        raise CRCMismatchError(msg)
    _, version, reserved, commit, snap_off, snap_len, count, flags, rec_end = _FIELDS.unpack_from(
        raw, 0
    )
    if version != FORMAT_VERSION:
        msg = f"unsupported file format version 0x{version:04x} (expected 0x{FORMAT_VERSION:04x})"
        raise CorruptionError(msg)
    return FileHeader(commit, snap_off, snap_len, count, rec_end, reserved, flags, version)


@dataclass(frozen=True, slots=True)
class HeaderPair:
    """Both slots as held in memory, and which one is active (0 = A, 1 = B)."""

    slots: tuple[FileHeader, FileHeader]
    active: int

    @property
    def current(self) -> FileHeader:
        return self.slots[self.active]

    @property
    def inactive_offset(self) -> int:
        return HEADER_B_OFFSET if self.active == 0 else HEADER_A_OFFSET

    @property
    def active_offset(self) -> int:
        return HEADER_A_OFFSET if self.active == 0 else HEADER_B_OFFSET

    def flipped_to(self, header: FileHeader) -> HeaderPair:
        """Return the pair after ``header`` was written to the inactive slot."""
        inactive = 1 - self.active
        slots = (header, self.slots[1]) if inactive == 0 else (self.slots[0], header)
        return HeaderPair(slots, inactive)


def load_headers(buf: ByteView, path: str = "") -> HeaderPair:
    """Choose the active slot: the larger commit id wins, A on a tie.

    When only one slot parses, the broken one is represented by a copy of the
    good one; the next header write goes to the broken slot and repairs it.
    When neither does, CorruptionError names ``path`` (the file the bytes
    came from) and each slot's reason.
    """
    errors: list[MemHopError] = []
    parsed: list[FileHeader | None] = []
    for start in (HEADER_A_OFFSET, HEADER_B_OFFSET):
        try:
            parsed.append(parse_header(buf[start : start + HEADER_SIZE]))
        except MemHopError as exc:
            parsed.append(None)
            errors.append(exc)
    a, b = parsed
    if a is not None and b is not None:
        return HeaderPair((a, b), 0 if a.commit_id >= b.commit_id else 1)
    if a is not None:
        return HeaderPair((a, a), 0)
    if b is not None:
        return HeaderPair((b, b), 1)
    reasons = f"both file headers are invalid (A: {errors[0]}; B: {errors[1]})"
    if not path:
        raise CorruptionError(reasons)
    # Neither slot starts with the magic: not damage, another kind of file.
    foreign = all(isinstance(e, InvalidMagicError) for e in errors)
    msg = f"{path} is not a memhop file: {reasons}" if foreign else f"{path}: {reasons}"
    raise CorruptionError(msg)
