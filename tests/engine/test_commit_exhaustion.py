"""A header whose commit id is at the top of its range (a crafted file) takes no writes.

The commit id is a u64 raised by every header flip (a checkpoint, the trim of
a tail snapshot); no honest file reaches 2^64-1, and a wrapped id would lose
to the older slot at the next open. Such a file opens and reads; every write
is refused with CorruptionError naming it, before a byte of the file changes;
a close does not try to checkpoint; a compacted copy starts a fresh count.
"""

from __future__ import annotations

import os
import shutil
import struct

import pytest

from memhop.engine import RecordEntry, compact_to, create_engine, open_engine
from memhop.errors import CorruptionError
from tests.faults import rewrite_active_header

TOP = (1 << 64) - 1
AGENT = 3


def _file(path: str, *, closed: bool) -> None:
    """Ten records, then a clean close (the file ends in its snapshot) or a kill (no snapshot)."""
    engine = create_engine(path)
    engine.write_batch([RecordEntry(AGENT, 0x08, i, b"r%d" % i) for i in range(10)])
    if closed:
        engine.close()
    else:
        engine.close_without_checkpoint()


def _bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


@pytest.mark.parametrize("closed", [True, False], ids=["closed", "killed"])
def test_a_file_at_the_top_commit_id_reads_refuses_writes_and_closes_untouched(
    meh_path: str, tmp_path: os.PathLike[str], closed: bool
) -> None:
    _file(meh_path, closed=closed)
    control = os.path.join(tmp_path, "control.meh")
    shutil.copyfile(meh_path, control)
    engine = open_engine(control)
    engine.write(AGENT, 0x08, 99, b"control")  # control: the same file takes writes
    engine.close()
    rewrite_active_header(meh_path, 8, struct.pack("<Q", TOP))
    before = _bytes(meh_path)
    engine = open_engine(meh_path)
    assert engine.read(AGENT, 4).payload == b"r4"
    attempts = {
        "write": lambda: engine.write(AGENT, 0x08, 99, b"new"),
        "delete": lambda: engine.delete(AGENT, 4),
        "checkpoint": engine.checkpoint,
    }
    for name, attempt in attempts.items():
        with pytest.raises(CorruptionError, match="top of its range") as refused:
            attempt()
        assert meh_path in str(refused.value), name
    assert not engine.writable
    engine.close()  # nothing to checkpoint: nothing was written
    assert _bytes(meh_path) == before
    engine = open_engine(meh_path)
    copy = os.path.join(tmp_path, "copy.meh")
    compact_to(engine, copy)  # the way out: a copy whose headers start again
    engine.close()
    engine = open_engine(copy)
    assert engine.headers.current.commit_id < 10
    engine.write(AGENT, 0x08, 99, b"new")
    assert sorted(engine.all_ids(AGENT)) == [*range(10), 99]
    engine.close()


def test_the_flip_to_the_top_is_the_last_one(meh_path: str) -> None:
    """One below the top: the first write's trim takes the last id; then writes are refused."""
    _file(meh_path, closed=True)
    rewrite_active_header(meh_path, 8, struct.pack("<Q", TOP - 1))
    engine = open_engine(meh_path)
    engine.write(AGENT, 0x08, 50, b"last")  # its trim flips to TOP
    assert engine.headers.current.commit_id == TOP
    with pytest.raises(CorruptionError, match="top of its range"):
        engine.write(AGENT, 0x08, 51, b"refused")
    engine.close()
    engine = open_engine(meh_path)  # the header at TOP is the active one, not the wrapped 0
    assert engine.headers.current.commit_id == TOP
    assert engine.read(AGENT, 50).payload == b"last"
    assert not engine.contains(AGENT, 51)
    engine.close()
