"""The recall file's bytes: each domain's section (its trust and its body) and the stamps
appended after them.

File: ``MAGIC``, a version, a count, the block size, then one directory entry per domain (its
id, the record end the state covers, the file's seal and digest there, where
its body lies, the body's length and an xxh3-64 of the body's block checksums),
then each body followed by the xxh3-64 of each ``BLOCK`` bytes of it, then any
number of stamps. A body (``memhop.index.recall_state``) is checked block by
block as its state reads it: its small columns when the state is decoded, its
postings and document terms a run at a time, when a recall first reads them
(a failure then is ``CRCMismatchError``), so a domain's first recall costs
what it reads, not what the domain holds.

A stamp says that a section, named by its domain and its body's checksum, is
true of the ``.meh`` up to a later record end (with the seal and digest
there): a close whose session changed nothing in a domain's state appends one
(64 bytes) instead of writing the state again, so the next open trusts the
state as of that close and hashes no older prefix of the file. Each stamp
carries its own checksum; the first that does not check ends the stamps (a
torn append), and a later stamp of a section overrides an earlier one.
Whether the ``.meh`` still vouches for a section is the root's question
(``memhop.domain.recall_file``); this module only writes and checks bytes.

Contract: ``RecallSection.state`` gives back what ``encode_sections`` was given,
or raises ValueError for bytes that do not check; a later read of the state
raises ``CRCMismatchError`` for a block that does not.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import xxhash

from memhop.domain.blocks import Blocks, stored_sums, sums_of
from memhop.errors import CRCMismatchError
from memhop.index.recall_state import RecallState, body_of, state_of_body

__all__ = [
    "BLOCK",
    "MAGIC",
    "STAMP_SIZE",
    "RecallSection",
    "decode_sections",
    "encode_sections",
    "encode_stamp",
]

MAGIC = b"MHRECALL"
_VERSION = 3  # 3: a checksum a block, the documents' total length (2: each term's bounds)
_HEAD = struct.Struct("<8sIII")  # magic, version, domain count, block size
# agent, covered end, seal, digest, offset, body length, xxh3-64 of the block checksums
_ENTRY = struct.Struct("<QQQ16sQQQ")
_STAMP_MAGIC = b"MHRSTAMP"
# magic, agent, body checksum, covered end, seal, digest, then the xxh3-64 of those
_STAMP = struct.Struct("<8sQQQQ16sQ")
_STAMPED = struct.Struct("<8sQQQQ16s")  # the part a stamp's checksum covers
STAMP_SIZE = _STAMP.size
"""The bytes a close appends to vouch for a section it keeps (64)."""
BLOCK = 4096
"""Bytes of a body under one checksum: a hit's id or time read alone checks one block
(about 0.5 us), and the checksums are 1/512 of the body. A file of another block size is
refused (indexed in full, then written again)."""


@dataclass(frozen=True, slots=True)
class RecallSection:
    """One domain's state in the file, as of ``covered_end`` (read on ``state``)."""

    agent_id: int
    covered_end: int
    seal: int  # CRC32 of the index snapshot the file held at covered_end; 0 for none
    digest: bytes  # the file's prefix digest up to covered_end
    body: memoryview  # its bytes where they lie (a view of the mapped file, as a rule)
    sums: memoryview  # the xxh3-64 of each BLOCK of the body, as stored
    checksum: int  # the xxh3-64 of ``sums``
    stamps: int = 0  # the file's stamps, all sections' (its trust may come from one)

    def state(self, damaged: Callable[[], None] = lambda: None) -> RecallState:
        """The state the body holds; ValueError when the bytes it reads now do not check.

        Its columns are views of the body, each checked where it is read: the
        small ones here, the postings and document terms a run at a time when
        first read (``CRCMismatchError`` then, after ``damaged`` is called).
        """
        if xxhash.xxh3_64_intdigest(self.sums) != self.checksum:
            msg = "recall state: checksum mismatch"
            raise ValueError(msg)
        blocks = Blocks(self.body, stored_sums(self.sums), BLOCK, "recall state")
        agent_id = self.agent_id

        def later(start: int, end: int) -> None:
            try:
                blocks.check(start, end)
            except ValueError as exc:
                damaged()
                msg = f"recall state of agent {agent_id:016x}: {exc}"
                raise CRCMismatchError(msg) from None

        return state_of_body(self.body, blocks.check, later)

    def raw(self) -> tuple[bytes, bytes]:
        """The body's bytes and its checksums, as stored (a section kept as it was when the
        file is written)."""
        return bytes(self.body), bytes(self.sums)

    def vouched(self, covered_end: int, seal: int, digest: bytes) -> RecallSection:
        """The same body, true of the file up to ``covered_end`` (seal and digest there)."""
        return dataclasses.replace(self, covered_end=covered_end, seal=seal, digest=digest)


def encode_sections(
    fresh: Iterable[tuple[int, int, int, bytes, RecallState]],
    kept: Iterable[RecallSection] = (),
) -> list[bytes]:
    """The file's bytes: (agent id, covered end, seal, digest, state) of each ``fresh``
    domain, and each ``kept`` section as it was read (its body is not decoded); no stamp.
    A fresh state read back whose bytes do not check as it is packed is left out (its
    ``damaged`` callback was told)."""
    entries: list[tuple[int, int, int, bytes, bytes, bytes, int]] = []
    for agent_id, covered_end, seal, digest, state in fresh:
        try:
            body = body_of(state)
        except CRCMismatchError:
            continue
        sums = sums_of(body, BLOCK).tobytes()
        entries.append(
            (agent_id, covered_end, seal, digest, body, sums, xxhash.xxh3_64_intdigest(sums))
        )
    for old in kept:
        body, sums = old.raw()
        entries.append(
            (old.agent_id, old.covered_end, old.seal, old.digest, body, sums, old.checksum)
        )
    offset = _HEAD.size + _ENTRY.size * len(entries)
    out: list[bytes] = [_HEAD.pack(MAGIC, _VERSION, len(entries), BLOCK)]
    for agent_id, covered_end, seal, digest, body, sums, checksum in entries:
        out.append(_ENTRY.pack(agent_id, covered_end, seal, digest, offset, len(body), checksum))
        offset += len(body) + len(sums)
    for entry in entries:
        out += entry[4:6]
    return out


def encode_stamp(section: RecallSection, covered_end: int, seal: int, digest: bytes) -> bytes:
    """The stamp to append: ``section``'s body is true of the file up to ``covered_end``."""
    fields = (_STAMP_MAGIC, section.agent_id, section.checksum, covered_end, seal, digest)
    return _STAMP.pack(*fields, xxhash.xxh3_64_intdigest(_STAMPED.pack(*fields)))


def decode_sections(data: bytes | bytearray | memoryview) -> Mapping[int, RecallSection]:
    """The sections of a file's bytes (read, or mapped), by domain, each as its last stamp
    vouches for it: only the directory and the stamps are read here; each section views
    its body, checked and decoded when its state is."""
    data = memoryview(data).cast("B")
    size = len(data)
    if size < _HEAD.size:
        msg = "recall file: shorter than its header"
        raise ValueError(msg)
    magic, version, count, block = _HEAD.unpack(data[: _HEAD.size])
    if magic != MAGIC or version != _VERSION:
        msg = f"recall file: not a version {_VERSION} recall file"
        raise ValueError(msg)
    if block != BLOCK:
        msg = f"recall file: blocks of {block} bytes, not {BLOCK}"
        raise ValueError(msg)
    bodies_end = _HEAD.size + _ENTRY.size * count
    if bodies_end > size:
        msg = "recall file: directory past the end"
        raise ValueError(msg)
    if not count and size > _HEAD.size:  # a file of no domain is its header alone
        msg = "recall file: a directory of no entry before bodies"
        raise ValueError(msg)
    listing = data[_HEAD.size : bodies_end]
    found: dict[int, RecallSection] = {}
    expected = bodies_end  # the bodies follow the directory, one after another
    for agent_id, end, seal, digest, offset, length, checksum in _ENTRY.iter_unpack(listing):
        if offset != expected:  # a count that lost or gained entries, or a moved body
            msg = "recall file: a body where the directory does not put it"
            raise ValueError(msg)
        sums_end = offset + length + 8 * -(-length // BLOCK)
        expected = sums_end
        if sums_end > size:
            msg = "recall file: a body past the end"
            raise ValueError(msg)
        bodies_end = max(bodies_end, sums_end)
        body, sums = data[offset : offset + length], data[offset + length : sums_end]
        found[agent_id] = RecallSection(agent_id, end, seal, digest, body, sums, checksum)
    stamps = list(_stamps(data[bodies_end:]))
    for agent_id, checksum, end, seal, digest in stamps:
        section = found.get(agent_id)
        if section is not None and section.checksum == checksum:
            found[agent_id] = section.vouched(end, seal, digest)
    if stamps:
        found = {a: dataclasses.replace(s, stamps=len(stamps)) for a, s in found.items()}
    return found


def _stamps(tail: memoryview) -> Iterable[tuple[int, int, int, int, bytes]]:
    """(agent, body checksum, covered end, seal, digest) of each stamp that checks, up to
    the first that does not (a torn append ends them)."""
    for at in range(0, len(tail) - STAMP_SIZE + 1, STAMP_SIZE):
        magic, agent_id, checksum, end, seal, digest, check = _STAMP.unpack_from(tail, at)
        head = tail[at : at + _STAMPED.size]
        if magic != _STAMP_MAGIC or xxhash.xxh3_64_intdigest(head) != check:
            return
        yield agent_id, checksum, end, seal, digest
