"""Crafted files (frames and snapshots with checksums that pass) read as what they are.

Each file is the demo memory (written through the public API) with bytes the
test builds itself from the format's layout: the readers' checksums accept
them, so only the inspector's own checks stand between them and a wrong answer.
"""

from __future__ import annotations

import json
import os
import struct

import pytest

import memhop
import memhop.cli
from memhop.engine import create_engine
from memhop.ids import format_id, profile_id
from tests.faults import (
    append_bytes,
    frame_bytes,
    rewrite_active_header,
    snapshot_blob,
    snapshot_entries,
    tail_snapshot,
    truncate_to,
    write_at,
)
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


def _misdirect_profile(demo: Demo) -> int:
    """Point the sub-agent's profile entry in the tail snapshot at the primary's profile frame.

    The entry keeps its place, so the blob keeps its length; its CRC is recomputed.
    Returns the primary's profile offset.
    """
    start, blob = tail_snapshot(demo.path)
    agents = snapshot_entries(blob)
    offsets = {(agent, i): at for agent, pairs in agents for i, at in pairs}
    primary = offsets[0, profile_id()]
    sub = int(demo.sub_id, 16)
    edited = [
        (agent, [(i, primary if (agent, i) == (sub, profile_id()) else at) for i, at in pairs])
        for agent, pairs in agents
    ]
    write_at(demo.path, start, snapshot_blob(edited))
    return primary


def test_an_entry_that_points_a_sub_agent_at_the_primarys_frame_answers_nothing(
    demo: Demo, capsys: pytest.CaptureFixture[str]
) -> None:
    """profile() and lookup refuse the frame as the sub-agent's, and verify names the entry."""
    clean = memhop.inspect(demo.path)
    assert clean.profile("scout")[0]["name"] == "scout"  # control: before the edit
    primary = _misdirect_profile(demo)
    view = memhop.inspect(demo.path)
    assert view.info()["snapshot"] == "current"  # the edited blob passes its checks
    assert view.profile()[0]["name"] == "Ada"  # the primary's own entry still reads
    refused = view.profile("scout")
    assert len(refused) == 0
    assert "would not read" in refused.footer
    with pytest.raises(memhop.CorruptionError, match=demo.sub_id):
        view.lookup(format_id(profile_id()))
    problems = view.verify().problems.to_dicts()
    assert [(p["where"], p["agent"], p["offset"]) for p in problems] == [
        ("index", demo.sub_id, primary)
    ]
    assert "agent 0000000000000000" in problems[0]["problem"]
    assert memhop.cli.main(["verify", demo.path]) == 1
    assert "no damage found" not in capsys.readouterr().out
    with memhop.open(demo.path, memhop.LocalModel()) as db:  # the live API agrees
        assert db.primary().get_l0().name == "Ada"
        with pytest.raises(memhop.CorruptionError, match=demo.sub_id):
            db.agent(memhop.LocalModel(), demo.sub_id).get_l0()


def test_an_entry_that_names_its_own_tombstone_is_reported_and_never_read(meh_path: str) -> None:
    """The deleted record's entry put back into the snapshot, pointing at its tombstone."""
    engine = create_engine(meh_path)
    engine.write(0, TOPIC, 1, b'{"name":"kept"}')
    engine.write(0, TOPIC, 2, b'{"name":"deleted"}')
    tombstone = engine.record_end
    engine.delete(0, 2)
    engine.close()
    start, old = tail_snapshot(meh_path)
    assert start + len(old) == os.path.getsize(meh_path)  # the tail: it can grow in place
    ((agent, pairs),) = snapshot_entries(old)
    blob = snapshot_blob([(agent, [*pairs, (2, tombstone)])])
    truncate_to(meh_path, start)
    append_bytes(meh_path, blob)
    rewrite_active_header(meh_path, 24, struct.pack("<I", len(blob)))
    view = memhop.inspect(meh_path)
    assert view.lookup(format_id(1))[0]["record"] == {"name": "kept"}  # control
    with pytest.raises(memhop.CorruptionError, match="tombstone"):
        view.lookup(format_id(2))
    problems = view.verify().problems.to_dicts()
    assert [(p["where"], p["id"], p["offset"]) for p in problems] == [
        ("index", format_id(2), tombstone)
    ]
    assert "tombstone" in problems[0]["problem"]
