"""E: domains in one file, sub-agents, ids and isolation (api.md §3, §4; tests.md E)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

import memhop

from .conftest import (
    PRIMARY_NAME,
    TS,
    Mem,
    assert_id,
    assert_scoped,
    footprint,
    open_new,
    refused,
    turn,
)

SUB = memhop.ProfileInput


def test_e01_agent_domains_are_isolated(mem: Mem) -> None:
    db = mem.db
    alpha = mem.sub("alpha")
    beta = mem.sub("beta")
    alpha_again = mem.sub("alpha")
    assert alpha_again.agent_id == alpha.agent_id
    assert beta.agent_id != alpha.agent_id
    a_open, _ = turn(alpha, 0, input="alpha 的专属 内容", output="alpha 回答", new_scene=True)
    b_open, _ = turn(beta, 0, input="beta 的专属 内容", output="beta 回答", new_scene=True)
    assert a_open.scene.scene_id != b_open.scene.scene_id
    alpha.update_l0(SUB(name="alpha", role="only alpha"))
    ids = alpha.agent_id, beta.agent_id
    db = mem.settle()
    alpha, beta = mem.session(ids[0]), mem.session(ids[1])
    me = db.primary()
    assert [s.scene_id for s in alpha.list_scenes()] == [a_open.scene.scene_id]
    assert [s.scene_id for s in beta.list_scenes()] == [b_open.scene.scene_id]
    # the second handle on "alpha" reads alpha's memory
    again = mem.sub("alpha")
    assert again.search_l4(keyword="alpha 的专属")
    assert_scoped(
        alpha.search_l4(keyword="beta 的专属"),
        beta.search_l4(keyword="beta 的专属"),
        "alpha reading beta's text",
    )
    assert_scoped(
        beta.search_l4(keyword="alpha 的专属"),
        alpha.search_l4(keyword="alpha 的专属"),
        "beta reading alpha's text",
    )
    assert alpha.get_l0().role == "only alpha"
    assert alpha.get_l0().agent_type == 1
    assert beta.get_l0().role != "only alpha"
    assert beta.get_l0().agent_type == 1
    assert me.get_l0().agent_type == 0
    assert_scoped(me.list_scenes(), alpha.list_scenes(), "the primary listing a sub's scenes")
    assert_scoped(me.search_l4(), alpha.search_l4(), "the primary reading a sub's archive")


def test_e02_a_sub_agent_domain_survives_a_reopen(meh_path: str) -> None:
    db = open_new(meh_path)
    opened, _ = turn(db.sub_agent(memhop.LocalModel(), SUB(name="alpha")), 0, new_scene=True)
    db.close()
    with memhop.open(meh_path, memhop.LocalModel()) as again:
        alpha = again.sub_agent(memhop.LocalModel(), SUB(name="alpha"))
        gamma = again.sub_agent(memhop.LocalModel(), SUB(name="gamma"))
        assert_scoped(gamma.list_scenes(), alpha.list_scenes(), "a fresh sub-agent listing scenes")
        assert [s.scene_id for s in alpha.list_scenes()] == [opened.scene.scene_id]


def test_e03_a_sub_agents_name_is_its_handle(mem: Mem) -> None:
    db = mem.db
    worker = mem.sub("worker")
    opened, _ = turn(worker, 0)
    for spelling in ("renamed", " worker ", "worker\u200b", "", "   "):
        with refused(db, memhop.InvalidQueryError, 1003):
            worker.update_l0(SUB(name=spelling, role="should not stick"))
    assert worker.get_l0().name == "worker"
    assert worker.get_l0().role == ""
    worker_id = worker.agent_id
    db = mem.settle()
    worker = mem.session(worker_id)
    assert [(a.name, a.primary) for a in db.agents()] == [(PRIMARY_NAME, True), ("worker", False)]
    assert mem.sub("worker").agent_id == worker_id
    assert [s.scene_id for s in worker.list_scenes()] == [opened.scene.scene_id]
    # control: restating the name byte for byte is accepted
    worker.update_l0(SUB(name="worker", role="helper"))
    assert worker.get_l0().role == "helper"
    # the primary's name is free text
    db.primary().update_l0(SUB(name="renamed-primary"))
    first = db.agents()[0]
    assert (first.id, first.name, first.primary) == ("0" * 16, "renamed-primary", True)


def test_e04_the_sub_agent_name_cap_is_the_exported_number_of_bytes(mem: Mem) -> None:
    db = mem.db
    assert memhop.MAX_SUB_AGENT_NAME_BYTES == 256
    accepted = [mem.sub("n" * 256).agent_id, mem.sub("回" * 80).agent_id]
    for name in ("n" * 257, "回" * 90):
        with refused(db, memhop.InvalidQueryError, 1003, "256 bytes"):
            mem.sub(name)
    db = mem.settle()
    names = {a.id: a.name for a in db.agents()}
    assert names[accepted[0]] == "n" * 256
    assert names[accepted[1]] == "回" * 80
    assert len(names) == 3


def test_sub_agent_names_are_trimmed_and_blank_names_refused(mem: Mem) -> None:
    db = mem.db
    alpha = db.sub_agent(memhop.LocalModel(), SUB(name="  alpha\t", role="first"))
    same = db.sub_agent(memhop.LocalModel(), SUB(name="alpha", role="ignored later"))
    assert same.agent_id == alpha.agent_id
    for blank in ("", "   ", "\t\n"):
        with refused(db, memhop.InvalidQueryError, 1003):
            mem.sub(blank)
    db = mem.settle()
    assert [a.name for a in db.agents()] == [PRIMARY_NAME, "alpha"]
    profile = mem.session(alpha.agent_id).get_l0()
    assert (profile.name, profile.role) == ("alpha", "first"), "a later profile is ignored"


def test_a_half_specified_endpoint_creates_no_domain(mem: Mem) -> None:
    db = mem.db
    half = memhop.LlmConfig(api_url="http://127.0.0.1:1", api_key="", model="m")
    with refused(db, memhop.ConfigError, 1001, "LLM.APIURL"):
        db.sub_agent(half, SUB(name="never"))
    with refused(db, memhop.ConfigError, 1001):
        db.sub_agent(None, SUB(name="never"))  # type: ignore[arg-type]
    alpha = mem.sub("alpha")
    with refused(db, memhop.ConfigError, 1001):
        db.agent(half, alpha.agent_id)
    db = mem.settle()
    assert [a.name for a in db.agents()] == [PRIMARY_NAME, "alpha"]


def test_e05_isolation_holds_on_the_id_addressed_paths(mem: Mem) -> None:
    alpha, beta = mem.sub("alpha"), mem.sub("beta")
    _, a_closed = turn(alpha, 0)
    turn(beta, 0)
    ids = alpha.agent_id, beta.agent_id
    db = mem.settle()
    alpha, beta = mem.session(ids[0]), mem.session(ids[1])
    alpha_ids = [r.id for r in alpha.search_l4(topic_id=a_closed.id)]
    assert len(alpha_ids) == 2
    assert_scoped(beta.search_l4(ids=alpha_ids), beta.search_l4(ids=[]), "beta by alpha's ids")
    assert_scoped(
        beta.search_l4(topic_id=a_closed.id),
        alpha.search_l4(topic_id=a_closed.id),
        "beta by alpha's turn id",
    )
    with refused(db, memhop.NotFoundError, 3001):
        beta.scene_context(alpha.list_scenes()[0].scene_id)
    assert len(alpha.search_l4(topic_id=a_closed.id)) == 2
    assert len(beta.list_scenes()) == 1


def test_e06_agent_reopens_a_domains_memory_by_its_id(meh_path: str) -> None:
    db = open_new(meh_path)
    alpha = db.sub_agent(memhop.LocalModel(), SUB(name="alpha"))
    first, _ = turn(alpha, 0)
    turn(alpha, 1)
    alpha_id = alpha.agent_id
    context = json.dumps(alpha.scene_context().to_dict(), ensure_ascii=False)
    scenes = alpha.list_scenes()
    primary_context = db.primary().scene_context().to_dict()
    db.close()
    with memhop.open(meh_path, memhop.LocalModel()) as again:
        alpha = again.agent(memhop.LocalModel(), alpha_id)
        assert alpha.agent_id == alpha_id
        assert alpha.get_l0().name == "alpha"
        assert json.dumps(alpha.scene_context().to_dict(), ensure_ascii=False) == context
        assert alpha.list_scenes() == scenes
        resumed = alpha.search()
        assert resumed.scene.scene_id == first.scene.scene_id
        assert resumed.new_topic_id != first.new_topic_id
        alpha.update(input="third round", created_at=TS + 3)
        assert json.dumps(alpha.scene_context().to_dict(), ensure_ascii=False) != context
        assert again.primary().scene_context().to_dict() == primary_context
        with pytest.raises(memhop.AgentNotFoundError) as info:
            again.agent(memhop.LocalModel(), "ffffffffffffffff")
        assert memhop.code_of(info.value) == 3002
        assert isinstance(info.value, memhop.NotFoundError)


def test_agent_refuses_malformed_ids_and_names(mem: Mem) -> None:
    db = mem.db
    alpha = mem.sub("alpha")
    for bad in ("alpha", "", "xyz", alpha.agent_id + "0", "g" * 16):
        with refused(db, memhop.InvalidQueryError, 1003):
            db.agent(memhop.LocalModel(), bad)
    with refused(db, memhop.AgentNotFoundError, 3002):
        db.agent(memhop.LocalModel(), "ffffffffffffffff")
    db = mem.settle()
    # controls: the real id, in either case, and the primary's zero id
    assert db.agent(memhop.LocalModel(), alpha.agent_id).agent_id == alpha.agent_id
    assert db.agent(memhop.LocalModel(), alpha.agent_id.upper()).agent_id == alpha.agent_id
    assert db.agent(memhop.LocalModel(), db.primary().agent_id).agent_id == "0" * 16


def test_agent_creates_nothing(mem: Mem) -> None:
    db = mem.db
    before = footprint(db)
    with pytest.raises(memhop.AgentNotFoundError):
        db.agent(memhop.LocalModel(), "1234567890abcdef")
    assert footprint(db) == before
    assert [a.name for a in db.agents()] == [PRIMARY_NAME]
    mem.sub("alpha")  # control: sub_agent does create
    assert footprint(db)[1] > before[1]


def test_agents_lists_the_primary_first_then_subs_in_id_order(mem: Mem) -> None:
    db = mem.db
    subs = {mem.sub(name).agent_id: name for name in ("delta", "alpha", "charlie", "bravo")}
    for agent_id in subs:
        assert_id(agent_id)
    db = mem.settle()
    listed = db.agents()
    assert listed[0] == memhop.AgentInfo(id="0" * 16, name=PRIMARY_NAME, primary=True)
    assert [a.id for a in listed[1:]] == sorted(subs)
    assert [a.name for a in listed[1:]] == [subs[i] for i in sorted(subs)]
    assert not any(a.primary for a in listed[1:])
    assert db.agents() == listed


def test_e07_an_agent_id_addresses_a_domain_inside_one_file(tmp_path: Path) -> None:
    first = open_new(str(tmp_path / "first.meh"))
    second = memhop.open(
        str(tmp_path / "second.meh"),
        memhop.LocalModel(),
        profile=memhop.ProfileInput(name="second-primary"),
    )
    try:
        assert first.primary().agent_id == second.primary().agent_id == "0" * 16
        reached = second.agent(memhop.LocalModel(), first.primary().agent_id)
        assert reached.get_l0().name == "second-primary"
        sub = first.sub_agent(memhop.LocalModel(), SUB(name="alpha"))
        assert sub.agent_id != first.primary().agent_id
        assert first.agent(memhop.LocalModel(), sub.agent_id).get_l0().name == "alpha"
        with pytest.raises(memhop.AgentNotFoundError):
            second.agent(memhop.LocalModel(), sub.agent_id)
    finally:
        first.close()
        second.close()


def test_e11_several_agents_on_one_file_and_one_file_each(tmp_path: Path) -> None:
    parent_path, worker_path = str(tmp_path / "parent.meh"), str(tmp_path / "worker.meh")
    parent = open_new(parent_path)
    worker = open_new(worker_path)
    me = parent.primary()
    turn(me, 0, input="parent secret one")
    turn(me, 1, input="parent secret two")
    helper = parent.sub_agent(memhop.LocalModel(), SUB(name="helper"))
    assert helper.agent_id != me.agent_id
    turn(helper, 0, input="helper line")
    turn(worker.primary(), 0, input="worker line")
    assert len(me.scene_context().topics) == 2
    assert len(helper.scene_context().topics) == 1
    assert len(worker.primary().scene_context().topics) == 1
    parent.close()
    worker.close()
    with memhop.open(worker_path, memhop.LocalModel()) as again:
        assert len(again.primary().scene_context().topics) == 1
        assert_scoped(
            again.primary().search_l4(keyword="parent secret"),
            again.primary().search_l4(keyword="worker line"),
            "the worker file holding the parent's text",
        )


def test_same_name_asked_for_at_once_opens_one_domain(meh_path: str) -> None:
    with open_new(meh_path) as db:
        barrier = threading.Barrier(8)
        got: list[str] = []
        errors: list[BaseException] = []

        def ask() -> None:
            try:
                barrier.wait()
                got.append(db.sub_agent(memhop.LocalModel(), SUB(name="shared")).agent_id)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=ask) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert not errors
        assert len(got) == 8
        assert len(set(got)) == 1
        assert [a.name for a in db.agents()] == [PRIMARY_NAME, "shared"]
