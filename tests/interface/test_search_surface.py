"""search's surface stays exact while it reuses what it listed last turn.

A turn lists its scene's whole surface; rows from the last turn are reused,
so these tests change rows under it (a turn stamped earlier than the rest, a
rename, a row sunk by a merge of scenes) and compare each listing with the
pure read of the same scene.
"""

from __future__ import annotations

import memhop
from tests.interface.conftest import TS, Mem


def _listed(result: memhop.SearchResult) -> list[tuple[str, str, int]]:
    return [(t.id, t.name, t.user_timestamp) for t in result.topics]


def _read(me: memhop.Session, scene_id: str) -> list[tuple[str, str, int]]:
    rows = me.scene_context(scene_id).topics
    return [(r.topic_id, r.name, r.user_timestamp) for r in rows if r.depth == 1]


def test_search_lists_the_surface_as_the_pure_read_does_through_changes(mem: Mem) -> None:
    me = mem.primary()
    scene = me.search(new_scene=True).scene.scene_id
    me.update(input="the ferry leaves at nine", created_at=TS + 10)
    for i in range(1, 4):
        me.search(scene_id=scene)
        me.update(input=f"turn {i} about the harbour", created_at=TS + 10 + i)
    first = me.search(scene_id=scene)
    assert len(first.topics) == 4
    assert _listed(first) == _read(me, scene)
    me.update(input="an early note, stamped before the rest", created_at=TS)
    second = me.search(scene_id=scene)
    assert _listed(second)[0][2] == TS  # it sorts first, not last
    assert len(second.topics) == 5
    me.update(input="one more", created_at=TS + 20)
    renamed = me.rename_topic(second.topics[2].id, "the harbour turn")
    third = me.search(scene_id=scene)
    assert (renamed.id, "the harbour turn") in [(t[0], t[1]) for t in _listed(third)]
    assert _listed(third) == _read(me, scene)
    other = me.search(new_scene=True).scene.scene_id
    me.update(input="a different conversation", created_at=TS + 30)
    me.merge_scenes(scene, [other])
    merged = me.search(scene_id=scene)
    assert len(merged.topics) == 7  # control: the merged row joined the surface
    assert _listed(merged) == _read(me, scene)
    me.update(input="after the merge", created_at=TS + 40)
    mem.settle()
    me = mem.primary()
    reopened = me.search(scene_id=scene)
    assert _listed(reopened) == _read(me, scene)
    assert len(reopened.topics) == 8
