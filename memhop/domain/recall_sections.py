"""The recall file's bytes: each domain's section (its trust and its body) and the stamps
appended after them.

File: ``MAGIC``, a version, a count, then one directory entry per domain (its
id, the record end the state covers, the file's seal and digest there, where
its body lies and an xxh3-64 checksum of the body), then the bodies
(``memhop.index.recall_state``), then any number of stamps.

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
or raises ValueError for bytes that do not check.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import xxhash

from memhop.index.recall_state import RecallState, body_of, state_of_body

__all__ = [
    "MAGIC",
    "STAMP_SIZE",
    "RecallSection",
    "decode_sections",
    "encode_sections",
    "encode_stamp",
]

MAGIC = b"MHRECALL"
_VERSION = 2  # 2: each term's highest count and shortest document beside it
_HEAD = struct.Struct("<8sII")
_ENTRY = struct.Struct("<QQQ16sQQQ")  # agent, covered end, seal, digest, offset, length, sum
_STAMP_MAGIC = b"MHRSTAMP"
# magic, agent, body checksum, covered end, seal, digest, then the xxh3-64 of those
_STAMP = struct.Struct("<8sQQQQ16sQ")
_STAMPED = struct.Struct("<8sQQQQ16s")  # the part a stamp's checksum covers
STAMP_SIZE = _STAMP.size
"""The bytes a close appends to vouch for a section it keeps (64)."""
# A body is hashed in parts this size, which xxhash hashes holding the interpreter: given
# a larger one it lets the interpreter go, and a build beside (a warm domain's) takes it
# for a switch interval (5 ms), against 0.2 ms for the hash of 7.5 MB.
_HASH_PART = 65_536


@dataclass(frozen=True, slots=True)
class RecallSection:
    """One domain's state in the file, as of ``covered_end`` (read on ``state``)."""

    agent_id: int
    covered_end: int
    seal: int  # CRC32 of the index snapshot the file held at covered_end; 0 for none
    digest: bytes  # the file's prefix digest up to covered_end
    body: memoryview  # its bytes where they lie (a view of the mapped file, as a rule)
    checksum: int
    stamps: int = 0  # the file's stamps, all sections' (its trust may come from one)

    def state(self) -> RecallState:
        """The state the body holds; ValueError when the body does not check.

        The body is checksummed whole, then its columns are views of it: what a
        state reads back costs the hash and the columns it edits (copied).
        """
        body = self.body
        hasher = xxhash.xxh3_64()
        for at in range(0, len(body), _HASH_PART):
            hasher.update(body[at : at + _HASH_PART])
        if hasher.intdigest() != self.checksum:
            msg = "recall state: checksum mismatch"
            raise ValueError(msg)
        return state_of_body(body)

    def raw(self) -> bytes:
        """The body's bytes, as stored (a section kept as it was when the file is written)."""
        return bytes(self.body)

    def vouched(self, covered_end: int, seal: int, digest: bytes) -> RecallSection:
        """The same body, true of the file up to ``covered_end`` (seal and digest there)."""
        return dataclasses.replace(self, covered_end=covered_end, seal=seal, digest=digest)


def encode_sections(
    fresh: Iterable[tuple[int, int, int, bytes, RecallState]],
    kept: Iterable[RecallSection] = (),
) -> list[bytes]:
    """The file's bytes: (agent id, covered end, seal, digest, state) of each ``fresh``
    domain, and each ``kept`` section as it was read (its body is not decoded); no stamp."""
    entries: list[tuple[int, int, int, bytes, bytes, int]] = []
    for agent_id, covered_end, seal, digest, state in fresh:
        body = body_of(state)
        entries.append((agent_id, covered_end, seal, digest, body, xxhash.xxh3_64_intdigest(body)))
    for old in kept:
        entries.append(
            (old.agent_id, old.covered_end, old.seal, old.digest, old.raw(), old.checksum)
        )
    offset = _HEAD.size + _ENTRY.size * len(entries)
    out: list[bytes] = [_HEAD.pack(MAGIC, _VERSION, len(entries))]
    for agent_id, covered_end, seal, digest, raw, checksum in entries:
        out.append(_ENTRY.pack(agent_id, covered_end, seal, digest, offset, len(raw), checksum))
        offset += len(raw)
    return out + [entry[4] for entry in entries]


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
    magic, version, count = _HEAD.unpack(data[: _HEAD.size])
    if magic != MAGIC or version != _VERSION:
        msg = f"recall file: not a version {_VERSION} recall file"
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
        expected += length
        if offset + length > size:
            msg = "recall file: a body past the end"
            raise ValueError(msg)
        bodies_end = max(bodies_end, offset + length)
        found[agent_id] = RecallSection(
            agent_id, end, seal, digest, data[offset : offset + length], checksum
        )
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
