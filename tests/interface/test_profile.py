"""J: the L0 profile and its brief (api.md §7; tests.md J)."""

from __future__ import annotations

import memhop

from .conftest import PRIMARY_NAME, Mem, refused

P = memhop.ProfileInput


def test_j01_update_l0_then_get_l0(mem: Mem) -> None:
    mem.primary().update_l0(P(name="测试画像", preferences={"language": "Go"}))
    db = mem.settle()
    profile = db.primary().get_l0()
    assert profile.name == "测试画像"
    assert dict(profile.preferences) == {"language": "Go"}
    assert profile.agent_type == 0
    assert profile.updated_at_ms > 0


def test_j02_the_brief_reflects_what_the_host_just_wrote(mem: Mem) -> None:
    me = mem.primary()
    me.update_l0(
        P(
            name="探针主域",
            role="值守",
            personality="先测量再动手",
            preferences={"mode": "strict", "retry": "3"},
        )
    )
    brief = me.search().profile_brief
    for fragment in ("探针主域", "值守", "先测量再动手", "mode=strict", "retry=3"):
        assert fragment in brief
    me.update_l0(P(name="新名字", preferences={"mode": "loose"}))
    db = mem.settle()
    me = db.primary()
    brief = me.search().profile_brief
    assert "新名字" in brief
    assert "mode=loose" in brief
    assert "retry" not in brief, "preferences are replaced whole"
    assert "值守" not in brief, "an omitted role is cleared"
    profile = me.get_l0()
    assert profile.name == "新名字"
    assert dict(profile.preferences) == {"mode": "loose"}
    assert profile.role == ""
    assert profile.personality == ""


def test_the_brief_lines_in_order(mem: Mem) -> None:
    me = mem.primary()
    me.update_l0(P(name="Ada", role="pilot", personality="calm", preferences={"b": "2", "a": "1"}))
    db = mem.settle()
    brief = db.primary().search().profile_brief
    assert brief == "name: Ada\nrole: pilot\npersonality: calm\npreferences: a=1, b=2\n"


def test_j06_the_brief_is_bounded_and_repeatable(mem: Mem) -> None:
    me = mem.primary()
    long_text = "字" * 400
    prefs = {f"{chr(ord('a') + i)}{'k' * 200}": "v" * 300 for i in range(8)}
    me.update_l0(P(name=long_text, role=long_text, personality=long_text, preferences=prefs))
    db = mem.settle()
    me = db.primary()
    brief = me.search().profile_brief
    assert brief == me.search().profile_brief
    lines = brief.split("\n")
    assert lines[-1] == ""
    lines = lines[:-1]
    assert len(lines) <= 6
    assert len(brief) <= 2100
    assert lines[0] == "name: " + "字" * 160 + "…"
    assert lines[1] == "role: " + "字" * 160 + "…"
    assert lines[2] == "personality: " + "字" * 160 + "…"
    pref_line = lines[3]
    assert pref_line.startswith("preferences: ")
    entries = pref_line.removeprefix("preferences: ").split(", ")
    assert len(entries) == 5, "at most five preferences"
    for entry in entries:
        key, value = entry.split("=")
        assert len(key) == 161
        assert key.endswith("…")
        assert value == "v" * 120 + "…"
    assert [e[0] for e in entries] == ["a", "b", "c", "d", "e"], "keys sorted, first five"


def test_an_empty_profile_has_an_empty_brief_and_no_hidden_mbti_key(mem: Mem) -> None:
    sub = mem.sub("quiet")
    sub_id = sub.agent_id
    db = mem.settle()
    sub = mem.session(sub_id)
    brief = sub.search().profile_brief
    assert brief == "name: quiet\n"
    wire = sub.get_l0().to_dict()
    assert "type" not in wire["mbti"]
    assert sub.get_l0().mbti.type == ""
    assert wire["preferences"] == {}
    assert "mbti:" not in brief
    assert "emotions:" not in brief
    assert db.primary().search().profile_brief.startswith(f"name: {PRIMARY_NAME}\n")


def test_update_l0_requires_a_name_and_stores_nothing_without_one(mem: Mem) -> None:
    db = mem.db
    me = db.primary()
    for blank in ("", "   "):
        with refused(db, memhop.InvalidQueryError, 1003):
            me.update_l0(P(name=blank, role="should not stick"))
    with refused(db, memhop.InvalidQueryError, 1003):
        me.update_l0({"name": "a dict is not a profile"})  # type: ignore[arg-type]
    db = mem.settle()
    profile = db.primary().get_l0()
    assert (profile.name, profile.role) == (PRIMARY_NAME, "offline fixture")
    db.primary().update_l0(P(name="  spaced  "))  # control: the primary's name is free text
    assert db.agents()[0].name.strip() == "spaced"


def test_the_profile_is_per_domain(mem: Mem) -> None:
    alpha = mem.sub("alpha")
    alpha.update_l0(P(name="alpha", preferences={"only": "alpha"}))
    alpha_id = alpha.agent_id
    db = mem.settle()
    alpha = mem.session(alpha_id)
    assert dict(alpha.get_l0().preferences) == {"only": "alpha"}
    assert "only=alpha" in alpha.search().profile_brief
    assert dict(db.primary().get_l0().preferences) == {}
    assert "only=alpha" not in db.primary().search().profile_brief
