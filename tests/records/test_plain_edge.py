"""scene_node.plain_edge_clock reads what SceneEdge.from_json reads, or nothing.

A cold Dream cache schedules every edge from its stored weight and clock, so
a payload in the shape Go and memhop write is read by one anchored pattern;
any other payload is not answered (the cache reads it in full when it can).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop.errors import DeserializationError
from memhop.records import SceneEdge
from memhop.records.scene_node import plain_edge_clock

_U64 = st.integers(0, 2**64 - 1) | st.sampled_from([0, 1, 2**63, 2**64 - 1])
_I64 = st.integers(-(2**63), 2**63 - 1) | st.sampled_from([-(2**63), -1, 0, 2**63 - 1])
# Go's float layouts: fixed for ordinary weights, exponent form for tiny and huge ones,
# no ".0" on an integer-valued one, and "-0".
_WEIGHTS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-(2**60), 2**60).map(float),
    st.sampled_from([0.0, -0.0, 1.0, 5e-324, 1e-7, 1e-6, 1e21, 0.1, 1.7976931348623157e308]),
)
_edges = st.builds(
    SceneEdge,
    id_hash=_U64,
    node_ids=st.lists(_U64, max_size=4).map(tuple),
    weight=_WEIGHTS,
    created_at=_I64,
    last_decay_at=_I64,
)


@given(_edges)
def test_a_written_edge_reads_as_its_full_decode(edge: SceneEdge) -> None:
    """Ids up to 2**64-1, no members, stamps at both i64 ends, any finite weight."""
    data = edge.to_json()
    full = SceneEdge.from_json(data)
    got = plain_edge_clock(data)
    assert got == (full.node_ids, full.weight, full.last_decay_at or full.created_at)
    assert repr(got[1]) == repr(full.weight)  # -0 stays -0
    assert full == edge


@pytest.mark.parametrize("text", [b"1e-07", b"1e+21", b"0.3333333333333333", b"-0", b"3"])
def test_go_float_layouts_read_back(text: bytes) -> None:
    data = b'{"id_hash":9,"node_ids":[],"weight":' + text + b',"created_at":5,"last_decay_at":6}'
    weight = SceneEdge.from_json(data).weight
    assert plain_edge_clock(data) == ((), weight, 6)
    assert weight == float(text)


@pytest.mark.parametrize(
    "odd",
    [
        b'{"node_ids":[1,2],"id_hash":8,"weight":0.5,"created_at":10,"last_decay_at":0}',
        b'{"id_hash":8, "node_ids":[1,2],"weight":0.5,"created_at":10,"last_decay_at":0}',
        b'{"id_hash":8,"node_ids":null,"weight":0.5,"created_at":10,"last_decay_at":0}',
        b'{"id_hash":8,"node_ids":[1,2],"weight":0.5,"created_at":10}',
    ],
)
def test_an_edge_in_another_shape_is_not_answered(odd: bytes) -> None:
    """Valid JSON that the full decode reads, but not in the usual shape."""
    assert plain_edge_clock(odd) is None
    edge = SceneEdge.from_json(odd)  # it does decode
    # Control: the same edge as to_json writes it is answered.
    assert plain_edge_clock(edge.to_json()) == (edge.node_ids, 0.5, 10)


def test_a_weight_past_float64_is_not_answered() -> None:
    """Go refuses it (the full decode names the error); the largest finite one reads."""
    edge = b'{"id_hash":8,"node_ids":[],"weight":%s,"created_at":10,"last_decay_at":0}'
    assert plain_edge_clock(edge % b"-1e999") is None
    with pytest.raises(DeserializationError):
        SceneEdge.from_json(edge % b"-1e999")
    assert plain_edge_clock(edge % b"-1.7976931348623157e+308") == ((), -1.7976931348623157e308, 10)
