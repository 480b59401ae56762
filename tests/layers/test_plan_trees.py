"""PlanTrees: per-turn plan trees, ordinals, liveness, the rendered forest."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memhop.ids import plan_node_id
from memhop.index.plans import PlanBranch, PlanForest, PlanTrees
from memhop.records import PlanNode, PlanStatusCode

TOPIC = 0x51
DONE = PlanStatusCode.DONE
OPEN = PlanStatusCode.IN_PROGRESS


def step(
    seq: int, parent: int = 0, *, topic: int = TOPIC, status: int = OPEN, updated_at: int = 0
) -> PlanNode:
    return PlanNode(
        id_hash=plan_node_id(topic, seq),
        topic_id=topic,
        seq=seq,
        parent_seq=parent,
        status=status,
        title=f"t{seq}",
        updated_at=updated_at,
    )


def shape(forest: PlanForest) -> list[object]:
    def one(b: PlanBranch) -> object:
        return (b.node.seq, [one(c) for c in b.children]) if b.children else b.node.seq

    return [one(r) for r in forest.roots]


def test_next_seq_starts_at_one_and_follows_the_highest_live_step() -> None:
    trees = PlanTrees()
    assert trees.next_seq(TOPIC) == 1
    trees.put(step(1))
    trees.put(step(4, 1))
    assert (trees.highest_seq(TOPIC), trees.next_seq(TOPIC)) == (4, 5)
    assert trees.next_seq(TOPIC + 1) == 1  # ordinals restart per turn
    trees.remove(plan_node_id(TOPIC, 4))
    assert trees.next_seq(TOPIC) == 2


def test_live_steps_activity_and_counts() -> None:
    trees = PlanTrees.from_nodes(
        [step(1, status=DONE, updated_at=5), step(2, 1, updated_at=9), step(1, topic=2)]
    )
    assert trees.has_live_step(TOPIC, 2)
    assert not trees.has_live_step(TOPIC, 3)
    assert not trees.has_live_step(3, 1)
    assert trees.last_active(TOPIC) == 9
    assert trees.last_active(3) == 0
    assert trees.has_non_done(TOPIC)
    assert (trees.done_count(TOPIC), trees.total_count(TOPIC)) == (1, 2)
    trees.put(step(2, 1, status=DONE, updated_at=12))
    assert not trees.has_non_done(TOPIC)
    assert (trees.done_count(TOPIC), trees.total_count(TOPIC)) == (2, 2)
    assert not trees.has_non_done(3)


def test_tree_nests_children_by_seq_and_counts_every_step() -> None:
    trees = PlanTrees.from_nodes(
        [step(5, 1), step(1, status=DONE), step(2, 1, status=DONE), step(3), step(4, 2)]
    )
    forest = trees.tree(TOPIC)
    assert shape(forest) == [(1, [(2, [4]), 5]), 3]
    assert (forest.done_count, forest.total_count) == (2, 5)
    assert trees.tree(TOPIC + 1) == PlanForest((), 0, 0)


def test_a_step_whose_parent_is_gone_is_listed_as_a_root() -> None:
    trees = PlanTrees.from_nodes([step(1), step(2, 1), step(3, 2)])
    trees.remove(plan_node_id(TOPIC, 2))
    assert shape(trees.tree(TOPIC)) == [1, 3]


def test_steps_caught_in_a_parent_loop_are_not_lost() -> None:
    trees = PlanTrees.from_nodes([step(1), step(2, 3), step(3, 2), step(4, 4)])
    forest = trees.tree(TOPIC)
    assert shape(forest) == [1, (2, [3]), 4]
    assert forest.total_count == 4
    assert trees.subtree_seqs(TOPIC, 2) == {2, 3}


def test_a_deep_chain_renders_without_recursion() -> None:
    depth = 3000
    trees = PlanTrees.from_nodes([step(s, s - 1) for s in range(1, depth + 1)])
    branch = trees.tree(TOPIC).roots[0]
    levels = 1
    while branch.children:
        branch = branch.children[0]
        levels += 1
    assert levels == depth
    assert len(trees.subtree_seqs(TOPIC, 1)) == depth


def test_subtree_seqs_covers_the_step_and_everything_below() -> None:
    trees = PlanTrees.from_nodes([step(1), step(2, 1), step(3, 2), step(4)])
    assert trees.subtree_seqs(TOPIC, 1) == {1, 2, 3}
    assert trees.subtree_seqs(TOPIC, 3) == {3}
    assert trees.subtree_seqs(TOPIC, 9) == set()


def test_remove_topic_takes_the_whole_tree() -> None:
    trees = PlanTrees.from_nodes([step(1), step(2, 1), step(1, topic=9)])
    assert trees.remove_topic(TOPIC) == sorted([plan_node_id(TOPIC, 1), plan_node_id(TOPIC, 2)])
    assert trees.topics() == [9]
    assert trees.remove_topic(TOPIC) == []
    assert trees.remove_many([plan_node_id(9, 1), 5]) == 1
    assert trees == PlanTrees()
    assert len(trees) == 0


def test_a_foreign_id_at_a_held_address_keeps_one_step_per_seq() -> None:
    trees = PlanTrees.from_nodes([step(1)])
    trees.put(PlanNode(id_hash=0xBAD, topic_id=TOPIC, seq=1))
    assert len(trees) == 1
    node = trees.node(TOPIC, 1)
    assert node is not None
    assert node.id_hash == 0xBAD


@given(
    st.lists(
        st.tuples(st.integers(1, 3), st.integers(1, 8), st.integers(0, 8), st.booleans()),
        max_size=40,
    ),
    st.lists(st.tuples(st.integers(1, 3), st.integers(1, 8)), max_size=10),
)
def test_incremental_trees_equal_rebuilt_ones(
    puts: list[tuple[int, int, int, bool]], removals: list[tuple[int, int]]
) -> None:
    trees = PlanTrees()
    latest: dict[int, PlanNode] = {}
    for topic, seq, parent, done in puts:
        node = step(seq, parent, topic=topic, status=DONE if done else OPEN)
        trees.put(node)
        latest[node.id_hash] = node
    for topic, seq in removals:
        trees.remove(plan_node_id(topic, seq))
        latest.pop(plan_node_id(topic, seq), None)
    assert trees == PlanTrees.from_nodes(latest.values())
    for topic in (1, 2, 3):
        mine = [n for n in latest.values() if n.topic_id == topic]
        forest = trees.tree(topic)
        assert forest.total_count == len(mine) == trees.total_count(topic)
        assert trees.next_seq(topic) == max((n.seq for n in mine), default=0) + 1

        def count(branches: tuple[PlanBranch, ...]) -> int:
            return sum(1 + count(b.children) for b in branches)

        assert count(forest.roots) == len(mine)  # every step appears exactly once
