"""Crafted files through the public surface: every answer is memhop's own error or the truth.

Each file is written through ``memhop.open`` and then changed at the byte level
by the test, with checksums recomputed so the readers accept the bytes.
"""

from __future__ import annotations

import os
import struct

import pytest

import memhop
from tests.faults import append_bytes, rewrite_active_header
from tests.interface.conftest import TS, open_new

TOP = (1 << 64) - 1


def _bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _one_turn(path: str) -> None:
    with open_new(path) as db:
        me = db.primary()
        me.search(new_scene=True)
        me.update(input="we planted roses", output="noted", created_at=TS)


def test_a_header_at_the_top_commit_id_refuses_writes_with_memhops_error(meh_path: str) -> None:
    _one_turn(meh_path)
    with memhop.open(meh_path, memhop.LocalModel()) as db:  # control: the same file takes a turn
        db.primary().search()
        db.primary().update(input="and tulips", output="noted", created_at=TS + 1)
    rewrite_active_header(meh_path, 8, struct.pack("<Q", TOP))
    before = _bytes(meh_path)
    db = memhop.open(meh_path, memhop.LocalModel())
    me = db.primary()
    assert me.get_l0().name == "test-primary"  # reads work
    assert len(me.list_scenes()) == 1
    for write in (
        me.search,  # a turn's opening writes the scene's use
        lambda: me.update_l0(memhop.ProfileInput(name="renamed")),
        db.checkpoint,
    ):
        with pytest.raises(memhop.CorruptionError, match="top of its range"):
            write()
    db.close()  # nothing was written, so nothing to checkpoint
    assert _bytes(meh_path) == before


@pytest.mark.parametrize("tail", [b"", b"\x04\x00\x10\x00\x00\x00torn"], ids=["control", "torn"])
def test_stats_say_how_many_bytes_the_open_cut_from_the_tail(meh_path: str, tail: bytes) -> None:
    _one_turn(meh_path)
    size = os.path.getsize(meh_path)
    append_bytes(meh_path, tail)  # half a frame after the snapshot: a crashed append
    with memhop.open(meh_path, memhop.LocalModel()) as db:
        stats = db.stats()
        assert (stats.tail_bytes_cut, stats.damaged_frames) == (len(tail), 0)
        assert stats.to_dict()["tail_bytes_cut"] == len(tail)
        assert len(db.primary().list_scenes()) == 1
    assert os.path.getsize(meh_path) == size
