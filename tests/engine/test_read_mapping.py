"""A read keeps the file's mapping while it covers the frame; damage still reads as damage.

The file grows by whole writes, so a frame that starts inside the mapping made
last ends inside it: only a read of a frame written since remaps the file.
"""

from __future__ import annotations

import struct

import pytest

from memhop.engine import RECORD_HEADER_SIZE, create_engine, open_engine
from memhop.errors import CorruptionError, CRCMismatchError
from tests.faults import file_size, write_at

AGENT, TYPE = 0x11, 3


def test_a_read_of_an_older_frame_keeps_the_mapping_a_newer_one_remaps(meh_path: str) -> None:
    engine = create_engine(meh_path)
    try:
        engine.write(AGENT, TYPE, 0xA, b'{"a":1}')
        assert engine.read(AGENT, 0xA).payload == b'{"a":1}'
        mapped = engine._file._map
        assert mapped is not None
        engine.write(AGENT, TYPE, 0xB, b'{"b":2}')  # the file grows past the mapping
        assert engine.read(AGENT, 0xA).payload == b'{"a":1}'
        assert engine._file._map is mapped  # the older frame lies inside it: no remap
        assert engine.read(AGENT, 0xB).payload == b'{"b":2}'  # control: this one does not
        assert engine._file._map is not mapped
    finally:
        engine.close()


def test_a_length_past_the_mapping_is_read_against_the_whole_file(meh_path: str) -> None:
    """A damaged length that points past the last mapping but inside the file fails its
    checksum, as it did when every read mapped the whole file; one past the file's end is
    refused against the file's end, not the mapping's."""
    engine = create_engine(meh_path)
    try:
        a = engine.write(AGENT, TYPE, 0xA, b'{"a":1}')
        assert engine.read(AGENT, 0xA).payload == b'{"a":1}'  # control: it reads whole
        mapped = engine._file._map
        engine.write(AGENT, TYPE, 0xB, b'{"b":"' + b"x" * 200 + b'"}')  # past the mapping
        size = file_size(meh_path)
        inside = size - a - RECORD_HEADER_SIZE - 1  # ends in the newer frame, not past it
        write_at(meh_path, a + 2, struct.pack("<I", inside))
        with pytest.raises(CRCMismatchError):
            engine.read(AGENT, 0xA)
        assert engine._file._map is not mapped  # read against the whole file
        write_at(meh_path, a + 2, struct.pack("<I", size))  # ends past the file
        with pytest.raises(CorruptionError, match=f"file ends at {size}"):
            engine.read(AGENT, 0xA)
    finally:
        engine.close()


def test_a_bulk_read_of_older_frames_keeps_the_mapping_a_newer_one_remaps(
    meh_path: str,
) -> None:
    """``payloads_of`` (a recall's, a scene's lines) takes the mapping as ``read`` does."""
    engine = create_engine(meh_path)
    try:
        engine.write(AGENT, TYPE, 0xA, b'{"a":1}')
        engine.write(AGENT, TYPE, 0xB, b'{"b":2}')
        assert engine.read(AGENT, 0xB).payload == b'{"b":2}'
        mapped = engine._file._map
        engine.write(AGENT, TYPE, 0xC, b'{"c":3}')  # the file grows past the mapping
        both = list(engine.payloads_of(AGENT, TYPE, [0xA, 0xB]))
        assert both == [(0xA, b'{"a":1}'), (0xB, b'{"b":2}')]
        assert engine._file._map is mapped  # inside it: no remap
        all_three = list(engine.payloads_of(AGENT, TYPE, [0xA, 0xC]))
        assert all_three == [(0xA, b'{"a":1}'), (0xC, b'{"c":3}')]  # control: 0xC remaps
        assert engine._file._map is not mapped
    finally:
        engine.close()


def test_a_bulk_read_judges_a_length_past_the_mapping_against_the_whole_file(
    meh_path: str,
) -> None:
    """A damaged length pointing past the mapping, inside the file: the frame is skipped
    and counted as damaged (its checksum fails against the whole file), its neighbour
    read; the same read of an undamaged file returns both."""
    engine = create_engine(meh_path)
    try:
        a = engine.write(AGENT, TYPE, 0xA, b'{"a":1}')
        engine.write(AGENT, TYPE, 0xB, b'{"b":2}')
        assert len(list(engine.payloads_of(AGENT, TYPE, [0xA, 0xB]))) == 2  # control
        mapped = engine._file._map
        engine.write(AGENT, TYPE, 0xC, b'{"c":"' + b"x" * 200 + b'"}')  # past the mapping
        size = file_size(meh_path)
        write_at(meh_path, a + 2, struct.pack("<I", size - a - RECORD_HEADER_SIZE - 1))
        assert list(engine.payloads_of(AGENT, TYPE, [0xA, 0xB])) == [(0xB, b'{"b":2}')]
        assert engine._file._map is not mapped  # judged against the whole file
        with pytest.raises(CRCMismatchError):  # as a read of it alone judges it
            engine.read(AGENT, 0xA)
    finally:
        engine.close()


def test_typed_questions_map_the_file_only_for_tags_not_known(meh_path: str) -> None:
    """Ids of a type, and a delete's look at the types, once every tag is known (each
    write tags its entry): the file grown since the last mapping is not mapped again;
    after a reopen the snapshot's entries are untagged, and the question reads the file."""
    engine = create_engine(meh_path)
    try:
        engine.write(AGENT, TYPE, 0xA, b'{"a":1}')
        assert engine.read(AGENT, 0xA).payload == b'{"a":1}'
        mapped = engine._file._map
        engine.write(AGENT, TYPE, 0xB, b'{"b":2}')  # the file grows past the mapping
        engine.write(AGENT, TYPE + 1, 0xC, b'{"c":3}')
        assert engine.ids_of_type(AGENT, TYPE) == [0xA, 0xB]
        assert engine._file._map is mapped  # every tag known: no map made
        assert engine.delete(AGENT, 0xA)
        assert engine._file._map is mapped  # the type byte lies inside the mapping
        assert engine.ids_of_type(AGENT, TYPE) == [0xB]
    finally:
        engine.close()
    engine = open_engine(meh_path)
    try:  # control: untagged entries are typed from the file, and answer the same
        assert engine.ids_of_type(AGENT, TYPE) == [0xB]
        assert engine.ids_of_type(AGENT, TYPE + 1) == [0xC]
    finally:
        engine.close()
