"""The copying of an in-place compaction: live frames, then the frames written since.

``Copy`` fills a fresh engine (the copy, not yet anyone's data) from a source
engine that its writers go on using (the phases are described in
``memhop.engine.inplace``). Every read of the source's log is from a pinned
view of its settled part, without the engine lock; every question to its
index is one ``OnlineAccess`` step over at most ``CHUNK_FRAMES`` frames.

Why the copy ends right: a frame F of record X at offset o is copied only
while the source's index holds X at o, and offsets only grow, so X had no
later frame then. Frames after E1 are replayed in log order, a batch at a
time: the batch's tombstones first (of a record the copy holds: a record
copied in the same batch has no later frame, and an earlier copy of it died
before this one), then its frames still live. So each record the source
holds has its last frame in the copy, and each one it no longer holds ends
in a tombstone there; phase 3 checks that the copy holds as many records as
the source. A copied frame superseded or deleted meanwhile is erased
(``OnlineAccess.erase``) before the copy is published.

An index the open took from the seed (``Engine.index_source == "seed"``) is
checked against a replay of the log, as ``Engine.confirm_index`` would before
a compaction leaves frames behind: phase 1 replays ``[DATA_START, E1)``
without the lock and a frame the index and the replay disagree on is a
mismatch, unless the record was written again after E1.
"""

from __future__ import annotations

import heapq
import struct
import zlib
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from operator import itemgetter

import xxhash

from memhop.engine.compact import first_refusal, refusal
from memhop.engine.engine import Engine
from memhop.engine.frame import FLAG_DELETED, MAX_PAYLOAD_BYTES, RECORD_HEADER_SIZE
from memhop.engine.header import DATA_START
from memhop.engine.recovery import frames_between, scan_records
from memhop.engine.seed import worth_a_seed
from memhop.engine.snapshot import PackedIndex, snapshot_length_at
from memhop.errors import CorruptionError
from memhop.intmap import NO_IDS, IntMap

__all__ = ["CHUNK_FRAMES", "Copy"]

CHUNK_FRAMES = 512
"""Frames one step over the source's index looks at, and phase 1 copies between two paces."""
_CHUNK_BYTES = 1 << 20  # log bytes a phase 1 chunk walks at most
_ROUNDS = 8  # catch-up rounds phase 2 makes at most
_LITTLE = 64 << 10  # a round that replays less than this ends phase 2
_WHAT = "compact in place"
_MARK_BYTES = 1 << 20  # the seed's digest keeps its state this often along the copy
_REHASH_HELD = 8 << 20  # bytes phase 3 hashes at most to keep the seed (about 1 ms)
_RUN = 16384  # entries in one sorted run of the copy's index (a sort of about 2 ms)
_OFFSET = (1 << 56) - 1  # an entry of a run: id << 64 | offset << 8 | type
_FLUSH_BYTES = 8 << 20
_HEAD = struct.Struct("<BBIQQ")
_CRC = struct.Struct("<I")
_CRC_AT = 22

Head = tuple[int, int, int, int, int, int]
"""A frame: (offset, type, flags, agent id, id hash, end), as ``frames_between`` yields."""


def _heads(view: memoryview, start: int, end: int) -> Iterator[list[Head]]:
    """The frames in ``[start, end)`` in log order, a chunk at a time, not checked by CRC.

    A frame is checked when it is copied; a dead one is stepped over by its
    length, which must be plausible (else CorruptionError: the log cannot be
    walked there). Snapshot blobs met on the way are stepped over whole.
    """
    unpack = _HEAD.unpack_from
    at = start
    while at < end:
        chunk: list[Head] = []
        stop = min(at + _CHUNK_BYTES, end)
        while at < stop and len(chunk) < CHUNK_FRAMES:
            nxt = -1
            if at + RECORD_HEADER_SIZE <= end:
                rec_type, flags, length, agent, ident = unpack(view, at)
                nxt = at + RECORD_HEADER_SIZE + length
                zeros = not (rec_type or flags or length or agent or ident)
                if zeros or flags > 1 or (flags and length) or length > MAX_PAYLOAD_BYTES:
                    nxt = -1
            if nxt < 0 or nxt > end:
                blob = snapshot_length_at(view, at, end)
                if blob is None:
                    msg = (
                        f"compact: no frame at offset {at} of the record area, which ends at"
                        f" {end}: the log is damaged there; salvage_to copies every record"
                        " that verifies"
                    )
                    raise CorruptionError(msg)
                at += blob
                continue
            chunk.append((at, rec_type, flags, agent, ident, nxt))
            at = nxt
        yield chunk


def _verify(view: memoryview, heads: Sequence[Head]) -> None:
    """Check each frame's CRC (``_heads`` did not); refuse the first that fails."""
    crc32 = zlib.crc32
    for at, _, _, _, ident, end in heads:
        (crc,) = _CRC.unpack_from(view, at + _CRC_AT)
        if crc32(view[at + RECORD_HEADER_SIZE : end], crc32(view[at : at + _CRC_AT])) != crc:
            raise refusal(view, view.nbytes, at, ident)


class _Runs:
    """The copy's index as it is written: each domain's (id, offset, type) entries in sorted
    runs, merged at the end, so that no call sorts a whole domain (one C call holds the
    interpreter, and the calls beside the copy wait: 0.1 s at 3*10^5 records)."""

    def __init__(self) -> None:
        self._runs: dict[int, list[list[int]]] = {}

    def add(self, agent: int, ident: int, offset: int, rec_type: int) -> None:
        runs = self._runs.get(agent)
        if runs is None:
            runs = self._runs[agent] = [[]]
        run = runs[-1]
        run.append(ident << 64 | offset << 8 | rec_type)
        if len(run) == _RUN:
            run.sort()
            runs.append([])

    def maps(self, pace: Callable[[], None]) -> dict[int, IntMap]:
        """Each domain's map, merged from its runs, with its frames' types (the new file's
        first typed question would read them all: 0.1-0.2 s, in a call); ``pace`` runs
        every ``CHUNK_FRAMES`` entries."""
        out = {}
        for agent, runs in self._runs.items():
            runs[-1].sort()
            ids, offsets, types = array("Q"), array("Q"), array("H")
            for n, entry in enumerate(heapq.merge(*runs), 1):
                ids.append(entry >> 64)
                offsets.append(entry >> 8 & _OFFSET)
                types.append(entry & 0xFF)
                if not n % CHUNK_FRAMES:
                    pace()
            out[agent] = IntMap.from_arrays(ids, offsets, types)
        return out


class Copy:
    """One in-place compaction's copy of ``source`` into ``dest`` (a fresh engine).

    ``pace`` runs between chunks while nothing is held. Call ``copy`` (phase
    1), ``settle`` (phase 2), then ``finish`` holding ``source.exclusive()``.
    """

    def __init__(self, source: Engine, dest: Engine, pace: Callable[[], None]) -> None:
        self.source, self.dest, self.pace = source, dest, pace
        self.src, self.dst = source.online(), dest.online()
        self.at = DATA_START  # the source's log is copied up to here
        self.frame_bytes = 0  # what phase 1 copied
        self.dead: list[int] = []  # offsets in the copy of frames that died, not erased yet
        self.seed: tuple[int, bytes, bytes] | None = None  # (end, digest, snapshot) of the copy
        self.marks: list[tuple[int, xxhash.xxh3_128]] = []  # the digest's state along the copy
        self.replayed: PackedIndex | None = None  # a seeded index's replay, as of E1
        self.unsure: set[tuple[int, int]] = set()  # live at E1 by the log, not by the index
        self.touched: set[tuple[int, int]] = set()  # records written since E1
        self.durable = False  # nothing changed in the copy since its checkpoint

    # ---- phase 1 -----------------------------------------------------------------------

    def copy(self) -> int:
        """Copy the frames live before the settled end E1; return the file's size then."""
        view, end = self.src.settled()
        index: dict[int, IntMap] = {}
        with view:
            if self.source.index_source == "seed":
                self.replayed = {}
                scan_records(view, DATA_START, end, self.replayed, 0)
            # One load, whose index is built once at the end, from sorted arrays: built as
            # it went, each domain's map would take a put an entry.
            self.dest.load_frames(self._live_blobs(view, end, index), index, sync=False)
            size = view.nbytes
        self.at = end
        return size

    def _live_blobs(self, view: memoryview, end: int, index: dict[int, IntMap]) -> Iterator[bytes]:
        """The frames live before ``end``, verified, a chunk at a time; once they are all
        out, ``index`` is filled with the copy's (agent -> id -> offset in the copy)."""
        runs = _Runs()
        at = self.dest.record_end
        for chunk in _heads(view, DATA_START, end):
            records = [h for h in chunk if not h[2]]
            alive = self.src.live_among([(h[0], h[3], h[4]) for h in records])
            if self.replayed is not None:
                self._check_replay(records, alive)
            picked = [h for h, ok in zip(records, alive, strict=True) if ok]
            _verify(view, picked)
            for start, rec_type, _, agent, ident, stop in picked:
                runs.add(agent, ident, at, rec_type)
                at += stop - start
            blob = b"".join([view[h[0] : h[5]] for h in picked])
            flushed = self.frame_bytes // _FLUSH_BYTES
            self.frame_bytes += len(blob)
            yield blob
            if self.frame_bytes // _FLUSH_BYTES > flushed:
                self.dest.sync()
            self.pace()
        index.update(runs.maps(self.pace))

    def _check_replay(self, records: list[Head], alive: list[bool]) -> None:
        replayed = self.replayed or {}
        for (at, _, _, agent, ident, _), now in zip(records, alive, strict=True):
            logged = replayed.get(agent, NO_IDS).get(ident) == at
            if now and not logged:  # the index names a frame the log says is dead
                self._seed_mismatch()
            if logged and not now:
                self.unsure.add((agent, ident))  # written since E1, or missing from the index

    def _seed_mismatch(self) -> None:
        """Refuse as ``Engine.confirm_index`` does: it replays the whole log under the lock,
        drops the seed and asks for a reopen (a failure path: a wrong seed is crafted)."""
        self.source.confirm_index(_WHAT)
        msg = (
            f"{_WHAT}: the index this open of {self.source.path} took from its seed is not the"
            " one the log gives; nothing was replaced: reopen the file to rebuild the index"
        )
        raise CorruptionError(msg)

    def _append(self, view: memoryview, heads: Sequence[Head]) -> None:
        """Append the frames ``heads`` names (checked) to the copy, byte for byte."""
        if not heads:
            return
        placements = []
        rel = 0
        for at, rec_type, _, agent, ident, end in heads:
            placements.append((agent, ident, rec_type, rel))
            rel += end - at
        self.dest.append_frames(
            b"".join([view[h[0] : h[5]] for h in heads]), placements, sync=False
        )

    # ---- phases 2 and 3 ----------------------------------------------------------------

    def catch_up(self, *, drained: bool = False) -> int:
        """Replay the frames settled since the last call; return the log bytes replayed.

        ``drained``: the caller holds ``source.exclusive()`` (phase 3).
        """
        view, end = self.src.settled(drained=drained)
        start = self.at
        with view, self.dest.deferred():
            batch: list[Head] = []
            for head in frames_between(view, start, end):
                batch.append(head)
                if len(batch) == CHUNK_FRAMES:
                    self._replay(view, batch)
                    batch = []
                    if not drained:
                        self.pace()
            self._replay(view, batch)
        self.at = end
        return end - start

    def _replay(self, view: memoryview, batch: list[Head]) -> None:
        if not batch:
            return
        if self.replayed is not None:
            self.touched.update((h[3], h[4]) for h in batch)
        records = [h for h in batch if not h[2] & FLAG_DELETED]
        alive = self.src.live_among([(h[0], h[3], h[4]) for h in records])
        copies = [h for h, ok in zip(records, alive, strict=True) if ok]
        stones: dict[int, list[int]] = {}
        for h in batch:
            if h[2] & FLAG_DELETED:
                stones.setdefault(h[3], []).append(h[4])
        for agent, ids in stones.items():  # first: see the module
            self._displace(agent, ids)
            self.dest.delete_batch(agent, ids)
        moved: dict[int, list[int]] = {}
        for h in copies:
            moved.setdefault(h[3], []).append(h[4])
        for agent, ids in moved.items():
            self._displace(agent, ids)
        self._append(view, copies)
        self.durable = self.durable and not (stones or copies)

    def _displace(self, agent: int, ids: list[int]) -> None:
        """Note the copy's frames of these records: the batch is about to make them dead."""
        self.dead += [at for at in self.dest.offsets_of(agent, ids) if at is not None]

    def _erase_dead(self, *, rehash: int = 1 << 62) -> None:
        """Erase the copy's frames that died; the seed's digest is made again from its
        state at the first of them, or (more than ``rehash`` bytes to hash) dropped."""
        if not self.dead:
            return
        self.dst.erase(self.dead)
        self.durable = False
        first, self.dead = min(self.dead), []
        if self.seed is not None and first < self.seed[0]:
            self._digest(first, rehash)

    def _digest(self, start: int, limit: int = 1 << 62) -> None:
        """Hash the copy up to the seed's end, from the digest's state at or before ``start``
        (``seed.prefix_digests``: xxh3-128 of ``[DATA_START, end)``), keeping the states."""
        if self.seed is None:
            return
        end, _, snapshot = self.seed
        i = max(bisect_right(self.marks, start, key=itemgetter(0)) - 1, 0)
        at, state = self.marks[i] if self.marks else (DATA_START, xxhash.xxh3_128())
        if end - at > limit:
            self.seed = None  # no time to hash it: the next close writes one
            return
        del self.marks[i:]
        hasher = state.copy()
        view, _ = self.dest.log_view()
        with memoryview(view) as whole:
            while at < end:
                self.marks.append((at, hasher.copy()))
                at, before = min(at + _MARK_BYTES, end), at
                hasher.update(whole[before:at])
        self.seed = (end, hasher.digest(), snapshot)

    def settle(self) -> None:
        """Phase 2: catch up while a round finds more than a little, then make the copy
        durable (a checkpoint) with its seed, and catch up with what came meanwhile."""
        for _ in range(_ROUNDS):
            if self.catch_up() < _LITTLE:
                break
            self.pace()
        self._erase_dead()
        snapshot = self.dest.checkpoint()  # its fsync makes every frame so far durable
        self.durable = True
        end = self.dest.record_end
        if worth_a_seed(end):
            self.seed = (end, b"", snapshot)
            self._digest(DATA_START)
        self.pace()
        self.catch_up()
        self._erase_dead()

    def finish(self) -> None:
        """Phase 3, holding ``source.exclusive()``: the last frames, the checks, an fsync."""
        self.catch_up(drained=True)
        self._erase_dead(rehash=_REHASH_HELD)
        if self.unsure - self.touched:
            self._seed_mismatch()  # a record the log holds live that the index left out
        if self.dest.stats()[1] != self.source.stats()[1]:  # an entry names no frame
            if self.replayed is not None:
                self.source.confirm_index(_WHAT)
            view, size = self.source.log_view()
            raise first_refusal(self.source, view, size)
        if not self.durable:
            self.dest.sync()
