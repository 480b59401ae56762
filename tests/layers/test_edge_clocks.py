"""edge_clocks: each edge's members, weight and clock, equal to a full decode of its record."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memhop.engine import RecordEntry, create_engine
from memhop.layers import scene
from memhop.layers.edge_clocks import edge_clocks
from memhop.records import RecordType, SceneEdge

AGENT = 0
_RUNS = itertools.count()

_edges = st.lists(
    st.builds(
        SceneEdge,
        id_hash=st.integers(1, 2**64 - 1),
        node_ids=st.lists(st.integers(0, 2**64 - 1), max_size=4).map(tuple),
        # Go's float layout: fixed for ordinary weights, exponent form for tiny and huge ones.
        weight=st.floats(allow_nan=False, allow_infinity=False),
        created_at=st.integers(-(2**63), 2**63 - 1),
        last_decay_at=st.integers(-(2**63), 2**63 - 1),
    ),
    max_size=8,
    unique_by=lambda e: e.id_hash,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(edges=_edges)
def test_every_edge_answers_as_its_full_decode(tmp_path: Path, edges: list[SceneEdge]) -> None:
    engine = create_engine(str(tmp_path / f"edges{next(_RUNS)}.meh"))
    try:
        scene.put_scene_edges(engine, AGENT, edges)
        stored = scene.list_scene_edges(engine, AGENT)
        want = {e.id_hash: (e.node_ids, e.weight, e.last_decay_at or e.created_at) for e in stored}
        assert edge_clocks(engine, AGENT) == want
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


@pytest.mark.parametrize("text", [b"1e-07", b"1e+21", b"0.3333333333333333", b"-0"])
def test_go_float_layouts_read_back(tmp_path: Path, text: bytes) -> None:
    engine = create_engine(str(tmp_path / "floats.meh"))
    try:
        payload = (
            b'{"id_hash":9,"node_ids":[],"weight":' + text + b',"created_at":5,"last_decay_at":6}'
        )
        engine.write_batch([RecordEntry(AGENT, RecordType.SCENE_EDGE, 9, payload)])
        decoded = scene.get_scene_edge_optional(engine, AGENT, 9)
        assert decoded is not None
        assert edge_clocks(engine, AGENT) == {9: ((), decoded.weight, 6)}
    finally:
        engine.close()
