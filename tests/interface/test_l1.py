"""F: the L1 read without Dream (api.md §8; tests.md F01's first read)."""

from __future__ import annotations

import pytest

import memhop

from .conftest import Mem, footprint, refused, turn


def test_f01_an_undreamed_domain_lists_no_l1_nodes(mem: Mem) -> None:
    me = mem.primary()
    assert me.list_l1() == []
    first, _ = turn(me, 0, new_scene=True)
    turn(me, 1)
    turn(me, 2, new_scene=True)

    db = mem.settle()
    me = db.primary()
    # control: the domain does hold settled turns in two scenes, only no Dream ran
    assert len(me.scene_context(first.scene.scene_id).topics) == 2
    assert len(me.list_scenes()) == 2
    assert me.list_l1() == []


def test_list_l1_reads_without_writing_or_opening_a_turn(db: memhop.DB) -> None:
    me = db.primary()
    turn(me, 0, new_scene=True)
    sub = db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="reader"))
    before = footprint(db)
    assert sub.list_l1() == []
    assert me.list_l1() == []
    assert footprint(db) == before
    with refused(db, memhop.InvalidQueryError, 1003, "no turn is open"):
        sub.plan_state()  # list_l1 opened no turn
    assert me.plan_state().total_count == 0  # control: the primary's turn is still open


def test_list_l1_is_per_domain_and_refused_after_close(mem: Mem) -> None:
    alpha = mem.sub("alpha")
    turn(alpha, 0, new_scene=True)
    assert alpha.list_l1() == []
    assert mem.primary().list_l1() == []
    mem.close()
    with pytest.raises(memhop.ClosedError) as info:
        alpha.list_l1()
    assert info.value.code == 5002
