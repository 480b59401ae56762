"""l2_compress: group validation, the unlocked model calls, rollback, repeated folds, declines."""

from __future__ import annotations

import pytest

from memhop.dream import compress
from memhop.errors import LLMError, StorageIOError
from memhop.ids import content_id, fused_topic_id
from memhop.layers import archive
from memhop.records import ArchiveRole, RecordType
from tests.dream.conftest import SCENE, Domain, fold


def _run(dom: Domain, *groups: object, floor: int = 2) -> compress.SceneOutcome:
    dom.model.groups = lambda _t: groups  # type: ignore[assignment,return-value]
    outcomes = compress.compress_scenes(dom.env(floor=floor), [SCENE])
    assert len(outcomes) == 1
    return outcomes[0]


def test_overlapping_groups_land_once(dom: Domain) -> None:
    for i, tid in enumerate((11, 12, 13)):
        dom.turn(tid, user_ts=1000 + i * 1000, agent_ts=1001 + i * 1000)
    out = _run(dom, fold(11, 12), fold(12, 13))
    assert (out.groups, out.sunk, out.unusable) == (1, 2, 1)
    parent = fused_topic_id(SCENE, 1000, 2001, [11, 12])
    for tid in (11, 12):
        row = dom.row(tid)
        assert row is not None
        assert (row.depth, row.parent_id) == (2, parent)
    untouched = dom.row(13)
    assert untouched is not None
    assert (untouched.depth, untouched.parent_id) == (1, None)
    assert dom.row(fused_topic_id(SCENE, 2000, 3001, [12, 13])) is None
    # The mirror followed the writes without a rebuild.
    assert [t.id for t in dom.mirrors.topics.surface(SCENE)] == [parent, 13]


def test_disjoint_groups_with_one_bounds_pair_both_land(dom: Domain) -> None:
    for tid in (21, 22, 23, 24):
        dom.turn(tid, user_ts=1000, agent_ts=2000)
    out = _run(dom, fold(21, 22, summary="first"), fold(23, 24, summary="second"))
    assert (out.groups, out.unusable) == (2, 0)
    for members, text in (((21, 22), "first"), ((23, 24), "second")):
        parent = fused_topic_id(SCENE, 1000, 2000, members)
        slot = archive.read_slot_optional(dom.engine, 0, parent, 1)
        assert slot is not None
        assert slot.content == text
        assert slot.role == ArchiveRole.DREAM
        assert all(dom.row(m).parent_id == parent for m in members)  # type: ignore[union-attr]


def test_a_replayed_member_set_is_unusable(dom: Domain) -> None:
    members = [dom.turn(21), dom.turn(22, user_ts=1001)]
    env = dom.env()
    sunk = compress.apply_group(env, SCENE, members, "once")
    assert sunk == 2
    parent = fused_topic_id(SCENE, 1000, 1002, [21, 22])
    before = dom.row(parent)
    with pytest.raises(LLMError, match="changed since"):
        compress.apply_group(env, SCENE, members, "twice")
    assert dom.row(parent) == before


def test_a_free_parent_id_is_required_even_for_fresh_members(dom: Domain) -> None:
    members = [dom.turn(21), dom.turn(22, user_ts=1001)]
    parent = fused_topic_id(SCENE, 1000, 1002, [21, 22])
    dom.turn(parent, scene=SCENE, user_ts=5)  # a topic already sits at the parent id
    with pytest.raises(LLMError, match="already exists"):
        compress.apply_group(dom.env(), SCENE, members, "fold")
    assert dom.model.calls["keywords"] == 0  # refused before any model call


def test_a_non_topic_at_the_parent_id_aborts_the_scene(dom: Domain) -> None:
    dom.turn(21)
    dom.turn(22, user_ts=1001)
    parent = fused_topic_id(SCENE, 1000, 1002, [21, 22])
    dom.engine.write(0, RecordType.SCENE, parent, b'{"scene_id":1}')
    out = _run(dom, fold(21, 22))
    assert isinstance(out.failure, StorageIOError)
    assert dom.row(21).depth == 1  # type: ignore[union-attr]


def test_a_sink_refusal_rolls_the_group_back(dom: Domain) -> None:
    dom.turn(31)
    dom.turn(32, user_ts=1001)
    dom.engine.write(0, RecordType.TOPIC, 32, b"{not json")  # the mirror still lists it
    out = _run(dom, fold(31, 32))
    assert isinstance(out.failure, StorageIOError)
    assert out.groups == 0
    parent = fused_topic_id(SCENE, 1000, 1002, [31, 32])
    assert dom.row(parent) is None
    assert archive.read_slot_optional(dom.engine, 0, parent, 1) is None
    assert dom.mirrors.contents.slots_of(parent) == []
    assert parent not in dom.mirrors.topics
    assert dom.row(31).depth == 1  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("group", "why"),
    [
        (fold(41, 42), "not in the listing"),
        (fold(51), "a group of one"),
        (fold(51, 51), "an id named twice"),
        (fold(51, 53), "members not adjacent"),
        (fold(51, 52, summary="  "), "an empty summary"),
    ],
)
def test_invalid_groups_are_unusable_and_write_nothing(
    dom: Domain, group: object, why: str
) -> None:
    for i, tid in enumerate((51, 52, 53)):
        dom.turn(tid, user_ts=1000 + i)
    dom.turn(41, scene=SCENE + 1)  # exists, but not in this scene's listing
    before = dom.engine.stats()
    out = _run(dom, group)
    assert (out.groups, out.unusable, out.sunk) == (0, 1, 0), why
    assert dom.engine.stats() == before, why
    assert dom.model.calls["keywords"] == 0
    # Positive control: an adjacent pair of the same listing lands.
    assert _run(dom, fold(52, 53)).groups == 1


def test_a_member_that_changed_while_the_model_thought_makes_the_group_unusable(
    dom: Domain,
) -> None:
    dom.turn(61)
    dom.turn(62, user_ts=1001)

    def replay_then_answer(_topics: object) -> tuple[object, ...]:
        with dom.hold():  # a replayed update rewrites 62's keywords meanwhile
            dom.turn(62, keywords=("logout",), user_ts=1001)
        return (fold(61, 62),)

    dom.model.groups = replay_then_answer  # type: ignore[assignment]
    out = compress.compress_scenes(dom.env(), [SCENE])[0]
    assert (out.groups, out.unusable) == (0, 1)
    assert dom.row(61).depth == 1  # type: ignore[union-attr]


def test_no_model_call_is_made_under_the_domain_lock(dom: Domain) -> None:
    dom.turn(61)
    dom.turn(62, user_ts=1001)
    assert _run(dom, fold(61, 62)).groups == 1
    assert dom.model.calls == {"consolidate": 1, "keywords": 1}
    assert dom.model.locked_during_call == [False, False]


def test_a_fused_parent_folds_into_a_later_group(dom: Domain) -> None:
    for i, tid in enumerate((61, 62, 63)):
        dom.turn(tid, user_ts=1000 + i * 10)
    assert _run(dom, fold(61, 62)).groups == 1
    first = fused_topic_id(SCENE, 1000, 1011, [61, 62])
    assert _run(dom, fold(first, 63)).groups == 1
    old = dom.row(first)
    assert old is not None
    assert old.depth == 2
    assert old.parent_id is not None
    for tid in (61, 62):
        assert (dom.row(tid).depth, dom.row(tid).parent_id) == (2, first)  # type: ignore[union-attr]


def test_repeated_folding_collapses_instead_of_deleting(dom: Domain) -> None:
    ids = list(range(91, 97))
    for i, tid in enumerate(ids):
        dom.turn(tid, keywords=("登录",), user_ts=1000 + i * 60_000)
    dom.model.groups = lambda t: (fold(t[0].id, t[1].id, summary="组"),) if len(t) >= 2 else ()
    folds = 0
    for _ in range(6):
        if len(dom.mirrors.topics.surface(SCENE)) < 2:
            break
        folds += compress.compress_scenes(dom.env(floor=0), [SCENE])[0].groups
    assert folds >= 3
    listed = {r.topic.id: r.topic for r in dom.mirrors.topics.listing(SCENE)}
    every = {t.id: t for t in dom.mirrors.topics.topics_of_scene(SCENE)}
    assert max(t.depth for t in every.values()) <= 2
    assert set(ids) <= set(listed)
    assert len(dom.mirrors.topics.surface(SCENE)) == 1
    for row in listed.values():
        seen = {row.id}
        while row.parent_id is not None:
            row = listed[row.parent_id]
            assert row.id not in seen
            seen.add(row.id)


def test_a_declined_listing_is_not_asked_again_until_it_changes(dom: Domain) -> None:
    for i, tid in enumerate((71, 72, 73)):
        dom.turn(tid, user_ts=1000 + i)
    env = dom.env()
    for _ in range(3):
        assert compress.compress_scenes(env, [SCENE]) in ([], [compress.SceneOutcome(SCENE, True)])
    assert dom.model.calls["consolidate"] == 1
    dom.turn(74, user_ts=2000)  # the surface changed: ask again
    compress.compress_scenes(env, [SCENE])
    assert dom.model.calls["consolidate"] == 2
    compress.compress_scenes(dom.env(floor=1), [SCENE])  # a new floor is a new question
    assert dom.model.calls["consolidate"] == 3


def test_below_the_floor_no_call(dom: Domain) -> None:
    dom.turn(81)
    assert compress.compress_scenes(dom.env(floor=2), [SCENE]) == []
    assert dom.model.calls["consolidate"] == 0


def test_summary_archive_is_stamped_at_the_fold(dom: Domain) -> None:
    dom.turn(85, user_ts=10)
    dom.turn(86, user_ts=20)
    assert _run(dom, fold(85, 86)).groups == 1
    parent = fused_topic_id(SCENE, 10, 21, [85, 86])
    ref = dom.mirrors.contents.get(content_id(parent, 1))
    assert ref is not None
    assert ref.created_at == 1_700_000_000_000
