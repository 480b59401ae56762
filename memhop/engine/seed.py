"""The index seed beside a ``.meh``: the live index as of a record end, for an open after a kill.

The file's own snapshot lives at its tail, so the first write of a session
cuts it (format 0x0012 keeps frames before snapshots). A process killed after
that leaves no snapshot, and the next open scans the whole log: seconds at
10^6 records. A clean close therefore also writes the snapshot it appends to
``<file>.seed``, with the record end it covers and an xxh3-128 digest of the
record area up to that end. An open that finds no usable snapshot in the file
takes the seed only when the file's bytes up to that end still give that
digest and it is the index of the file's last checkpoint (the active header's
record end and live count, which the trim of the tail snapshot carries
forward), then scans just the frames after it.

Why that is enough: frames are only appended, and an index is a function of
the bytes it was replayed from. The bytes that made the seed's index are the
bytes there now, so the seed is the index a scan of them would build, and the
scan from its end (a frame boundary then, so one now) adds the rest.

What a well-formed but wrong seed can do: the digest vouches for the file's
bytes, not for the index, so the header's count is what catches an entry
dropped or added; an edit that keeps the count (one entry dropped, a
superseded frame's put back) is caught by the replay ``check_seeded_index``
makes before a compaction leaves any frame behind (``Engine.confirm_index``).

Contract:
- Layout: ``MAGIC`` (8 bytes), the end (u64 little-endian), the digest (16
  bytes), then a snapshot blob as ``build_snapshot`` writes it (its own CRC).
- Kept only beside a log of ``MIN_LOG_BYTES`` or more.
- A seed is a cache: written without an fsync (a torn one fails its checks),
  never allowed to fail a close, and refused on any mismatch, which costs
  only the full scan it would have saved. ``discard_seed`` deletes it (a
  compaction, whose copy gets its own at close).
- It holds ids and frame offsets, never payload bytes.
"""

from __future__ import annotations

import logging
import os
import struct
from collections.abc import Mapping, Sequence

import xxhash

from memhop.engine.frame import ByteView
from memhop.engine.header import DATA_START, FileHeader
from memhop.engine.recovery import scan_records
from memhop.engine.side_files import SEED_SUFFIX, remove_side_file, replace_side_file
from memhop.engine.snapshot import PackedIndex, parse_snapshot
from memhop.errors import CorruptionError, InvalidQueryError, MemHopError
from memhop.intmap import IntMap

__all__ = [
    "MIN_LOG_BYTES",
    "SUFFIX",
    "PrefixDigests",
    "check_seeded_index",
    "discard_seed",
    "has_seed",
    "prefix_digests",
    "restore_seed",
    "worth_a_seed",
    "write_seed",
]

log = logging.getLogger("memhop.engine")

SUFFIX = SEED_SUFFIX
"""The seed of ``x.meh`` is ``x.meh.seed``."""
MAGIC = b"MHSEED\x00\x01"
MIN_LOG_BYTES = 1 << 20
_DIGESTS_KEPT = 16  # prefix digests remembered (a few ends are ever asked for)
"""A smaller log (some 4,000 frames) is scanned in tens of milliseconds: no seed beside it."""
_HEAD = struct.Struct("<8sQ16s")


def prefix_digests(view: ByteView, ends: Sequence[int], last: int) -> list[bytes]:
    """The xxh3-128 digest of ``view[DATA_START:end]`` at each of ``ends`` (ascending, at
    most ``last``), in one pass; InvalidQueryError for an end out of range or order."""
    at, hasher, digests = DATA_START, xxhash.xxh3_128(), []
    with memoryview(view) as whole:
        for end in ends:
            if not DATA_START <= end <= last:
                msg = f"{end} is outside the record area [{DATA_START}, {last}]"
                raise InvalidQueryError(msg)
            if end < at:
                msg = f"prefix ends {list(ends)} are not ascending"
                raise InvalidQueryError(msg)
            hasher.update(whole[at:end])
            digests.append(hasher.digest())
            at = end
    return digests


class PrefixDigests:
    """An open file's prefix digests, each remembered: while the file is open the bytes
    before its record end never change, and an open, a close's seed and its side
    files ask for the same ends. Not thread-safe: the engine asks under its lock."""

    def __init__(self, known: Mapping[int, bytes] | None = None) -> None:
        self._known = dict(known or {})

    def remember(self, end: int, digest: bytes) -> None:
        self._known[end] = digest

    def of(self, view: ByteView, ends: Sequence[int], last: int) -> list[bytes]:
        """``prefix_digests(view, ends, last)``, from memory where it can."""
        known = [self._known.get(end, b"") for end in ends]
        if all(known) and list(ends) == sorted(ends):  # each known end is in the record area
            return known
        found = prefix_digests(view, ends, last)
        if len(self._known) > _DIGESTS_KEPT:
            self._known.clear()
        self._known.update(zip(ends, found, strict=True))
        return found


def worth_a_seed(end: int) -> bool:
    """Whether a log ending at ``end`` is large enough that a scan of it would cost."""
    return end - DATA_START >= MIN_LOG_BYTES


def write_seed(path: str, end: int, digest: bytes, snapshot: bytes, mode: int) -> None:
    """Replace ``path``'s seed with ``snapshot`` as of ``end``; a failure is logged, not raised."""
    target = path + SUFFIX
    try:
        replace_side_file(target, (_HEAD.pack(MAGIC, end, digest), snapshot), mode)
    except OSError as exc:
        msg = "index seed %s not written (an open after a kill scans the whole log): %s"
        log.warning(msg, target, exc)


def restore_seed(
    path: str, view: ByteView, size: int, header: FileHeader
) -> tuple[int, bytes, PackedIndex] | None:
    """(end, digest, index) from ``path``'s seed when the file, whose active header is
    ``header``, still vouches for it; else None."""
    target = path + SUFFIX
    try:
        with open(target, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("index seed %s not read (scanning the log): %s", target, exc)
        return None
    why = _mismatch(data, view, size, header)
    if why is None:
        try:
            _, end, digest = _HEAD.unpack_from(data)
            index = parse_snapshot(memoryview(data)[_HEAD.size :])
            count = sum(map(len, index.values()))
            if count == header.record_count:
                return end, digest, index
            why = f"it names {count} records, the file's last checkpoint {header.record_count}"
        except MemHopError as exc:
            why = str(exc)
    log.info("index seed %s not used (scanning the log): %s", target, why)
    return None


def _mismatch(data: bytes, view: ByteView, size: int, header: FileHeader) -> str | None:
    """Why the seed ``data`` does not fit the file in ``view[:size]``; None when it does."""
    if len(data) < _HEAD.size:
        return "shorter than its header"
    magic, end, digest = _HEAD.unpack_from(data)
    if magic != MAGIC:
        return "not a seed of this version"
    if not DATA_START <= end <= size:
        return f"it covers up to offset {end}, the file holds {size} bytes"
    if end != header.record_end:  # a seed is written with a checkpoint, and names its end
        return f"it covers up to offset {end}, the file's last checkpoint up to {header.record_end}"
    if prefix_digests(view, [end], end) != [digest]:
        return "the file's bytes up to its end are not the ones it was made from"
    return None


def check_seeded_index(
    path: str, view: ByteView, end: int, index: Mapping[int, IntMap], what: str
) -> None:
    """Check that ``index``, taken from ``path``'s seed, is the one a replay of the record
    area up to ``end`` gives; else delete the seed and raise CorruptionError (``what``: its
    prefix) asking for a reopen, which rebuilds the index from the log.

    For a compaction, before it leaves any frame behind: the seed's digest vouches
    for the file's bytes, not for the index, and a frame the index leaves out
    would be lost with the old file. Costs the scan the seed saved.
    """
    replayed: PackedIndex = {}
    scan_records(view, DATA_START, end, replayed, 0)
    if _pairs(replayed) != _pairs(index):
        discard_seed(path)
        msg = (
            f"{what}: the index this open took from {path}{SUFFIX} is not the one the log"
            " gives; nothing was copied or left behind, and the seed was removed: reopen"
            f" {path} to rebuild the index from the log"
        )
        raise CorruptionError(msg)


def _pairs(index: Mapping[int, IntMap]) -> dict[int, object]:
    """An index as comparable values: each domain's (id, offset) pairs, empty ones left out."""
    return {agent: ids.flat() for agent, ids in index.items() if ids}


def has_seed(path: str) -> bool:
    """Whether a seed file sits beside ``path`` (whatever it holds)."""
    return os.path.exists(path + SUFFIX)


def discard_seed(path: str) -> None:
    """Delete ``path``'s seed, if there is one (a failure is logged)."""
    try:
        remove_side_file(path + SUFFIX)
    except OSError as exc:
        log.warning("index seed %s not removed: %s", path + SUFFIX, exc)
