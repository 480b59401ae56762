"""Crafted files (frames and snapshots with checksums that pass) read as what they are.

Each file is the demo memory (written through the public API) with bytes the
test builds itself from the format's layout: the readers' checksums accept
them, so only the inspector's own checks stand between them and a wrong answer.
"""

from __future__ import annotations

import json

import pytest

import memhop
import memhop.cli
from memhop.ids import format_id
from tests.faults import append_bytes, frame_bytes
from tests.inspect.conftest import Demo

TOPIC = 0x04
DEEP_ID = 0x0DEE_9000_0000_0001


@pytest.mark.parametrize("depth", [300, 3_000, 100_000])  # past the shown depth; past the parser's
def test_a_deeply_nested_payload_reads_as_text_everywhere_and_verify_names_it(
    demo: Demo, capsys: pytest.CaptureFixture[str], depth: int
) -> None:
    """records, frames, lookup, grep and the commands that print them answer; none raises."""
    payload = b"[" * depth + b"]" * depth
    append_bytes(demo.path, frame_bytes(0, TOPIC, DEEP_ID, payload))
    view = memhop.inspect(demo.path)
    deep = format_id(DEEP_ID)
    (row,) = view.lookup(deep)
    assert row["record"] == payload.decode()  # its stored text, as for a payload that is not JSON
    turn = view.lookup(demo.turn_ids[0])[0]["record"]
    assert isinstance(turn, dict)  # control: a sound payload still reads as JSON values
    by_id = {r["id"]: r["record"] for r in view.records()}
    assert by_id[deep] == payload.decode()
    assert isinstance(by_id[demo.turn_ids[0]], dict)
    last = view.frames()[-1]
    assert (last["id"], last["live"], last["payload"]) == (deep, True, payload.decode())
    assert [r["id"] for r in view.grep("[[[[[[[[")] == [deep]
    problems = view.verify().problems.to_dicts()
    assert [(p["id"], p["where"]) for p in problems] == [(deep, "record")]
    printed = {}
    for command, *rest in (["export"], ["show", deep], ["grep", "[[[["], ["frames"]):
        code = memhop.cli.main([command, demo.path, *rest])
        out, err = capsys.readouterr()
        assert (code, err) == (0, ""), command
        assert deep in out
        printed[command] = out
    exported = {r["id"]: r["record"] for r in map(json.loads, printed["export"].splitlines())}
    assert exported[deep] == payload.decode()
    assert isinstance(exported[demo.turn_ids[0]], dict)
