"""edge_clocks: the domain's edges in the usual shape, by id, as their full decode gives them.

What each payload reads as is pinned in tests/records/test_plain_edge.py.
"""

from __future__ import annotations

from pathlib import Path

from memhop.engine import RecordEntry, create_engine
from memhop.layers import scene
from memhop.layers.edge_clocks import edge_clocks
from memhop.records import RecordType, SceneEdge

AGENT = 0


def test_every_edge_answers_as_its_full_decode(tmp_path: Path) -> None:
    engine = create_engine(str(tmp_path / "edges.meh"))
    try:
        edges = [
            SceneEdge(id_hash=7, node_ids=(1, 2), weight=0.5, created_at=10),
            SceneEdge(id_hash=9, node_ids=(2**64 - 1,), weight=3.0, created_at=4, last_decay_at=6),
            SceneEdge(id_hash=2**64 - 1, weight=1e-7, created_at=-(2**63), last_decay_at=2**63 - 1),
        ]
        scene.put_scene_edges(engine, AGENT, edges)
        stored = scene.list_scene_edges(engine, AGENT)
        want = {e.id_hash: (e.node_ids, e.weight, e.last_decay_at or e.created_at) for e in stored}
        assert edge_clocks(engine, AGENT) == want
        assert want[7] == ((1, 2), 0.5, 10)  # positive control
        assert len(want) == len(edges)
    finally:
        engine.close()


def test_an_edge_in_another_shape_is_not_answered(tmp_path: Path) -> None:
    """A payload with the keys in another order is valid JSON but not the usual shape."""
    engine = create_engine(str(tmp_path / "odd.meh"))
    try:
        usual = SceneEdge(id_hash=7, node_ids=(1, 2), weight=0.5, created_at=10)
        scene.put_scene_edges(engine, AGENT, [usual])
        odd = b'{"node_ids":[1,2],"id_hash":8,"weight":0.5,"created_at":10,"last_decay_at":0}'
        engine.write_batch([RecordEntry(AGENT, RecordType.SCENE_EDGE, 8, odd)])
        assert scene.get_scene_edge_optional(engine, AGENT, 8) is not None  # it does decode
        assert edge_clocks(engine, AGENT) == {7: ((1, 2), 0.5, 10)}
    finally:
        engine.close()
