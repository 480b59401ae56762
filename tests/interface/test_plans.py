"""I: plan steps on the open turn (api.md §12; tests.md I, C12, B02's plan half)."""

from __future__ import annotations

import pytest

import memhop

from .conftest import TS, Mem, refused, turn

EVENT = memhop.ArchiveKind.EVENT
DONE = memhop.PlanStatus.DONE


def render(tree: memhop.PlanTree) -> list[str]:
    """A plan as lines "  #seq [status] title — summary", children indented."""
    lines: list[str] = []

    def walk(node: memhop.PlanNodeView, depth: int) -> None:
        tail = f" — {node.summary}" if node.summary else ""
        lines.append(f"{'  ' * depth}#{node.seq} [{node.status}] {node.title}{tail}")
        for child in node.children:
            walk(child, depth + 1)

    for root in tree.roots:
        walk(root, 0)
    lines.append(f"{tree.done_count}/{tree.total_count}")
    return lines


def step(tree: memhop.PlanTree, seq: int) -> memhop.PlanNodeView:
    pending = list(tree.roots)
    while pending:
        node = pending.pop()
        if node.seq == seq:
            return node
        pending.extend(node.children)
    raise AssertionError(f"step {seq} not in the tree")


def bind(session: memhop.Session, node_seq: int, content: str, at: int = TS) -> int:
    return session.append_archive(
        kind=EVENT, event_type="tool_call", content=content, created_at=at, node_seq=node_seq
    )


# ---- B02 (plan half): no open turn ----------------------------------------------------------


def test_b02_plan_calls_refuse_without_an_open_turn(db: memhop.DB) -> None:
    me = db.primary()
    for call in (
        lambda: me.plan_node_add(0, "first"),
        lambda: me.plan_node_update(1, status=DONE),
        me.plan_state,
    ):
        with refused(db, memhop.InvalidQueryError, 1003, "no turn is open"):
            call()
    me.search(new_scene=True)  # control: the same calls work once a turn is open
    assert me.plan_node_add(0, "first") == 1
    me.plan_node_update(1, status=DONE)
    assert render(me.plan_state()) == ["#1 [done] first", "1/1"]


# ---- I01 / I03: a tree lives on its turn -----------------------------------------------------


def test_i01_the_plan_tree_lives_on_its_turn(db: memhop.DB) -> None:
    me = db.primary()
    first = me.search(new_scene=True)
    one = me.plan_node_add(0, "第一步")
    bind(me, one, "grep retry")
    assert me.plan_state().total_count == 1
    closed = me.update(input="q", output="a", created_at=TS + 1)
    assert closed.id == first.new_topic_id
    assert me.plan_state().total_count == 1, "the tree reads until the next search"
    events = me.search_l4(topic_id=closed.id, kind=EVENT)
    assert [(e.topic_id, e.node_seq) for e in events] == [(closed.id, one)]

    second = me.search()
    assert second.new_topic_id != first.new_topic_id
    assert me.plan_state() == memhop.PlanTree(roots=(), done_count=0, total_count=0)
    with refused(db, memhop.NotFoundError, 3001):
        me.plan_node_add(one, "under turn one's step")
    assert me.plan_state().total_count == 0
    assert me.plan_node_add(0, "own root") == 1  # control: ordinals restart per turn


def test_i03_plan_trees_stay_per_turn(db: memhop.DB) -> None:
    me = db.primary()
    me.search(new_scene=True)
    f1 = me.plan_node_add(0, "f1")
    me.plan_node_update(f1, status=DONE)
    me.update(input="q1", output="a1", created_at=TS)
    assert me.plan_state().total_count == 1

    me.search()
    assert me.plan_state().total_count == 0
    s = [me.plan_node_add(0, f"s{i}") for i in range(1, 5)]
    assert s[0] == f1
    me.plan_node_update(s[2], status=DONE, summary="全绿")
    tree = me.plan_state()
    assert step(tree, s[2]).summary == "全绿"
    assert len(tree.roots) == 4
    me.update(input="q2", output="a2", created_at=TS + 1)

    me.search()
    t1 = me.plan_node_add(0, "t1")
    t3 = me.plan_node_add(0, "跑测试")
    parts = [me.plan_node_add(t3, title) for title in ("单测", "集成", "基准")]
    for seq in parts:
        me.plan_node_update(seq, status=DONE)
    me.plan_node_update(t1, status=DONE)
    me.plan_node_update(t3, status=DONE)
    tree = me.plan_state()
    assert step(tree, t3).summary == "单测; 集成; 基准"
    assert len(step(tree, t3).children) == 3
    assert tree.total_count == 5


# ---- I02 / C12 / I06 / I07 / I08: updates and the fold ---------------------------------------


def test_i02_add_and_fold_and_c12_refusals_leave_the_tree_unchanged(db: memhop.DB) -> None:
    me = db.primary()
    me.search(new_scene=True)
    root = me.plan_node_add(0, "父")
    c1, c2 = me.plan_node_add(root, "c1"), me.plan_node_add(root, "c2")
    me.plan_node_update(c1, status=DONE, summary="改动收敛到 3 个文件")
    me.plan_node_update(c2, status="done", summary="测试全绿")
    tree = me.plan_state()
    assert step(tree, root).status == memhop.PlanStatus.IN_PROGRESS
    assert step(tree, root).summary == "", "a parent is done only when the host says so"

    before = render(me.plan_state())
    with refused(db, memhop.InvalidQueryError, 1003):
        me.plan_node_update(root, status="finished")
    with refused(db, memhop.InvalidQueryError, 1003):
        me.plan_node_update(root, status="", summary="blank status")
    with refused(db, memhop.NotFoundError, 3001):
        me.plan_node_add(42, "no such parent")
    with refused(db, memhop.NotFoundError, 3001):
        me.plan_node_update(42, status=DONE)
    assert render(me.plan_state()) == before

    me.plan_node_update(root, status=DONE)  # control: the same update with a real word and step
    tree = me.plan_state()
    folded = step(tree, root)
    assert folded.summary == "改动收敛到 3 个文件; 测试全绿"
    assert folded.title == "父"
    assert folded.finished_at > 0
    assert (tree.done_count, tree.total_count) == (3, 3)
    for child in folded.children:
        assert child.status == DONE
        assert child.summary
        assert child.parent_seq == root


def test_i06_an_update_keeps_the_summary_it_was_not_given(db: memhop.DB) -> None:
    me = db.primary()
    me.search(new_scene=True)
    seq = me.plan_node_add(0, "读配置")
    me.plan_node_update(seq, status=DONE, summary="S")
    assert step(me.plan_state(), seq).finished_at > 0
    me.plan_node_update(seq, status="in_progress")
    node = step(me.plan_state(), seq)
    assert (node.title, node.summary, node.finished_at) == ("读配置", "S", 0)
    assert node.status == memhop.PlanStatus.IN_PROGRESS
    me.plan_node_update(seq, status=DONE, summary="S2", title="改名")
    node = step(me.plan_state(), seq)
    assert (node.title, node.summary, node.status) == ("改名", "S2", DONE)


def test_i07_a_parent_fold_follows_the_branch_it_summarizes(db: memhop.DB) -> None:
    me = db.primary()
    me.search(new_scene=True)
    root = me.plan_node_add(0, "root")
    c1, c2 = me.plan_node_add(root, "c1"), me.plan_node_add(root, "c2")
    me.plan_node_update(c1, status=DONE, summary="一的结论")
    me.plan_node_update(c2, status=DONE, summary="二的结论")
    me.plan_node_update(root, status=DONE)

    def root_summary() -> str:
        return step(me.plan_state(), root).summary

    assert root_summary() == "一的结论; 二的结论"
    c3 = me.plan_node_add(root, "c3")
    assert root_summary() == "一的结论; 二的结论"
    me.plan_node_update(c3, status=DONE, summary="三的结论")
    assert root_summary() == "一的结论; 二的结论; 三的结论"
    me.plan_node_update(c1, status="in_progress")
    assert root_summary() == "一的结论; 二的结论; 三的结论"
    me.plan_node_update(c1, status=DONE, summary="一改了口")
    assert root_summary() == "一改了口; 二的结论; 三的结论"
    me.plan_node_update(root, status=DONE, summary="宿主自己写的收口")
    me.plan_node_update(c2, status=DONE, summary="二改了口")
    assert root_summary() == "宿主自己写的收口"
    assert step(me.plan_state(), c2).summary == "二改了口"


def test_i08_the_fold_reaches_the_root_through_three_levels(db: memhop.DB) -> None:
    me = db.primary()
    me.search(new_scene=True)
    root = me.plan_node_add(0, "root")
    mid = me.plan_node_add(root, "mid")
    leaf = me.plan_node_add(mid, "leaf")

    def summaries() -> tuple[str, str, str]:
        tree = me.plan_state()
        return step(tree, root).summary, step(tree, mid).summary, step(tree, leaf).summary

    me.plan_node_update(leaf, status=DONE, summary="第 7 步引入的")
    assert summaries() == ("", "", "第 7 步引入的")
    me.plan_node_update(mid, status=DONE)
    assert summaries() == ("", "第 7 步引入的", "第 7 步引入的")
    me.plan_node_update(root, status=DONE)
    tree = me.plan_state()
    assert summaries() == ("第 7 步引入的",) * 3
    assert len(tree.roots) == 1
    assert len(tree.roots[0].children) == 1
    assert len(tree.roots[0].children[0].children) == 1
    assert (tree.done_count, tree.total_count) == (3, 3)

    me.plan_node_update(leaf, status="in_progress")
    assert summaries() == ("第 7 步引入的",) * 3
    reopened = step(me.plan_state(), leaf)
    assert (reopened.status, reopened.finished_at) == (memhop.PlanStatus.IN_PROGRESS, 0)
    me.plan_node_update(leaf, status=DONE, summary="其实是第 9 步的并发")
    assert summaries() == ("其实是第 9 步的并发",) * 3
    me.plan_node_update(mid, status=DONE, summary="范围收在 7~9 步")
    assert summaries() == ("范围收在 7~9 步", "范围收在 7~9 步", "其实是第 9 步的并发")
    me.plan_node_update(leaf, status="in_progress")
    assert summaries()[:2] == ("范围收在 7~9 步", "范围收在 7~9 步")


def test_a_failed_child_settles_the_branch_and_untitled_steps_show_their_ordinal(
    db: memhop.DB,
) -> None:
    me = db.primary()
    me.search(new_scene=True)
    root = me.plan_node_add(0)
    ok, bad = me.plan_node_add(root, "ok"), me.plan_node_add(root, "bad")
    me.plan_node_update(ok, status=DONE, summary="worked")
    me.plan_node_update(bad, status=memhop.PlanStatus.FAILED)
    me.plan_node_update(root, status=DONE)
    tree = me.plan_state()
    assert step(tree, root).title == str(root)
    assert step(tree, root).summary == "worked; bad", (
        "a settled child without a summary says its title"
    )
    assert step(tree, bad).finished_at > 0
    assert (tree.done_count, tree.total_count) == (2, 3)


# ---- ordinals and events: I04 / I09 / I11 ----------------------------------------------------


def test_i04_i09_an_event_may_only_name_a_step_on_the_tree(db: memhop.DB) -> None:
    me = db.primary()
    first = me.search(new_scene=True)
    me.append_archive(kind=EVENT, event_type="host_note", content="bare", created_at=TS)
    me.update(input="q", output="a", created_at=TS + 1)
    me.search()
    assert me.plan_state().total_count == 0, "events never create steps"
    seq = me.plan_node_add(0, "root")
    with refused(db, memhop.InvalidQueryError, 1003, "plan tree") as caught:
        bind(me, seq + 6, "unbound")
    assert "step" in str(caught[0])
    assert me.plan_node_add(0, "next") == seq + 1, "a refused append consumes no ordinal"
    assert [bind(me, seq, "one"), bind(me, seq + 1, "two")] == [3, 4]
    assert len(me.search_l4(topic_id=first.new_topic_id, kind=EVENT)) == 1


def test_an_ordinal_still_named_by_an_event_is_never_reissued(db: memhop.DB) -> None:
    """The plan mirror and the L4 mirror together decide the next ordinal (api.md §12.1)."""
    me = db.primary()
    me.search(new_scene=True)
    root = me.plan_node_add(0, "root")
    child = me.plan_node_add(root, "child")
    bind(me, child, "on the child")
    assert me.plan_node_add(0, "third") == child + 1  # control: ordinals run on
    tree = me.plan_state()
    assert [n.seq for n in tree.roots] == [root, child + 1]
    assert me.search_l4(keyword="on the child")[0].node_seq == child


@pytest.mark.parametrize("bad", [-1, 2**32, True, 1.0, "1"])
def test_plan_arguments_are_refused_before_the_turn_is_touched(db: memhop.DB, bad: object) -> None:
    me = db.primary()
    me.search(new_scene=True)
    with refused(db, memhop.InvalidQueryError, 1003):
        me.plan_node_add(bad, "x")  # type: ignore[arg-type]
    with refused(db, memhop.InvalidQueryError, 1003):
        me.plan_node_update(bad, status=DONE)  # type: ignore[arg-type]
    with refused(db, memhop.InvalidQueryError, 1003):
        me.plan_node_add(0, 7)  # type: ignore[arg-type]
    assert me.plan_node_add(0, "x") == 1  # control


# ---- I05: the trajectory survives a reopen; the open turn does not ---------------------------


def test_i05_plan_and_trajectory_survive_reopen(mem: Mem) -> None:
    me = mem.primary()
    opened = me.search(new_scene=True)
    topic = opened.new_topic_id
    me.append_archive(kind=EVENT, event_type="tool_call", content='{"tool":"bash"}', created_at=TS)
    root = me.plan_node_add(0, "计划")
    leaf = me.plan_node_add(root, "调研")
    me.plan_node_update(leaf, status=DONE, summary="结论一")
    bind(me, root, "on root", TS + 1)
    bind(me, leaf, "on leaf", TS + 2)
    node = step(me.plan_state(), leaf)
    assert (node.status, node.title, node.summary, node.parent_seq) == (
        DONE,
        "调研",
        "结论一",
        root,
    )
    assert node.finished_at > 0
    assert me.plan_state().total_count == 2
    me.update(input="q", output="a", created_at=TS + 3)

    db = mem.settle()
    me = db.primary()
    events = me.search_l4(topic_id=topic, kind=EVENT)
    assert [e.seq for e in events] == [3, 4, 5]
    assert (events[0].event_type, events[0].content) == ("tool_call", '{"tool":"bash"}')
    assert {e.topic_id for e in events} == {topic}
    assert [e.seq for e in me.search_l4(topic_id=topic, node_seq=root)] == [4, 5]
    assert [e.seq for e in me.search_l4(topic_id=topic, node_seq=leaf)] == [5]
    if mem.reopens:
        with refused(db, memhop.InvalidQueryError, 1003, "no turn is open"):
            me.plan_state()
    me.search()
    assert me.plan_state().total_count == 0
    assert me.plan_node_add(0, "fresh") == 1


def test_plans_are_per_domain(db: memhop.DB) -> None:
    me = db.primary()
    alpha = db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="alpha"))
    turn(me)  # the primary's turn stays its open turn after the close
    alpha.search(new_scene=True)
    assert alpha.plan_node_add(0, "alpha step") == 1
    assert me.plan_node_add(0, "primary step") == 1
    assert [n.title for n in alpha.plan_state().roots] == ["alpha step"]
    assert [n.title for n in me.plan_state().roots] == ["primary step"]
