"""L5 plan layer: records on a real file, the update and fold rules, the retention sweep."""

from __future__ import annotations

import dataclasses

import pytest

from memhop.engine import RECORD_HEADER_SIZE, Engine, create_engine, open_engine
from memhop.errors import Code, CRCMismatchError, NotFoundError
from memhop.ids import plan_node_id
from memhop.index.plans import PlanTrees
from memhop.layers import plan
from memhop.records import PlanNode, PlanStatusCode
from tests.faults import flip_byte

AGENT_A = 0
AGENT_B = 0x22
TOPIC = 0xABCD
DONE = PlanStatusCode.DONE
OPEN = PlanStatusCode.IN_PROGRESS
FAILED = PlanStatusCode.FAILED


def step(
    seq: int,
    parent: int = 0,
    *,
    topic: int = TOPIC,
    status: int = OPEN,
    summary: str = "",
    updated_at: int = 0,
) -> PlanNode:
    return PlanNode(
        id_hash=plan_node_id(topic, seq),
        topic_id=topic,
        seq=seq,
        parent_seq=parent,
        status=status,
        summary=summary,
        updated_at=updated_at,
    )


# ---- records ---------------------------------------------------------------------------


def test_write_overwrites_by_seq_and_derives_the_address(engine: Engine) -> None:
    first = plan.write_plan_node(engine, AGENT_A, plan.new_step(TOPIC, 1, 0, "first", 10))
    assert first.id_hash == plan_node_id(TOPIC, 1)
    second = plan.updated_step(first, status=DONE, title="", summary="ok", now=20)
    # The caller's id_hash is ignored: the address comes from (topic, seq).
    plan.write_plan_node(engine, AGENT_A, dataclasses.replace(second, id_hash=7))
    got = plan.get_plan_node_optional(engine, AGENT_A, TOPIC, 1)
    assert got == second
    assert plan.read_plan_nodes_strict(engine, AGENT_A, plan.plan_node_ids(engine, AGENT_A)) == [
        second
    ]
    assert not engine.contains(AGENT_A, 7)


def test_absent_is_none_and_unreadable_raises_its_code(meh_path: str) -> None:
    eng = create_engine(meh_path)
    good = plan.write_plan_node(eng, AGENT_A, plan.new_step(TOPIC, 1, 0, "good", 1))
    rot = plan.write_plan_node(eng, AGENT_A, plan.new_step(TOPIC, 2, 1, "rot", 1))
    offset = eng.offset_of(AGENT_A, rot.id_hash)
    assert offset is not None
    eng.close()
    flip_byte(meh_path, offset + RECORD_HEADER_SIZE + 3)

    eng = open_engine(meh_path)
    try:
        assert plan.get_plan_node_optional(eng, AGENT_A, TOPIC, 1) == good
        assert plan.get_plan_node_optional(eng, AGENT_A, TOPIC, 3) is None
        with pytest.raises(CRCMismatchError) as one:
            plan.get_plan_node_optional(eng, AGENT_A, TOPIC, 2)
        assert one.value.code == Code.CRC_MISMATCH
        with pytest.raises(CRCMismatchError) as scan:
            plan.read_plan_nodes_strict(eng, AGENT_A, plan.plan_node_ids(eng, AGENT_A))
        assert not isinstance(scan.value, NotFoundError)
        assert f"{rot.id_hash:016x}" in str(scan.value)
        assert plan.read_plan_nodes_strict(eng, AGENT_A, [good.id_hash]) == [good]
    finally:
        eng.close()


def test_domains_do_not_see_each_others_steps(engine: Engine) -> None:
    mine = plan.write_plan_node(engine, AGENT_A, plan.new_step(TOPIC, 1, 0, "alpha", 1))
    theirs = plan.write_plan_node(engine, AGENT_B, plan.new_step(TOPIC + 1, 1, 0, "beta", 1))
    assert plan.get_plan_node_optional(engine, AGENT_A, TOPIC, 1) == mine
    assert plan.read_plan_nodes_strict(engine, AGENT_B, plan.plan_node_ids(engine, AGENT_B)) == [
        theirs
    ]
    assert plan.get_plan_node_optional(engine, AGENT_B, TOPIC, 1) is None
    assert plan.read_plan_nodes_strict(engine, AGENT_B, [mine.id_hash]) == []
    assert plan.delete_plan_nodes(engine, AGENT_B, [mine.id_hash]) == 0
    assert plan.read_plan_nodes_strict(engine, AGENT_A, plan.plan_node_ids(engine, AGENT_A)) == [
        mine
    ]


def test_trees_rebuilt_after_reopen_equal_the_incremental_ones(meh_path: str) -> None:
    eng = create_engine(meh_path)
    trees = PlanTrees()
    for node in (
        plan.new_step(TOPIC, 1, 0, "root", 1),
        plan.new_step(TOPIC, 2, 1, "child", 2),
        plan.new_step(TOPIC + 1, 1, 0, "other turn", 3),
    ):
        trees.put(plan.write_plan_node(eng, AGENT_A, node))
    child = trees.node(TOPIC, 2)
    assert child is not None
    settled = plan.updated_step(child, status=DONE, title="", summary="found it", now=4)
    root = trees.node(TOPIC, 1)
    assert root is not None
    closed = plan.updated_step(root, status=DONE, title="", summary="", now=5)
    nodes = [closed if n.seq == 1 else settled if n.seq == 2 else n for n in trees.nodes_of(TOPIC)]
    folds = plan.refold(nodes, 1, 5)
    for node in plan.write_plan_nodes(eng, AGENT_A, [settled, closed, *folds]):
        trees.put(node)
    gone = trees.remove_topic(TOPIC + 1)
    assert plan.delete_plan_nodes(eng, AGENT_A, gone) == 1
    eng.close()

    eng = open_engine(meh_path)
    try:
        rebuilt = PlanTrees.from_nodes(
            plan.read_plan_nodes_strict(eng, AGENT_A, plan.plan_node_ids(eng, AGENT_A))
        )
        assert rebuilt == trees
        folded = rebuilt.node(TOPIC, 1)
        assert folded is not None
        assert folded.summary == "found it"
        assert folded.summary_folded
        assert rebuilt.next_seq(TOPIC) == 3
        assert rebuilt.next_seq(TOPIC + 1) == 1
    finally:
        eng.close()


# ---- update rule -----------------------------------------------------------------------


def test_update_keeps_blank_fields_and_stamps_finish() -> None:
    node = plan.new_step(TOPIC, 1, 0, "title", 100)
    done = plan.updated_step(node, status=DONE, title=" ", summary="S", now=200)
    assert (done.title, done.summary, done.summary_folded) == ("title", "S", False)
    assert done.finished_at == 200
    assert done.updated_at == 200
    reopened = plan.updated_step(done, status=OPEN, title="", summary="", now=300)
    assert (reopened.title, reopened.summary, reopened.finished_at) == ("title", "S", 0)
    failed = plan.updated_step(reopened, status=FAILED, title="new", summary="T", now=400)
    assert (failed.title, failed.summary, failed.finished_at) == ("new", "T", 400)
    assert plan.is_host_owned(failed)


# ---- fold --------------------------------------------------------------------------------


class Tree:
    """A turn's steps driven through updated_step + refold, as the root will."""

    def __init__(self, *parents: int) -> None:
        self.nodes = {
            seq: plan.new_step(TOPIC, seq, parent, f"t{seq}", seq)
            for seq, parent in enumerate(parents, start=1)
        }
        self.clock = 100

    def add(self, parent: int) -> int:
        seq = max(self.nodes) + 1
        self.nodes[seq] = plan.new_step(TOPIC, seq, parent, f"t{seq}", self.clock)
        return seq

    def update(self, seq: int, status: int, summary: str = "") -> None:
        self.clock += 1
        self.nodes[seq] = plan.updated_step(
            self.nodes[seq], status=status, title="", summary=summary, now=self.clock
        )
        for node in plan.refold(self.nodes.values(), seq, self.clock):
            self.nodes[node.seq] = node

    def summary(self, seq: int) -> str:
        return self.nodes[seq].summary


def test_a_done_parent_folds_its_childrens_conclusions_in_seq_order() -> None:
    t = Tree(0, 1, 1)  # root, c1, c2
    t.update(3, DONE, "二的结论")
    t.update(2, DONE, "一的结论")
    assert t.summary(1) == ""  # the parent is done only when the host says so
    t.update(1, DONE)
    assert t.summary(1) == "一的结论; 二的结论"
    assert t.nodes[1].summary_folded
    assert t.nodes[1].title == "t1"

    c3 = t.add(1)
    t.update(c3, OPEN)
    assert t.summary(1) == "一的结论; 二的结论"  # an open child leaves the fold standing
    t.update(c3, DONE, "三的结论")
    assert t.summary(1) == "一的结论; 二的结论; 三的结论"
    t.update(2, OPEN)
    assert t.summary(1) == "一的结论; 二的结论; 三的结论"
    t.update(2, DONE, "一改了口")
    assert t.summary(1) == "一改了口; 二的结论; 三的结论"

    t.update(1, DONE, "宿主自己写的收口")
    t.update(3, DONE, "二改了口")
    assert t.summary(1) == "宿主自己写的收口"  # host-owned: never re-folded
    assert t.summary(3) == "二改了口"


def test_the_fold_reaches_the_root_through_three_levels() -> None:
    t = Tree(0, 1, 2)  # root > mid > leaf
    t.update(3, DONE, "第 7 步引入的")
    assert (t.summary(2), t.summary(1)) == ("", "")
    t.update(2, DONE)
    assert (t.summary(2), t.summary(1)) == ("第 7 步引入的", "")
    t.update(1, DONE)
    assert t.summary(1) == "第 7 步引入的"
    t.update(3, OPEN)
    assert (t.summary(2), t.summary(1)) == ("第 7 步引入的", "第 7 步引入的")
    assert t.nodes[3].finished_at == 0
    assert t.summary(3) == "第 7 步引入的"
    t.update(3, DONE, "其实是第 9 步的并发")
    assert (t.summary(2), t.summary(1)) == ("其实是第 9 步的并发", "其实是第 9 步的并发")
    t.update(2, DONE, "范围收在 7~9 步")
    assert (t.summary(2), t.summary(1)) == ("范围收在 7~9 步", "范围收在 7~9 步")
    t.update(3, OPEN)
    assert (t.summary(2), t.summary(1)) == ("范围收在 7~9 步", "范围收在 7~9 步")


def test_a_child_without_a_summary_contributes_its_title_and_failed_counts_as_settled() -> None:
    t = Tree(0, 1, 1, 1)
    t.update(2, DONE)
    t.update(3, FAILED, "timed out")
    t.update(4, DONE)
    t.update(1, DONE)
    assert t.summary(1) == "t2; timed out; t4"


def test_refold_reports_only_changed_steps_and_survives_a_parent_loop() -> None:
    t = Tree(0, 1)
    t.update(2, DONE, "x")
    t.update(1, DONE)
    assert plan.refold(t.nodes.values(), 2, 999) == []  # nothing changed: nothing to write
    loop = [step(1, 2, status=DONE), step(2, 1, status=DONE, summary="s")]
    changed = plan.refold(loop, 1, 5)
    assert [n.seq for n in changed] == [1]
    assert plan.refold([], 1, 5) == []


# ---- retention sweep -------------------------------------------------------------------

CUTOFF = 10_000


def test_sweep_an_in_flight_but_silent_tree_goes_entirely() -> None:
    tree = [step(1, updated_at=CUTOFF - 60_000), step(2, 1, status=DONE, updated_at=CUTOFF - 1)]
    assert plan.sweep_candidates(tree, CUTOFF) == tree


def test_sweep_a_finished_tree_touched_recently_keeps_only_fresh_steps() -> None:
    stale = step(1, status=DONE, updated_at=CUTOFF - 1)
    fresh = step(2, 1, status=DONE, updated_at=CUTOFF)
    assert plan.sweep_candidates([fresh, stale], CUTOFF) == [stale]


def test_sweep_a_live_recent_tree_is_exempt_even_with_stale_steps() -> None:
    tree = [step(1, status=DONE, updated_at=0), step(2, 1, updated_at=CUTOFF)]
    assert plan.sweep_candidates(tree, CUTOFF) == []
    failed = [step(1, status=DONE, updated_at=0), step(2, status=FAILED, updated_at=CUTOFF + 5)]
    assert plan.sweep_candidates(failed, CUTOFF) == []  # failed is "not done"


def test_sweep_judges_each_turn_on_its_own() -> None:
    live = [step(1, topic=1, updated_at=CUTOFF), step(2, topic=1, status=DONE, updated_at=0)]
    silent = [step(1, topic=2, updated_at=0)]
    done = [step(1, topic=3, status=DONE, updated_at=0), step(2, topic=3, updated_at=0)]
    got = plan.sweep_candidates([*done, *silent, *live], CUTOFF)
    assert [(n.topic_id, n.seq) for n in got] == [(2, 1), (3, 1), (3, 2)]
    assert plan.sweep_candidates([], CUTOFF) == []
