"""verify() names every injected fault at its offset; a torn tail is read around, never repaired."""

from __future__ import annotations

import pytest

import memhop
from tests.faults import append_bytes, flip_byte
from tests.inspect.conftest import Demo, signature


def _frame_offsets(view: memhop.Inspector) -> list[int]:
    return [f["offset"] for f in view.frames() if f["kind"] == "frame"]


@pytest.mark.parametrize("flip_header", [True, False], ids=["header-B-too", "frames-only"])
def test_verify_reports_each_flipped_frame_and_header_at_its_offset(
    demo: Demo, flip_header: bool
) -> None:
    clean = memhop.inspect(demo.path)
    assert clean.verify().ok  # positive control: the untouched copy has no problem
    frames = [f for f in clean.frames() if f["kind"] == "frame" and f["size"] > 60]
    victims = [frames[3], frames[len(frames) // 2], frames[-2]]
    for frame in victims:
        flip_byte(demo.path, frame["offset"] + 30, 0x10)  # a payload byte, under the CRC
    if flip_header:
        flip_byte(demo.path, 4096 + 100, 0x01)  # header slot B's body
    report = memhop.inspect(demo.path).verify()
    assert not report.ok
    expected = {(f["offset"], "frame") for f in victims}
    expected |= {(4096, "header B")} if flip_header else set()
    # A live record the surviving header's snapshot still names is also an index
    # entry with no sound frame behind it; the frames after each victim read fine.
    snapshot_names = memhop.inspect(demo.path).info()["snapshot"] in ("current", "behind")
    assert snapshot_names != flip_header  # B held the snapshot; A, its elder, names none
    expected |= {(f["offset"], "index") for f in victims if f["live"] and snapshot_names}
    assert {(p["offset"], p["where"]) for p in report.problems} == expected
    for problem in report.problems:
        if problem["where"] == "frame":
            assert "failed CRC32 check" in problem["problem"]


def test_a_torn_tail_is_read_around_and_left_in_place(demo: Demo) -> None:
    view = memhop.inspect(demo.path)
    topics = view.topics().to_dicts()
    size = view.info()["file_bytes"]
    # Half a frame, as a writer killed mid-append leaves it (here: after the snapshot).
    append_bytes(demo.path, bytes([0x04, 0x00, 0xFF, 0x00, 0x00, 0x00]) + b"\x01" * 20)
    before = signature(demo.path)
    torn = memhop.inspect(demo.path)
    assert torn.topics().to_dicts() == topics  # every complete record still reads
    report = torn.verify()
    assert [(p["offset"], p["where"]) for p in report.problems] == [(size, "frame")]
    assert signature(demo.path) == before  # not cut, not repaired


def test_frames_and_stats_account_for_every_byte(demo: Demo) -> None:
    view = memhop.inspect(demo.path)
    frames = view.frames()
    assert frames[0]["offset"] == 8192
    assert sum(f["size"] for f in frames) == view.info()["file_bytes"] - 8192
    live = [f for f in frames if f["live"]]
    assert len(live) == view.info()["live_records"]
    stats = view.stats()
    assert sum(row["live"] for row in stats if row["type"] != "snapshot") == len(live)
    total = sum(row["live_bytes"] + row["dead_bytes"] + row["tombstone_bytes"] for row in stats)
    assert total == view.info()["file_bytes"] - 8192
    assert "snapshot current" in stats.footer


def test_a_listing_says_when_a_damaged_record_is_left_out(demo: Demo) -> None:
    clean = memhop.inspect(demo.path)
    lines = clean.content()
    assert lines.footer == ""  # positive control: nothing left out of a sound file
    victim = next(f for f in clean.frames() if f["live"] and f["type"] == "archive")
    flip_byte(demo.path, victim["offset"] + 40, 0x02)
    damaged = memhop.inspect(demo.path).content()
    assert len(damaged) == len(lines) - 1
    assert victim["id"] not in {row["id"] for row in damaged}
    assert "1 record(s) would not read" in damaged.footer
    assert "would not read" in damaged._repr_html_()
