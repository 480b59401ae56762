"""A DB's memo of mapped rows: answers equal the direct mapping, and the memo is the DB's."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from memhop import records as r
from memhop.api import _mapping as m
from memhop.api._surfaces import Surfaces

_POOL = [
    r.TopicSlot(id=i, scene_id=1 + i % 2, depth=1, fused_keywords=(f"k{i}",)) for i in range(6)
]
_DREAM = SimpleNamespace(origin="dream", derived_from=(4, 5), grounding=0.5)

_SURFACE = st.tuples(
    st.sampled_from([1, 2]),
    st.lists(st.sampled_from(range(len(_POOL))), max_size=5),
    st.booleans(),  # renamed: the record at the end of the surface is a new one
    st.booleans(),  # row 0 is a dream row
)


@given(st.lists(_SURFACE, min_size=1, max_size=12))
def test_every_surface_is_what_the_direct_mapping_makes(
    surfaces: list[tuple[int, list[int], bool, bool]],
) -> None:
    """Whatever the memo holds from the turns before, a surface maps as if mapped anew."""
    memo = Surfaces()
    for scene_id, picks, renamed, dream in surfaces:
        topics = [_POOL[i] for i in picks]
        if renamed and topics:
            topics[-1] = dataclasses.replace(topics[-1], name="renamed")
        made_by = {0: _DREAM} if dream else {}
        got = memo.search_result(
            r.ProfileSlot(name="n"), r.SceneSlot(scene_id=scene_id), topics, 9, made_by
        )
        assert got.topics == tuple(m.topic_slot(t, made_by.get(t.id)) for t in topics)


def test_a_surface_seen_before_reuses_its_rows_until_a_record_changes() -> None:
    memo = Surfaces()
    profile, scene = r.ProfileSlot(name="n"), r.SceneSlot(scene_id=1)
    first = memo.search_result(profile, scene, _POOL[:3], 9)
    again = memo.search_result(profile, scene, [*_POOL[:3], _POOL[4]], 9)
    assert all(a is b for a, b in zip(first.topics, again.topics, strict=False))  # reused
    changed = dataclasses.replace(_POOL[1], name="renamed")
    after = memo.search_result(profile, scene, [_POOL[0], changed, _POOL[2]], 9)
    assert after.topics[1].name == "renamed"  # control: a changed record maps anew
    assert after.topics[0] is first.topics[0]
    memo.clear()
    cleared = memo.search_result(profile, scene, _POOL[:3], 9)
    assert cleared.topics == first.topics
    assert cleared.topics[0] is not first.topics[0]  # forgotten: mapped again
