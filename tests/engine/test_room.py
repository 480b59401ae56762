"""The room: appends copied into a mapped reserve past the last frame, and what it leaves.

An open engine's file is longer than its log: the fence (``storefile.FENCE``) right after
the last frame, then zeros. A close cuts it; a crash leaves it, and the next open cuts it
without calling it damage. "A crash" here is the file's bytes as they are while the engine
is open (what a killed process leaves in the page cache), copied to another path.
"""

from __future__ import annotations

import errno
import logging
import mmap
import os
import shutil
import signal
import subprocess
import sys
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import memhop
from memhop.engine import (
    DATA_START,
    RECORD_HEADER_SIZE,
    Engine,
    create_engine,
    encode_frame,
    open_engine,
    storefile,
)
from memhop.engine.frame import frame_bounds
from memhop.engine.storefile import FENCE, ROOM_BYTES
from memhop.errors import CorruptionError
from tests.faults import file_size

LOGGER = "memhop.engine"


def _read_all(eng: Engine, expected: dict[int, bytes]) -> dict[int, bytes]:
    return {i: eng.read(0, i).payload for i in expected}


def _crash_image(path: str, target: str) -> bytes:
    shutil.copyfile(path, target)
    with open(target, "rb") as f:
        return f.read()


def test_an_open_file_ends_in_the_fence_then_zeros_and_a_close_cuts_them(meh_path: str) -> None:
    eng = create_engine(meh_path)
    payloads = {i: b"payload %d" % i for i in range(1, 30)}
    for i, payload in payloads.items():
        eng.write(0, 0x01, i, payload)
    end = DATA_START + sum(RECORD_HEADER_SIZE + len(p) for p in payloads.values())
    with open(meh_path, "rb") as f:
        data = f.read()
    # Positive control for the cut below: while open, the reserve is there.
    assert len(data) > end + len(FENCE)
    assert data[end : end + len(FENCE)] == FENCE
    assert data[end + len(FENCE) :].count(0) == len(data) - end - len(FENCE)
    # The fence is no frame: MemHop's scan, which takes zeros for the end of the log and
    # appends at the end of the file, meets damage there instead and cuts it.
    with pytest.raises(CorruptionError):
        frame_bounds(data, end, len(data))
    eng.close_without_checkpoint()
    assert os.path.getsize(meh_path) == end
    eng = open_engine(meh_path)
    try:
        assert _read_all(eng, payloads) == payloads
        eng.write(0, 0x01, 99, b"after")
    finally:
        eng.close()
    with open(meh_path, "rb") as f:
        assert FENCE not in f.read()  # the close's snapshot follows the frames, nothing else


def test_a_crash_leaves_the_reserve_and_the_open_cuts_it_as_no_damage(
    meh_path: str, tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    eng = create_engine(meh_path)
    payloads = {i: b"acknowledged %d" % i for i in range(1, 20)}
    for i, payload in payloads.items():
        eng.write(0, 0x01, i, payload)
    crashed = str(tmp_path / "crashed.meh")
    image = _crash_image(meh_path, crashed)
    end = eng.record_end
    eng.close()
    assert len(image) > end  # the reserve was in the image

    caplog.set_level(logging.INFO, logger=LOGGER)
    again = open_engine(crashed)
    try:
        assert _read_all(again, payloads) == payloads
        assert again.tail_bytes_cut == 0
        assert os.path.getsize(crashed) == end
        assert again.write(0, 0x01, 50, b"next") == end  # lands where the log ended
    finally:
        again.close()
    assert "damaged" not in caplog.text

    # Control: the same image with a torn frame in the reserve's place is damage, and said so.
    torn = image[:end] + FENCE[:3] + b"\x01" * 40
    with open(crashed, "wb") as f:
        f.write(torn)
    caplog.clear()
    again = open_engine(crashed)
    try:
        assert _read_all(again, payloads) == payloads
        assert again.tail_bytes_cut == len(torn) - end
    finally:
        again.close()
    assert "damaged" in caplog.text


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    sizes=st.lists(st.sampled_from([0, 1, 25, 300, 4070, 70_000, 600_000, ROOM_BYTES]), max_size=12)
)
@example(sizes=[600_000])  # written through inside the reserve, which keeps its fence after it
@example(sizes=[300, ROOM_BYTES, 300])  # written through past the reserve, then a new room
def test_every_append_reads_back_from_a_crash_image_and_after_a_close(
    tmp_path: Any, sizes: list[int]
) -> None:
    """Appends of any size, across rooms and written through, read back from a crash's image
    (its tail a reserve, not damage) and after a close."""
    folder = tmp_path / f"run{os.urandom(4).hex()}"
    folder.mkdir()
    path, crashed = str(folder / "m.meh"), str(folder / "crashed.meh")
    eng = create_engine(path)
    payloads = {i + 1: bytes([65 + i % 26]) * size for i, size in enumerate(sizes)}
    for id_hash, payload in payloads.items():
        eng.write(0, 0x01, id_hash, payload)
    _crash_image(path, crashed)
    eng.close()
    for target in (crashed, path):
        eng = open_engine(target)
        try:
            assert _read_all(eng, payloads) == payloads
            assert eng.tail_bytes_cut == 0
        finally:
            eng.close()


def test_a_disk_without_a_megabyte_gets_a_room_just_large_enough(meh_path: str) -> None:
    room_for = 3 * mmap.PAGESIZE
    real = storefile._extend
    asked: list[int] = []

    def extend(fd: int, offset: int, length: int) -> None:
        asked.append(length)
        if offset + length > room_for:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd, offset, length)

    file = storefile.StoreFile.create_new(meh_path, 0o644, exact=False)
    try:
        with patch.object(storefile, "_extend", extend):
            file.write_at(0, b"a" * 100)
            file.write_at(100, b"b" * 5000)
        assert asked[0] > room_for  # a megabyte was asked for first
        assert os.path.getsize(meh_path) == 2 * mmap.PAGESIZE  # then only what the data took
        assert bytes(file.view()[:5100]) == b"a" * 100 + b"b" * 5000
    finally:
        file.close()
    assert os.path.getsize(meh_path) == 5100  # and the close cut the rest


@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EOPNOTSUPP], ids=errno.errorcode.get)
def test_an_extension_the_system_refuses_writes_the_appends_through(
    meh_path: str, err: int
) -> None:
    """No room: each append is an ordinary write, nothing lost; a full disk is asked again."""
    asked: list[int] = []

    def refuse(fd: int, offset: int, length: int) -> None:
        asked.append(length)
        raise OSError(err, os.strerror(err))

    eng = create_engine(meh_path)
    eng.write(0, 0x01, 1, b"first")
    eng.close()
    eng = open_engine(meh_path)  # closed and opened: no reserve to make a room in
    try:
        with patch.object(storefile, "_extend", refuse):
            for i in range(2, 5):
                eng.write(0, 0x01, i, b"appended %d" % i)
        assert os.path.getsize(meh_path) == eng.record_end  # written through: no reserve
        assert _read_all(eng, {i: b"" for i in range(2, 5)}) == {
            i: b"appended %d" % i for i in range(2, 5)
        }
        # Each ask is a megabyte, then the least: a full disk is asked again at each
        # append, a file system that cannot reserve only at the first.
        assert len(asked) == (6 if err == errno.ENOSPC else 2)
        eng.write(0, 0x01, 5, b"later")
        grown = os.path.getsize(meh_path) > eng.record_end
        assert grown == (err == errno.ENOSPC)  # control: with the disk back, a room again
    finally:
        eng.close()
    eng = open_engine(meh_path)
    try:
        assert eng.read(0, 5).payload == b"later"
        assert eng.tail_bytes_cut == 0
    finally:
        eng.close()


@pytest.mark.parametrize("copied", [0, 13, 26, 59])
def test_a_crash_between_an_appends_two_copies_loses_only_that_append(
    meh_path: str, tmp_path: Any, copied: int
) -> None:
    """The image of an append cut short: its fence copied past its end, and ``copied`` bytes
    of its frame over the old fence. The open keeps every earlier record and cuts the rest
    (never taking zeros after a whole frame for the end of the log)."""
    eng = create_engine(meh_path)
    payloads = {i: b"kept %d" % i for i in range(1, 6)}
    for i, payload in payloads.items():
        eng.write(0, 0x01, i, payload)
    end = eng.record_end
    image = bytearray(_crash_image(meh_path, str(tmp_path / "image.meh")))
    eng.close()
    frame = encode_frame(0, 0x01, 0, 99, b"x" * 34)
    image[end + len(frame) : end + len(frame) + len(FENCE)] = FENCE
    image[end : end + copied] = frame[:copied]
    crashed = str(tmp_path / "crashed.meh")
    with open(crashed, "wb") as f:
        f.write(image)
    again = open_engine(crashed)
    try:
        assert _read_all(again, payloads) == payloads
        assert not again.contains(0, 99)
        assert os.path.getsize(crashed) == end
    finally:
        again.close()
    # Control: the whole frame copied too is an append the open keeps.
    image[end : end + len(frame)] = frame
    with open(crashed, "wb") as f:
        f.write(image)
    again = open_engine(crashed)
    try:
        assert again.read(0, 99).payload == b"x" * 34
    finally:
        again.close()


_KILLED_WRITER = """
import os, signal, sys, memhop
quiet = memhop.Defaults(scene_dream_topic_threshold=-1)  # no background pass mid-write at the kill
db = memhop.open(sys.argv[1], memhop.LocalModel(), quiet, memhop.ProfileInput(name="k"))
me = db.primary()
for i in range(int(sys.argv[2])):
    me.search()
    me.update(input=f"killed writer line {i}", output="ok", created_at=1_700_000_000_000 + i)
os.kill(os.getpid(), signal.SIGKILL)  # the file open, its room mapped: what a crash leaves
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_a_killed_writers_file_reopens_with_every_turn_and_no_damage(
    tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A real kill with the file open: its reserve is left, and the next open cuts it as no
    damage (through the public API: every acknowledged turn there, nothing cut, no warning)."""
    path = str(tmp_path / "killed.meh")
    turns = 40
    killed = subprocess.run([sys.executable, "-c", _KILLED_WRITER, path, str(turns)], check=False)
    assert killed.returncode == -signal.SIGKILL
    left = os.path.getsize(path)
    assert left > file_size(path)  # the reserve is there, past the log
    caplog.set_level(logging.INFO, logger="memhop")
    with memhop.open(path, memhop.LocalModel()) as db:
        stats = db.stats()
        assert (stats.tail_bytes_cut, stats.damaged_frames) == (0, 0)
        assert stats.file_bytes == file_size(path) < left
        topics = db.primary().scene_context().topics
        assert len(topics) == turns  # every acknowledged turn
    assert "damaged" not in caplog.text
    # Control: a torn frame where the reserve was is damage, cut and said so.
    with open(path, "ab") as f:
        f.write(FENCE[:5] + b"\x01" * 40)
    with memhop.open(path, memhop.LocalModel()) as db:
        assert db.stats().tail_bytes_cut == 45
    assert "damaged" in caplog.text
