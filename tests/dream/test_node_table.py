"""NodeTable: Dream's copies of the scene nodes, held where the collector does not walk them."""

from __future__ import annotations

import gc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop.dream.node_table import NodeTable
from memhop.records import SceneNode

_ids = st.integers(0, 2**64 - 1)
_unit = st.floats(0.0, 1.0, allow_nan=False)
_node = st.builds(
    SceneNode,
    id_hash=st.integers(0, 12),
    scene_id=_ids,
    topic_ids=st.lists(_ids, max_size=4).map(tuple),
    importance=_unit,
    valence=_unit,
    arousal=_unit,
    emotion_set=st.booleans(),
    created_at=st.integers(-(2**63), 2**63 - 1),
    updated_at=st.integers(-(2**63), 2**63 - 1),
    edge_ids=st.lists(_ids, max_size=4).map(tuple),
)


@given(st.lists(st.tuples(st.sampled_from(["put", "put", "del"]), _node), max_size=40))
def test_the_table_answers_as_a_dict_of_the_records(ops: list[tuple[str, SceneNode]]) -> None:
    table, plain = NodeTable(), dict[int, SceneNode]()
    for op, node in ops:
        if op == "put":
            table[node.id_hash] = node
            plain[node.id_hash] = node
        elif node.id_hash in plain:
            del table[node.id_hash]
            del plain[node.id_hash]
        else:
            with pytest.raises(KeyError):
                del table[node.id_hash]
    assert dict(table) == plain
    assert list(table) == list(plain)  # in the order put, as a dict
    assert table.keys() == plain.keys()
    for node_id in range(13):
        assert table.get(node_id) == plain.get(node_id)
        assert (node_id in table) == (node_id in plain)
        if node_id in plain:
            assert table.scene_of(node_id) == plain[node_id].scene_id
            assert table.edge_ids_of(node_id) == plain[node_id].edge_ids
            held = plain[node_id]
            assert table.digest_of(node_id) == (node_id, held.importance, held.topic_ids)
            assert type(table[node_id]) is SceneNode
        else:
            with pytest.raises(KeyError):
                table.scene_of(node_id)


def test_held_nodes_are_no_objects_the_collector_walks() -> None:
    def tracked_nodes() -> int:
        gc.collect()
        gc.collect()  # a tuple leaves the collector's view once its items have
        return sum(type(o) is SceneNode and o.scene_id == 0x7AB1E for o in gc.get_objects())

    table = NodeTable()
    for i in range(500):
        table[i] = SceneNode(id_hash=i, scene_id=0x7AB1E, topic_ids=(i, i + 1), importance=0.5)
    assert tracked_nodes() == 0
    assert len(table) == 500
    # Control: the records a read hands out are ordinary tracked objects, counted here.
    read = [table[i] for i in range(500)]
    assert tracked_nodes() == 500
    assert read[7] == SceneNode(id_hash=7, scene_id=0x7AB1E, topic_ids=(7, 8), importance=0.5)
