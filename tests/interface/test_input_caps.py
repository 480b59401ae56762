"""Every text field has a documented cap: at the cap it is stored, one byte over is refused.

Each refusal is InvalidQueryError naming the field and its cap, raised before
anything is written (``refused`` checks the file did not change). Caps count
UTF-8 bytes, so a character that takes three bytes counts three.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import memhop
from tests.interface.conftest import TS, refused

NAME, SHORT, TITLE, TEXT = (
    memhop.MAX_NAME_BYTES,
    memhop.MAX_SHORT_TEXT_BYTES,
    memhop.MAX_TITLE_BYTES,
    memhop.MAX_TEXT_BYTES,
)


def test_the_caps_are_the_documented_ones() -> None:
    """docs/reliability.md lists these numbers."""
    assert (NAME, SHORT, TITLE, TEXT) == (256, 4096, 1024, 65536)
    assert memhop.MAX_PREFERENCES == 256


@pytest.mark.parametrize(
    ("field", "cap"),
    [("name", SHORT), ("role", SHORT), ("personality", TEXT)],
)
def test_profile_text_fields_are_capped(db: memhop.DB, field: str, cap: int) -> None:
    """ProfileInput refuses cap + 1 bytes (in three-byte characters too); the cap is stored."""
    base = {"name": "capped", "role": "", "personality": ""}
    with refused(db, memhop.InvalidQueryError, 1003, f"profile {field} exceeds its cap of {cap}"):
        memhop.ProfileInput(**{**base, field: "x" * (cap + 1)})
    with refused(db, memhop.InvalidQueryError, 1003, "exceeds its cap"):
        memhop.ProfileInput(**{**base, field: "界" * (cap // 3 + 1)})  # cap + 1..3 bytes
    at_cap = memhop.ProfileInput(**{**base, field: "x" * cap})
    db.primary().update_l0(at_cap)
    assert getattr(db.primary().get_l0(), field) == "x" * cap


def test_a_100_mb_profile_role_is_refused_before_anything_is_written(db: memhop.DB) -> None:
    """The campaign's 100 MB string: refused at once, the file does not grow."""
    with refused(db, memhop.InvalidQueryError, 1003, "profile role"):
        memhop.ProfileInput(name="big", role="r" * 100_000_000)
    db.primary().update_l0(memhop.ProfileInput(name="big", role="small"))  # the control


def test_preferences_are_capped_in_count_key_and_value(db: memhop.DB) -> None:
    """256 entries, 256-byte keys and 4 KiB values are stored; one more of each is refused."""
    with refused(db, memhop.InvalidQueryError, 1003, "preferences exceed the cap of 256"):
        memhop.ProfileInput(name="p", preferences={str(i): "" for i in range(257)})
    with refused(db, memhop.InvalidQueryError, 1003, "a preference key exceeds"):
        memhop.ProfileInput(name="p", preferences={"k" * (NAME + 1): "v"})
    with refused(db, memhop.InvalidQueryError, 1003, "exceeds its cap of 4096"):
        memhop.ProfileInput(name="p", preferences={"k": "v" * (SHORT + 1)})
    prefs = {f"{i:03d}" + "k" * (NAME - 3): "v" * SHORT for i in range(256)}
    db.primary().update_l0(memhop.ProfileInput(name="p", preferences=prefs))
    assert db.primary().get_l0().preferences == prefs


def _open_turn(db: memhop.DB) -> memhop.Session:
    """The primary with a turn open and one plan step (ordinal 1) on it."""
    me = db.primary()
    me.search()
    assert me.plan_node_add(0, "step") == 1
    return me


CALLS: list[tuple[str, int, Callable[[memhop.Session, str], Any]]] = [
    ("title", TITLE, lambda me, v: me.plan_node_add(0, v)),
    ("summary", TEXT, lambda me, v: me.plan_node_update(1, summary=v)),
    ("event_type", NAME, lambda me, v: me.append_archive(content="e", created_at=TS, kind=1,
                                                          event_type=v)),
    ("title", TITLE, lambda me, v: me.import_l3([memhop.L3ImportItem(title=v, domain="d")],
                                                "skip")),
    ("content", TEXT, lambda me, v: me.import_l3(
        [memhop.L3ImportItem(title="t", domain="d", content=v)], "skip")),
    ("keywords", TITLE, lambda me, v: me.import_l3(
        [memhop.L3ImportItem(title="t", domain="d", keywords=[v])], "skip")),
    ("name", TITLE, lambda me, v: me.update_scene(me.list_scenes()[0].scene_id, name=v)),
]  # fmt: skip


@pytest.mark.parametrize(("field", "cap", "call"), CALLS, ids=[f"{c[0]}-{c[1]}" for c in CALLS])
def test_session_text_arguments_are_capped(
    db: memhop.DB, field: str, cap: int, call: Callable[[memhop.Session, str], Any]
) -> None:
    """One byte over the cap is refused before any write; at the cap the call succeeds."""
    me = _open_turn(db)
    with refused(db, memhop.InvalidQueryError, 1003, f"exceeds its cap of {cap}") as caught:
        call(me, "y" * (cap + 1))
    assert field in str(caught[0])
    call(me, "y" * cap)  # the positive control, in the same state


def test_a_topic_name_is_capped(db: memhop.DB) -> None:
    """rename_topic refuses a name over 1 KiB and keeps one at it."""
    me = _open_turn(db)
    topic = me.update(input="q", output="a", created_at=TS)
    with refused(db, memhop.InvalidQueryError, 1003, "name exceeds its cap of 1024"):
        me.rename_topic(topic.id, "n" * (TITLE + 1))
    assert me.rename_topic(topic.id, "n" * TITLE).name == "n" * TITLE
