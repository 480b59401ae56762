"""Engine.load_frames and Engine.live_index: the bulk path compaction copies through."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memhop.engine import RECORD_HEADER_SIZE, create_engine, encode_frame, open_engine
from memhop.errors import CorruptionError, InvalidQueryError
from tests.faults import file_size


def _frames() -> tuple[list[bytes], list[tuple[int, int, int]]]:
    """Three frames over two agents and their (agent, id, offset from the blob start)."""
    specs = [(1, 0x02, 10, b"alpha"), (2, 0x03, 20, b"beta"), (1, 0x04, 30, b"")]
    frames = [encode_frame(a, t, 0, i, p) for a, t, i, p in specs]
    at, placed = 0, []
    for (a, _, i, _), frame in zip(specs, frames, strict=True):
        placed.append((a, i, at))
        at += len(frame)
    return frames, placed


def test_load_frames_appends_the_chunks_and_adopts_their_index(meh_path: str) -> None:
    """The frames read back through the adopted index, types included, and survive a reopen."""
    frames, placed = _frames()
    engine = create_engine(meh_path)
    base = engine.record_end
    index: dict[int, dict[int, int]] = {}
    for agent, ident, rel in placed:
        index.setdefault(agent, {})[ident] = base + rel
    engine.load_frames([frames[0], frames[1] + frames[2]], index)
    assert engine.record_end == base + sum(map(len, frames)) == file_size(meh_path)
    assert engine.read(1, 10).payload == b"alpha"
    assert engine.read(2, 20).payload == b"beta"
    assert engine.read(1, 30).payload == b""
    assert engine.ids_of_type(1, 0x04) == [30]  # built from the frames on first use
    assert engine.agents() == [1, 2]
    assert dict(engine.live_index()[1]) == {10: base, 30: index[1][30]}
    engine.close()
    reopened = open_engine(meh_path)
    try:
        assert reopened.read(2, 20).payload == b"beta"
        assert reopened.stats()[1] == 3
    finally:
        reopened.close()


def test_load_frames_refuses_an_engine_that_holds_records(meh_path: str) -> None:
    """Records already there: InvalidQueryError, and the file does not change."""
    frames, _ = _frames()
    engine = create_engine(meh_path)
    try:
        engine.write(1, 0x01, 1, b"here")
        before = file_size(meh_path)
        with pytest.raises(InvalidQueryError, match="holds no records"):
            engine.load_frames(frames, {})
        assert file_size(meh_path) == before
        assert engine.read(1, 1).payload == b"here"
    finally:
        engine.close()


def test_load_frames_with_an_offset_outside_the_frames_cuts_them_back(meh_path: str) -> None:
    """An index offset past the appended frames: CorruptionError, file cut back, nothing indexed."""
    frames, _ = _frames()
    engine = create_engine(meh_path)
    try:
        base = engine.record_end
        end = base + sum(map(len, frames))
        with pytest.raises(CorruptionError, match="outside the frames"):
            engine.load_frames(frames, {1: {10: base, 11: end}})
        assert file_size(meh_path) == base == engine.record_end
        assert engine.agents() == []
        # Positive control: the engine still takes writes, at the old end.
        assert engine.write(1, 0x01, 1, b"v") == base
    finally:
        engine.close()


def test_load_frames_cuts_back_when_a_chunk_cannot_be_produced(meh_path: str) -> None:
    """A chunk source that fails mid-way leaves the file as it was and the index empty."""
    frames, _ = _frames()

    def failing() -> Iterator[bytes]:
        yield frames[0]
        msg = "source went away"
        raise RuntimeError(msg)

    engine = create_engine(meh_path)
    try:
        base = engine.record_end
        with pytest.raises(RuntimeError, match="went away"):
            engine.load_frames(failing(), {1: {10: base}})
        assert file_size(meh_path) == base == engine.record_end
        assert engine.agents() == []
        engine.load_frames([frames[0]], {1: {10: base}})  # positive control
        assert engine.read(1, 10).payload == b"alpha"
        assert engine.record_end == base + RECORD_HEADER_SIZE + len(b"alpha")
    finally:
        engine.close()


def test_live_index_is_a_read_only_view_of_the_live_records(meh_path: str) -> None:
    """live_index names every live record at its offset and cannot be written through."""
    engine = create_engine(meh_path)
    try:
        first = engine.write(1, 0x01, 1, b"one")
        engine.write(1, 0x01, 2, b"two")
        assert engine.delete(1, 2)
        view = engine.live_index()
        assert {a: dict(ids) for a, ids in view.items()} == {1: {1: first}}
        with pytest.raises(TypeError):
            view[2] = {}  # type: ignore[index]
    finally:
        engine.close()
