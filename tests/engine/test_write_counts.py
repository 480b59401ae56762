"""``Engine.writes``: per domain and record type, every write and delete is counted, as
the index takes it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memhop.engine import Engine, RecordEntry, create_engine
from memhop.records import RecordType
from tests.engine.test_shared_fsync import _start, writer_fsync_held

NODE, TOPIC = RecordType.SCENE_NODE, RecordType.TOPIC


@pytest.fixture
def engine(meh_path: str) -> Iterator[Engine]:
    opened = create_engine(meh_path)
    yield opened
    opened.close()


def test_writes_and_deletes_of_a_type_are_counted_in_their_own_domain(engine: Engine) -> None:
    assert engine.writes(0, NODE) == 0
    engine.write(0, NODE, 1, b'{"a":1}')
    engine.write_batch([RecordEntry(0, NODE, 2, b"{}"), RecordEntry(0, TOPIC, 3, b"{}")])
    assert (engine.writes(0, NODE), engine.writes(0, TOPIC)) == (2, 1)
    engine.write(0, NODE, 1, b'{"a":2}')  # a rewrite counts too
    assert engine.delete_batch(0, [2, 99]) == 1  # only the live one
    assert engine.writes(0, NODE) == 4
    assert engine.delete_batch(0, [99]) == 0
    assert engine.writes(0, NODE) == 4  # control: nothing written, nothing counted
    engine.write(7, NODE, 1, b"{}")
    assert (engine.writes(7, NODE), engine.writes(0, NODE)) == (1, 4)  # per domain


def test_a_write_is_counted_when_a_read_can_see_it_not_before(meh_path: str) -> None:
    """While a write's fsync is in flight its record is not readable, and not counted: a
    reader that takes the count, then the records, never keeps a count that includes a
    record it did not see. Once the fsync ends both move together (the control)."""
    eng = create_engine(meh_path)
    eng.write(0, NODE, 1, b"{}")
    with writer_fsync_held() as (gate, inside):
        writer, errors = _start(lambda: eng.write(0, NODE, 2, b"{}"), "writer")
        try:
            assert inside.wait(10)
            assert (eng.writes(0, NODE), eng.contains(0, 2)) == (1, False)
        finally:
            gate.set()
            writer.join()
    assert not errors
    assert (eng.writes(0, NODE), eng.contains(0, 2)) == (2, True)
    eng.close()
