"""Creating and opening ``.meh`` files: lock, headers, snapshot or scan, repair.

Open follows upstream: restore the index from the active header's snapshot
when it is sound (else log, and scan the whole record area), replay the frames
after it, and cut a torn tail. Record types are read per domain on its first
typed question, so an open from a snapshot reads no frame at all.
"""

from __future__ import annotations

import logging

from memhop.engine.engine import Engine
from memhop.engine.header import DATA_START, FileHeader, load_headers
from memhop.engine.publish import build_beside, remove_stale_temps
from memhop.engine.recovery import scan_records, walk_record_area
from memhop.engine.seed import restore_seed
from memhop.engine.snapshot import PackedIndex, parse_snapshot
from memhop.engine.storefile import StoreFile
from memhop.errors import CorruptionError, MemHopError, StorageIOError

log = logging.getLogger("memhop.engine")


def create_engine(path: str) -> Engine:
    """Create a fresh 8192-byte file (two identical headers) at ``path`` and open it.

    Crash-safe: the file is built under a temporary sibling name and renamed
    into place once durable, so ``path`` never holds a half-made file. An
    existing ``path`` is refused (InvalidQueryError) and left untouched.
    """
    return build_beside(path, lambda _: None)


def _restore_snapshot(file: StoreFile, header: FileHeader) -> PackedIndex | None:
    """Return the index stored in the active snapshot, or None when it is unusable."""
    offset, length = header.snapshot_offset, header.snapshot_length
    try:
        if offset < DATA_START or offset + length > file.size:
            msg = "snapshot out of bounds"
            raise CorruptionError(msg)
        return parse_snapshot(file.view()[offset : offset + length])
    except MemHopError as exc:
        log.warning("index snapshot at offset %d is unusable (%s); scanning the log", offset, exc)
        return None


def _record_area_end(file: StoreFile, header: FileHeader) -> int:
    """Where frames end when the snapshot was the last thing written."""
    end = header.record_end
    if DATA_START <= end <= header.snapshot_offset and end <= file.size:
        return end
    return walk_record_area(file.view(), file.size, header.snapshot_offset)


def open_engine(path: str) -> Engine:
    """Open an existing file, recovering from a torn tail or a damaged snapshot."""
    file = StoreFile.open(path, create=False)
    try:
        if file.size < DATA_START:
            size = file.size
            msg = f"{path} is not a memhop file: file too small for dual headers ({size} bytes)"
            raise CorruptionError(msg)
        headers = load_headers(file.view(), path)
        header = headers.current
        index: PackedIndex | None = None
        checked: dict[int, bytes] = {}  # prefix digests the open verified
        if header.has_snapshot:
            index = _restore_snapshot(file, header)
        snapshot_broken = header.has_snapshot and index is None
        if index is not None:
            source, start = "snapshot", header.snapshot_offset + header.snapshot_length
        else:
            # No snapshot in the file (a kill after the session's first write cut it):
            # the seed a clean close left, if the bytes it was made from are still there.
            seeded = restore_seed(path, file.view(), file.size, header)
            if seeded:
                source, (start, digest, index) = "seed", seeded
                checked = {start: digest}
            else:
                source, start, index = "scan", DATA_START, {}
        scan = scan_records(file.view(), start, file.size, index, header.snapshot_offset)
        cut = file.size - scan.end if scan.truncate else 0
        if cut:
            file.truncate(scan.end)
        if scan.reserve:
            cut = 0  # the room a writer that crashed was appending in: nothing was lost
        if header.has_snapshot and not snapshot_broken and scan.frames == 0:
            # Nothing was written after the snapshot (at most an orphan blob,
            # cut above): frames end where the header says, not behind the blob.
            next_offset = _record_area_end(file, header)
        else:
            next_offset = scan.end
        damaged = scan.resumed + (1 if scan.unresolved else 0)
        engine = Engine(
            file,
            headers,
            index,
            next_offset,
            damaged_frames=damaged,
            unread_from=scan.unresolved,
            digests=checked,
        )
        engine.index_source = source
        engine.tail_bytes_cut = cut
        if source == "seed":
            msg = "index from the seed up to offset %d; %d frames scanned after it"
            log.info(msg, start, scan.frames)
        if snapshot_broken and engine.writable:
            engine.forget_snapshot()
        # Holding the file's lock, no in-place compaction of it can be under way.
        for stale in remove_stale_temps(path):
            log.info("removed %s, left by a build that was killed", stale)
    except MemHopError:
        file.close()
        raise
    except OSError as exc:
        file.close()
        msg = f"open {path}"
        raise StorageIOError(msg) from exc
    return engine
