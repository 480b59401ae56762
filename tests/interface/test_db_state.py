"""State belongs to its DB: two DBs in one process share none, and a close lets it go."""

from __future__ import annotations

import gc
from pathlib import Path

from .conftest import NO_CADENCE, open_new


def _records_of(scene_hex: str) -> list[object]:
    """How many of memhop's live objects name the scene by its number (its rows)."""
    scene_id = int(scene_hex, 16)
    gc.collect()
    return [
        o
        for o in gc.get_objects()
        if str(type(o).__module__).startswith("memhop.")
        and getattr(o, "scene_id", None) == scene_id
    ]


def test_a_closed_db_keeps_none_of_its_records_alive(tmp_path: Path) -> None:
    """A close lets the rows go even while the host still holds the DB (and another DB
    of the same process, open and closed beside it, never held them)."""
    with open_new(str(tmp_path / "a.meh"), defaults=NO_CADENCE) as a:
        me = a.primary()
        opened = me.search(new_scene=True)
        for n in range(3):
            me.search()
            me.update(input=f"herons at the lake {n}", created_at=1_700_000_000_000 + n)
        scene = opened.scene.scene_id
        with open_new(str(tmp_path / "b.meh")) as b:
            b.primary().search(new_scene=True)
            b.primary().update(input="an orchard", created_at=1_700_000_000_000)
        assert len(_records_of(scene)) >= 3  # control: an open DB holds its rows
        assert not a.closed
    assert a.closed
    assert _records_of(scene) == []  # the DB object is still held here
