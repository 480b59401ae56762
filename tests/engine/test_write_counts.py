"""``Engine.writes``: per domain and record type, every write and delete is counted."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memhop.engine import Engine, RecordEntry, create_engine
from memhop.records import RecordType

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
