"""The ``.meh`` storage engine (format 0x0012): bytes in, bytes out.

Responsibility: an append-only log of CRC32 frames behind A/B headers, an
index snapshot at the tail, torn-tail recovery, an exclusive file lock, and
compaction. Record types are opaque integers here; JSON and meaning live above.

Contract:
- An acknowledged write (``write_batch``, ``delete_batch``) is fsynced before
  the index changes; a failed one changes nothing visible and makes the engine
  refuse further writes until the file is reopened. Writers on several threads
  share fsyncs, made without the engine lock (``commits.Commits``); inside
  ``group_commit`` or ``deferred`` a write is visible at once and durable at
  the block's exit or with the file's next fsync.
- ``read`` raises NotFoundError only for an id the index does not hold; an
  index entry the log cannot back, or a frame that is not the record asked
  for, is CorruptionError, a bad frame CRCMismatchError, each naming the
  record and offset and counted (``damage``). "Cannot read" is never "not
  found".
- The open's resync past damage is linear and budgeted; a region over the
  budget is left unread and writes are refused. ``salvage_to`` copies every
  live record that verifies (``compact_to`` refuses a damaged file).
- Enumerations (``ids_of_type``, ``all_ids``, ``agents``) are ascending copies.

Traps:
- Deleted payload bytes stay in the file until ``compact_to``.
- New files (create, compaction copies) are built under a temporary sibling
  name and renamed into place once durable (``publish.build_beside``); a kill
  can leave a ``.<name>.<hex>.memhop-tmp`` sibling, never a partial file; the
  next writable open removes it (unless a builder still holds its lock).
- A second open of the same file, in this process or another, is refused
  ("database already open by another instance").

If you change this: the byte layout is pinned by vectors in tests/engine;
docs/internals/engine.md explains the recovery rules.
"""

from memhop.engine.compact import compact_into, compact_to, write_live_copy
from memhop.engine.engine import Engine
from memhop.engine.frame import FLAG_DELETED, RECORD_HEADER_SIZE, Frame, decode_frame, encode_frame
from memhop.engine.header import DATA_START, FORMAT_VERSION, HEADER_SIZE, FileHeader
from memhop.engine.lifecycle import create_engine, open_engine
from memhop.engine.salvage import LeftBehind, salvage_to
from memhop.engine.snapshot import SNAPSHOT_VERSION, build_snapshot, parse_snapshot
from memhop.engine.writes import RecordEntry

__all__ = [
    "DATA_START",
    "FLAG_DELETED",
    "FORMAT_VERSION",
    "HEADER_SIZE",
    "RECORD_HEADER_SIZE",
    "SNAPSHOT_VERSION",
    "Engine",
    "FileHeader",
    "Frame",
    "LeftBehind",
    "RecordEntry",
    "build_snapshot",
    "compact_into",
    "compact_to",
    "create_engine",
    "decode_frame",
    "encode_frame",
    "open_engine",
    "parse_snapshot",
    "salvage_to",
    "write_live_copy",
]
