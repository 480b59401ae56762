"""The ``memhop`` command line, run as a subprocess (``python -m memhop``) on a real file."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import types
from importlib.metadata import entry_points

import pytest

import memhop
import memhop.cli
from tests.faults import flip_byte
from tests.inspect.conftest import Demo, signature


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "100"}
    return subprocess.run(
        [sys.executable, "-m", "memhop", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run ``memhop.cli.main`` in this process: (exit code, stdout, stderr).

    For the variations; the real entry point runs as a subprocess (``run``) in
    each test's main case.
    """
    code = memhop.cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_listings_print_text_that_fits_and_json_that_parses(
    demo: Demo, capsys: pytest.CaptureFixture[str]
) -> None:
    before = signature(demo.path)
    text = run("topics", demo.path)
    assert text.returncode == 0, text.stderr
    assert demo.turn_ids[0] in text.stdout
    assert max(len(line) for line in text.stdout.splitlines()) <= 100
    assert text.stderr == ""  # no progress and no noise when stderr is not a terminal
    rows = json.loads(cli(capsys, "topics", demo.path, "--json")[1])
    assert {r["topic_id"] for r in rows} >= set(demo.turn_ids)
    assert all(r["scene_id"] == demo.scene_id for r in rows)
    agents = json.loads(cli(capsys, "--json", "agents", demo.path)[1])
    assert [a["name"] for a in agents] == ["Ada", "scout"]
    scout = json.loads(cli(capsys, "scenes", demo.path, "--agent", "scout", "--json")[1])
    assert len(scout) == 1
    stats = json.loads(cli(capsys, "stats", demo.path, "--json")[1])
    assert {"topic", "archive", "snapshot"} <= {row["type"] for row in stats}
    info = json.loads(cli(capsys, "info", demo.path, "--json")[1])
    assert info["snapshot"] == "current"
    assert info["live_records"] > 0
    assert signature(demo.path) == before  # the command line only reads


def test_show_grep_frames_and_export(
    demo: Demo, tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    code, shown, _ = cli(capsys, "show", demo.path, demo.turn_ids[0])
    assert code == 0
    assert f"topic {demo.turn_ids[0]} in agent 0000000000000000" in shown
    hits = json.loads(cli(capsys, "grep", demo.path, "aphids", "--json")[1])
    assert {h["agent"] for h in hits} == {demo.sub_id}
    frames = json.loads(cli(capsys, "frames", demo.path, "--json", "--limit", "3")[1])
    assert frames[0]["offset"] == 8192
    assert len(frames) == 3
    out = f"{tmp_path}/records.jsonl"
    assert run("export", demo.path, "-o", out).returncode == 0
    with open(out, encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    assert len(records) == memhop.inspect(demo.path).info()["live_records"]
    assert {r["type"] for r in records} >= {"profile", "scene", "topic", "archive", "registry"}
    code, _, err = cli(capsys, "export", demo.path, "-o", out)  # never overwrites
    assert code == 3
    assert "already exists" in err


# Every table command, with arguments that list more than one row of the demo file.
TABLE_COMMANDS = [
    ("agents",),
    ("topics",),
    ("stats",),
    ("grep", "roses"),
    ("frames",),
]


@pytest.mark.parametrize("command", TABLE_COMMANDS, ids=lambda c: c[0])
def test_limit_caps_json_as_it_caps_text(
    demo: Demo, command: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    name, *rest = command
    every = json.loads(cli(capsys, "--json", name, demo.path, *rest)[1])
    assert len(every) > 1  # the control: without --limit there is more than one row
    capped = json.loads(cli(capsys, "--json", name, demo.path, *rest, "--limit", "1")[1])
    assert capped == every[:1]
    assert json.loads(cli(capsys, name, demo.path, *rest, "--json", "--limit", "0")[1]) == []


def test_limit_caps_the_problems_verify_prints_as_json(
    demo: Demo, capsys: pytest.CaptureFixture[str]
) -> None:
    big = [f for f in memhop.inspect(demo.path).frames() if f["size"] > 60]
    for frame in (big[0], big[-1]):
        flip_byte(demo.path, frame["offset"] + 40, 0x04)
    every = json.loads(cli(capsys, "verify", demo.path, "--json")[1])
    assert len(every["problems"]) >= 2
    capped = json.loads(cli(capsys, "verify", demo.path, "--json", "--limit", "1")[1])
    assert capped == {"ok": False, "problems": every["problems"][:1]}


@pytest.mark.parametrize("value", ["-1", "x"])
def test_a_bad_limit_is_a_usage_error_naming_the_flag(
    demo: Demo, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "frames", demo.path, "--limit", value)
    assert code == 2
    assert "argument --limit" in err
    assert out == ""  # no table printed
    code, out, _ = cli(capsys, "frames", demo.path, "--limit", "2")  # the control
    assert code == 0
    assert "8192" in out


def test_verify_exits_1_on_damage_with_a_message_and_no_traceback(
    demo: Demo, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(capsys, "verify", demo.path)
    assert code == 0
    assert "no damage found" in out
    frame = next(f for f in memhop.inspect(demo.path).frames() if f["size"] > 60)
    flip_byte(demo.path, frame["offset"] + 40, 0x04)
    bad = run("verify", demo.path)
    assert bad.returncode == 1
    assert str(frame["offset"]) in bad.stdout
    assert "damage found" in bad.stderr
    assert "Traceback" not in bad.stderr
    report = json.loads(cli(capsys, "verify", demo.path, "--json")[1])
    assert report["ok"] is False
    assert [p["offset"] for p in report["problems"] if p["where"] == "frame"] == [frame["offset"]]


@pytest.mark.parametrize(
    ("args", "code", "fragment"),
    [
        (("show", "{path}", "0123456789abcdef"), 4, "no live record"),
        (("show", "{path}", "xyz"), 2, "16 hex digits"),
        (("topics", "{path}", "--agent", "nobody"), 4, "no agent 'nobody'"),
        (("info", "{path}.missing"), 3, "no database at"),
        (("nonsense",), 2, "invalid choice"),
    ],
)
def test_errors_have_documented_exit_codes(
    demo: Demo,
    args: tuple[str, ...],
    code: int,
    fragment: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """In-process (the subprocess tests above and below cover the real entry point)."""
    assert memhop.cli.main([a.format(path=demo.path) for a in args]) == code
    err = capsys.readouterr().err
    assert fragment in err
    assert "Traceback" not in err


def test_a_file_that_is_not_a_meh_file_exits_1(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    path = f"{tmp_path}/notes.meh"
    with open(path, "wb") as handle:
        handle.write(b"not memhop\n" * 1000)
    code, _, err = cli(capsys, "info", path)
    assert code == 1
    assert "invalid magic" in err


def test_compact_writes_a_verified_copy_with_the_same_live_records(
    demo: Demo, tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    dst = f"{tmp_path}/copy.meh"
    done = run("compact", demo.path, dst)
    assert done.returncode == 0, done.stderr
    assert "compacted" in done.stdout
    assert memhop.inspect(dst).verify().ok
    src_rows = memhop.inspect(demo.path).topics().to_dicts()
    assert memhop.inspect(dst).topics().to_dicts() == src_rows
    assert os.path.getsize(dst) < os.path.getsize(demo.path)
    code, _, err = cli(capsys, "compact", demo.path, dst)  # the destination exists now
    assert code == 3  # docs/inspect.md: a destination that exists is 3, as for export
    assert f"{dst} already exists" in err


def test_compact_onto_an_existing_destination_exits_3_before_opening_the_source(
    demo: Demo, tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    dst = f"{tmp_path}/taken.meh"
    with open(dst, "wb") as handle:
        handle.write(b"someone else's file")
    before = signature(demo.path)
    code, _, err = cli(capsys, "compact", demo.path, dst)
    assert code == 3
    assert f"{dst} already exists" in err
    assert signature(demo.path) == before  # the source was never opened as a writer
    with open(dst, "rb") as handle:
        assert handle.read() == b"someone else's file"
    os.remove(dst)  # the control: the same command onto a free name succeeds
    assert cli(capsys, "compact", demo.path, dst)[0] == 0


def test_compact_of_a_held_file_is_refused(demo: Demo, tmp_path: object) -> None:
    with memhop.open(demo.path, memhop.LocalModel()):
        done = run("compact", demo.path, f"{tmp_path}/copy.meh")
        assert done.returncode == 3
        assert "another instance" in done.stderr
        assert memhop.cli.main(["topics", demo.path]) == 0  # reads still work beside the holder
    assert memhop.cli.main(["compact", demo.path, f"{tmp_path}/copy.meh"]) == 0


def test_mcp_dispatches_to_memhop_mcp_main_or_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[list[str]] = []
    fake = types.ModuleType("memhop.mcp")
    fake.main = lambda argv: seen.append(argv) or 7  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "memhop.mcp", fake)
    assert memhop.cli.main(["mcp", "--stdio", "x.meh"]) == 7
    assert seen == [["--stdio", "x.meh"]]
    monkeypatch.setitem(sys.modules, "memhop.mcp", None)  # as if it were not installed
    assert memhop.cli.main(["mcp"]) == 5
    assert "memhop[mcp]" in capsys.readouterr().err  # names the extra


def test_progress_goes_to_stderr_only_on_a_terminal(demo: Demo) -> None:
    from memhop.cli.output import progress_for

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    report = progress_for("verify", screen)
    assert report is not None
    report(50, 100)
    report(100, 100)
    assert "verify:  50%" in screen.getvalue()
    assert screen.getvalue().endswith("\n")
    assert progress_for("verify", io.StringIO()) is None  # not a terminal: silent


def test_the_console_script_is_declared() -> None:
    scripts = {e.name: e.value for e in entry_points(group="console_scripts")}
    assert scripts.get("memhop") == "memhop.cli:main"
