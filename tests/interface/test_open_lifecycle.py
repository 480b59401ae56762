"""A: open, configuration, the file lock and the lifecycle (api.md §2, §15; tests.md A)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import memhop

from .conftest import (
    PRIMARY_NAME,
    TS,
    Mem,
    assert_grows,
    footprint,
    open_new,
    refused,
    turn,
)

MAX_TIMEOUT_SECS = 9_223_372_036
MAX_RETENTION_MS = 9_223_372_036_854
UNREACHABLE = "http://127.0.0.1:1"


def endpoint(**kwargs: object) -> memhop.LlmConfig:
    fields: dict[str, object] = {"api_url": UNREACHABLE, "api_key": "mock", "model": "mock-model"}
    fields.update(kwargs)
    return memhop.LlmConfig(**fields)  # type: ignore[arg-type]


def profile(name: str = PRIMARY_NAME) -> memhop.ProfileInput:
    return memhop.ProfileInput(name=name)


# ---- A01 / context manager -------------------------------------------------------------------


def test_a01_open_then_close_flips_closed(meh_path: str) -> None:
    db = open_new(meh_path)
    assert db.closed is False
    assert "open" in repr(db)
    db.close()
    assert db.closed is True
    assert "closed" in repr(db)


def test_the_context_manager_closes_and_the_file_reopens(meh_path: str) -> None:
    with open_new(meh_path) as db:
        _, closed = turn(db.primary(), 0)
        assert db.closed is False
    assert db.closed is True
    with memhop.open(meh_path, memhop.LocalModel()) as again:
        rows = again.primary().scene_context().topics
        assert [r.topic_id for r in rows] == [closed.id]


def test_the_context_manager_closes_on_an_exception(meh_path: str) -> None:
    with pytest.raises(RuntimeError), open_new(meh_path) as db:
        raise RuntimeError("host failure")
    assert db.closed is True
    # control: the lock was released, so the file opens again
    memhop.open(meh_path, memhop.LocalModel()).close()


# ---- A02: every call answers ClosedError after close ------------------------------------------


def test_a02_every_call_answers_closed_after_close(meh_path: str, tmp_path: Path) -> None:
    db = open_new(meh_path)
    me = db.primary()
    sub = db.sub_agent(memhop.LocalModel(), profile("surface"))
    opened = me.search()
    me.append_archive(content="before close", created_at=1_770_000_000_000)
    scene_id = opened.scene.scene_id
    topic_id = opened.new_topic_id
    sub_id = sub.agent_id
    # control: each call succeeds while open
    assert me.scene_context(scene_id).scene_name
    assert me.search_l4(topic_id=topic_id)
    db.close()

    llm = memhop.LocalModel()
    calls = {
        "search": lambda s: s.search(),
        "search named": lambda s: s.search(scene_id=scene_id),
        "append_archive": lambda s: s.append_archive(content="x", created_at=TS),
        "update": lambda s: s.update(input="x", created_at=TS),
        "get_l0": lambda s: s.get_l0(),
        "update_l0": lambda s: s.update_l0(profile()),
        "scene_context": lambda s: s.scene_context(),
        "scene_context named": lambda s: s.scene_context(scene_id),
        "list_scenes": lambda s: s.list_scenes(),
        "search_l4": lambda s: s.search_l4(),
        "search_l4 topic": lambda s: s.search_l4(topic_id=topic_id),
    }
    walked = 0
    for session in (me, sub):
        for what, call in calls.items():
            with pytest.raises(memhop.ClosedError) as info:
                call(session)
            assert memhop.code_of(info.value) == 5002, what
            walked += 1
    db_calls = {
        "primary": lambda: db.primary(),
        "sub_agent": lambda: db.sub_agent(llm, profile("surface")),
        "sub_agent new": lambda: db.sub_agent(llm, profile("brand-new")),
        "agent": lambda: db.agent(llm, sub_id),
        "agents": lambda: db.agents(),
        "checkpoint": lambda: db.checkpoint(),
        "stats": lambda: db.stats(),
        "close": lambda: db.close(),
    }
    for what, call in db_calls.items():
        with pytest.raises(memhop.ClosedError) as info:
            call()
        assert memhop.code_of(info.value) == 5002, what
        walked += 1
    assert walked >= 30
    # the two exemptions answer normally
    assert db.closed is True
    assert me.agent_id == "0" * 16
    assert sub.agent_id == sub_id
    # compact_to is outside the walk upstream; whatever it answers, it creates no file
    target = tmp_path / "copy.meh"
    with pytest.raises(memhop.MemHopError):
        db.compact_to(str(target))
    assert not target.exists()


# ---- A03 / A04: the lock ---------------------------------------------------------------------


def test_a03_a_second_open_of_a_held_file_is_refused_and_the_holder_keeps_working(
    meh_path: str,
) -> None:
    holder = open_new(meh_path)
    me = holder.primary()
    _, first = turn(me, 0)
    before = footprint(holder)
    with pytest.raises(memhop.StorageIOError) as info:
        memhop.open(meh_path, memhop.LocalModel(), memhop.Defaults(), profile("peeker"))
    assert memhop.code_of(info.value) == 5001
    assert "another instance" in str(info.value)
    assert footprint(holder) == before, "the refused open touched the holder's file"
    # the holder still works
    _, second = turn(me, 1)
    assert [r.topic_id for r in me.scene_context().topics] == [first.id, second.id]
    holder.close()
    # control: once released, the same open works and reads the worker's rounds
    with memhop.open(meh_path, memhop.LocalModel(), profile=profile("peeker")) as again:
        assert len(again.primary().scene_context().topics) == 2
        assert again.agents()[0].name == PRIMARY_NAME  # the profile argument was ignored


# ---- A05 / A06 / A08: ceilings, and Open makes no model call ----------------------------------


def test_a05_retention_ceiling_is_the_refusal_boundary_and_open_asks_no_model(
    tmp_path: Path,
) -> None:
    accepted = tmp_path / "accepted.meh"
    memhop.open(
        str(accepted),
        endpoint(),  # unreachable: a model call at open would fail
        memhop.Defaults(content_retention_ms=MAX_RETENTION_MS),
        profile(),
    ).close()
    with pytest.raises(memhop.ConfigError) as info:
        memhop.open(
            str(tmp_path / "refused.meh"),
            endpoint(),
            memhop.Defaults(content_retention_ms=MAX_RETENTION_MS + 1),
            profile(),
        )
    assert memhop.code_of(info.value) == 1001
    assert sorted(os.listdir(tmp_path)) == ["accepted.meh"]


@pytest.mark.parametrize("retention", [-1, -(2**63), MAX_RETENTION_MS + 1, 2**63 - 1])
def test_a06_retention_windows_the_sweep_cannot_represent_are_refused(
    tmp_path: Path, retention: int
) -> None:
    path = tmp_path / "r.meh"
    with pytest.raises(memhop.ConfigError) as info:
        memhop.open(
            str(path),
            memhop.LocalModel(),
            memhop.Defaults(content_retention_ms=retention),
            profile(),
        )
    assert memhop.code_of(info.value) == 1001
    assert not path.exists()


@pytest.mark.parametrize("retention", [0, 1, 604_800_000, MAX_RETENTION_MS])
def test_a06_retention_windows_in_range_are_accepted(tmp_path: Path, retention: int) -> None:
    path = tmp_path / "r.meh"
    memhop.open(
        str(path), memhop.LocalModel(), memhop.Defaults(content_retention_ms=retention), profile()
    ).close()
    assert path.exists()


def test_a07_the_default_table_is_upstreams() -> None:
    assert (
        memhop.Defaults(
            scene_dream_topic_threshold=24,
            dream_compress_min_topics=20,
            agent_idle_ttl_ms=3_600_000,
            content_retention_ms=604_800_000,
            settled_scene_floor=4,  # memhop's own: a scene left is folded toward 4 rows
        )
        == memhop.DEFAULTS
    )
    assert memhop.Defaults() == memhop.Defaults(0, 0, 0, 0)


@pytest.mark.parametrize("timeout", [MAX_TIMEOUT_SECS + 1, 2**63 - 1])
def test_a08_unrepresentable_timeouts_are_refused(tmp_path: Path, timeout: int) -> None:
    path = tmp_path / "t.meh"
    with pytest.raises(memhop.ConfigError) as info:
        memhop.open(str(path), endpoint(timeout_secs=timeout), profile=profile())
    assert memhop.code_of(info.value) == 1001
    assert not path.exists()


@pytest.mark.parametrize("timeout", [0, -1, 30, MAX_TIMEOUT_SECS])
def test_a08_representable_timeouts_are_accepted(tmp_path: Path, timeout: int) -> None:
    path = tmp_path / "t.meh"
    memhop.open(str(path), endpoint(timeout_secs=timeout), profile=profile()).close()
    assert path.exists()


# ---- A09 / A10: what reopens -------------------------------------------------------------------


def test_a09_a_checkpointed_turn_survives_a_reopen(meh_path: str) -> None:
    from .conftest import FakeModel

    db = open_new(meh_path, FakeModel())
    me = db.primary()
    opened, closed = turn(me, 0, input="用户要求重构代码", output="好的,我来重构这段代码")
    db.checkpoint()
    db.close()
    with memhop.open(meh_path, memhop.LocalModel()) as again:
        me = again.primary()
        assert again.primary().list_scenes()
        listed = me.search(scene_id=opened.scene.scene_id).topics
        assert [t.id for t in listed] == [closed.id]
        assert listed[0].fused_keywords == ("重构", "代码", "测试")
        assert me.search_l4(keyword="重构")


def _pure_reads(db: memhop.DB, sub_id: str, scene_id: str) -> str:
    me = db.primary()
    sub = db.agent(memhop.LocalModel(), sub_id)
    reads = {
        "agents": [a.to_dict() for a in db.agents()],
        "get_l0": me.get_l0().to_dict() | {"updated_at_ms": 0},
        "sub_get_l0": sub.get_l0().to_dict() | {"updated_at_ms": 0},
        "list_scenes": [s.to_dict() for s in me.list_scenes()],
        "scene_context": me.scene_context().to_dict(),
        "scene_context_named": me.scene_context(scene_id).to_dict(),
        "sub_scene_context": sub.scene_context().to_dict(),
        "search_l4": [r.to_dict() for r in me.search_l4()],
        "search_l4_events": [r.to_dict() for r in me.search_l4(kind=memhop.ArchiveKind.EVENT)],
    }
    return json.dumps(reads, ensure_ascii=False, sort_keys=False)


def test_a10_reads_survive_a_reopen_byte_for_byte(meh_path: str) -> None:
    db = open_new(meh_path)
    me = db.primary()
    worker = db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="worker", role="sub"))
    db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="helper", role="sub"))
    first_scene = ""
    for i in range(6):
        opened = me.search(new_scene=i == 3)
        first_scene = first_scene or opened.scene.scene_id
        if i == 0:
            for j in range(2):
                me.append_archive(content=f"utterance {j}", created_at=TS + j, role=2)
                me.append_archive(
                    content=f"event {j}", created_at=TS + j, kind=1, event_type="tool_call"
                )
        me.update(
            input=f"round {i} in", output=f"round {i} out", outcome="answered", created_at=TS + i
        )
    turn(worker, 0)
    db.checkpoint()
    baseline = _pure_reads(db, worker.agent_id, first_scene)
    db.close()
    for _ in range(2):
        with memhop.open(meh_path, memhop.LocalModel()) as again:
            assert _pure_reads(again, worker.agent_id, first_scene) == baseline


# ---- A11 and §2.1: validation order and the primary-profile decision table -------------------


def test_a11_a_new_file_needs_a_profile_and_a_refusal_leaves_no_file(tmp_path: Path) -> None:
    path = tmp_path / "new.meh"
    with pytest.raises(memhop.ConfigError) as info:
        memhop.open(str(path), memhop.LocalModel())
    assert memhop.code_of(info.value) == 1001
    assert not path.exists()
    # control: with a profile the same open creates the file
    memhop.open(str(path), memhop.LocalModel(), profile=profile()).close()
    assert path.exists()


def test_open_validates_in_order_before_touching_the_path(tmp_path: Path) -> None:
    half = memhop.LlmConfig(api_url="", api_key="k", model="m")
    bad_defaults = memhop.Defaults(content_retention_ms=-1)
    blank = memhop.ProfileInput(name="   ")
    path = str(tmp_path / "x.meh")
    cases = [
        # (args, class, code, fragment)
        (("", half, bad_defaults, blank), memhop.ConfigError, 1001, "path is required"),
        ((path, half, bad_defaults, blank), memhop.ConfigError, 1001, "LLM.APIURL"),
        ((path, memhop.LocalModel(), bad_defaults, blank), memhop.ConfigError, 1001, ""),
        ((path, memhop.LocalModel(), None, blank), memhop.InvalidQueryError, 1003, "Name"),
        ((str(tmp_path), memhop.LocalModel(), None, None), memhop.InvalidQueryError, 1003, ""),
        ((path, memhop.LocalModel(), None, None), memhop.ConfigError, 1001, "profile"),
    ]
    for args, cls, code, fragment in cases:
        with pytest.raises(cls) as info:
            memhop.open(*args)  # type: ignore[arg-type]
        assert memhop.code_of(info.value) == code, args
        assert fragment in str(info.value)
        assert os.listdir(tmp_path) == [], "a refused open created something"
    # control: the same path with valid arguments opens
    memhop.open(path, memhop.LocalModel(), None, profile()).close()
    assert os.listdir(tmp_path) == ["x.meh"]


@pytest.mark.parametrize("half", ["api_url", "api_key", "model"])
def test_a_half_specified_endpoint_is_refused(tmp_path: Path, half: str) -> None:
    path = tmp_path / "h.meh"
    with pytest.raises(memhop.ConfigError) as info:
        memhop.open(str(path), endpoint(**{half: ""}), profile=profile())
    assert "LLM.APIURL, LLM.APIKey and LLM.Model are required" in str(info.value)
    assert not path.exists()


def test_the_file_is_the_source_of_truth_for_the_primary_profile(mem: Mem) -> None:
    mem.db.close()
    mem.db = memhop.open(mem.path, memhop.LocalModel(), profile=profile("someone-else"))
    db = mem.settle()
    assert db.primary().get_l0().name == PRIMARY_NAME
    assert db.primary().get_l0().role == "offline fixture"
    assert db.agents()[0].name == PRIMARY_NAME


# ---- DB: stats, checkpoint, compact_to --------------------------------------------------------


def test_stats_grow_with_writes_and_count_each_domains_model_calls(mem: Mem) -> None:
    db = mem.db
    me = db.primary()
    sub = mem.sub("alpha")
    assert_grows(db, lambda: turn(me, 0))
    assert_grows(db, lambda: turn(sub, 0))
    usage = db.stats().model_usage
    assert usage[me.agent_id].calls == 1
    assert usage[sub.agent_id].calls == 1
    db = mem.settle()
    stats = db.stats()
    assert stats.record_count > 0
    assert stats.file_bytes > 0
    assert db.primary().search_l4(), "the stats describe a file that holds the turn"


def test_checkpoint_writes_without_closing(mem: Mem) -> None:
    db = mem.db
    _, closed = turn(db.primary(), 0)
    db.checkpoint()
    assert db.closed is False
    _, again = turn(db.primary(), 1)  # still writable
    db = mem.settle()
    assert [r.topic_id for r in db.primary().scene_context().topics] == [closed.id, again.id]


def test_compact_to_copies_the_live_records_and_refuses_existing_targets(
    mem: Mem, tmp_path: Path
) -> None:
    db = mem.db
    me = db.primary()
    sub = mem.sub("alpha")
    turn(me, 0)
    turn(sub, 1)
    db = mem.settle()
    me, sub = db.primary(), mem.session(sub.agent_id)
    expect_me = me.scene_context().to_dict()
    expect_sub = sub.scene_context().to_dict()
    expect_l4 = [r.to_dict() for r in me.search_l4()]

    existing = tmp_path / "existing.meh"
    existing.write_bytes(b"host data")
    with refused(db, memhop.MemHopError, None):
        db.compact_to(str(existing))
    assert existing.read_bytes() == b"host data"
    with refused(db, memhop.MemHopError, None):
        db.compact_to(mem.path)

    copy = tmp_path / "copy.meh"
    before = footprint(db)
    db.compact_to(str(copy))
    assert footprint(db) == before, "compaction touched the open file"
    with memhop.open(str(copy), memhop.LocalModel()) as compacted:
        assert compacted.primary().scene_context().to_dict() == expect_me
        assert compacted.agent(memhop.LocalModel(), sub.agent_id).scene_context().to_dict() == (
            expect_sub
        )
        assert [r.to_dict() for r in compacted.primary().search_l4()] == expect_l4
        assert [a.to_dict() for a in compacted.agents()] == [a.to_dict() for a in db.agents()]


def test_a_pathlib_path_opens_and_a_bytes_path_is_refused(tmp_path: Path) -> None:
    """os.PathLike paths work like strings; other types are a ConfigError and create nothing."""
    target = tmp_path / "pathlike.meh"
    with pytest.raises(memhop.ConfigError, match="path must be"):
        memhop.open(
            bytes(target),  # type: ignore[arg-type]
            memhop.LocalModel(),
            profile=memhop.ProfileInput(name="a"),
        )
    assert not target.exists()
    with memhop.open(target, memhop.LocalModel(), profile=memhop.ProfileInput(name="a")) as db:
        assert db.primary().get_l0().name == "a"
    assert target.exists()
